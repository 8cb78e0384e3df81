import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  KERNEL_ORIGIN, appendStream, createCell, deleteCell, finishExec, getCell, listCells, pendingRequests, pushOutputs, readCellRun,
  readCommand, readKernelStatus, requestRestart, requestRun, requestRunAll, runSource, setCellName, setCellSource, setPending,
  setStale, sourceHash, staleCells, startExec, tableNameFromFile, userOrigin, registerTable, listTables, ackRequest, recordExec, SETTLE_MAX_WRITTEN_CHARS,
} from '../src/index.ts';

const alice = userOrigin('alice');
const who = { id: 'alice', name: 'Alice' };

function execInfo(doc: Y.Doc, id: string, runId: string) {
  const cell = getCell(doc, id)!;
  const src = runSource(cell);
  return { runId, requestId: null, trigger: 'request' as const, requestedBy: who, count: 1, generation: 1, startedAt: Date.now(), sourceHash: sourceHash(src), source: src, defines: [] };
}

describe('run requests', () => {
  it('a request records who asked and which run they saw; the kernel acknowledges it', () => {
    const doc = new Y.Doc();
    const id = createCell(doc, { kind: 'code', source: 'x = 1', author: 'a' }, alice);
    const md = createCell(doc, { kind: 'markdown', source: '# t', author: 'a' }, alice);
    expect(requestRun(doc, md, who, alice)).toBeNull();
    const q = requestRun(doc, id, who, alice)!;
    expect(pendingRequests(doc).map((p) => [p.cell.id, p.request.id, p.request.seen, p.request.name])).toEqual([[id, q, null, 'Alice']]);
    expect(readCellRun(doc, id)!.requested).toBe(true);
    ackRequest(doc, getCell(doc, id)!, q, KERNEL_ORIGIN);
    expect(pendingRequests(doc)).toEqual([]);
    startExec(doc, getCell(doc, id)!, execInfo(doc, id, 'r1'), KERNEL_ORIGIN);
    requestRun(doc, id, who, alice);
    expect(pendingRequests(doc)[0]!.request.seen).toBe('r1');
  });
  it('commands land in the kernel root', () => {
    const doc = new Y.Doc();
    const a = requestRunAll(doc, who, alice);
    const r = requestRestart(doc, who, alice);
    expect(readCommand(doc, 'runAll')!.id).toBe(a);
    expect(readCommand(doc, 'restart')!.id).toBe(r);
    expect(readKernelStatus(doc).state).toBe('offline');
  });
});

describe('exec state and outputs', () => {
  it('a fast run recorded in one write reads exactly as started then finished, in fewer document items', () => {
    const views: unknown[] = [];
    const sizes: number[] = [];
    for (const oneWrite of [true, false]) {
      const doc = new Y.Doc();
      const id = createCell(doc, { kind: 'code', source: 'x * 2', author: 'a' }, alice);
      setPending(doc, getCell(doc, id)!, { runId: 'r1', requestId: null, trigger: 'request', requestedBy: who, queuedAt: 1 }, KERNEL_ORIGIN);
      setStale(doc, getCell(doc, id)!, { reason: 'old', at: 1 }, KERNEL_ORIGIN);
      const info = { ...execInfo(doc, id, 'r1'), startedAt: 1000 };
      const end = { state: 'done' as const, defines: ['y'], outputs: [{ type: 'text' as const, text: '42' }] };
      const before = Y.encodeStateAsUpdate(doc).length;
      if (oneWrite) recordExec(doc, getCell(doc, id)!, info, end, KERNEL_ORIGIN);
      else doc.transact(() => finishExec(startExec(doc, getCell(doc, id)!, info, KERNEL_ORIGIN), end, KERNEL_ORIGIN), KERNEL_ORIGIN);
      sizes.push(Y.encodeStateAsUpdate(doc).length - before);
      const v = readCellRun(doc, id)!;
      expect(v.state).toBe('done');
      expect(v.exec!.durationMs).toBeGreaterThanOrEqual(0);
      views.push({ ...v, exec: { ...v.exec!, endedAt: 0, durationMs: 0 } });
    }
    expect(views[0]).toEqual(views[1]);
    expect(sizes[0]).toBeLessThan(sizes[1]!);
  });

  it('queued → running → done with streamed stdout and a table; stale once the source changes', () => {
    const doc = new Y.Doc();
    const id = createCell(doc, { kind: 'code', source: 'rows', author: 'a' }, alice);
    setPending(doc, getCell(doc, id)!, { runId: 'r1', requestId: null, trigger: 'request', requestedBy: who, queuedAt: 1 }, KERNEL_ORIGIN);
    expect(readCellRun(doc, id)!.state).toBe('queued');
    const run = startExec(doc, getCell(doc, id)!, execInfo(doc, id, 'r1'), KERNEL_ORIGIN);
    expect(readCellRun(doc, id)!.state).toBe('running');
    appendStream(run, 'stdout', 'a', KERNEL_ORIGIN);
    appendStream(run, 'stdout', 'b\n', KERNEL_ORIGIN);
    appendStream(run, 'stderr', 'warn', KERNEL_ORIGIN);
    pushOutputs(run, [{ type: 'table', columns: [{ name: 'x', type: 'number' }], rows: [{ x: 1 }], totalRows: 1 }], KERNEL_ORIGIN);
    finishExec(run, { state: 'done', defines: ['rows'] }, KERNEL_ORIGIN);
    const view = readCellRun(doc, id)!;
    expect(view.state).toBe('done');
    expect(view.exec!.defines).toEqual(['rows']);
    expect(view.outputs.map((o) => o.type)).toEqual(['stream', 'stream', 'table']);
    expect(view.outputs[0]).toEqual({ type: 'stream', name: 'stdout', text: 'ab\n' });
    expect(view.stale).toBe(false);
    expect(staleCells(doc)).toEqual([]);
    setCellSource(doc, id, 'rows.length', alice);
    expect(readCellRun(doc, id)!.stale).toBe(true);
    expect(staleCells(doc)).toEqual([id]);
  });
  it('a run written while it ran is settled when it ends: one plain value with every output in order, its map collected', () => {
    const doc = new Y.Doc();
    const peer = new Y.Doc();
    doc.on('update', (u: Uint8Array) => Y.applyUpdate(peer, u));
    const id = createCell(doc, { kind: 'code', source: 'slow()', author: 'a' }, alice);
    // Items the document holds that still carry content (not deleted, not collected).
    const liveItems = (d: Y.Doc) => Y.decodeUpdate(Y.encodeStateAsUpdate(d)).structs.filter((x) => x instanceof Y.Item && !(x.content instanceof Y.ContentDeleted)).length;
    const bare = liveItems(doc);
    const run = startExec(doc, getCell(doc, id)!, { ...execInfo(doc, id, 'r1'), startedAt: Date.now() - 50 }, KERNEL_ORIGIN);
    appendStream(run, 'stdout', 'step 1\n', KERNEL_ORIGIN);
    appendStream(run, 'stdout', 'step 2\n', KERNEL_ORIGIN);
    pushOutputs(run, [{ type: 'table', columns: [{ name: 'x', type: 'number' }], rows: [{ x: 1 }], totalRows: 1 }], KERNEL_ORIGIN);
    appendStream(run, 'stderr', 'careful', KERNEL_ORIGIN);
    expect(getCell(doc, id)!.map.get('exec')).toBeInstanceOf(Y.Map);
    expect(readCellRun(doc, id)!.state).toBe('running');
    expect(liveItems(doc) - bare).toBeGreaterThan(15);
    finishExec(run, { state: 'error', defines: ['rows'], reason: 'it failed', outputs: [{ type: 'error', name: 'Error', message: 'boom' }] }, KERNEL_ORIGIN);
    for (const d of [doc, peer]) {
      expect(getCell(d, id)!.map.get('exec')).not.toBeInstanceOf(Y.Map);
      const v = readCellRun(d, id)!;
      expect(v.state).toBe('error');
      expect(v.exec).toMatchObject({ runId: 'r1', state: 'error', defines: ['rows'], reason: 'it failed', requestedBy: who });
      expect(v.exec!.durationMs).toBeGreaterThanOrEqual(50);
      expect(v.outputs).toEqual([
        { type: 'stream', name: 'stdout', text: 'step 1\nstep 2\n' },
        { type: 'table', columns: [{ name: 'x', type: 'number' }], rows: [{ x: 1 }], totalRows: 1 },
        { type: 'stream', name: 'stderr', text: 'careful' },
        { type: 'error', name: 'Error', message: 'boom' },
      ]);
    }
    // The run is one item now: its map, keys and outputs were collected.
    expect(liveItems(doc) - bare).toBe(1);
    expect(liveItems(peer)).toBe(liveItems(doc));
  });
  it('a run written whole keeps no undefined value (Yjs could not encode it), in its keys or its outputs', () => {
    const doc = new Y.Doc();
    const peer = new Y.Doc();
    doc.on('update', (u: Uint8Array) => Y.applyUpdate(peer, u));
    const id = createCell(doc, { kind: 'code', source: 'x', author: 'a' }, alice);
    const info = { ...execInfo(doc, id, 'r1'), reason: undefined };
    recordExec(doc, getCell(doc, id)!, info, { state: 'done', outputs: [{ type: 'text', text: 'x', extra: undefined } as never] }, KERNEL_ORIGIN);
    const stored = getCell(peer, id)!.map.get('exec') as Record<string, unknown>;
    expect('reason' in stored).toBe(false);
    expect(stored.outputs).toEqual([{ type: 'text', text: 'x' }]);
    expect(Object.keys((stored.outputs as object[])[0]!)).toEqual(['type', 'text']);
    expect(readCellRun(peer, id)!.exec).toMatchObject({ runId: 'r1', state: 'done' });
  });
  it('a run that already wrote more outputs than are worth sending again ends in its map', () => {
    const doc = new Y.Doc();
    const id = createCell(doc, { kind: 'code', source: 'print()', author: 'a' }, alice);
    const run = startExec(doc, getCell(doc, id)!, execInfo(doc, id, 'r1'), KERNEL_ORIGIN);
    const chunk = 'x'.repeat(64 * 1024);
    for (let i = 0; i * chunk.length <= SETTLE_MAX_WRITTEN_CHARS; i++) appendStream(run, 'stdout', chunk, KERNEL_ORIGIN);
    finishExec(run, { state: 'done', outputs: [{ type: 'text', text: 'end' }] }, KERNEL_ORIGIN);
    expect(getCell(doc, id)!.map.get('exec')).toBe(run);
    const v = readCellRun(doc, id)!;
    expect(v.state).toBe('done');
    expect(v.outputs.map((o) => o.type)).toEqual(['stream', 'text']);
    expect((v.outputs[0] as { text: string }).text.length).toBeGreaterThan(SETTLE_MAX_WRITTEN_CHARS);
  });
  it('kernel stale marks and SQL renames make outputs stale', () => {
    const doc = new Y.Doc();
    const id = createCell(doc, { kind: 'sql', source: 'select 1', author: 'a', name: 'q' }, alice);
    const run = startExec(doc, getCell(doc, id)!, execInfo(doc, id, 'r1'), KERNEL_ORIGIN);
    finishExec(run, { state: 'done' }, KERNEL_ORIGIN);
    setStale(doc, getCell(doc, id)!, { reason: 'x is no longer defined', names: ['x'], at: 1 }, KERNEL_ORIGIN);
    expect(readCellRun(doc, id)!.staleReason).toBe('x is no longer defined');
    setStale(doc, getCell(doc, id)!, null, KERNEL_ORIGIN);
    expect(readCellRun(doc, id)!.stale).toBe(false);
    setCellName(doc, id, 'q2', alice);
    expect(readCellRun(doc, id)!.stale).toBe(true);
  });
  it('writes of a superseded run change nothing; writes to a deleted cell do not resurrect it', () => {
    const doc = new Y.Doc();
    const peer = new Y.Doc();
    doc.on('update', (u: Uint8Array) => Y.applyUpdate(peer, u));
    const id = createCell(doc, { kind: 'code', source: '1', author: 'a' }, alice);
    const old = startExec(doc, getCell(doc, id)!, execInfo(doc, id, 'r1'), KERNEL_ORIGIN);
    const cur = startExec(doc, getCell(doc, id)!, execInfo(doc, id, 'r2'), KERNEL_ORIGIN);
    pushOutputs(old, [{ type: 'text', text: 'from r1' }], KERNEL_ORIGIN);
    finishExec(old, { state: 'error' }, KERNEL_ORIGIN);
    pushOutputs(cur, [{ type: 'text', text: 'from r2' }], KERNEL_ORIGIN);
    finishExec(cur, { state: 'done' }, KERNEL_ORIGIN);
    for (const d of [doc, peer]) {
      const v = readCellRun(d, id)!;
      expect(v.exec!.runId).toBe('r2');
      expect(v.state).toBe('done');
      expect(v.outputs).toEqual([{ type: 'text', text: 'from r2' }]);
    }
    deleteCell(peer, id, alice);
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(peer));
    pushOutputs(cur, [{ type: 'text', text: 'late' }], KERNEL_ORIGIN);
    finishExec(cur, { state: 'done' }, KERNEL_ORIGIN);
    expect(listCells(doc)).toEqual([]);
    expect(listCells(peer)).toEqual([]);
  });
});

describe('data registry', () => {
  it('table names from file names; registry lists by name', () => {
    expect(tableNameFromFile('2024 Trials.csv')).toBe('t_2024_trials');
    expect(tableNameFromFile('../../etc/passwd')).toBe('passwd');
    expect(tableNameFromFile('spikes.csv.gz')).toBe('spikes');
    const doc = new Y.Doc();
    registerTable(doc, { name: 'b', fileName: 'b.csv', format: 'csv', columns: [{ name: 'x', type: 'BIGINT' }], rows: 2, bytes: 10, storedBytes: 20, uploadedBy: { id: 'a' }, created: 1 }, KERNEL_ORIGIN);
    expect(() => registerTable(doc, { ...listTables(doc)[0]!, name: 'bad name' }, KERNEL_ORIGIN)).toThrow(/not a valid/);
    expect(listTables(doc).map((t) => t.name)).toEqual(['b']);
  });
});

describe('a run written whole', () => {
  it('reads like a run written as a map; changing what a reader got changes nothing in the document', () => {
    const doc = new Y.Doc();
    const id = createCell(doc, { kind: 'code', source: 'x', author: 'a' }, alice);
    recordExec(doc, getCell(doc, id)!, execInfo(doc, id, 'r1'), { state: 'done', defines: ['x'], outputs: [{ type: 'text', text: '1' }] }, KERNEL_ORIGIN);
    const first = readCellRun(doc, id)!;
    expect(first).toMatchObject({ state: 'done', exec: { runId: 'r1', defines: ['x'] }, outputs: [{ type: 'text', text: '1' }] });
    (first.outputs[0] as { text: string }).text = 'changed by a reader';
    expect(readCellRun(doc, id)!.outputs).toEqual([{ type: 'text', text: '1' }]);
    const replica = new Y.Doc();
    Y.applyUpdate(replica, Y.encodeStateAsUpdate(doc));
    expect(readCellRun(replica, id)!.outputs).toEqual([{ type: 'text', text: '1' }]);
  });
});
