/**
 * A real Postgres server for tests and benchmarks (no mocks): Debian's `postgresql` binaries
 * (`initdb`, `pg_ctl`, `psql`), a fresh cluster in a temporary directory, on a free port of
 * 127.0.0.1 only, trust authentication (superuser `plexus`, no password), stopped and removed by
 * `destroy()` or, at the latest, when the process that started it ends (however it ends: a small
 * watchdog process waits for it, since a test worker can end without running exit handlers).
 *
 * Postgres refuses to run as root. As root (CI, containers) every server command runs as the
 * `postgres` user that Debian's package creates (`runuser -u postgres --`), and the cluster's
 * directory is handed to that user; as any other user the commands run as that user.
 *
 * Binaries: `PLEXUS_PG_BIN` (a directory), else the newest `/usr/lib/postgresql/<version>/bin`,
 * else `initdb` on the PATH. None: `startPostgres` throws saying how to install them —
 * `apt-get update && apt-get install -y postgresql` (what `.ci/run` does) — so a suite that needs
 * Postgres fails loudly instead of skipping.
 * Effects: processes, files under the system's temporary directory.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, onProcessExit, startWatchdog } from './processes.ts';

const run = promisify(execFile);

export const POSTGRES_INSTALL_HINT =
  "Postgres binaries (initdb, pg_ctl, psql) were not found. Install Debian's PostgreSQL: `apt-get update && apt-get install -y postgresql` " +
  '(.ci/run does), or set PLEXUS_PG_BIN to the directory that holds them.';

/** The directory holding `initdb`, `pg_ctl` and `psql`; throws POSTGRES_INSTALL_HINT when there is none. */
export function postgresBinDir(): string {
  const has = (dir: string) => ['initdb', 'pg_ctl', 'psql'].every((b) => fs.existsSync(path.join(dir, b)));
  const given = process.env.PLEXUS_PG_BIN;
  if (given) {
    if (!has(given)) throw new Error(`PLEXUS_PG_BIN=${given} does not hold initdb, pg_ctl and psql. ${POSTGRES_INSTALL_HINT}`);
    return given;
  }
  const candidates: string[] = [];
  const debian = '/usr/lib/postgresql';
  if (fs.existsSync(debian)) {
    const versions = fs.readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => path.join(debian, v, 'bin')));
  }
  try {
    const onPath = execFileSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).trim();
    if (onPath) candidates.push(path.dirname(fs.realpathSync(onPath)));
  } catch {
    // not on the PATH
  }
  const found = candidates.find(has);
  if (!found) throw new Error(POSTGRES_INSTALL_HINT);
  return found;
}

/** Who runs the server: as root, Debian's `postgres` user (Postgres will not run as root). */
function serverUser(): { prefix: string[]; uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  let uid: number;
  let gid: number;
  try {
    uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  } catch {
    throw new Error("Postgres does not run as root, and there is no `postgres` user to run it as: install Debian's postgresql package (it creates one) or run the tests as another user.");
  }
  return { prefix: ['runuser', '-u', 'postgres', '--'], uid, gid };
}

export interface PostgresServer {
  readonly port: number;
  /** The cluster's directory (data in `data/`, the server log in `postgres.log`). */
  readonly dir: string;
  /** Connection URL of database `db` (default `postgres`). */
  url(db?: string): string;
  /** Creates a fresh, empty database; resolves to its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Runs SQL with psql in database `db`; resolves to its output (unaligned, tuples only). */
  psql(sql: string, db?: string): Promise<string>;
  /** Stops the server, keeping its data (`immediate`: a crash, recovered at the next start). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again, on the same port and data. */
  start(): Promise<void>;
  readonly running: boolean;
  /** Stops it and removes its directory. */
  destroy(): Promise<void>;
}

/**
 * Starts a fresh Postgres cluster. `fsync: false` trades crash safety of Postgres itself for speed
 * (never for a test of what survives a Postgres crash); default true.
 */
export async function startPostgres(opts: { fsync?: boolean } = {}): Promise<PostgresServer> {
  const bin = postgresBinDir();
  const user = serverUser();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-pg-'));
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'postgres.log');
  if (user) fs.chownSync(dir, user.uid, user.gid);
  const command = (cmd: string, args: string[]): [string, string[]] => {
    const full = [...(user?.prefix ?? []), path.join(bin, cmd), ...args];
    return [full[0]!, full.slice(1)];
  };
  const env = { ...process.env, LC_ALL: 'C', LANG: 'C' };
  const asServer = (cmd: string, args: string[]) => run(...command(cmd, args), { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 });
  const failed = (what: string, e: unknown) => {
    const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').slice(-2000) : '';
    const err = e as { stderr?: string; message: string };
    return new Error(`${what} failed: ${err.stderr || err.message}${log ? `\n--- postgres.log ---\n${log}` : ''}`);
  };
  try {
    await asServer('initdb', ['-D', data, '-U', 'plexus', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw failed('initdb', e);
  }
  let port = 0;
  let running = false;
  const settings = (p: number) =>
    [`-p ${p}`, '-c listen_addresses=127.0.0.1', `-c unix_socket_directories=${dir}`, '-c shared_buffers=32MB', `-c fsync=${opts.fsync === false ? 'off' : 'on'}`].join(' ');
  const pgctl = (args: string[]) => asServer('pg_ctl', ['-D', data, ...args]);
  const start = async () => {
    // A port found free can be taken before the server binds it: try another then.
    for (let attempt = 0; ; attempt++) {
      const p = port || (await freePort());
      try {
        await pgctl(['-l', logFile, '-w', '-t', '180', '-o', settings(p), 'start']);
        port = p;
        running = true;
        return;
      } catch (e) {
        if (attempt >= 2 || port) throw failed('pg_ctl start', e);
      }
    }
  };
  const stopNow = () => {
    if (!running) return;
    running = false;
    spawnSync(...command('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']), { cwd: dir, env, stdio: 'ignore' });
  };
  await start();
  const atExit = () => {
    stopNow();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const forgetAtExit = onProcessExit(atExit);
  // The watchdog: once this process is gone, stop the server and remove its directory (no-ops
  // after a `destroy()`).
  startWatchdog(dir, { command: command('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']).flat() });
  const psqlArgs = (db: string) => ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', String(port), '-U', 'plexus', '-d', db];
  let made = 0;
  const server: PostgresServer = {
    get port() {
      return port;
    },
    dir,
    get running() {
      return running;
    },
    url: (db = 'postgres') => `postgres://plexus@127.0.0.1:${port}/${db}`,
    async psql(sql, db = 'postgres') {
      try {
        return (await run(path.join(bin, 'psql'), [...psqlArgs(db), '-c', sql])).stdout;
      } catch (e) {
        throw failed('psql', e);
      }
    },
    async createDatabase(name = `plexus_${process.pid}_${++made}`) {
      await server.psql(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      return server.url(name);
    },
    async stop(mode = 'fast') {
      if (!running) return;
      try {
        await pgctl(['-m', mode, '-w', '-t', '180', 'stop']);
      } catch (e) {
        throw failed('pg_ctl stop', e);
      }
      running = false;
    },
    start,
    async destroy() {
      forgetAtExit();
      if (running) await server.stop('immediate').catch(() => stopNow());
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}
