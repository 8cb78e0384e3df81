/**
 * The real Plexus server for the browser tests: `node --import tsx server/src/main.ts` as a child
 * process on a fresh temporary data directory, with a fixed token secret so tokens stay valid
 * across a restart. Its coordinates (url, owner token, pid) live in a small JSON state file whose
 * path is in PLEXUS_E2E_STATE (set by global-setup, inherited by the workers), so a test can
 * restart the server and global-teardown always stops the current process.
 *
 * The server's stdout/stderr go to log files (not pipes): a server started from a test worker
 * must survive that worker exiting without writing into a broken pipe.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { repoRoot } from '@plexus/testkit/dirs';
import { sleep } from '@plexus/testkit/wait';

export const REPO_ROOT = repoRoot;
/** Fixed secret: owner and share tokens signed by one server process stay valid after a restart. */
export const E2E_SECRET = 'plexus-e2e-secret-0123456789abcdef';
export const DEFAULT_PORT = 4477;

export interface ServerState {
  url: string;
  port: number;
  ownerToken: string;
  pid: number;
  /** Temporary directory holding data/, the server logs and this state file. */
  root: string;
  dataDir: string;
  /** How many server processes have been started (log file suffix). */
  starts: number;
}


export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function statePath(): string {
  const p = process.env.PLEXUS_E2E_STATE;
  if (!p) throw new Error('PLEXUS_E2E_STATE is not set: run the tests through e2e/playwright.config.ts (its globalSetup starts the server)');
  return p;
}

export function readState(file = statePath()): ServerState {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as ServerState;
}

export function writeState(state: ServerState, file = statePath()): void {
  fs.writeFileSync(file + '.tmp', JSON.stringify(state, null, 2));
  fs.renameSync(file + '.tmp', file);
}

/**
 * Starts one server process on `port` (0 = any free port) and resolves with its ready line
 * `{"ready":true,"port":…,"url":…,"ownerToken":…}`. Rejects if it exits or does not get ready.
 */
export async function spawnServer(opts: { root: string; dataDir: string; port: number; n: number }): Promise<{ pid: number; port: number; url: string; ownerToken: string }> {
  const logFile = path.join(opts.root, `server-${opts.n}.log`);
  const fd = fs.openSync(logFile, 'a');
  // node itself with tsx as an import hook (not the tsx CLI, which would fork a second process
  // and receive our SIGTERM in place of the real server).
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'server/src/main.ts')], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      PORT: String(opts.port),
      HOST: '127.0.0.1',
      PLEXUS_DATA_DIR: opts.dataDir,
      PLEXUS_SECRET: E2E_SECRET,
      PLEXUS_READY_JSON: '1',
      PLEXUS_LOG_LEVEL: 'warn',
      PLEXUS_SEED_DEMO: '0',
      // Snapshots of over 1,000 structs stored in parts (the default is 10,000): browsers open
      // workspaces from parts in more of these tests (first-screen.spec.ts checks it).
      PLEXUS_SNAPSHOT_PART_STRUCTS: '1000',
    },
    stdio: ['ignore', fd, fd],
  });
  fs.closeSync(fd);
  proc.unref();
  let exitCode: number | null | undefined;
  proc.once('exit', (code, signal) => (exitCode = code ?? (signal as unknown as number)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const log = fs.readFileSync(logFile, 'utf8');
    const line = log.split('\n').find((l) => l.startsWith('{"ready"'));
    if (line) {
      const ready = JSON.parse(line) as { port: number; url: string; ownerToken: string };
      return { pid: proc.pid!, port: ready.port, url: `http://127.0.0.1:${ready.port}`, ownerToken: ready.ownerToken };
    }
    if (exitCode !== undefined) throw Object.assign(new Error(`the Plexus server exited (${exitCode}) before it was ready:\n${log}`), { log });
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`the Plexus server did not get ready within 30 s:\n${log}`);
    }
    await sleep(50);
  }
}

/** SIGTERM (the server flushes every document), then SIGKILL if it has not exited after `graceMs`. */
export async function stopProcess(pid: number, graceMs = 10_000): Promise<void> {
  if (!isAlive(pid)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await sleep(25);
  }
  while (isAlive(pid)) await sleep(25);
}

/**
 * Restarts the server on the same port and data directory (a clean SIGTERM shutdown, then a new
 * process). Updates the state file. Used by tests that check durability.
 */
export async function restartServer(): Promise<ServerState> {
  const state = readState();
  await stopProcess(state.pid);
  const n = state.starts + 1;
  const started = await spawnServer({ root: state.root, dataDir: state.dataDir, port: state.port, n });
  const next: ServerState = { ...state, pid: started.pid, ownerToken: started.ownerToken, starts: n };
  writeState(next);
  return next;
}
