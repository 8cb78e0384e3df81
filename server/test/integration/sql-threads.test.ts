/**
 * DuckDB's threads in the SQL worker (issue: speed, reactive chains): a query whose last run was
 * small, after another small one, runs on one thread (waking DuckDB's other threads costs a small
 * query more than they give it); a query not seen before, or a large one, runs on all of them. The
 * worker may change the number; a cell may not. The real sandboxed worker; which queries count as
 * small is fixed through `smallQueryMs` (every query, or none), so no result depends on timing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { tmpDir } from '@plexus/testkit';
import { SqlRuntime, type SqlOutcome, type SqlRuntimeOptions } from '../../src/kernel/sql-runtime.ts';

const runtimes: SqlRuntime[] = [];
afterAll(async () => {
  await Promise.all(runtimes.map((r) => r.dispose()));
});

function sqlRuntime(opts: Partial<SqlRuntimeOptions>): SqlRuntime {
  const rt = new SqlRuntime({ cwd: tmpDir(), memoryMb: 256, timeoutMs: 20_000, maxFrameBytes: 1 << 20, tables: [], threads: 2, ...opts });
  runtimes.push(rt);
  return rt;
}
const run = (rt: SqlRuntime, sql: string, name?: string): Promise<SqlOutcome> => rt.query({ sql, params: {}, maxRows: 100, ...(name ? { name } : {}) });
const THREADS = "SELECT current_setting('threads')::INT AS t";
/** The number of threads DuckDB ran `sql` with, which reads it. */
async function threadsFor(rt: SqlRuntime, sql = THREADS): Promise<number> {
  const o = await run(rt, sql);
  if (!o.ok) throw new Error(o.error.message);
  return Number(o.rows[0]!.t);
}

describe('DuckDB threads per query', () => {
  it('a run of small queries goes to one thread; a query not seen before goes to all of them', async () => {
    const rt = sqlRuntime({ smallQueryMs: 1e9 }); // every query small once seen
    expect(await threadsFor(rt)).toBe(2); // not seen before
    expect(await threadsFor(rt)).toBe(1); // seen, small, after a small one
    expect(await threadsFor(rt)).toBe(1);
    expect(await threadsFor(rt, `${THREADS}, 1 AS other`)).toBe(2); // a new text: all threads
    expect(await threadsFor(rt)).toBe(1); // the run of small ones goes on
    // A cell's result still becomes its table on one thread.
    expect((await run(rt, 'SELECT 7 AS v', 'seven')).ok).toBe(true);
    expect((await run(rt, 'SELECT 7 AS v', 'seven')).ok).toBe(true);
    expect(await threadsFor(rt, "SELECT current_setting('threads')::INT AS t, v FROM seven")).toBe(2);
    const again = await run(rt, "SELECT current_setting('threads')::INT AS t, v FROM seven");
    expect(again.ok && again.rows).toEqual([{ t: 1, v: 7 }]);
  });

  it('large queries keep all threads; with the switch off every query does', async () => {
    const large = sqlRuntime({ smallQueryMs: 0 }); // no query counts as small
    const off = sqlRuntime({ smallQueryMs: 1e9, adaptiveThreads: false });
    for (const rt of [large, off]) {
      for (let i = 0; i < 3; i++) expect(await threadsFor(rt)).toBe(2);
    }
    // Switched off, the number is locked like every other setting.
    const set = await run(off, 'SET threads = 1');
    expect(set.ok ? 'ran' : set.error.message).toMatch(/locked/);
  });

  it('a cell cannot change the number of threads, nor unlock any other setting', async () => {
    const rt = sqlRuntime({ smallQueryMs: 1e9 });
    for (const sql of [
      'SET threads = 64',
      'set THREADS to 64',
      'SET GLOBAL threads = 64',
      'SET "threads" = 64',
      'SET /* a comment */ threads = 64',
      'PRAGMA threads = 64',
      'RESET threads',
      'SET worker_threads = 64',
      'SELECT 1; SET threads = 64',
      'CREATE OR REPLACE MACRO m() AS 64; SET threads = m()',
    ]) {
      const o = await run(rt, sql);
      expect(o.ok ? 'ran' : o.error.message, sql).toMatch(/set by Plexus/);
    }
    for (const sql of ["SET memory_limit = '4GB'", "SET allowed_configs = ['memory_limit']", 'SET lock_configuration = false', 'SET enable_external_access = true']) {
      const o = await run(rt, sql);
      expect(o.ok ? 'ran' : o.error.message, sql).toMatch(/locked|cannot be re-enabled|Cannot change/);
    }
    expect(await threadsFor(rt, `${THREADS}, 'after' AS w`)).toBe(2);
  });

  it('cells that only name threads run as before', async () => {
    const rt = sqlRuntime({ smallQueryMs: 1e9 });
    const named = await run(rt, 'SELECT 42 AS threads');
    expect(named.ok && named.rows).toEqual([{ threads: 42 }]);
    // The second statement reads a table the first creates: it is checked when its turn comes.
    const table = await run(rt, 'CREATE TABLE threads AS SELECT 3 AS n; SELECT n FROM threads');
    expect(table.ok && table.rows).toEqual([{ n: 3 }]);
    const variable = await run(rt, "SET VARIABLE n = 5; SELECT getvariable('n') AS n");
    expect(variable.ok && variable.rows).toEqual([{ n: 5 }]);
  });
});
