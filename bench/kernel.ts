/**
 * Kernel benchmarks, against the server as shipped (server/src/main.ts in a child process, kernel
 * on by default) with two stock Hocuspocus clients A and B:
 *
 *  1. Edit-to-visible latency of a 100-cell dependency chain of trivial cells: A edits the root and
 *     requests a run; measured until B sees the last cell's new output. JavaScript and SQL chains.
 *  2. Kernel overhead per trivial cell: the same chain time divided by 100 (each cell's own run time
 *     is ~0.05 ms: the rest is scheduling, IPC with the sandboxed runner, document writes, relay).
 *  3. Editing the root 10 times a second for 5 s while a chain of cells that each wait 5 ms runs:
 *     B samples every 5 ms how many cells are `running` (must never exceed 1) and counts superseded
 *     (cancelled) runs; the final outputs must match the last edit.
 *  4. An SQL aggregation over a 1,000,000-row Parquet file uploaded through the API, run as a cell
 *     (request → B sees the table) vs the same query in plain DuckDB from Node (in this process,
 *     same DuckDB package), on the Parquet file and on the imported table file.
 *
 * Run: npx tsx bench/kernel.ts [--rounds=20]
 * Side by side: npx tsx bench/kernel.ts --servers=plexus,plexus-kernel-socket [--rounds=20] runs
 * only the chains (1–2) on each server kind (bench/lib.ts), one round on each in turn, so drifting
 * background load hits them alike, and prints each kind's figures and their ratios to the first.
 * `--only=code|sql` runs one kind of chain; `--cpu-prof` has each server write a CPU profile and
 * prints its summary (both run the side-by-side chains, also on one server kind). `--others=N`
 * (side by side only) puts N cells that the chains do not read in the notebook first (code cells
 * of 20 lines, every fifth markdown): the chains in a long notebook.
 * Prints figures; asserts nothing (it exits non-zero only if the final state is wrong).
 */
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  createCell, getCell, listCells, readCellRun, readKernelStatus, requestRun, setCellSource, userOrigin, type CellRunView,
} from '@plexus/shared';
import { connectClient, createWorkspace, fmt, machine, median, printTable, repoRoot, spawnServer, summarize, tmpDir, until, type BenchClient, type ChildServer, type ServerKind } from './lib.ts';
import { printProfile } from './cpuprofile.ts';
import { unrelatedCells } from './fixtures.ts';

const ROUNDS = Number(process.argv.find((a) => a.startsWith('--rounds='))?.split('=')[1] ?? 20);
const SERVERS = (process.argv.find((a) => a.startsWith('--servers='))?.split('=')[1] ?? 'plexus').split(',') as Array<Exclude<ServerKind, 'static'>>;
const N = 100;
/** `--cpu-prof`: each server writes a CPU profile (bench/results/profiles/kernel-<kind>), summarised at the end. */
const CPU_PROF = process.argv.includes('--cpu-prof');
/** `--only=code|sql`: one kind of chain. */
const ONLY = process.argv.find((a) => a.startsWith('--only='))?.split('=')[1] as 'code' | 'sql' | undefined;
/** `--others=N`: N unrelated cells in the notebook before the chains (side by side only). */
const OTHERS = Number(process.argv.find((a) => a.startsWith('--others='))?.split('=')[1] ?? 0);
const who = { id: 'bench', name: 'Bench' };
const origin = userOrigin('bench', 'Bench');
const shown = (v: CellRunView | null) => (v?.outputs[0]?.type === 'text' ? v.outputs[0].text : v?.outputs[0]?.type === 'table' ? JSON.stringify(v.outputs[0].rows[0]) : '');

async function chain(a: BenchClient, b: BenchClient, kind: 'code' | 'sql'): Promise<{ ids: string[] }> {
  const ids: string[] = [];
  for (let i = 0; i < N; i++) {
    if (kind === 'code') ids.push(createCell(a.doc, { kind, author: 'bench', source: i === 0 ? 'const v0 = 0;' : `const v${i} = v${i - 1} + 1;${i === N - 1 ? `\nv${i}` : ''}` }, origin));
    else ids.push(createCell(a.doc, { kind, author: 'bench', name: `t${i}`, source: i === 0 ? 'SELECT 0 AS v' : `SELECT v + 1 AS v FROM t${i - 1}` }, origin));
  }
  await until(() => ids.every((id) => getCell(b.doc, id)), 20_000, 5, 'cells on B');
  return { ids };
}

/** `n` cells no chain reads, before the chains (`--others`). */
async function others(a: BenchClient, b: BenchClient, n: number): Promise<void> {
  const ids = unrelatedCells(a.doc, n, origin);
  await until(() => ids.every((id) => getCell(b.doc, id)), 120_000, 20, 'other cells on B');
}

/** One round: edit + Run the root in A (value `k`), until B shows the last cell's new output; ms. */
async function chainRound(a: BenchClient, b: BenchClient, kind: 'code' | 'sql', ids: string[], k: number): Promise<number> {
  const last = ids[ids.length - 1]!;
  const expected = kind === 'code' ? String(k + N - 1) : JSON.stringify({ v: k + N - 1 });
  const t0 = performance.now();
  setCellSource(a.doc, ids[0]!, kind === 'code' ? `const v0 = ${k};` : `SELECT ${k} AS v`, origin);
  requestRun(a.doc, ids[0]!, who, origin);
  await until(() => {
    const v = readCellRun(b.doc, last);
    return !!v && v.state === 'done' && shown(v) === expected;
  }, 30_000, 1, `${kind} chain value ${k}`);
  const ms = performance.now() - t0;
  await until(() => readKernelStatus(b.doc).state === 'idle', 10_000, 2);
  return ms;
}

async function measureChain(a: BenchClient, b: BenchClient, kind: 'code' | 'sql', ids: string[]): Promise<number[]> {
  const out: number[] = [];
  for (let r = 0; r <= ROUNDS; r++) {
    const ms = await chainRound(a, b, kind, ids, 1000 + r);
    if (r > 0) out.push(ms); // round 0 warms up (and starts the SQL engine)
  }
  return out;
}

/** The chains on several server kinds, one round on each in turn. */
async function compareChains(): Promise<void> {
  console.log(`Kernel chains, side by side — ${machine()}; ${ROUNDS} rounds per chain, servers in turn: ${SERVERS.join(', ')}`);
  const sides: Array<{ kind: string; server: ChildServer; a: BenchClient; b: BenchClient; js: string[]; sql: string[]; times: { code: number[]; sql: number[] } }> = [];
  try {
    for (const kind of SERVERS) {
      const profDir = path.join(repoRoot, 'bench/results/profiles', `kernel-${kind}`);
      if (CPU_PROF) fs.rmSync(profDir, { recursive: true, force: true });
      const nodeArgs = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--cpu-prof-interval=250'] : [];
      const server = await spawnServer(kind, { dataDir: tmpDir('plexus-bench-kernel-'), env: { PLEXUS_LOG_LEVEL: 'warn' }, nodeArgs });
      const ws = await createWorkspace(server, 'kernel bench');
      const a = connectClient(server.url, ws, server.token);
      const b = connectClient(server.url, ws, server.token);
      sides.push({ kind, server, a, b, js: [], sql: [], times: { code: [], sql: [] } });
      await Promise.all([a.synced, b.synced]);
      await until(() => readKernelStatus(b.doc).state !== 'offline', 20_000, 5, 'kernel');
      if (OTHERS) await others(a, b, OTHERS);
      sides[sides.length - 1]!.js = (await chain(a, b, 'code')).ids;
      sides[sides.length - 1]!.sql = (await chain(a, b, 'sql')).ids;
    }
    for (const kind of ONLY ? [ONLY] : (['code', 'sql'] as const)) {
      for (let r = 0; r <= ROUNDS; r++) {
        for (const s of r % 2 ? [...sides].reverse() : sides) {
          const ms = await chainRound(s.a, s.b, kind, kind === 'code' ? s.js : s.sql, 1000 + r);
          if (r > 0) s.times[kind].push(ms);
        }
      }
    }
    const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
    console.log(`\n${N}-cell chain${OTHERS ? ` after ${OTHERS} other cells` : ''}, edit + Run in A → last output in B, ms (load average ${load} at the end)`);
    const base = sides[0]!;
    printTable(['server', 'chain', 'p50', 'p95', 'max', 'per cell (p50 / 100)', `p50 / ${base.kind}`], sides.flatMap((s) => (ONLY ? [ONLY] : (['code', 'sql'] as const)).map((kind) => {
      const x = summarize(s.times[kind]);
      return [s.kind, kind === 'code' ? 'JavaScript' : 'SQL', fmt(x.p50, 1), fmt(x.p95, 1), fmt(x.max, 1), fmt(x.p50 / N, 2), fmt(x.p50 / summarize(base.times[kind]).p50, 2)];
    })));
  } finally {
    for (const s of sides) {
      s.a.provider.destroy();
      s.b.provider.destroy();
      await s.server.stop();
    }
  }
  if (CPU_PROF) {
    for (const s of sides) {
      const dir = path.join(repoRoot, 'bench/results/profiles', `kernel-${s.kind}`);
      // The main thread's profile is the first one written (the others are worker threads).
      const file = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()[0] : undefined;
      if (file) {
        console.log(`\n## CPU profile of the ${s.kind} server process (${dir})`);
        printProfile(path.join(dir, file), 25);
      }
    }
  }
}

async function supersede(a: BenchClient, b: BenchClient): Promise<Record<string, number | string>> {
  const ids: string[] = [];
  for (let i = 0; i < 30; i++)
    ids.push(createCell(a.doc, { kind: 'code', author: 'bench', source: i === 0 ? 'const w0 = 0;' : `await new Promise((r) => setTimeout(r, 5));\nconst w${i} = w${i - 1} + 1;\nw${i}` }, origin));
  await until(() => listCells(b.doc).length >= ids.length + 2 * N, 20_000, 5, 'cells on B');
  let maxRunning = 0;
  let samples = 0;
  const cancelled = new Set<string>();
  const sampler = setInterval(() => {
    let running = 0;
    for (const id of ids) {
      const v = readCellRun(b.doc, id);
      if (v?.state === 'running') running++;
      if (v?.exec?.state === 'cancelled') cancelled.add(v.exec.runId);
    }
    maxRunning = Math.max(maxRunning, running);
    samples++;
  }, 5);
  const countBefore = readKernelStatus(b.doc).count;
  let k = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < 5000) {
    k++;
    setCellSource(a.doc, ids[0]!, `const w0 = ${k * 100};`, origin);
    requestRun(a.doc, ids[0]!, who, origin);
    await new Promise((r) => setTimeout(r, 100));
  }
  const last = ids[ids.length - 1]!;
  const expected = String(k * 100 + ids.length - 1);
  await until(() => shown(readCellRun(b.doc, last)) === expected && readKernelStatus(b.doc).state === 'idle', 30_000, 5, 'final state');
  clearInterval(sampler);
  const runs = readKernelStatus(b.doc).count - countBefore;
  const consistent = ids.every((id, i) => i === 0 || shown(readCellRun(b.doc, id)) === String(k * 100 + i));
  return { edits: k, 'cell runs started': runs, 'runs a full re-run per edit would start': k * ids.length, 'max running at once (B samples)': maxRunning, samples, 'superseded runs visible to B (cancelled after showing running)': cancelled.size, 'final outputs match last edit': consistent ? 'yes' : 'NO' };
}

async function parquetBench(a: BenchClient, b: BenchClient, serverUrl: string, token: string, ws: string, dataDir: string): Promise<void> {
  const dir = tmpDir('plexus-bench-pq-');
  const file = path.join(dir, 'big.parquet');
  const setup = await DuckDBInstance.create(':memory:');
  const sc = await setup.connect();
  await sc.run(`COPY (SELECT range AS id, range % 100 AS grp, random() * 1000 AS val, 'name_' || (range % 977) AS label FROM range(1000000)) TO '${file}' (FORMAT parquet)`);
  sc.closeSync();
  setup.closeSync();
  const bytes = fs.readFileSync(file);
  const t0 = performance.now();
  const res = await fetch(`${serverUrl}/api/workspaces/${ws}/uploads?name=big.parquet`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: new Uint8Array(bytes) });
  const uploadMs = performance.now() - t0;
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
  await until(() => listCells(b.doc).length > 0 && !!(b.doc.getMap('data').get('big')), 20_000, 5, 'registry');
  const query = 'SELECT grp, count(*) AS n, avg(val) AS mean, max(label) AS top FROM big GROUP BY grp ORDER BY grp';
  const cell = createCell(a.doc, { kind: 'sql', author: 'bench', name: 'agg', source: query }, origin);
  await until(() => !!getCell(b.doc, cell), 10_000, 2, 'agg cell');
  // Plain DuckDB in this process, on the Parquet file and on the imported table file. The three
  // are measured in turns (cell, plain, plain) so that a busy machine weighs on all of them alike.
  const tableFile = path.join(dataDir, 'kernel', ws, 'tables', 'big.duckdb');
  const plainInst = await DuckDBInstance.create(':memory:', { threads: '2' });
  const pc = await plainInst.connect();
  await pc.run(`ATTACH '${tableFile}' AS up (READ_ONLY)`);
  const plainOnce = async (from: string) => {
    const t = performance.now();
    (await pc.runAndReadAll(query.replace('FROM big', `FROM ${from}`))).getRowObjectsJS();
    return performance.now() - t;
  };
  const cellMs: number[] = [];
  const execMs: number[] = [];
  const parquetMs: number[] = [];
  const tableMs: number[] = [];
  for (let r = 0; r <= 15; r++) {
    const before = readCellRun(b.doc, cell)?.exec?.runId;
    const t = performance.now();
    requestRun(a.doc, cell, who, origin);
    await until(() => {
      const v = readCellRun(b.doc, cell);
      return !!v && v.state === 'done' && v.exec!.runId !== before;
    }, 60_000, 1, 'agg');
    const ms = performance.now() - t;
    await until(() => readKernelStatus(b.doc).state === 'idle', 10_000, 2);
    const p = await plainOnce(`read_parquet('${file}')`);
    const q = await plainOnce('up.main.data');
    if (r > 0) {
      cellMs.push(ms);
      execMs.push(readCellRun(b.doc, cell)!.exec!.durationMs!);
      parquetMs.push(p);
      tableMs.push(q);
    }
  }
  pc.closeSync();
  plainInst.closeSync();
  const plainParquet = median(parquetMs);
  const plainTable = median(tableMs);
  console.log(`\n4. SQL aggregation over a 1,000,000-row Parquet file (${(bytes.length / 1024 / 1024).toFixed(1)} MiB; upload + import ${fmt(uploadMs, 0)} ms)`);
  printTable(['', 'median ms', 'ratio to plain DuckDB on Parquet'], [
    ['cell: request in A → table visible in B', fmt(median(cellMs), 1), fmt(median(cellMs) / plainParquet, 2)],
    ['cell: query time in the kernel (exec.durationMs)', fmt(median(execMs), 1), fmt(median(execMs) / plainParquet, 2)],
    ['plain DuckDB from Node, read_parquet(file)', fmt(plainParquet, 1), '1.00'],
    ['plain DuckDB from Node, the imported table file', fmt(plainTable, 1), fmt(plainTable / plainParquet, 2)],
  ]);
  console.log(`  ratio cell (end to end) / plain DuckDB on the same imported table: ${fmt(median(cellMs) / plainTable, 2)}`);
  fs.rmSync(dir, { recursive: true, force: true });
}

if (SERVERS.length > 1 || CPU_PROF || ONLY) {
  await compareChains();
  process.exit(process.exitCode ?? 0);
}
const dataDir = tmpDir('plexus-bench-kernel-');
const server = await spawnServer(SERVERS[0]!, { dataDir, env: { PLEXUS_LOG_LEVEL: 'warn' } });
try {
  console.log(`Kernel benchmarks — ${machine()}; ${ROUNDS} rounds per chain`);
  const ws = await createWorkspace(server, 'kernel bench');
  const a = connectClient(server.url, ws, server.token);
  const b = connectClient(server.url, ws, server.token);
  await Promise.all([a.synced, b.synced]);
  await until(() => readKernelStatus(b.doc).state !== 'offline', 20_000, 5, 'kernel');
  const js = await chain(a, b, 'code');
  const jsTimes = await measureChain(a, b, 'code', js.ids);
  const sql = await chain(a, b, 'sql');
  const sqlTimes = await measureChain(a, b, 'sql', sql.ids);
  console.log(`\n1. Edit-to-visible latency, ${N}-cell chain (edit + Run in A → last output in B), ms`);
  const row = (name: string, xs: number[]) => {
    const s = summarize(xs);
    return [name, fmt(s.p50, 1), fmt(s.p95, 1), fmt(s.max, 1), fmt(s.p50 / N, 2)];
  };
  printTable(['chain', 'p50', 'p95', 'max', '2. per cell (p50 / 100)'], [row('JavaScript', jsTimes), row('SQL', sqlTimes)]);
  console.log('\n3. Root edited 10×/s for 5 s while a 30-cell chain (5 ms per cell) runs');
  const s = await supersede(a, b);
  printTable(['figure', 'value'], Object.entries(s).map(([k, v]) => [k, String(v)]));
  await parquetBench(a, b, server.url, server.token, ws, dataDir);
  a.provider.destroy();
  b.provider.destroy();
  if (s['final outputs match last edit'] !== 'yes' || Number(s['max running at once (B samples)']) > 1) process.exitCode = 1;
} finally {
  await server.stop();
}
