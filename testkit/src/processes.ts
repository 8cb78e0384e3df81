/**
 * The process plumbing shared by the throwaway servers (postgres.ts, redis.ts, haproxy.ts): a free
 * port of 127.0.0.1, waiting for a child to exit or to answer, stopping it (SIGTERM, then SIGKILL
 * past a limit), and the two ways a forgotten server is stopped and its directory removed when the
 * process that started it ends: handlers run at this process's `exit` (`onProcessExit`), and a
 * small watchdog process that waits for this process to be gone, however it ends (`startWatchdog`:
 * a test worker can end without running exit handlers). `startGuarded` sets up both around a
 * server's first start.
 * Effects: processes (the watchdog; signals to children), files (pid files; removes server
 * directories), a listener on 127.0.0.1 for a moment (`freePort`), a handler of this process's
 * `exit` event.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { sleep } from './wait.ts';

/** A TCP port of 127.0.0.1 that was free a moment ago (another process may take it before it is bound). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Whether `child` has not exited yet (it may have been signalled). */
export const alive = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;

/** Resolves once `child` has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (!alive(child)) return Promise.resolve();
  child.ref(); // this process waits for it
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Resolves true once `answers(port)` holds while `child` is still alive (the answer must come from
 * this child, not from another process that took the port meanwhile), false as soon as `child` has
 * exited; past `timeoutMs` SIGKILLs it and throws `late()`. Polls every 10 ms.
 */
export async function answering(child: ChildProcess, port: number, answers: (port: number) => Promise<boolean>, timeoutMs: number, late: () => Error): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (!alive(child)) return false;
    if ((await answers(port)) && alive(child)) return true;
    if (Date.now() > end) {
      child.kill('SIGKILL');
      throw late();
    }
    await sleep(10);
  }
}

/**
 * SIGTERM (unless it was signalled already), and resolves once `child` has exited; past
 * `timeoutMs` SIGKILLs it, waits for it to be gone and throws `late()`. At once if it has exited.
 */
export async function terminate(child: ChildProcess, timeoutMs: number, late: () => Error): Promise<void> {
  if (!alive(child)) return;
  if (!child.killed) child.kill('SIGTERM');
  const gone = exited(child);
  let timer: NodeJS.Timeout | undefined;
  const overdue = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), timeoutMs)));
  const outcome = await Promise.race([gone, overdue]);
  clearTimeout(timer);
  if (outcome === 'late') {
    child.kill('SIGKILL');
    await gone;
    throw late();
  }
}

/**
 * Writes `child`'s pid to `pidFile` (for a `{ pidFile }` watchdog) and removes the file once it
 * exits, unless `current()` says another child has taken its place meanwhile (a restart).
 */
export function recordPid(child: ChildProcess, pidFile: string, current: () => boolean): void {
  fs.writeFileSync(pidFile, String(child.pid));
  child.once('exit', () => {
    if (current()) fs.rmSync(pidFile, { force: true });
  });
}

const atExit = new Set<() => void>();
let exitHook = false;

/**
 * Runs `cleanup` (synchronous: nothing else runs then) when this process exits normally, unless
 * the returned function was called first (once the server is destroyed).
 */
export function onProcessExit(cleanup: () => void): () => void {
  atExit.add(cleanup);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => atExit.forEach((run) => run()));
  }
  return () => {
    atExit.delete(cleanup);
  };
}

const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

/**
 * How the watchdog stops a server: run `command` (argv; its output discarded), or SIGKILL the pid
 * that `pidFile` holds if there is one (for a server whose pid changes when it restarts).
 */
export type WatchdogStop = { command: string[] } | { pidFile: string };

/**
 * Spawns the watchdog: a detached `sh` that waits (polling every second) for this process to be
 * gone, then stops the server as `stop` says and removes `dir` (both no-ops once the server is
 * destroyed).
 */
export function startWatchdog(dir: string, stop: WatchdogStop): void {
  const stopCommand =
    'command' in stop
      ? `${stop.command.map(quote).join(' ')} >/dev/null 2>&1`
      : `[ -f ${quote(stop.pidFile)} ] && kill -9 "$(cat ${quote(stop.pidFile)})" 2>/dev/null`;
  spawn('sh', ['-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${stopCommand}; rm -rf ${quote(dir)}`], { detached: true, stdio: 'ignore' }).unref();
}

/**
 * Starts a server in `dir` with `start` so that it cannot outlive this process: if `start` throws,
 * `kill()`s it and removes `dir` before rethrowing; once started, the same cleanup runs at this
 * process's exit (`onProcessExit`) and the watchdog stops it as `watchdog` says once this process is
 * gone. Resolves to the function that cancels the exit cleanup (for `destroy()`).
 */
export async function startGuarded(dir: string, start: () => Promise<void>, kill: () => void, watchdog: WatchdogStop): Promise<() => void> {
  const cleanup = () => {
    kill();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await start();
  } catch (e) {
    cleanup();
    throw e;
  }
  const forget = onProcessExit(cleanup);
  startWatchdog(dir, watchdog);
  return forget;
}

/** A Debian binary at `debian`, else `name` on the PATH; throws `hint` when there is neither. */
export function binaryPath(debian: string, name: string, hint: string): string {
  if (fs.existsSync(debian)) return debian;
  try {
    const onPath = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
    if (onPath) return onPath;
  } catch {
    // not on the PATH
  }
  throw new Error(hint);
}
