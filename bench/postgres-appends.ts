/**
 * Write-ahead appends: how many keystroke-sized updates one Postgres sustains with the guarantee
 * the server gives (an update is acknowledged only once its append committed), side by side with
 * the embedded SQLite store in the same run.
 *
 * N writers append real keystroke updates (bench/fixtures.ts `keystrokeUpdates`, ~30 bytes each)
 * in a closed loop — each waits for its append to commit before the next, as a connection's
 * updates do in the server (Hocuspocus handles one message of a connection at a time) — for
 * `--seconds` per row. Latency is per append, from the call to its commit.
 *  - SQLite: `WorkspaceStore.append` (synchronous; WAL, `synchronous=NORMAL` — survives kill -9 of
 *    the server, no fsync per commit — and `FULL`, an fsync per commit, which also survives power
 *    loss). One writer: appends block the event loop, so more writers in one process add nothing.
 *  - Postgres: `PgWorkspaceStore.append` (synchronous_commit on: every commit is fsynced, like
 *    SQLite FULL), writers on their own workspaces (`own`: appends run in parallel on the pool's
 *    10 connections) or all on one workspace (`shared`: they queue on its log head, and each
 *    store sends what queued up meanwhile as one statement — group commit), from one store or two
 *    (two servers sharing the database).
 * Postgres is a fresh cluster started here (Debian's postgresql; testkit/postgres.ts), fsync on;
 * or `--url=postgres://…` for an existing database (its tables are created if missing).
 *
 * Run: node --import tsx bench/postgres-appends.ts [--seconds=5] [--writers=1,8,32] [--url=…]
 * Prints figures; asserts nothing.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import fs from 'node:fs';
import * as Y from 'yjs';
import { WorkspaceStore } from '@plexus/server/store/workspace-store';
import { PgDatabase } from '@plexus/server/store/postgres/database';
import { PgWorkspaceStore } from '@plexus/server/store/postgres/postgres-store';
import type { WorkspaceStorage } from '@plexus/server/store/storage';
import { startPostgres } from '@plexus/testkit/postgres';
import { fillNotebook, keystrokeUpdates } from './fixtures.ts';
import { fmt, machine, printTable, summarize, tmpDir } from './lib.ts';

const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=').slice(1).join('=') ?? dflt;
const SECONDS = Number(arg('seconds', '5'));
const WRITERS = arg('writers', '1,8,32').split(',').map(Number);
const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').trim();

/** Keystroke updates of writer `i` (its own client id), cycled through. */
function updatesFor(i: number): Uint8Array[] {
  const doc = new Y.Doc();
  fillNotebook(doc, 20, 5);
  return keystrokeUpdates(Y.encodeStateAsUpdate(doc), 2000, 1000 + i, 10_000 + i);
}

interface Row {
  storage: string;
  writers: number;
  appends: number;
  perSecond: number;
  latencies: Float64Array;
  bytes: number;
}

/** `writers` closed-loop writers, writer i on workspace `wsOf(i)` through `storeOf(i)`, for SECONDS. */
async function measure(label: string, writers: number, storeOf: (i: number) => WorkspaceStorage, wsOf: (i: number) => string): Promise<Row> {
  const pools = Array.from({ length: writers }, (_, i) => updatesFor(i));
  const latencies: number[] = [];
  let bytes = 0;
  const started = performance.now();
  const end = started + SECONDS * 1000;
  await Promise.all(
    pools.map(async (updates, i) => {
      const store = storeOf(i);
      const ws = wsOf(i);
      for (let k = 0; performance.now() < end; k++) {
        const u = updates[k % updates.length]!;
        const t = performance.now();
        await store.append(ws, u);
        latencies.push(performance.now() - t);
        bytes += u.byteLength;
        if (store.syncAppends && k % 64 === 63) await new Promise((r) => setImmediate(r)); // let timers run, as a server would
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return { storage: label, writers, appends: latencies.length, perSecond: latencies.length / elapsed, latencies: Float64Array.from(latencies), bytes };
}

async function sqliteRow(sync: 'NORMAL' | 'FULL'): Promise<Row> {
  const before = process.env.PLEXUS_SQLITE_SYNC;
  process.env.PLEXUS_SQLITE_SYNC = sync;
  const store = new WorkspaceStore(path.join(tmpDir('plexus-bench-sqlite-'), 'plexus.db'), { background: true });
  if (before === undefined) delete process.env.PLEXUS_SQLITE_SYNC;
  else process.env.PLEXUS_SQLITE_SYNC = before;
  store.create({ id: 'w0', name: 'bench', state: Y.encodeStateAsUpdate(new Y.Doc()) });
  try {
    return await measure(`SQLite synchronous=${sync}`, 1, () => store, () => 'w0');
  } finally {
    store.close();
  }
}

async function main(): Promise<void> {
  console.log(`# Write-ahead appends: Postgres vs SQLite (${machine()})`);
  console.log(`# loadavg at start: ${loadavg()}`);
  const given = arg('url', '');
  const cluster = given ? null : await startPostgres();
  const url = given || (await cluster!.createDatabase('plexus_bench'));
  const dbs = [await PgDatabase.open(url), await PgDatabase.open(url)];
  const stores = dbs.map((db) => new PgWorkspaceStore(db, { background: true }));
  const settings = await dbs[0]!.query<{ name: string; setting: string }>("SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'wal_sync_method', 'server_version')");
  console.log(`# Postgres ${cluster ? `cluster started here (${cluster.dir})` : 'at --url'}: ${settings.rows.map((r) => `${r.name}=${r.setting}`).join(', ')}`);
  console.log(`# ${SECONDS} s per row; closed loop (each writer waits for its commit); keystroke updates ~${fmt(updatesFor(0).reduce((s, u) => s + u.byteLength, 0) / 2000, 1)} bytes\n`);

  const rows: Row[] = [await sqliteRow('NORMAL'), await sqliteRow('FULL')];
  let made = 0;
  const workspace = async () => {
    const id = `w${++made}`;
    await stores[0]!.create({ id, name: id, state: Y.encodeStateAsUpdate(new Y.Doc()) });
    return id;
  };
  for (const n of WRITERS) {
    const own = await Promise.all(Array.from({ length: n }, () => workspace()));
    rows.push(await measure('Postgres, own workspaces, 1 store', n, () => stores[0]!, (i) => own[i]!));
  }
  for (const n of WRITERS.filter((w) => w > 1)) {
    const shared = await workspace();
    rows.push(await measure('Postgres, one workspace, 1 store', n, () => stores[0]!, () => shared));
    const shared2 = await workspace();
    rows.push(await measure('Postgres, one workspace, 2 stores', n, (i) => stores[i % 2]!, () => shared2));
  }
  // The shared workspaces' logs hold every entry exactly once, numbered without gaps.
  const check = await dbs[0]!.query<{ ws: string; n: number; lo: number; hi: number }>('SELECT ws, count(*)::int AS n, min(seq) AS lo, max(seq) AS hi FROM log GROUP BY ws');
  const gaps = check.rows.filter((r) => r.lo !== 1 || r.hi !== r.n);
  console.log(`log check: ${check.rows.length} workspaces, ${check.rows.reduce((s, r) => s + r.n, 0)} entries, ${gaps.length ? `GAPS in ${gaps.map((g) => g.ws).join(', ')}` : 'gap-free'}\n`);

  printTable(
    ['storage', 'writers', 'appends', 'appends/s', 'KiB/s', 'p50 ms', 'p99 ms', 'max ms'],
    rows.map((r) => {
      const s = summarize(r.latencies);
      return [r.storage, r.writers, r.appends, fmt(r.perSecond, 0), fmt(r.bytes / 1024 / (r.appends / r.perSecond), 0), fmt(s.p50, 3), fmt(s.p99, 3), fmt(s.max, 1)];
    }),
  );
  console.log(`\n# loadavg at end: ${loadavg()}`);
  await Promise.all(stores.map((s) => s.close()));
  await cluster?.destroy();
}

await main();
