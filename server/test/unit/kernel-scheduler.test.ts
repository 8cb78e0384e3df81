/**
 * The kernel's scheduling, driven step by step on an in-memory document: no server, no process,
 * no timing (testkit/kernel-drive.ts). Each test writes what people would write (cells, run
 * requests, edits, commands), settles the kernel's clock, and checks exactly what it did — which
 * run it started, in which order, what it cancelled, and what each cell shows — so the races of
 * the integration suite (kernel-races.test.ts, with real runtimes) have an exact counterpart here
 * that no machine load can change.
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { KERNEL_ORIGIN, deleteCell, getCell, insertCellText, readAck, readCamera, readCellRun, readKernelStatus, requestInterrupt, requestRun, roots, setCamera, setCellName, setCellSource } from '@plexus/shared';
import { ManualClock, ScriptedEngines, textOutput, tmpDir } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, bob, bobOrigin, shown } from '@plexus/testkit/kernel';
import { WorkspaceKernel } from '../../src/kernel/workspace-kernel.ts';
import type { JsEngine, KernelEngines } from '../../src/kernel/engines.ts';
import type { RunInput } from '../../src/kernel/js-runtime.ts';
import { createLogger } from '../../src/log.ts';

const kernels: WorkspaceKernel[] = [];
afterEach(async () => {
  await Promise.all(kernels.splice(0).map((k) => k.stop()));
});

function setUp(opts: { plainRuns?: boolean } = {}) {
  const doc = new Y.Doc();
  const clock = new ManualClock();
  const engines = new ScriptedEngines();
  const dir = tmpDir();
  const kernel = new WorkspaceKernel({
    workspaceId: 'w_test', doc, clock, engines, dir, tablesDir: `${dir}/tables`, log: createLogger('silent'),
    limits: { timeoutMs: 1000, memoryMb: 64, sqlMemoryMb: 64, sqlRowsToJs: 100, maxFrameBytes: 1 << 20 },
    ...opts,
  });
  kernels.push(kernel);
  kernel.begin();
  const run = (id: string) => readCellRun(doc, id)!;
  return { doc, clock, engines, kernel, run };
}

describe('kernel scheduling on an in-memory document', () => {
  it('a request runs the cell, then its dependents in order, one at a time, each with its own status and attribution', async () => {
    const { doc, clock, engines, run } = setUp();
    const a = addCell(doc, 'code', 'const x = 1;');
    const b = addCell(doc, 'code', 'const y = x + 1;');
    const c = addCell(doc, 'code', 'y * 2');
    await clock.settle();
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle();
    expect(engines.open.map((r) => r.cellId)).toEqual([a]);
    expect(readKernelStatus(doc)).toMatchObject({ state: 'busy', current: a, queue: [b, c] });
    expect(run(b).state).toBe('queued');
    engines.open[0]!.finish({ defines: ['x'] });
    await clock.settle();
    expect(engines.open.map((r) => r.cellId)).toEqual([b]);
    expect(run(a).state).toBe('done');
    engines.open[0]!.finish({ defines: ['y'] });
    await clock.settle();
    engines.open[0]!.finish({ outputs: [textOutput('4')] });
    await clock.settle();
    expect(engines.runs.map((r) => r.cellId)).toEqual([a, b, c]);
    expect(shown(run(c))).toBe('4');
    expect([run(a), run(b), run(c)].map((r) => [r.state, r.exec!.trigger, r.exec!.requestedBy?.id])).toEqual([
      ['done', 'request', 'alice'], ['done', 'upstream', 'alice'], ['done', 'upstream', 'alice'],
    ]);
    expect(readKernelStatus(doc)).toMatchObject({ state: 'idle', queue: [] });
  });

  it('re-running the root while a dependent runs: that run is cancelled as superseded, and the chain runs again on the newest source', async () => {
    const { doc, clock, engines, run } = setUp();
    const a = addCell(doc, 'code', 'const x = 1;');
    const b = addCell(doc, 'code', 'x + 1');
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle();
    engines.open[0]!.finish({ defines: ['x'] });
    await clock.settle();
    const first = engines.open[0]!;
    expect(first.cellId).toBe(b);
    const firstRunId = (first.input as { runId: string }).runId;
    // Bob edits the root and runs it while b runs.
    setCellSource(doc, a, 'const x = 2;', bobOrigin);
    requestRun(doc, a, bob, bobOrigin);
    await clock.settle();
    expect(engines.calls).toContain(`js.cancel ${firstRunId}`);
    expect(first.done).toBe(true); // a cancelled run ends at once, as in the real runtime
    // Then a, then b again: one run in flight at a time.
    expect(engines.open.map((r) => r.cellId)).toEqual([a]);
    expect((engines.open[0]!.input as { code: string }).code).toContain('const x = 2;');
    engines.open[0]!.finish({ defines: ['x'] });
    await clock.settle();
    engines.open[0]!.finish({ outputs: [textOutput('3')] });
    await clock.settle();
    expect(engines.runs.map((r) => r.cellId)).toEqual([a, b, a, b]);
    expect(shown(run(b))).toBe('3');
    expect(run(b).exec!.requestedBy?.id).toBe('bob');
  });

  it('an interrupt stops the running cell and drops the queue; the run says it was interrupted', async () => {
    const { doc, clock, engines, run } = setUp();
    const a = addCell(doc, 'code', 'const x = 1;');
    const b = addCell(doc, 'code', 'x + 1');
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle({ untilMs: 100 }); // past the delay after which a long run shows as running
    expect(run(a).state).toBe('running');
    requestInterrupt(doc, bob, bobOrigin);
    await clock.settle();
    expect(engines.calls).toContain('js.interrupt');
    engines.open[0]!.fail('interrupted');
    await clock.settle();
    expect(run(a).state).toBe('cancelled');
    expect(shown(run(a))).toMatch(/Interrupted/);
    // b never ran: the interrupt dropped it from the queue (no run of its own, no pending mark).
    expect(run(b)).toMatchObject({ state: 'idle', pending: null, exec: null });
    expect(engines.runs).toHaveLength(1);
    expect(readKernelStatus(doc).state).toBe('idle');
  });

  it('a failed cell cancels its dependents without running them, with the reason', async () => {
    const { doc, clock, engines, run } = setUp();
    const a = addCell(doc, 'code', 'const x = 1;');
    const b = addCell(doc, 'code', 'x + 1');
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle();
    engines.open[0]!.fail('boom');
    await clock.settle();
    expect(run(a).state).toBe('error');
    expect(run(b).state).toBe('cancelled');
    expect(shown(run(b))).toMatch(/not run: cell 1, whose values this cell reads, failed/);
    expect(engines.runs).toHaveLength(1);
  });

  it('cells in a cycle fail at once with the cycle named, and nothing runs', async () => {
    const { doc, clock, engines, run } = setUp();
    const a = addCell(doc, 'code', 'const x = y + 1;');
    const b = addCell(doc, 'code', 'const y = x + 1;');
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle();
    expect(engines.runs).toHaveLength(0);
    expect(run(a).state).toBe('error');
    expect(shown(run(a))).toMatch(/^CycleError: /);
    // b, downstream of a (and in the cycle), fails the same way: neither waits in the queue.
    expect(run(b).state).toBe('error');
    expect(shown(run(b))).toMatch(/^CycleError: /);
    expect(readKernelStatus(doc)).toMatchObject({ state: 'idle', queue: [] });
  });

  it('a cell deleted while it runs: its values are forgotten before its queued reader runs, which gets no value of it', async () => {
    const { doc, clock, engines, run } = setUp();
    const a = addCell(doc, 'code', 'const x = 1;');
    const b = addCell(doc, 'code', 'x + 1');
    let forgottenFirst: boolean | null = null;
    engines.auto = (r) => {
      if (r.cellId === b) forgottenFirst = engines.calls.includes('js.delete x');
      return null;
    };
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle();
    deleteCell(doc, a, bobOrigin);
    await clock.settle();
    engines.open[0]!.finish({ defines: ['x'] });
    await clock.settle();
    expect(engines.calls).toContain('js.delete x');
    const reader = engines.open[0]!;
    expect(reader.cellId).toBe(b);
    expect(forgottenFirst).toBe(true);
    expect((reader.input as { inputs: string[] }).inputs).toEqual([]);
    reader.fail('x is not defined', 'ReferenceError');
    await clock.settle();
    expect(run(b).state).toBe('error');
    expect(engines.runs.filter((r) => r.cellId === a)).toHaveLength(1);
  });

  it('a chain of fast cells is written in a few transactions, not one per cell', async () => {
    const { doc, clock, engines } = setUp();
    const ids = [addCell(doc, 'code', 'const v0 = 0;')];
    for (let i = 1; i < 20; i++) ids.push(addCell(doc, 'code', `const v${i} = v${i - 1} + 1;`));
    engines.auto = (r) => ({ defines: [`v${ids.indexOf(r.cellId as (typeof ids)[number])}`] });
    await clock.settle();
    let writes = 0;
    doc.on('afterTransaction', (tr: Y.Transaction) => {
      if (tr.origin === KERNEL_ORIGIN) writes++;
    });
    requestRun(doc, ids[0]!, alice, aliceOrigin);
    await clock.settle();
    expect(engines.runs).toHaveLength(20);
    expect(ids.every((id) => readCellRun(doc, id)!.state === 'done')).toBe(true);
    // Queueing 20 cells, their results, and the status: far fewer than 20 separate writes of each.
    expect(writes).toBeLessThan(20);
  });

  it('typing in sources schedules nothing (no scan of every cell per keystroke); a run request still runs the newest source', async () => {
    const { doc, clock, engines, run } = setUp();
    const a = addCell(doc, 'code', 'const x = 1;');
    const b = addCell(doc, 'markdown', 'Some *notes*');
    await clock.settle();
    expect(clock.pending).toBe(0);
    for (let i = 0; i < 20; i++) insertCellText(doc, a, 0, ' ', aliceOrigin);
    const fragment = getCell(doc, b)!.map.get('source') as Y.XmlFragment;
    doc.transact(() => (fragment.get(0) as Y.XmlElement).insert(0, [new Y.XmlText('more ')]), aliceOrigin);
    expect(clock.pending).toBe(0);
    setCellSource(doc, a, 'const x = 2;', aliceOrigin);
    requestRun(doc, a, alice, aliceOrigin);
    expect(clock.pending).toBeGreaterThan(0);
    await clock.settle();
    expect(engines.open.map((r) => r.cellId)).toEqual([a]);
    expect(JSON.stringify(engines.open[0]!.input)).toContain('x = 2');
    engines.open[0]!.finish({ defines: ['x'] });
    await clock.settle();
    expect(run(a).state).toBe('done');
  });

  it('an edit that keeps what a cell defines and reads keeps the graph; one that changes them rebuilds it, and runs follow the new dependencies', async () => {
    const { doc, clock, engines, kernel, run } = setUp();
    const a = addCell(doc, 'code', 'const x = 1;');
    const b = addCell(doc, 'code', 'const y = x + 1;');
    const c = addCell(doc, 'code', 'const z = 5;');
    const runAll = async () => {
      await clock.settle();
      while (engines.open.length) {
        const r = engines.open[0]!;
        r.finish({ defines: r.cellId === a ? ['x'] : r.cellId === b ? ['y'] : ['z'] });
        await clock.settle();
      }
    };
    requestRun(doc, a, alice, aliceOrigin);
    await runAll();
    expect(engines.runs.map((r) => r.cellId)).toEqual([a, b]);
    const built = kernel.graphBuilds;
    expect(built).toBeGreaterThan(0);

    // Same definitions and references: the graph stays, the run takes the edited source.
    insertCellText(doc, a, 11, '0', aliceOrigin); // const x = 10;
    insertCellText(doc, b, 0, '  ', bobOrigin);
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle();
    expect(JSON.stringify(engines.open[0]!.input)).toContain('x = 10;');
    await runAll();
    expect(engines.runs.map((r) => r.cellId)).toEqual([a, b, a, b]);
    expect(JSON.stringify(engines.runs[3]!.input)).toContain('  const y = x + 1;');
    expect(kernel.graphBuilds).toBe(built);

    // b now reads z, not x: the graph is built again; a runs alone, c brings b along.
    setCellSource(doc, b, 'const y = z + 1;', bobOrigin);
    requestRun(doc, a, alice, aliceOrigin);
    await runAll();
    expect(engines.runs.map((r) => r.cellId).slice(4)).toEqual([a]);
    expect(kernel.graphBuilds).toBe(built + 1);
    requestRun(doc, c, alice, aliceOrigin);
    await runAll();
    expect(engines.runs.map((r) => r.cellId).slice(5)).toEqual([c, b]);
    expect(run(b).state).toBe('done');

    // A cell that stops defining what another reads: rebuilt too (the reader's input is gone).
    setCellSource(doc, c, 'const w = 5;', aliceOrigin);
    requestRun(doc, c, alice, aliceOrigin);
    await runAll();
    expect(engines.runs.map((r) => r.cellId).slice(7)).toEqual([c]);
    expect(kernel.graphBuilds).toBe(built + 2);
  });

  it('a tick reads the run requests of the cells a change touched, not every cell; a cell made with its request runs', async () => {
    const { doc, clock, engines, kernel, run } = setUp();
    const ids = Array.from({ length: 50 }, (_, i) => addCell(doc, 'code', `const v${i} = ${i};`));
    await clock.settle();
    const { everyCell } = kernel.requestReads;
    expect(everyCell).toBeGreaterThan(0); // the first tick reads them all
    // Changes that are no request (the viewer's camera, the title, a cell's other keys): ticks that read no request.
    setCamera(doc, { ...readCamera(doc), position: [1, 2, 3] }, aliceOrigin);
    doc.transact(() => roots(doc).meta.set('title', 'Lab meeting'), aliceOrigin);
    setCellName(doc, ids[3]!, 'third', aliceOrigin); // a change of the cells: deletions are looked for, requests not re-read
    await clock.settle();
    expect(kernel.requestReads).toEqual({ everyCell, cells: 0 });
    expect(engines.runs).toHaveLength(0);
    // A request is read on its own cell.
    requestRun(doc, ids[7]!, alice, aliceOrigin);
    await clock.settle();
    expect(kernel.requestReads).toEqual({ everyCell, cells: 1 });
    expect(engines.open.map((r) => r.cellId)).toEqual([ids[7]]);
    engines.open[0]!.finish({ defines: ['v7'] });
    await clock.settle();
    expect(run(ids[7]!).state).toBe('done');
    // A cell created together with its request, in one transaction: every cell is read again, and it runs.
    let made = '';
    doc.transact(() => {
      made = addCell(doc, 'code', 'const w = 1;');
      requestRun(doc, made, bob, bobOrigin);
    }, bobOrigin);
    await clock.settle();
    expect(kernel.requestReads.everyCell).toBe(everyCell + 1);
    expect(engines.open.map((r) => r.cellId)).toEqual([made]);
    engines.open[0]!.finish({ defines: ['w'] });
    await clock.settle();
    expect(run(made).exec!.requestedBy?.id).toBe('bob');
    // A request whose acknowledgement someone removes is read again (and acknowledged again).
    const request = requestRun(doc, ids[9]!, alice, aliceOrigin);
    await clock.settle();
    engines.open[0]!.finish({ defines: ['v9'] });
    await clock.settle();
    const read = kernel.requestReads.cells;
    doc.transact(() => getCell(doc, ids[9]!)!.map.delete('ack'), bobOrigin);
    expect(readAck(getCell(doc, ids[9]!)!)).toBeNull();
    await clock.settle();
    expect(kernel.requestReads.cells).toBe(read + 1);
    expect(readAck(getCell(doc, ids[9]!)!)).toBe(request);
  });

  it('a kernel stopped right after a cell ended still writes that result (it was waiting in the write batch)', async () => {
    const { doc, clock, engines, kernel, run } = setUp();
    const a = addCell(doc, 'code', '6 * 7');
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle();
    engines.open[0]!.finish({ outputs: [textOutput('42')] });
    // The run's end is handled (its result deferred to the batch), but the batch's timer has not fired.
    await new Promise((r) => setImmediate(r));
    expect(run(a).state).not.toBe('done');
    await kernel.stop();
    expect(run(a).state).toBe('done');
    expect(shown(run(a))).toBe('42');
  });

  it('trivial cells go to the runner ahead as one batch; those it throws away are no longer live, and a reader runs them again', async () => {
    const doc = new Y.Doc();
    const clock = new ManualClock();
    const engines = new ScriptedEngines();
    engines.auto = () => ({});
    const batches: RunInput[][] = [];
    let sentAhead: string[] = [];
    let report: ((ids: string[]) => void) | null = null;
    // The scripted JS engine, plus a batch the test throws away as the runtime does on an interrupt.
    const withAhead: KernelEngines = {
      js: (): JsEngine => {
        const base = engines.js();
        return {
          ...base,
          get expecting() {
            return sentAhead.length;
          },
          set onAheadDropped(f: ((ids: string[]) => void) | null) {
            report = f;
          },
          runAhead: (inputs: RunInput[]) => {
            batches.push(inputs);
            sentAhead = inputs.map((i) => i.runId);
          },
          run: (input: RunInput, onStream: (name: 'stdout' | 'stderr', text: string) => void) => {
            if (sentAhead[0] === input.runId) sentAhead.shift();
            return base.run(input, onStream);
          },
          interrupt: () => {
            const dropped = sentAhead;
            sentAhead = [];
            report?.(dropped);
            base.interrupt();
          },
        };
      },
      sql: engines.sql,
    };
    const dir = tmpDir();
    const kernel = new WorkspaceKernel({
      workspaceId: 'w_test', doc, clock, engines: withAhead, dir, tablesDir: `${dir}/tables`, log: createLogger('silent'),
      limits: { timeoutMs: 1000, memoryMb: 64, sqlMemoryMb: 64, sqlRowsToJs: 100, maxFrameBytes: 1 << 20 },
    });
    kernels.push(kernel);
    kernel.begin();
    const a = addCell(doc, 'code', 'const x = 1;');
    const b = addCell(doc, 'code', 'const y = x + 1;');
    const c = addCell(doc, 'code', 'const z = y + 1;');
    const loops = addCell(doc, 'code', 'let n = z; for (;;) { break; }');
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle();
    // One batch for the chain: a, b and c, which neither loop nor call anything; not the cell that loops.
    const cellOf = (f: string) => /^cell-(.+)\.js$/.exec(f)![1];
    expect(batches.map((bt) => bt.map((i) => cellOf(i.filename)))).toEqual([[a, b, c]]);
    expect([a, b, c, loops].map((id) => readCellRun(doc, id)!.state)).toEqual(['done', 'done', 'done', 'done']);

    // Edit a and run it; interrupt while a runs: the runtime throws b and c away (it may have run them).
    engines.auto = () => null;
    setCellSource(doc, a, 'const x = 10;', aliceOrigin);
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle();
    expect(batches).toHaveLength(2);
    expect(engines.open.map((r) => r.cellId)).toEqual([a]);
    requestInterrupt(doc, alice, aliceOrigin);
    await clock.settle();
    engines.open[0]!.finish({ ok: false, cancelled: true, defines: [] });
    await clock.settle();
    const before = engines.runs.length;

    // A new reader of z: b and c are not live any more, so they run first as its inputs (a's
    // earlier value is still live: its interrupted run changed nothing).
    engines.auto = () => ({});
    const d = addCell(doc, 'code', 'z * 2');
    requestRun(doc, d, alice, aliceOrigin);
    await clock.settle();
    expect(engines.runs.slice(before).map((r) => r.cellId)).toEqual([b, c, d]);
    expect(readCellRun(doc, b)!.exec!.trigger).toBe('inputs');
  });

  it('a run that ends as fatal because stop() disposed its runtime starts no new runtimes (nobody would stop them)', async () => {
    const doc = new Y.Doc();
    const clock = new ManualClock();
    const engines = new ScriptedEngines();
    // Runtimes started and not disposed: each is a child process in the real kernel.
    const live = new Set<object>();
    const counted: KernelEngines = {
      js: (o) => {
        const e = engines.js();
        const me = {
          ...e,
          // As the real runtime: disposing kills the runner, and the run in it ends as fatal.
          dispose: async () => {
            live.delete(me);
            for (const r of engines.open) if (r.engine === 'js') r.finish({ ok: false, fatal: 'stopped', error: { type: 'error', name: 'KernelError', message: 'stopped' } });
          },
        };
        live.add(me);
        return me;
      },
      sql: () => {
        const e = engines.sql();
        const me = { ...e, dispose: async () => void live.delete(me) };
        live.add(me);
        return me;
      },
    };
    const dir = tmpDir();
    const kernel = new WorkspaceKernel({
      workspaceId: 'w_test', doc, clock, engines: counted, dir, tablesDir: `${dir}/tables`, log: createLogger('silent'),
      limits: { timeoutMs: 1000, memoryMb: 64, sqlMemoryMb: 64, sqlRowsToJs: 100, maxFrameBytes: 1 << 20 },
    });
    kernel.begin();
    const a = addCell(doc, 'code', 'while (true) {}');
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle();
    expect(engines.open.map((r) => r.cellId)).toEqual([a]);
    expect(live.size).toBe(2);
    await kernel.stop();
    await clock.settle();
    expect(live.size).toBe(0);
  });
});

describe('how a run is written', () => {
  const execValue = (doc: Y.Doc, id: string) => getCell(doc, id)!.map.get('exec');

  it('a chain of fast cells: each run written once, whole, as one plain value (not a map of keys and outputs)', async () => {
    const { doc, clock, engines, run } = setUp();
    engines.auto = (r) => ({ outputs: [textOutput(`out of ${r.cellId}`)] });
    const ids = [addCell(doc, 'code', 'const x = 1;'), addCell(doc, 'code', 'const y = x + 1;'), addCell(doc, 'code', 'y * 2')];
    await clock.settle();
    requestRun(doc, ids[0]!, alice, aliceOrigin);
    await clock.settle();
    for (const id of ids) {
      expect(execValue(doc, id)).not.toBeInstanceOf(Y.Map);
      expect(run(id)).toMatchObject({ state: 'done', exec: { state: 'done', requestedBy: { id: 'alice' } } });
      expect(shown(run(id))).toBe(`out of ${id}`);
    }
    expect(new Set(ids.map((id) => run(id).exec!.runId)).size).toBe(3);
  });

  it('a run that takes a while shows `running` at once as a map, then is settled into one plain value when it ends; the next fast run is plain too', async () => {
    const { doc, clock, engines, run } = setUp();
    const a = addCell(doc, 'code', 'slow()');
    await clock.settle();
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle();
    expect(run(a).state).toBe('running');
    expect(execValue(doc, a)).toBeInstanceOf(Y.Map);
    engines.open[0]!.finish({ outputs: [textOutput('slow result')] });
    await clock.settle();
    expect(run(a).state).toBe('done');
    expect(shown(run(a))).toBe('slow result');
    expect(execValue(doc, a)).not.toBeInstanceOf(Y.Map);
    engines.auto = () => ({ outputs: [textOutput('fast result')] });
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle();
    expect(shown(run(a))).toBe('fast result');
    expect(execValue(doc, a)).not.toBeInstanceOf(Y.Map);
  });

  it('with plain runs switched off (the benchmarks\' baseline) every run, fast or slow, stays a map', async () => {
    const { doc, clock, engines, run } = setUp({ plainRuns: false });
    const a = addCell(doc, 'code', 'slow()');
    await clock.settle();
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle();
    engines.open[0]!.finish({ outputs: [textOutput('slow result')] });
    await clock.settle();
    expect(run(a).state).toBe('done');
    expect(execValue(doc, a)).toBeInstanceOf(Y.Map);
    engines.auto = () => ({ outputs: [textOutput('fast result')] });
    requestRun(doc, a, alice, aliceOrigin);
    await clock.settle();
    expect(shown(run(a))).toBe('fast result');
    expect(execValue(doc, a)).toBeInstanceOf(Y.Map);
  });
});
