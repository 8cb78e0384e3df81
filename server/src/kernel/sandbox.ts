/**
 * How kernel children are launched: the OS-level sandbox around user code. Each layer is detected
 * once at start and used when the machine has it (docs/architecture.md lists what each one stops):
 *
 * - `netns`: `unshare --net` — the child has its own network namespace with only a down loopback:
 *   no connection to the sync server's port, to localhost, or anywhere (needs root or user namespaces).
 * - `uid`: `setpriv --reuid/--regid --clear-groups` — when the server runs as root, each workspace's
 *   children run as their own unprivileged uid: they cannot signal the server or other workspaces'
 *   kernels, cannot write files they do not own, and RLIMIT_NPROC counts per workspace.
 * - `rlimits`: `prlimit` — address space (covers ArrayBuffers, which V8's heap limit does not),
 *   CPU seconds, processes/threads, open files, and file size (0 for the JS runner: it writes no file).
 * - `permission-model`: Node's `--experimental-permission` with reads limited to the runner and the
 *   curated libraries, no writes, no child processes, no workers, no native addons (JS runner).
 * - `pdeathsig`: `setpriv --pdeathsig KILL` — the child is killed when the server dies, even by
 *   kill -9 and even while user code spins synchronously (a runner only notices its closed stdin
 *   between two turns of its event loop): an orphan never burns a CPU for the rest of its limit.
 *   Last in the chain, right before Node, so no later credential change clears it.
 * - the minimal environment: PATH, LANG and HOME only — no PLEXUS_* or other secrets.
 * Effects: spawns probe processes at detection.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export interface SandboxCaps {
  root: boolean;
  unshare: boolean;
  setpriv: boolean;
  prlimit: boolean;
  nice: boolean;
  /** `setpriv --pdeathsig` (util-linux 2.33+; no root needed). */
  pdeathsig: boolean;
  /** Why cells cannot run as their own users here although the machine could (logged at start). */
  uidUnavailable?: string;
}

/** The uid the probes run as (nobody). */
const PROBE_UID = 65534;

/**
 * Whether an unprivileged user can run this Node binary and read `file` — false when a folder
 * above it is closed to others (a checkout in `/root`, or in a `mktemp -d` folder, both mode 0700):
 * cells running as their own users could not even load their runner.
 */
export function unprivilegedCanRead(file: string): boolean {
  return works('setpriv', [`--reuid=${PROBE_UID}`, `--regid=${PROBE_UID}`, '--clear-groups', '--', process.execPath, '-e', `require('fs').accessSync(${JSON.stringify(file)}, require('fs').constants.R_OK)`]);
}

/**
 * Scheduling priority of kernel children (Unix nice, 0–19; `PLEXUS_KERNEL_NICE`, default 10): a
 * cell using every core slows itself, not the sync server people type through. Set through
 * `nice(1)` at exec so every thread of the child (V8's too) inherits it.
 */
export function kernelNice(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.PLEXUS_KERNEL_NICE ?? 10);
  return Number.isInteger(n) && n >= 0 && n <= 19 ? n : 10;
}

let detected: SandboxCaps | null = null;

const works = (cmd: string, args: string[]): boolean => {
  try {
    return spawnSync(cmd, args, { stdio: 'ignore', timeout: 5000 }).status === 0;
  } catch {
    return false;
  }
};

/** What this machine offers (probed once). `PLEXUS_SANDBOX=off` disables the OS layers (tests of the fallback only). */
export function sandboxCaps(): SandboxCaps {
  if (detected) return detected;
  const off = process.env.PLEXUS_SANDBOX === 'off';
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const setpriv = !off && root && works('setpriv', [`--reuid=${PROBE_UID}`, `--regid=${PROBE_UID}`, '--clear-groups', '--', 'true']);
  const runner = path.join(RUNNER_DIR, 'js-runner.mjs');
  const readable = setpriv && unprivilegedCanRead(runner);
  detected = {
    root,
    unshare: !off && works('unshare', ['--net', '--', 'true']),
    setpriv: readable,
    prlimit: !off && works('prlimit', ['--nofile=64', '--', 'true']),
    nice: works('nice', ['-n', '1', 'true']),
    pdeathsig: !off && works('setpriv', ['--pdeathsig', 'KILL', '--', 'true']),
    ...(setpriv && !readable
      ? { uidUnavailable: `cells run as the server's user, not as their own: other users cannot read ${runner} or run ${process.execPath} (a folder above is closed to them, e.g. mode 0700); move Plexus to a folder others may read (chmod o+rx) to get this layer` }
      : {}),
  };
  return detected;
}

export interface Limits {
  /** Address space, bytes. */
  addressSpace?: number;
  /** CPU seconds over the process's life. */
  cpuSeconds?: number;
  /** Processes + threads of the uid. */
  processes?: number;
  openFiles?: number;
  /** Largest file the process may write, bytes (0: none). */
  fileSize?: number;
}

export interface LaunchSpec {
  /** Node flags and script (run with this Node binary). */
  nodeArgs: string[];
  limits: Limits;
  /** Run as this uid/gid when the server is root (per-workspace identity). */
  uid?: number;
  /** Put the child in its own network namespace. */
  isolateNetwork: boolean;
}

/** The command line for a sandboxed Node child, and the layers it gets on this machine. */
export function launchCommand(spec: LaunchSpec): { cmd: string; args: string[]; layers: string[] } {
  const caps = sandboxCaps();
  const layers: string[] = [];
  const chain: string[] = [];
  const nice = kernelNice();
  if (caps.nice && nice > 0) {
    chain.push('nice', '-n', String(nice));
    layers.push('nice');
  }
  if (spec.isolateNetwork && caps.unshare) {
    chain.push('unshare', '--net', '--');
    layers.push('netns');
  }
  if (spec.uid !== undefined && caps.setpriv) {
    chain.push('setpriv', `--reuid=${spec.uid}`, `--regid=${spec.uid}`, '--clear-groups', '--');
    layers.push('uid');
  }
  if (caps.prlimit) {
    const l = spec.limits;
    const lim: string[] = [];
    if (l.addressSpace) lim.push(`--as=${Math.round(l.addressSpace)}`);
    if (l.cpuSeconds) lim.push(`--cpu=${Math.ceil(l.cpuSeconds)}`);
    if (l.processes) lim.push(`--nproc=${l.processes}`);
    if (l.openFiles) lim.push(`--nofile=${l.openFiles}`);
    if (l.fileSize !== undefined) lim.push(`--fsize=${l.fileSize}`);
    if (lim.length) {
      chain.push('prlimit', ...lim, '--');
      layers.push('rlimits');
    }
  }
  if (caps.pdeathsig) {
    chain.push('setpriv', '--pdeathsig', 'KILL', '--');
    layers.push('pdeathsig');
  }
  if (spec.nodeArgs.includes('--experimental-permission')) layers.push('permission-model');
  const all = [...chain, process.execPath, ...spec.nodeArgs];
  return { cmd: all[0]!, args: all.slice(1), layers };
}

/** The environment of every kernel child: nothing from the server's. */
export function minimalEnv(home: string): NodeJS.ProcessEnv {
  return { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: home, NODE_ENV: 'production' };
}

/** Directory of the runner scripts. */
export const RUNNER_DIR = path.join(path.dirname(new URL(import.meta.url).pathname), 'runner');
