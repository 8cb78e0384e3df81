/**
 * Cells sent ahead, the races a review found (real runner, real DuckDB worker; each failed before
 * its fix): a batch cell edited after the batch went is asked for under the same run id, and the
 * old source's answer must not become the new run's (batch cells run under their own wire id); a
 * value deleted, or an interrupt, while the kernel waits for a batch cell or query the runtime has
 * not reached calls off only the cells after it, so the one waited for is still answered (before:
 * never answered, killed at the deadline, every value lost); and a "trivial" cell stuck in a
 * getter is stopped by the ordinary interrupt, never leaving the runner spinning to blame the next
 * cell. Interleavings are held with SIGSTOP/SIGCONT of the runner and its own messages, not sleeps.
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { analyzeCell } from '@plexus/shared';
import { tmpDir, waitFor } from '@plexus/testkit';
import { compileJsCell } from '../../src/kernel/compile.ts';
import { JsRuntime, type RunInput, type RunOutcome } from '../../src/kernel/js-runtime.ts';
import { SqlRuntime, type SqlOutcome, type SqlQuery } from '../../src/kernel/sql-runtime.ts';

const runtimes: Array<JsRuntime | SqlRuntime> = [];
afterAll(async () => {
  await Promise.all(runtimes.map((r) => r.dispose()));
});

let seq = 0;
function cell(source: string, inputs: string[] = []): RunInput {
  const a = analyzeCell('code', source);
  const c = compileJsCell(source, a, inputs);
  const id = `r${++seq}`;
  return { runId: `x_${id}`, code: c.code, shifts: c.shifts, inputs, filename: `cell-${id}.js`, watchdog: a.mayLoop !== false };
}
const shown = (o: RunOutcome) => JSON.stringify(o.outputs);
const noStream = () => {};
const stateOf = (pid: number) => fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0];
async function freeze(pid: number) {
  process.kill(pid, 'SIGSTOP');
  await waitFor(() => stateOf(pid) === 'T', { message: 'stopped' });
}

describe('JavaScript cells sent ahead: races', () => {
  it('a batch cell whose source changed is asked for under the same runId: the new run must not get the old source\'s result', async () => {
    const rt = new JsRuntime({ cwd: tmpDir(), memoryMb: 256, timeoutMs: 20_000, maxFrameBytes: 1 << 20 });
    runtimes.push(rt);
    await rt.start();
    // A value whose coercion takes a while (a trivial cell may run user code: valueOf, getters).
    const slow = cell("const slow = { valueOf() { console.log('in b'); let i = 0; while (i < 3e8) i++; return 1; } };");
    expect((await rt.run(slow, noStream)).ok).toBe(true);
    const a = cell('const a = 1;');
    const b = cell('const b = a + slow; b', ['a', 'slow']);
    expect(b.watchdog).toBe(false); // trivial: sent ahead
    // Gate: the runner has started b (its first output reached the supervisor).
    let inB!: () => void;
    const started = new Promise<void>((r) => (inB = r));
    let doneB = 0;
    let secondDone!: () => void;
    const second = new Promise<void>((r) => (secondDone = r));
    const orig = (rt as any).onMessage.bind(rt);
    (rt as any).onMessage = (m: Record<string, unknown>) => {
      orig(m);
      if (m.type === 'stream' && String(m.runId).startsWith(b.runId)) inB();
      if (m.type === 'done' && String(m.runId).startsWith(b.runId) && ++doneB === 2) secondDone();
    };
    rt.runAhead([a, b]);
    expect((await rt.run(a, noStream)).ok).toBe(true);
    await started;
    await freeze(rt.pid!); // the runner is inside the old b
    // Someone edited b before its turn: the kernel asks for its new source, same runId (queue item kept).
    const b2 = { ...cell('const b = a + 100; b', ['a']), runId: b.runId };
    const streams: string[] = [];
    const p = rt.run(b2, (_n, t) => void streams.push(t));
    await new Promise((r) => setImmediate(r));
    process.kill(rt.pid!, 'SIGCONT');
    const rb = await p;
    await second; // the runner has run the new source too (its answer comes to nobody)
    const value = (await rt.get(['b'])).values.b;
    expect(value).toBe(101); // the runner holds the new source's value
    expect(shown(rb)).toContain('101'); // and the output shown for the new source is its own (was the old one's)
    expect(streams.join('')).not.toContain('in b'); // the old run's output does not leak in
  }, 30_000);

  it('a value deleted while the kernel waits for a batch cell the runner has not reached: the cell is still answered, nothing killed', async () => {
    const rt = new JsRuntime({ cwd: tmpDir(), memoryMb: 256, timeoutMs: 1500, maxFrameBytes: 1 << 20 });
    runtimes.push(rt);
    await rt.start();
    expect((await rt.run(cell('const kept = 41;'), noStream)).ok).toBe(true);
    const a = cell('const a = kept + 1;', ['kept']);
    const b = cell('const b = a + 1;', ['a']);
    await freeze(rt.pid!); // a starved runner: has not read the batch yet
    rt.runAhead([a, b]);
    const waiting = rt.run(a, noStream);
    await new Promise((r) => setImmediate(r));
    // e.g. processDeletions -> forget -> js.delete: another cell was deleted meanwhile
    rt.delete(['unrelated']);
    process.kill(rt.pid!, 'SIGCONT');
    const out = await waiting;
    expect(out.fatal).toBeUndefined();
    expect(rt.alive).toBe(true);
    expect((await rt.get(['kept'])).values).toEqual({ kept: 41 });
  }, 30_000);
});

describe('a run cancelled before the runner started it', () => {
  it('never runs (it would hold up the run that replaced it, after a batch cell the runner was still finishing)', async () => {
    const rt = new JsRuntime({ cwd: tmpDir(), memoryMb: 256, timeoutMs: 20_000, maxFrameBytes: 1 << 20 });
    runtimes.push(rt);
    await rt.start();
    expect((await rt.run(cell('const warm = 1;'), noStream)).ok).toBe(true);
    await freeze(rt.pid!); // busy elsewhere: it has not read the run yet
    const superseded = rt.run(cell('const marker = 1;'), noStream);
    await new Promise((r) => setImmediate(r)); // sent
    rt.cancel((rt as any).run_.runId);
    expect((await superseded).cancelled).toBe(true);
    const next = rt.run(cell('const y = 2; y'), noStream);
    process.kill(rt.pid!, 'SIGCONT');
    expect(shown(await next)).toContain('2');
    expect((await rt.get(['marker'])).missing).toEqual(['marker']);
  }, 30_000);
});

describe('SQL cells sent ahead: races', () => {
  const sql = (text: string, name: string, materialize = true): SqlQuery => ({ sql: text, params: {}, name, maxRows: 100, materialize });
  const rowsOf = (o: SqlOutcome) => (o.ok ? o.rows : o.error.message);
  it('an interrupt while the kernel waits for a batch query the worker has not reached: answered, the SQL engine not killed', async () => {
    const rt = new SqlRuntime({ cwd: tmpDir(), memoryMb: 256, timeoutMs: 1500, maxFrameBytes: 1 << 20, tables: [] });
    runtimes.push(rt);
    expect(rowsOf(await rt.query(sql('select 41 as v', 't0')))).toEqual([{ v: 41 }]);
    const pid = (rt as any).child.pid as number;
    const q1 = sql('select v + 1 as v from t0', 't1');
    const q2 = sql('select v + 1 as v from t1', 't2');
    await freeze(pid);
    rt.queryAhead([{ ...q1, tag: 'c1' }, { ...q2, tag: 'c2' }]);
    const waiting = rt.query(q1);
    await new Promise((r) => setImmediate(r));
    rt.interrupt(); // the kernel's interrupt command, or a supersede (enqueue -> sql.interrupt)
    process.kill(pid, 'SIGCONT');
    const out = await waiting;
    expect(out.ok ? undefined : out.fatal).toBeUndefined();
    expect(rowsOf(await rt.query(sql('select v from t0', 'probe', false)))).toEqual([{ v: 41 }]);
  }, 30_000);
});

describe('interrupting a batch cell that does not end', () => {
  it('a trivial cell stuck in a getter: interrupt must not leave the runner spinning and blame the next cell', async () => {
    const rt = new JsRuntime({ cwd: tmpDir(), memoryMb: 256, timeoutMs: 1500, maxFrameBytes: 1 << 20 });
    runtimes.push(rt);
    await rt.start();
    expect((await rt.run(cell("const p = { get x() { console.log('stuck'); while (true) {} } };"), noStream)).ok).toBe(true);
    const q = cell('const q = p.x;', ['p']);
    const r = cell('const r = q;', ['q']);
    expect(q.watchdog).toBe(false);
    let stuck!: () => void;
    const inQ = new Promise<void>((res) => (stuck = res));
    const orig = (rt as any).onMessage.bind(rt);
    (rt as any).onMessage = (m: Record<string, unknown>) => {
      orig(m);
      if (m.type === 'stream' && String(m.runId).startsWith(q.runId)) stuck();
    };
    rt.runAhead([q, r]);
    const waiting = rt.run(q, noStream);
    await inQ; // the runner spins inside q
    rt.interrupt({ cpuGraceMs: 500, graceMs: 500 });
    const out = await waiting;
    expect(out.ok).toBe(false);
    // The next, innocent cell is not blamed for the stuck one (it was: it waited behind it and timed out).
    const next = await rt.run(cell('const z = 1; z'), noStream);
    expect(next.fatal ?? '').not.toMatch(/timed out/);
  }, 30_000);

  it('results a batch holds back to send together go out before anything else it writes: a cell before the stuck one is answered', async () => {
    const rt = new JsRuntime({ cwd: tmpDir(), memoryMb: 256, timeoutMs: 1500, maxFrameBytes: 1 << 20 });
    runtimes.push(rt);
    await rt.start();
    expect((await rt.run(cell("const p = { get x() { console.log('stuck'); while (true) {} } };"), noStream)).ok).toBe(true);
    const a = cell('const a = 1;');
    const q = cell('const q = p.x;', ['p']);
    const seen: string[] = [];
    let stuck!: () => void;
    const inQ = new Promise<void>((res) => (stuck = res));
    const orig = (rt as any).onMessage.bind(rt);
    (rt as any).onMessage = (m: Record<string, unknown>) => {
      orig(m);
      const who = String(m.runId).startsWith(a.runId) ? 'a' : String(m.runId).startsWith(q.runId) ? 'q' : '?';
      seen.push(`${m.type} ${who}`);
      if (m.type === 'stream' && who === 'q') stuck();
    };
    // a and q run in one slice: a's result is held when q's getter writes its line, then q spins.
    rt.runAhead([a, q]);
    expect((await rt.run(a, noStream)).ok).toBe(true);
    const waiting = rt.run(q, noStream);
    await inQ;
    expect(seen.indexOf('done a')).toBeGreaterThanOrEqual(0);
    expect(seen.indexOf('done a')).toBeLessThan(seen.indexOf('stream q'));
    rt.interrupt({ cpuGraceMs: 500, graceMs: 500 });
    expect((await waiting).ok).toBe(false);
  }, 30_000);
});
