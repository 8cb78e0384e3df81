/**
 * A kernel process of its own (`server/src/kernel/main.ts`, what `npm run kernel` runs) as a child
 * of the test, for a server started with external kernels: its log lines are kept so a test can
 * wait for "kernel lease taken" of a workspace, and it can be SIGKILLed or stopped cleanly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './dirs.ts';
import { alive, exited } from './processes.ts';
import { waitFor } from './wait.ts';

export interface KernelProcess {
  proc: ChildProcess;
  /** Parsed JSON log lines (stdout and stderr) so far. */
  readonly lines: Array<Record<string, unknown>>;
  /** Resolves once this process logged `msg` for workspace `ws`. */
  logged(msg: string, ws: string, timeout?: number): Promise<unknown>;
  /** Whether it logged `msg` for workspace `ws` yet. */
  hasLogged(msg: string, ws: string): boolean;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export function startKernelProcess(serverUrl: string, dataDir: string, env: Record<string, string> = {}): KernelProcess {
  // Node itself with tsx as an import hook (not the tsx CLI, whose wrapper process a SIGKILL would hit).
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'server/src/kernel/main.ts')], {
    cwd: repoRoot,
    env: {
      ...process.env, PLEXUS_SERVER_URL: serverUrl, PLEXUS_DATA_DIR: dataDir, PLEXUS_LOG_LEVEL: 'info',
      PLEXUS_CELL_TIMEOUT_MS: '3000', PLEXUS_CELL_MEMORY_MB: '256', PLEXUS_SQL_MEMORY_MB: '256', PLEXUS_KERNEL_IDLE_MS: '600000', ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  for (const stream of [proc.stdout!, proc.stderr!]) {
    let buf = '';
    stream.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      const parts = buf.split('\n');
      buf = parts.pop()!;
      for (const l of parts) {
        try {
          lines.push(JSON.parse(l));
        } catch {
          lines.push({ msg: l });
        }
      }
    });
  }
  const gone = exited(proc);
  const hasLogged = (msg: string, ws: string) => lines.some((l) => l.msg === msg && l.ws === ws);
  return {
    proc,
    lines,
    hasLogged,
    logged: (msg, ws, timeout = 60_000) => waitFor(() => hasLogged(msg, ws) || !alive(proc), { timeout, message: `kernel process: "${msg}" for ${ws}` }).then(() => {
      if (!hasLogged(msg, ws)) throw new Error(`the kernel process exited before "${msg}" for ${ws}: ${JSON.stringify(lines.slice(-5))}`);
    }),
    kill: (signal = 'SIGKILL') => {
      if (alive(proc)) proc.kill(signal);
      return gone;
    },
  };
}
