/**
 * A real Redis server for tests and benchmarks (no mocks): Debian's `redis-server`, in a fresh
 * temporary directory, on a free port of 127.0.0.1 only (or the port given), without persistence
 * (`--save '' --appendonly no`), in the foreground (`--daemonize no`) as a child of this process,
 * its log in `redis.log` of that directory. `stop()` and `start()` restart it on the same port (a
 * test of what happens while Redis is away); `kill()` is a crash; `destroy()` stops it and removes
 * its directory. At the latest it is killed when the process that started it ends, however it ends
 * (a small watchdog process waits for it, since a test worker can end without running exit
 * handlers).
 *
 * Readiness is a raw `PING` over TCP answered `+PONG` (no `redis-cli`, no client library).
 *
 * Binary: `/usr/bin/redis-server`, else `redis-server` on the PATH. None: `startRedis` throws
 * saying how to install it — `apt-get update && apt-get install -y redis-server` — so a suite that
 * needs Redis fails loudly instead of skipping.
 * Effects: processes, files under the system's temporary directory, TCP connections to 127.0.0.1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { alive, answering, binaryPath, exited, freePort, recordPid, startGuarded, terminate } from './processes.ts';

export const REDIS_INSTALL_HINT =
  "redis-server was not found. Install Debian's Redis: `apt-get update && apt-get install -y redis-server`.";

/** Generous limits that only catch hangs (a loaded 2-core machine is slow, never this slow). */
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 30_000;

/** The `redis-server` binary; throws REDIS_INSTALL_HINT when there is none. */
export function redisServerPath(): string {
  return binaryPath('/usr/bin/redis-server', 'redis-server', REDIS_INSTALL_HINT);
}

/** Whether a Redis server answers `PING` with `+PONG` on 127.0.0.1:`port` (false on any error, or after `timeout` ms). */
export function pingRedis(port: number, timeout = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    let reply = '';
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeout, () => done(false));
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG\r\n'));
    });
  });
}

export interface RedisServer {
  /** `redis://127.0.0.1:PORT`. */
  readonly url: string;
  readonly port: number;
  /** The server's directory (its log in `redis.log`, what it printed before opening it in `redis.out`). */
  readonly dir: string;
  /** The pid of the current redis-server process (a new one after `start()`). */
  readonly pid: number;
  readonly running: boolean;
  /** SIGTERM, and resolves once it has exited (nothing is saved: no persistence). */
  stop(): Promise<void>;
  /** Starts it again, on the same port (after `stop()` or `kill()`); resolves once it answers PING. */
  start(): Promise<void>;
  /** SIGKILL (a crash); `start()` waits for it to be gone. */
  kill(): void;
  /** Stops it and removes its directory. */
  destroy(): Promise<void>;
}

/** Starts a fresh Redis server on 127.0.0.1, on `opts.port` or a free port; resolves once it answers PING. */
export async function startRedis(opts: { port?: number } = {}): Promise<RedisServer> {
  const bin = redisServerPath();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-redis-'));
  const logFile = path.join(dir, 'redis.log');
  const outFile = path.join(dir, 'redis.out');
  // The pid of the running server, for the watchdog; removed once the server has exited.
  const pidFile = path.join(dir, 'redis.pid');
  let port = opts.port ?? 0;
  let child: ChildProcess | null = null;
  /** Up and not being stopped or killed (a signalled process may take a moment to exit). */
  const isRunning = () => child !== null && alive(child) && !child.killed;
  const failed = (what: string) => {
    const tail = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').slice(-2000) : '');
    const out = tail(outFile);
    const log = tail(logFile);
    return new Error(`${what}${out ? `\n--- redis.out ---\n${out}` : ''}${log ? `\n--- redis.log ---\n${log}` : ''}`);
  };
  const spawnServer = (p: number): ChildProcess => {
    const args = ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', dir, '--logfile', logFile];
    const out = fs.openSync(outFile, 'a');
    try {
      const proc = spawn(bin, args, { cwd: dir, stdio: ['ignore', out, out] });
      proc.once('error', () => undefined); // a spawn that fails has no pid: reported just below
      if (proc.pid === undefined) throw failed(`redis-server did not start (${bin})`);
      recordPid(proc, pidFile, () => child === proc);
      proc.unref(); // a forgotten server does not keep this process alive (the exit hook and the watchdog kill it)
      return proc;
    } finally {
      fs.closeSync(out);
    }
  };
  /** Resolves once the server on `p` answers PING (`false`: it exited first). */
  const ready = (proc: ChildProcess, p: number) =>
    answering(proc, p, pingRedis, START_TIMEOUT_MS, () => failed(`redis-server on 127.0.0.1:${p} did not answer PING within ${START_TIMEOUT_MS} ms`));
  const start = async () => {
    if (isRunning()) return;
    if (child) await exited(child); // after kill(): gone before its port is taken again
    // A port found free can be taken before the server binds it: try another then.
    for (let attempt = 0; ; attempt++) {
      const p = port || (await freePort());
      const proc = spawnServer(p);
      child = proc;
      if (await ready(proc, p)) {
        port = p;
        return;
      }
      if (attempt >= 2 || port) throw failed(`redis-server on 127.0.0.1:${p} exited (code ${proc.exitCode}, signal ${proc.signalCode}) before answering PING`);
    }
  };
  const stop = async () => {
    const proc = child;
    if (proc) await terminate(proc, STOP_TIMEOUT_MS, () => failed(`redis-server (pid ${proc.pid}) did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM; killed`));
  };
  const killNow = () => {
    if (child && alive(child)) child.kill('SIGKILL');
  };
  // Killed and its directory removed if it fails to start, at this process's exit, and by the
  // watchdog once this process is gone, however it ends (the pid file names whichever pid runs
  // now); all no-ops after a `destroy()`.
  const forgetAtExit = await startGuarded(dir, start, killNow, { pidFile });
  const server: RedisServer = {
    get url() {
      return `redis://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    dir,
    get pid() {
      return child?.pid ?? 0;
    },
    get running() {
      return isRunning();
    },
    stop,
    start,
    kill: killNow,
    async destroy() {
      forgetAtExit();
      await stop().catch(() => undefined);
      killNow();
      if (child) await exited(child);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}
