/**
 * A real load balancer in front of several servers, for tests and benchmarks of a cluster:
 * Debian's `haproxy`, in the foreground (`-db`) as a child of this process, listening on a free
 * port of 127.0.0.1 only (or the port given), HTTP mode, round robin, WebSocket upgrades tunnelled
 * for up to an hour of silence, and active health checks (`GET /api/ready`, 200 expected, every
 * 500 ms; two failures take a server out, one success puts it back) so that a dead or draining
 * node stops receiving new requests within about a second. A request to a server that refuses the
 * connection is retried (twice) on another (`option redispatch`).
 *
 * Its configuration is `haproxy.cfg` in a fresh temporary directory (`haproxyConfig` makes it, and
 * is pure), what it prints (configuration warnings, servers going DOWN and UP) is `haproxy.out`
 * there. No `chroot`, no `user`: it runs as whoever runs the tests. `destroy()` stops it and removes
 * the directory or, at the latest, it is killed when the process that started it ends, however it
 * ends (a small watchdog process waits for it, since a test worker can end without running exit
 * handlers).
 *
 * Binary: `/usr/sbin/haproxy`, else `haproxy` on the PATH. None: `startHaproxy` throws saying how
 * to install it — `apt-get update && apt-get install -y haproxy` — so a suite that needs it fails
 * loudly instead of skipping.
 * Effects: processes, files under the system's temporary directory, TCP connections to 127.0.0.1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { alive, answering, binaryPath, exited, freePort, recordPid, startGuarded, terminate } from './processes.ts';

export const HAPROXY_INSTALL_HINT = "haproxy was not found. Install Debian's HAProxy: `apt-get update && apt-get install -y haproxy`.";

/** Generous limits that only catch hangs (a loaded 2-core machine is slow, never this slow). */
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 30_000;

/** A path HAProxy answers itself, 200 while it runs (`monitor-uri`): never passed to a backend. */
export const HAPROXY_MONITOR_PATH = '/__haproxy/up';

export interface HaproxyBackend {
  /** The server's name in HAProxy (letters, digits, `_ . : -`): its log lines say `plexus/<name> is DOWN`. */
  name: string;
  /** `http://host:port` of the server (a path is ignored). */
  url: string;
}

/** The `haproxy` binary; throws HAPROXY_INSTALL_HINT when there is none. */
export function haproxyPath(): string {
  return binaryPath('/usr/sbin/haproxy', 'haproxy', HAPROXY_INSTALL_HINT);
}

/** `host:port` of a backend's URL; throws on anything but plain `http://`. */
function serverAddress(b: HaproxyBackend): string {
  if (!/^[A-Za-z0-9_.:-]+$/.test(b.name)) throw new Error(`haproxy backend name ${JSON.stringify(b.name)}: only letters, digits and _ . : - are allowed`);
  let u: URL;
  try {
    u = new URL(b.url);
  } catch {
    throw new Error(`haproxy backend ${b.name}: ${JSON.stringify(b.url)} is not a URL`);
  }
  if (u.protocol !== 'http:') throw new Error(`haproxy backend ${b.name}: ${b.url} is not http:// (only plain HTTP backends are supported)`);
  return `${u.hostname}:${u.port || '80'}`;
}

/** The HAProxy configuration for `backends` behind 127.0.0.1:`port` (see the header). Pure. */
export function haproxyConfig(backends: HaproxyBackend[], port: number): string {
  if (backends.length === 0) throw new Error('haproxy: no backends');
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`haproxy: bad port ${port}`);
  const names = new Set<string>();
  const servers = backends.map((b) => {
    const address = serverAddress(b);
    if (names.has(b.name)) throw new Error(`haproxy: two backends are named ${b.name}`);
    names.add(b.name);
    return `    server ${b.name} ${address} check`;
  });
  return [
    'defaults',
    '    mode http',
    '    timeout connect 2s',
    '    timeout client 1h',
    '    timeout server 1h',
    '    timeout tunnel 1h',
    '    option redispatch',
    '    retries 2',
    '',
    'frontend plexus',
    `    bind 127.0.0.1:${port}`,
    `    monitor-uri ${HAPROXY_MONITOR_PATH}`,
    '    default_backend plexus',
    '',
    'backend plexus',
    '    balance roundrobin',
    '    option httpchk GET /api/ready',
    '    http-check expect status 200',
    '    default-server inter 500ms fall 2 rise 1',
    ...servers,
    '',
  ].join('\n');
}

/**
 * Whether HAProxy itself answers on 127.0.0.1:`port`: `GET HAPROXY_MONITOR_PATH` answered 200 (false
 * on any error, or after `timeout` ms). Not a bare TCP connect: a haproxy that cannot bind its port
 * takes a moment to exit, while whatever holds the port accepts the connection.
 */
function answers(port: number, timeout = 1_000): Promise<boolean> {
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
    socket.once('connect', () => socket.write(`GET ${HAPROXY_MONITOR_PATH} HTTP/1.0\r\n\r\n`));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(/^HTTP\/1\.[01] 200 /.test(reply));
    });
  });
}

export interface Haproxy {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly port: number;
  /** Its directory: `haproxy.cfg`, and `haproxy.out` (what it printed). */
  readonly dir: string;
  readonly configPath: string;
  /** SIGTERM (an immediate stop: open connections are cut), and resolves once it has exited. */
  stop(): Promise<void>;
  /** Stops it and removes its directory. */
  destroy(): Promise<void>;
}

/**
 * Starts HAProxy in front of `backends` on 127.0.0.1, on `opts.port` or a free port; resolves once
 * it answers there (`GET HAPROXY_MONITOR_PATH`; its first health checks may still be under way).
 */
export async function startHaproxy(backends: HaproxyBackend[], opts: { port?: number } = {}): Promise<Haproxy> {
  const bin = haproxyPath();
  haproxyConfig(backends, opts.port ?? 1); // bad backends throw before anything is made
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-haproxy-'));
  const configPath = path.join(dir, 'haproxy.cfg');
  const outFile = path.join(dir, 'haproxy.out');
  // The pid of the running haproxy, for the watchdog; removed once it has exited.
  const pidFile = path.join(dir, 'haproxy.pid');
  let port = opts.port ?? 0;
  let child: ChildProcess | null = null;
  const failed = (what: string) => {
    const out = fs.existsSync(outFile) ? fs.readFileSync(outFile, 'utf8').slice(-2000) : '';
    return new Error(`${what}${out ? `\n--- haproxy.out ---\n${out}` : ''}`);
  };
  const spawnServer = (): ChildProcess => {
    const out = fs.openSync(outFile, 'a');
    try {
      const proc = spawn(bin, ['-db', '-f', configPath], { cwd: dir, stdio: ['ignore', out, out] });
      proc.once('error', () => undefined); // a spawn that fails has no pid: reported just below
      if (proc.pid === undefined) throw failed(`haproxy did not start (${bin})`);
      recordPid(proc, pidFile, () => true);
      proc.unref(); // a forgotten haproxy does not keep this process alive (the exit hook and the watchdog kill it)
      return proc;
    } finally {
      fs.closeSync(out);
    }
  };
  /** Resolves once haproxy answers on `p` (`false`: it exited first). */
  const ready = (proc: ChildProcess, p: number) =>
    answering(proc, p, answers, START_TIMEOUT_MS, () => failed(`haproxy on 127.0.0.1:${p} did not answer within ${START_TIMEOUT_MS} ms`));
  const start = async () => {
    // A port found free can be taken before haproxy binds it: try another then.
    for (let attempt = 0; ; attempt++) {
      const p = port || (await freePort());
      fs.writeFileSync(configPath, haproxyConfig(backends, p));
      const proc = spawnServer();
      child = proc;
      if (await ready(proc, p)) {
        port = p;
        return;
      }
      if (attempt >= 2 || port) throw failed(`haproxy on 127.0.0.1:${p} exited (code ${proc.exitCode}, signal ${proc.signalCode}) before answering`);
    }
  };
  const stop = async () => {
    const proc = child;
    if (proc) await terminate(proc, STOP_TIMEOUT_MS, () => failed(`haproxy (pid ${proc.pid}) did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM; killed`));
  };
  const killNow = () => {
    if (child && alive(child)) child.kill('SIGKILL');
  };
  // Killed and its directory removed if it fails to start, at this process's exit, and by the
  // watchdog (through the pid file) once this process is gone, however it ends; all no-ops after
  // a `destroy()`.
  const forgetAtExit = await startGuarded(dir, start, killNow, { pidFile });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dir,
    configPath,
    stop,
    async destroy() {
      forgetAtExit();
      await stop().catch(() => undefined);
      killNow();
      if (child) await exited(child);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
