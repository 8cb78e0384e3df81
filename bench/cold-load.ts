/**
 * Server-side cold load of a workspace.
 *
 * Setup (in this process, through the server's own code): an in-process Plexus server on a temp
 * data dir creates workspace A with `workspaces.create({ fill })` (1,000 code cells of 20 lines,
 * each with a small `outputs` Y.Map), a variant A-md (every fifth cell markdown with headings,
 * lists and italics instead: many more Yjs structs), A10k (10,000 such code cells: what opening a
 * big workspace costs grows with the document), duplicates A, and appends
 * real single-keystroke Yjs updates (typed on a copy of A with insertCellText, ~8% backspaces)
 * with `store.append`: 1,000 (B1k: the most a crash can leave at the default compactEvery),
 * 10,000 (B10k) and 100,000 (B100k) entries on top of the snapshot. Then it stops; the database
 * is the pristine fixture.
 *
 * Measured:
 *  1. raw, in this process: a fresh WorkspaceStore's `load(ws)` (SQLite read + merge of snapshot
 *     and log) and `Y.applyUpdate` into a new Y.Doc, as DurablePersistence.onLoadDocument does;
 *     plus the alternative of applying snapshot and log entries one by one in one transaction.
 *  2. a fresh server process (server/src/main.ts, PLEXUS_COMPACT_EVERY huge so nothing is
 *     compacted) on a fresh copy of the fixture, per run: four identical copies of A one after
 *     the other (the 1st meets a JIT-cold process, later ones show a warming process: every load
 *     is a cold *document*), then A-md, B1k, B10k and A10k. Two clients:
 *     - "server": a minimal protocol client timing connection request -> first byte of the
 *       document state (sync step 2). Nothing is applied: this is the server side.
 *     - "synced": a stock @hocuspocus/provider, connection request -> `synced` (includes the
 *       client applying the whole document).
 *     The server's own log line "document loaded" (onLoadDocument time) is reported too.
 *  3. B1k once more with the default compactEvery (1000): the load then also compacts before the
 *     client is answered (afterLoadDocument).
 *  4. B100k in a fresh server process, with a time limit (a slow load blocks the event loop).
 *  5. with --cpu-prof: a V8 CPU profile of a server process opening B10k, summarised.
 *
 * Run: npx tsx bench/cold-load.ts [--runs=3] [--limit100k=30000] [--cpu-prof]
 * Prints figures; asserts nothing.
 */
import { unpackStateParts } from '@plexus/shared/state-parts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as Y from 'yjs';
import { loadConfig } from '@plexus/server/config';
import { startServer } from '@plexus/server/app';
import { WorkspaceStore, snapshotFileOf } from '@plexus/server/store/workspace-store';
import { fillNotebook, keystrokeUpdates } from './fixtures.ts';
import { printProfile } from './cpuprofile.ts';
import { BENCH_SECRET, connectClient, fmt, machine, median, printTable, rawOpen, repoRoot, sleep, spawnServer, tmpDir, type BenchClient, type ChildServer } from './lib.ts';
import { sqliteStore } from '@plexus/testkit';

const argv = process.argv.slice(2);
const arg = (k: string, d: number) => Number(argv.find((a) => a.startsWith(`--${k}=`))?.split('=')[1] ?? d);
const RUNS = arg('runs', 3);
const LIMIT_100K = arg('limit100k', 30_000);
const CPU_PROF = argv.includes('--cpu-prof');
const HUGE = '1000000000';

interface Fixture {
  dbFile: string;
  ids: { A1: string; A2: string; A3: string; A4: string; Amd: string; A10k: string; B1k: string; B10k: string; B100k: string };
  stateBytes: number;
  cells: number;
}

async function buildFixture(): Promise<Fixture> {
  const dir = tmpDir('plexus-cold-fixture-');
  const server = await startServer(
    loadConfig({ PLEXUS_LOG_LEVEL: 'warn' } as NodeJS.ProcessEnv, {
      port: 0, host: '127.0.0.1', dataDir: dir, seedDemo: false, secret: BENCH_SECRET, compactEvery: 1e9, compactIdleMs: 1e9, clientDir: path.join(dir, 'no-client'),
    }),
  );
  try {
    const t0 = performance.now();
    const A1 = (await server.workspaces.create({ name: 'A1: 1000 cells', fill: (doc) => fillNotebook(doc, 1000, 20) })).id;
    const t1 = performance.now();
    const Amd = (await server.workspaces.create({ name: 'A-md: 1000 cells, 200 markdown', fill: (doc) => fillNotebook(doc, 1000, 20, 5) })).id;
    const A10k = (await server.workspaces.create({ name: 'A10k: 10000 cells', fill: (doc) => fillNotebook(doc, 10_000, 20) })).id;
    const [A2, A3, A4, B1k, B10k, B100k] = await Promise.all(['A2', 'A3', 'A4', 'B1k', 'B10k', 'B100k'].map(async (n) => (await server.workspaces.duplicate(A1, n)).id));
    const store = sqliteStore(server);
    const state = store.load(A1).update!;
    const t2 = performance.now();
    const updates = keystrokeUpdates(state, 100_000);
    const t3 = performance.now();
    // One SQLite transaction per batch only to build the fixture fast; entries are the same rows.
    store.db.transaction(() => {
      for (const u of updates.slice(0, 1_000)) store.append(B1k!, u);
      for (const u of updates.slice(0, 10_000)) store.append(B10k!, u);
      for (const u of updates) store.append(B100k!, u);
    })();
    const t4 = performance.now();
    const avg = updates.reduce((s, u) => s + u.byteLength, 0) / updates.length;
    console.log(
      `fixture: fill 1000 cells ${fmt(t1 - t0, 0)} ms, A-md and duplicates ${fmt(t2 - t1, 0)} ms, 100k keystroke updates ${fmt(t3 - t2, 0)} ms (avg ${fmt(avg, 1)} bytes), ` +
        `append 111k log rows ${fmt(t4 - t3, 0)} ms; snapshot ${(state.byteLength / 1024).toFixed(0)} KiB`,
    );
    const mdBytes = store.load(Amd).update!.byteLength;
    const bigBytes = store.load(A10k).update!;
    console.log(
      `A: ${(state.byteLength / 1024).toFixed(0)} KiB, ${Y.decodeUpdate(state).structs.length} structs; A-md: ${(mdBytes / 1024).toFixed(0)} KiB, ${Y.decodeUpdate(store.load(Amd).update!).structs.length} structs; ` +
        `A10k: ${(bigBytes.byteLength / 1024).toFixed(0)} KiB, ${Y.decodeUpdate(bigBytes).structs.length} structs`,
    );
    return { dbFile: path.join(dir, 'plexus.db'), ids: { A1, A2: A2!, A3: A3!, A4: A4!, Amd, A10k, B1k: B1k!, B10k: B10k!, B100k: B100k! }, stateBytes: state.byteLength, cells: 1000 };
  } finally {
    await server.close();
  }
}

/** A fresh data dir holding a copy of the pristine fixture databases (the log's and the snapshots'). */
function freshCopy(f: Fixture): string {
  const dir = tmpDir('plexus-cold-run-');
  fs.copyFileSync(f.dbFile, path.join(dir, 'plexus.db'));
  fs.copyFileSync(snapshotFileOf(f.dbFile), snapshotFileOf(path.join(dir, 'plexus.db')));
  return dir;
}

interface RawTimes {
  sqlMs: number;
  loadMs: number;
  applyMs: number;
  totalMs: number;
  seqMs: number;
  logEntries: number;
}

/** store.load + Y.applyUpdate (as onLoadDocument), and the one-by-one alternative. */
function rawLoad(f: Fixture, id: string): RawTimes {
  const store = new WorkspaceStore(f.dbFile);
  try {
    const t0 = performance.now();
    const snap = store.db.prepare('SELECT upto, data FROM snapshots WHERE ws = ?').get(id) as { upto: number; data: Buffer };
    const rows = store.db.prepare('SELECT seq, data FROM log WHERE ws = ? AND seq > ? ORDER BY seq').all(id, snap.upto) as Array<{ data: Buffer }>;
    const t1 = performance.now();
    const loaded = store.load(id);
    const t2 = performance.now();
    Y.applyUpdate(new Y.Doc(), loaded.update!);
    const t3 = performance.now();
    const doc = new Y.Doc();
    doc.transact(() => {
      for (const part of unpackStateParts(new Uint8Array(snap.data))) Y.applyUpdate(doc, part); // one, or a large snapshot's parts (§41)
      for (const r of rows) Y.applyUpdate(doc, new Uint8Array(r.data));
    });
    const t4 = performance.now();
    return { sqlMs: t1 - t0, loadMs: t2 - t1, applyMs: t3 - t2, totalMs: t3 - t1, seqMs: t4 - t3, logEntries: rows.length };
  } finally {
    store.close();
  }
}

interface OpenResult {
  ws: string;
  phase: string;
  client: 'server' | 'synced';
  ms: number;
  serverLoadMs: number;
  bytes: number;
}

/** Parses the server's "document loaded" log line for `ws`. */
async function loggedLoadMs(server: ChildServer, ws: string): Promise<number> {
  for (let i = 0; i < 100; i++) {
    for (const l of server.output) {
      if (!l.includes('"document loaded"') || !l.includes(`"${ws}"`)) continue;
      return (JSON.parse(l) as { ms: number }).ms;
    }
    await sleep(10);
  }
  return NaN;
}

async function openOnce(server: ChildServer, ws: string, client: 'server' | 'synced', phase: OpenResult['phase'], keep: Array<{ close(): void }>): Promise<OpenResult> {
  if (client === 'server') {
    const r = await rawOpen(server.url, ws, server.token, LIMIT_100K);
    keep.push(r);
    return { ws, phase, client, ms: r.stateMs, serverLoadMs: await loggedLoadMs(server, ws), bytes: r.bytes };
  }
  const t0 = performance.now();
  const c: BenchClient = connectClient(server.url, ws, server.token);
  await c.synced;
  const ms = performance.now() - t0;
  keep.push({ close: () => c.destroy() });
  return { ws, phase, client, ms, serverLoadMs: await loggedLoadMs(server, ws), bytes: Y.encodeStateAsUpdate(c.doc).byteLength };
}

async function main(): Promise<void> {
  console.log(`# Cold load (${machine()}, load ${os.loadavg()[0]!.toFixed(1)})\n`);
  const f = await buildFixture();
  const name: Record<string, string> = Object.fromEntries(Object.entries(f.ids).map(([k, v]) => [v, k]));

  // 1. raw
  console.log('\n## 1. Raw, in this process: fresh WorkspaceStore, store.load + Y.applyUpdate (ms, median of runs)');
  const rawRows: Array<Array<string | number>> = [];
  for (const [key, runs] of [['A1', 5], ['Amd', 5], ['A10k', 2], ['B1k', 5], ['B10k', 2]] as const) {
    const rs = Array.from({ length: runs }, () => rawLoad(f, f.ids[key]));
    rawRows.push([key, rs[0]!.logEntries, runs, fmt(median(rs.map((r) => r.sqlMs)), 1), fmt(median(rs.map((r) => r.loadMs)), 1), fmt(median(rs.map((r) => r.applyMs)), 1), fmt(median(rs.map((r) => r.totalMs)), 1), fmt(median(rs.map((r) => r.seqMs)), 1)]);
  }
  const big = rawLoad(f, f.ids.B100k);
  rawRows.push(['B100k', big.logEntries, 1, fmt(big.sqlMs, 1), fmt(big.loadMs, 1), fmt(big.applyMs, 1), fmt(big.totalMs, 1), fmt(big.seqMs, 1)]);
  printTable(['workspace', 'log entries', 'runs', 'SQL read', 'store.load (read + merge)', 'Y.applyUpdate', 'load + apply', 'alternative: apply snapshot + entries in one txn'], rawRows);

  // For reference: one flat Y.mergeUpdates over the same entries (quadratic, yjs/yjs#710).
  {
    const state = rawLoadState(f, f.ids.A1);
    const entries = logEntries(f, f.ids.B10k);
    const t = performance.now();
    Y.mergeUpdates([state, ...entries]);
    console.log(`\nreference: a flat Y.mergeUpdates(snapshot + 10,000 entries) takes ${fmt(performance.now() - t, 0)} ms (quadratic; 30,000 took ~35-55 s in ad-hoc runs)`);
  }

  // 2. fresh server processes
  console.log(`\n## 2. Fresh server process (compaction disabled), connection request -> state / synced, ${RUNS} runs per client kind`);
  const opens: OpenResult[] = [];
  for (let run = 0; run < RUNS; run++) {
    for (const client of ['server', 'synced'] as const) {
      const dir = freshCopy(f);
      const server = await spawnServer('plexus', { dataDir: dir, env: { PLEXUS_LOG_LEVEL: 'info', PLEXUS_COMPACT_EVERY: HUGE, PLEXUS_COMPACT_IDLE_MS: HUGE } });
      const keep: Array<{ close(): void }> = [];
      try {
        // Four identical copies of A, in a rotating order: the 1st load meets a JIT-cold process.
        const copies = [f.ids.A1, f.ids.A2, f.ids.A3, f.ids.A4];
        for (let i = 0; i < 4; i++) opens.push(await openOnce(server, copies[(i + run) % 4]!, client, ['1st load in process', '2nd load', '3rd load', '4th load'][i]!, keep));
        opens.push(await openOnce(server, f.ids.Amd, client, 'after 4 loads', keep));
        opens.push(await openOnce(server, f.ids.B1k, client, 'after 5 loads', keep));
        opens.push(await openOnce(server, f.ids.B10k, client, 'after 6 loads', keep));
        opens.push(await openOnce(server, f.ids.A10k, client, 'after 7 loads', keep));
      } finally {
        keep.forEach((k) => k.close());
        await server.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  const groups = new Map<string, OpenResult[]>();
  for (const o of opens) {
    const key = `${[f.ids.A1, f.ids.A2, f.ids.A3, f.ids.A4].includes(o.ws) ? 'A' : name[o.ws]}|${o.phase}|${o.client}`;
    groups.set(key, [...(groups.get(key) ?? []), o]);
  }
  printTable(
    ['workspace', 'process', 'measured to', 'n', 'p50 ms', 'min', 'max', 'server "document loaded" p50 ms', 'state KiB'],
    [...groups.entries()].map(([key, os]) => {
      const [ws, phase, client] = key.split('|');
      const ms = os.map((o) => o.ms);
      return [ws!, phase!, client === 'server' ? 'state (server side)' : 'synced (stock provider)', os.length, fmt(median(ms), 1), fmt(Math.min(...ms), 1), fmt(Math.max(...ms), 1), fmt(median(os.map((o) => o.serverLoadMs)), 1), (os[0]!.bytes / 1024).toFixed(0)];
    }),
  );

  // 3. default compaction: B1k's load compacts before answering
  console.log('\n## 3. B1k with the default compactEvery (1000): load-time compaction is on the critical path');
  const defRows: Array<Array<string | number>> = [];
  for (let run = 0; run < 2; run++) {
    const dir = freshCopy(f);
    const server = await spawnServer('plexus', { dataDir: dir, env: { PLEXUS_LOG_LEVEL: 'info' } });
    const keep: Array<{ close(): void }> = [];
    try {
      for (const a of [f.ids.A1, f.ids.A2, f.ids.A3]) await openOnce(server, a, 'server', 'warm-up', keep); // as in 2.
      const r = await openOnce(server, f.ids.B1k, 'server', 'after 3 loads', keep);
      defRows.push([run + 1, fmt(r.ms, 1), fmt(r.serverLoadMs, 1)]);
    } finally {
      keep.forEach((k) => k.close());
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  printTable(['run', 'request -> state ms', 'server "document loaded" ms (before compaction)'], defRows);

  // 4. B100k, time-limited
  console.log(`\n## 4. B100k (100,000 log entries) in a fresh server process, limit ${LIMIT_100K / 1000} s`);
  {
    const dir = freshCopy(f);
    const server = await spawnServer('plexus', { dataDir: dir, env: { PLEXUS_LOG_LEVEL: 'info', PLEXUS_COMPACT_EVERY: HUGE, PLEXUS_COMPACT_IDLE_MS: HUGE } });
    const t0 = performance.now();
    try {
      const r = await rawOpen(server.url, f.ids.B100k, server.token, LIMIT_100K);
      console.log(`  request -> state: ${fmt(r.stateMs, 0)} ms; server "document loaded": ${fmt(await loggedLoadMs(server, f.ids.B100k), 0)} ms`);
      r.close();
    } catch (e) {
      console.log(`  no document state after ${fmt(performance.now() - t0, 0)} ms (${(e as Error).message}); the server's event loop was blocked meanwhile`);
    } finally {
      // SIGTERM is not handled while the loop is blocked.
      await server.kill();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  // 5. where the time goes: CPU profile of a server loading B10k
  if (CPU_PROF) {
    console.log('\n## 5. CPU profile of a fresh server process opening B10k (whole process life, incl. startup)');
    const dir = freshCopy(f);
    const profDir = path.join(repoRoot, 'bench/results/profiles/cold-load');
    fs.rmSync(profDir, { recursive: true, force: true });
    const server = await spawnServer('plexus', {
      dataDir: dir,
      env: { PLEXUS_COMPACT_EVERY: HUGE, PLEXUS_COMPACT_IDLE_MS: HUGE },
      nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profDir}`],
    });
    try {
      (await rawOpen(server.url, f.ids.B10k, server.token)).close();
    } finally {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const prof = fs.existsSync(profDir) ? fs.readdirSync(profDir).filter((p) => p.endsWith('.cpuprofile')) : [];
    if (prof.length) printProfile(path.join(profDir, prof[0]!), 12);
    else console.log('  (no profile written)');
  }
  fs.rmSync(path.dirname(f.dbFile), { recursive: true, force: true });
}

function rawLoadState(f: Fixture, id: string): Uint8Array {
  const store = new WorkspaceStore(f.dbFile);
  try {
    return store.load(id).update!;
  } finally {
    store.close();
  }
}

function logEntries(f: Fixture, id: string): Uint8Array[] {
  const store = new WorkspaceStore(f.dbFile);
  try {
    return (store.db.prepare('SELECT data FROM log WHERE ws = ? ORDER BY seq').all(id) as Array<{ data: Buffer }>).map((r) => new Uint8Array(r.data));
  } finally {
    store.close();
  }
}

await main();
