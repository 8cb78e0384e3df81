/**
 * Chains of trivial JavaScript cells in one runner round trip (issue: speed, reactive chains): the
 * kernel sends consecutive cells that neither loop nor call anything to the runner ahead, as one
 * batch, and then takes each result in turn as if it had sent that cell alone. These tests run
 * the real sandboxed runner: a batch's results are the cells' own; anything that changes between
 * sending and asking (a newer source, a value set or deleted, an interrupt) throws the rest of the
 * batch away and reports it, and those cells run again normally; a failure stops the batch before
 * the next cell. And a whole kernel on an in-memory document runs a 40-cell chain from one batch,
 * every cell with its own status and output, exactly as with one round trip per cell.
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { analyzeCell, createCell, readCellRun, requestRun, setCellSource, userOrigin } from '@plexus/shared';
import { tmpDir } from '@plexus/testkit';
import { compileJsCell } from '../../src/kernel/compile.ts';
import { JsRuntime, type RunInput, type RunOutcome } from '../../src/kernel/js-runtime.ts';
import { SqlRuntime, type SqlOutcome, type SqlQuery } from '../../src/kernel/sql-runtime.ts';
import { WorkspaceKernel } from '../../src/kernel/workspace-kernel.ts';
import { createLogger } from '../../src/log.ts';

const runtimes: Array<JsRuntime | SqlRuntime> = [];
const kernels: WorkspaceKernel[] = [];
afterAll(async () => {
  await Promise.all(kernels.map((k) => k.stop()));
  await Promise.all(runtimes.map((r) => r.dispose()));
});

function runtime(): { rt: JsRuntime; dropped: string[][] } {
  const dir = tmpDir();
  const rt = new JsRuntime({ cwd: dir, memoryMb: 256, timeoutMs: 20_000, maxFrameBytes: 1 << 20 });
  runtimes.push(rt);
  const dropped: string[][] = [];
  rt.onAheadDropped = (ids) => void dropped.push(ids);
  return { rt, dropped };
}

let seq = 0;
/** The runner's input for a JavaScript cell, compiled as the kernel compiles it. */
function cell(source: string, inputs: string[] = []): RunInput {
  const a = analyzeCell('code', source);
  const c = compileJsCell(source, a, inputs);
  const id = `c${++seq}`;
  return { runId: `x_${id}`, code: c.code, shifts: c.shifts, inputs, filename: `cell-${id}.js`, watchdog: a.mayLoop !== false };
}

const shown = (o: RunOutcome) => JSON.stringify(o.outputs);
const noStream = () => {};

describe('cells sent to the runner ahead', () => {
  it('a chain sent ahead runs as one batch; each result is that cell’s own, in order', async () => {
    const { rt, dropped } = runtime();
    await rt.start();
    const a = cell('const a = 1;');
    const b = cell('const b = a + 1;', ['a']);
    const c = cell('b * 10', ['b']);
    expect([a, b, c].every((x) => !x.watchdog)).toBe(true); // trivial: no loop, no call
    rt.runAhead([a, b, c]);
    expect(rt.expecting).toBe(3);
    const ra = await rt.run(a, noStream);
    const rb = await rt.run(b, noStream);
    const rc = await rt.run(c, noStream);
    expect([ra.ok, ra.defines, rb.ok, rb.defines, rc.ok]).toEqual([true, ['a'], true, ['b'], true]);
    expect(shown(rc)).toContain('20');
    expect(rt.stats).toEqual({ batches: 1, aheadUsed: 3, aheadDropped: 0 });
    expect(dropped).toEqual([]);
    expect((await rt.get(['a', 'b'])).values).toEqual({ a: 1, b: 2 });
  });

  it('a cell whose source changed after the batch went runs anew; the rest of the batch is thrown away, reported, and runs normally', async () => {
    const { rt, dropped } = runtime();
    await rt.start();
    const a = cell('const a = 1;');
    const b = cell('const b = a + 1;', ['a']);
    const c = cell('b * 10', ['b']);
    rt.runAhead([a, b, c]);
    expect((await rt.run(a, noStream)).ok).toBe(true);
    // Someone edited b before its turn: the kernel asks for its new source.
    const b2 = { ...cell('const b = a + 100;', ['a']), runId: b.runId };
    const rb = await rt.run(b2, noStream);
    expect(rb.ok).toBe(true);
    expect(dropped).toEqual([[b.runId, c.runId]]);
    expect(rt.expecting).toBe(0);
    // c runs on its own now, over the new b (whatever the batch had computed for it).
    const rc = await rt.run(c, noStream);
    expect(shown(rc)).toContain('1010');
    expect(rt.stats).toEqual({ batches: 1, aheadUsed: 1, aheadDropped: 2 });
  });

  it('a failure stops the batch: the cells after it did not run, and run normally when asked', async () => {
    const { rt, dropped } = runtime();
    await rt.start();
    const a = cell('const a = 1;');
    const bad = cell('const b = a.x.y;', ['a']);
    const c = cell('const c = 5;');
    rt.runAhead([a, bad, c]);
    expect((await rt.run(a, noStream)).ok).toBe(true);
    const rb = await rt.run(bad, noStream);
    expect(rb.ok).toBe(false);
    expect(rb.error?.name).toBe('TypeError');
    expect(rt.expecting).toBe(0);
    // The runner stopped before c: c defined nothing yet.
    expect((await rt.get(['c'])).missing).toEqual(['c']);
    expect(dropped).toEqual([]); // they never ran: nothing to report
    const rc = await rt.run(c, noStream);
    expect(rc.ok).toBe(true);
    expect((await rt.get(['c'])).values).toEqual({ c: 5 });
    expect(rt.stats).toEqual({ batches: 1, aheadUsed: 2, aheadDropped: 1 });
  });

  it('a value set, a value deleted or an interrupt throws away what was sent ahead; later runs are right', async () => {
    for (const change of ['set', 'delete', 'interrupt'] as const) {
      const { rt, dropped } = runtime();
      await rt.start();
      const cells = [cell('const v0 = 0;'), ...Array.from({ length: 199 }, (_, i) => cell(`const v${i + 1} = v${i} + 1;`, [`v${i}`]))];
      rt.runAhead(cells);
      if (change === 'set') rt.set('z', 1);
      else if (change === 'delete') rt.delete(['z']);
      else rt.interrupt();
      expect(dropped).toEqual([cells.map((c) => c.runId)]);
      expect(rt.expecting).toBe(0);
      for (const c of cells.slice(0, 3)) expect((await rt.run(c, noStream)).ok).toBe(true);
      expect((await rt.get(['v2'])).values).toEqual({ v2: 2 });
      expect(rt.stats.aheadUsed).toBe(0);
    }
  });
});

/** `chunkHops`: results read a chunk per call into DuckDB (the benchmarks' baseline) instead of within the query's call. */
function sqlRuntime(chunkHops = false): { rt: SqlRuntime; dropped: string[][] } {
  const rt = new SqlRuntime({ cwd: tmpDir(), memoryMb: 256, timeoutMs: 20_000, maxFrameBytes: 1 << 20, tables: [], chunkHops });
  runtimes.push(rt);
  const dropped: string[][] = [];
  rt.onAheadDropped = (tags) => void dropped.push(tags);
  return { rt, dropped };
}
const sql = (text: string, name: string, materialize = true): SqlQuery => ({ sql: text, params: {}, name, maxRows: 100, materialize });
const rowsOf = (o: SqlOutcome) => (o.ok ? o.rows : o.error.message);

describe('interrupting a cell sent ahead', () => {
  it('an interrupt while the kernel waits for a cell of the batch the runner has not reached: answered at once, nothing killed, values kept', async () => {
    const { rt, dropped } = runtime();
    await rt.start();
    expect((await rt.run(cell('const kept = 41;'), noStream)).ok).toBe(true);
    const a = cell('const a = kept + 1;', ['kept']);
    const b = cell('const b = a + 1;', ['a']);
    // The runner is frozen (as a starved one on a loaded machine) before it reads the batch.
    const state = () => fs.readFileSync(`/proc/${rt.pid}/stat`, 'utf8').split(') ')[1]![0];
    process.kill(rt.pid!, 'SIGSTOP');
    for (let i = 0; i < 2000 && state() !== 'T'; i++) await new Promise((r) => setTimeout(r, 5));
    expect(state()).toBe('T');
    rt.runAhead([a, b]);
    const waiting = rt.run(a, noStream);
    await new Promise((r) => setImmediate(r));
    rt.interrupt();
    process.kill(rt.pid!, 'SIGCONT');
    const out = await waiting;
    expect(out.fatal).toBeUndefined();
    expect(out.ok).toBe(false);
    expect(JSON.stringify(out.error)).toMatch(/interrupted|stopped/i);
    // a may or may not have run in the runner: reported with the rest of the batch.
    expect(dropped.flat().sort()).toEqual([a.runId, b.runId].sort());
    expect(rt.alive).toBe(true);
    expect((await rt.get(['kept'])).values).toEqual({ kept: 41 });
    expect(shown(await rt.run(cell('kept + 1', ['kept']), noStream))).toContain('42');
  });
});

describe('SQL cells sent to the worker ahead', () => {
  it('a chain sent ahead: each result is that query’s own, in order; a changed query throws the rest away', async () => {
    const { rt, dropped } = sqlRuntime();
    expect(rowsOf(await rt.query(sql('select 1 as v', 't0')))).toEqual([{ v: 1 }]); // started
    const q1 = sql('select v + 1 as v from t0', 't1');
    const q2 = sql('select v + 1 as v from t1', 't2');
    const q3 = sql('select v * 10 as v from t2', 't3');
    rt.queryAhead([{ ...q1, tag: 'c1' }, { ...q2, tag: 'c2' }, { ...q3, tag: 'c3' }]);
    expect(rt.expecting).toBe(3);
    expect(rowsOf(await rt.query(q1))).toEqual([{ v: 2 }]);
    expect(rowsOf(await rt.query(q2))).toEqual([{ v: 3 }]);
    expect(rowsOf(await rt.query(q3))).toEqual([{ v: 30 }]);
    expect(rt.stats).toEqual({ batches: 1, aheadUsed: 3, aheadDropped: 0 });
    // Again, but q2 changed before its turn: q2 and q3 are thrown away and reported.
    rt.queryAhead([{ ...q1, tag: 'c1' }, { ...q2, tag: 'c2' }, { ...q3, tag: 'c3' }]);
    expect(rowsOf(await rt.query(q1))).toEqual([{ v: 2 }]);
    expect(rowsOf(await rt.query(sql('select v + 100 as v from t1', 't2')))).toEqual([{ v: 102 }]);
    expect(dropped).toEqual([['c2', 'c3']]);
    expect(rowsOf(await rt.query(q3))).toEqual([{ v: 1020 }]);
    expect(rt.stats).toEqual({ batches: 2, aheadUsed: 4, aheadDropped: 2 });
  });

  it('a named result created and read back in one call: row counts around the preview limit, types, statements that are not queries', async () => {
    const { rt } = sqlRuntime();
    const { rt: hops } = sqlRuntime(true);
    const counted = async (q: SqlQuery) => {
      const o = await rt.query(q);
      if (!o.ok) throw new Error(o.error.message);
      // Read within the query's call, the result is the one DuckDB's own reader gets chunk by chunk.
      expect(o).toEqual(await hops.query(q));
      return { shown: o.rows.length, total: o.totalRows, materialized: o.materialized, columns: o.columns };
    };
    // The preview holds at most maxRows (100); the count is the table's, below, at and above it,
    // and past one DuckDB chunk (2,048 rows), with and without parameters, kept as a table or not.
    for (const n of [0, 1, 99, 100, 101, 2048, 2049, 250_000]) {
      expect(await counted(sql(`select range as i from range(${n})`, `r${n}`))).toMatchObject({ shown: Math.min(n, 100), total: n, materialized: true });
      expect(await counted({ ...sql('select range as i from range($n)', `p${n}`), params: { n } })).toMatchObject({ shown: Math.min(n, 100), total: n, materialized: true });
      expect(await counted(sql(`select range as i, 'x' || range as s from range(${n})`, `v${n}`, false))).toMatchObject({ shown: Math.min(n, 100), materialized: false });
    }
    expect((await counted(sql("select date '2026-12-05' as d, 9007199254740993::bigint as big, [1, 2] as l, {'k': 1} as s, 'x''y' as q", 'kinds'))).columns.map((c) => c.type)).toEqual(['DATE', 'BIGINT', 'INTEGER[]', 'STRUCT("k" INTEGER)', 'VARCHAR']);
    expect((await counted(sql("select 1::integer as a, 'x' as b, 2.5::double as c", 'typed'))).columns).toEqual([
      { name: 'a', type: 'INTEGER' }, { name: 'b', type: 'VARCHAR' }, { name: 'c', type: 'DOUBLE' },
    ]);
    // Readable by the next cell, including when several statements lead up to it.
    expect(rowsOf(await rt.query(sql('create or replace temp table staging as select 7 as v; select v * 6 as v from staging', 'multi')))).toEqual([{ v: 42 }]);
    expect(rowsOf(await rt.query(sql('select v + 1 as v from multi', 'after')))).toEqual([{ v: 43 }]);
    // A statement that is not a query runs as it is (no table), and its effect is there.
    expect(await counted(sql('create table kept (k integer)', 'ddl'))).toMatchObject({ materialized: false });
    expect(await counted(sql('insert into kept values (1), (2), (3)', 'ins'))).toMatchObject({ materialized: false });
    expect(rowsOf(await rt.query(sql('select count(*)::int as n from kept', 'n')))).toEqual([{ n: 3 }]);
    // A query that fails says why, and leaves the previous result of that name in place.
    expect(rowsOf(await rt.query(sql('select nope from multi', 'after')))).toMatch(/nope/);
    expect(rowsOf(await rt.query(sql('select v from after', 'check')))).toEqual([{ v: 43 }]);
  });

  it('DuckDB runs on the threads it is given (PLEXUS_SQL_THREADS)', async () => {
    for (const threads of [1, 3]) {
      const rt = new SqlRuntime({ cwd: tmpDir(), memoryMb: 256, threads, timeoutMs: 20_000, maxFrameBytes: 1 << 20, tables: [] });
      runtimes.push(rt);
      expect(rowsOf(await rt.query(sql("select current_setting('threads')::int as n", 'threads')))).toEqual([{ n: threads }]);
    }
  });

  it('a failure stops the batch in the worker: the queries after it did not run', async () => {
    const { rt, dropped } = sqlRuntime();
    await rt.query(sql('select 1 as v', 't0'));
    const bad = sql('select nope from t0', 't1');
    const after = sql('select 5 as v', 't9');
    rt.queryAhead([{ ...sql('select 2 as v', 't8'), tag: 'a' }, { ...bad, tag: 'b' }, { ...after, tag: 'c' }]);
    expect(rowsOf(await rt.query(sql('select 2 as v', 't8')))).toEqual([{ v: 2 }]);
    const failed = await rt.query(bad);
    expect(failed.ok).toBe(false);
    expect(rt.expecting).toBe(0);
    expect(dropped).toEqual([]);
    // t9 was never created: the worker stopped at the failure.
    expect(rowsOf(await rt.query(sql("select count(*)::int as n from duckdb_tables() where table_name = 't9'", 'probe', false)))).toEqual([{ n: 0 }]);
    expect(rowsOf(await rt.query(after))).toEqual([{ v: 5 }]);
    expect(rt.stats).toEqual({ batches: 1, aheadUsed: 2, aheadDropped: 1 });
  });
});

describe('a kernel runs a chain of trivial cells from one batch', () => {
  it('40 JavaScript cells and 20 SQL cells: each its own run, status and output; the same as one round trip per cell', async () => {
    const results: Record<string, { outputs: string[]; stats: JsRuntime['stats']; sqlStats: SqlRuntime['stats'] }> = {};
    for (const ahead of [true, false]) {
      const doc = new Y.Doc();
      const dir = tmpDir();
      for (const sub of ['scratch', 'results', 'tables']) fs.mkdirSync(`${dir}/${sub}`, { recursive: true });
      let js: JsRuntime | null = null;
      let sqlRt: SqlRuntime | null = null;
      const kernel = new WorkspaceKernel({
        workspaceId: 'w_ahead', doc, dir, tablesDir: `${dir}/tables`, log: createLogger('silent'), runAhead: ahead,
        engines: { js: (o) => (js = new JsRuntime(o)), sql: (o) => (sqlRt = new SqlRuntime(o)) },
        limits: { timeoutMs: 20_000, memoryMb: 256, sqlMemoryMb: 256, sqlRowsToJs: 1000, maxFrameBytes: 1 << 20 },
      });
      kernels.push(kernel);
      kernel.begin();
      const origin = userOrigin('alice', 'Alice');
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) ids.push(createCell(doc, { kind: 'code', source: i === 0 ? 'const v0 = 1;' : i === 39 ? `v${i - 1} * 2` : `const v${i} = v${i - 1} + 1;`, author: 'alice' }, origin));
      // An SQL chain hanging off the JavaScript root too: q0 reads v0 as a parameter, the rest read tables.
      const sqlIds: string[] = [];
      for (let i = 0; i < 20; i++) sqlIds.push(createCell(doc, { kind: 'sql', name: `q${i}`, source: i === 0 ? 'select $v0 as v' : `select v + 1 as v from q${i - 1}`, author: 'alice' }, origin));
      const last = ids[ids.length - 1]!;
      const lastSql = sqlIds[sqlIds.length - 1]!;
      const settled = (pred: () => boolean) => new Promise<void>((resolve) => {
        const check = () => {
          if (!pred()) return;
          doc.off('afterTransaction', check);
          resolve();
        };
        doc.on('afterTransaction', check);
        check();
      });
      requestRun(doc, ids[0]!, { id: 'alice', name: 'Alice' }, origin);
      await settled(() => readCellRun(doc, last)?.state === 'done' && readCellRun(doc, lastSql)?.state === 'done');
      // Edit the root: both chains run again.
      const before = readCellRun(doc, last)!.exec!.runId;
      const beforeSql = readCellRun(doc, lastSql)!.exec!.runId;
      setCellSource(doc, ids[0]!, 'const v0 = 100;', origin);
      requestRun(doc, ids[0]!, { id: 'alice', name: 'Alice' }, origin);
      const again = (id: string, was: string) => readCellRun(doc, id)?.state === 'done' && readCellRun(doc, id)!.exec!.runId !== was;
      await settled(() => again(last, before) && again(lastSql, beforeSql));
      const runs = [...ids, ...sqlIds].map((id) => readCellRun(doc, id)!);
      expect(runs.every((r) => r.state === 'done')).toBe(true);
      expect(new Set(runs.map((r) => r.exec!.runId)).size).toBe(60); // each cell its own run
      expect(runs.slice(1).every((r) => r.exec!.trigger === 'upstream' && r.exec!.requestedBy?.id === 'alice')).toBe(true);
      results[String(ahead)] = { outputs: runs.map((r) => JSON.stringify(r.outputs)), stats: { ...js!.stats }, sqlStats: { ...sqlRt!.stats } };
    }
    expect(results.true!.outputs).toEqual(results.false!.outputs);
    expect(results.true!.outputs[39]).toContain(String((100 + 38) * 2));
    expect(results.true!.outputs[59]).toContain(String(100 + 19));
    // Sent ahead: at most a batch per run of the chain, every cell's result taken from one.
    expect(results.true!.stats.aheadUsed).toBe(80);
    expect(results.true!.stats.batches).toBeLessThanOrEqual(4);
    expect(results.true!.stats.aheadDropped).toBe(0);
    expect(results.false!.stats).toEqual({ batches: 0, aheadUsed: 0, aheadDropped: 0 });
    // SQL: q0 has a parameter (sent alone); q1…q19 go as one batch per run of the chain.
    expect(results.true!.sqlStats).toEqual({ batches: 2, aheadUsed: 38, aheadDropped: 0 });
    expect(results.false!.sqlStats).toEqual({ batches: 0, aheadUsed: 0, aheadDropped: 0 });
  });
});
