import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  KERNEL_ORIGIN, ROSTER_ACTIVITY_MS, agentOrigin, checkDocument, createAtlasMap, createCell, createJob, finishExec, getCell, getRosterEntry,
  initWorkspace, listRoster, listMessages, listRuns, listJobs, listAtlasMaps, pendingRequests, postMessage, readCellRun, readHand,
  readKernelStatus, removeRosterEntry, requestAgentRun, requestRun, requestRunAll, rosterEntryChanged, rosterStatus, runSource,
  serverOrigin, setAtlasCoords, setHand, setPending, setRosterEntry, settleForFork, sourceHash, startActivity, startExec, startRun,
  updateJob, userOrigin, writeKernelStatus, type RosterEntry,
} from '../src/index.ts';

const ada = userOrigin('u_ada', 'Ada');
const server = serverOrigin('test');
const who = { id: 'u_ada', name: 'Ada' };

function run(doc: Y.Doc, id: string, runId: string) {
  const cell = getCell(doc, id)!;
  const src = runSource(cell);
  return startExec(doc, cell, { runId, requestId: null, trigger: 'request', requestedBy: who, count: 1, generation: 1, startedAt: 1, sourceHash: sourceHash(src), source: src, defines: [] }, KERNEL_ORIGIN);
}

const entry = (over: Partial<RosterEntry> = {}): RosterEntry => ({
  fork: 'w_f', student: { id: 'link:handout/u_s', name: 'Sam' }, created: 1, active: 1, updated: 1,
  cells: { total: 1, ran: 0, ok: 0, errors: 0, running: 0 }, lastError: null, hand: null, ...over,
});

describe('forks', () => {
  it('a roster entry summarises the cells, the latest error among cells in error, and the hand', () => {
    const doc = new Y.Doc();
    createCell(doc, { kind: 'markdown', source: '# Exercise', author: 'a' }, ada);
    const ok = createCell(doc, { kind: 'code', source: '1', author: 'a' }, ada);
    const old = createCell(doc, { kind: 'code', source: 'a.b', author: 'a' }, ada);
    const recent = createCell(doc, { kind: 'code', source: 'c.d', author: 'a' }, ada);
    const queued = createCell(doc, { kind: 'sql', source: 'select 1', author: 'a', name: 'q' }, ada);
    finishExec(run(doc, ok, 'r1'), { state: 'done' }, KERNEL_ORIGIN);
    // Ended no later than the next one (a tie goes to the cell further down).
    finishExec(run(doc, old, 'r2'), { state: 'error', outputs: [{ type: 'error', name: 'ReferenceError', message: 'a is not defined' }] }, KERNEL_ORIGIN);
    finishExec(run(doc, recent, 'r3'), { state: 'error', outputs: [{ type: 'error', name: 'ReferenceError', message: 'c is not defined' }] }, KERNEL_ORIGIN);
    setPending(doc, getCell(doc, queued)!, { runId: 'r4', requestId: null, trigger: 'request', requestedBy: who, queuedAt: 1 }, KERNEL_ORIGIN);
    setHand(doc, { by: 'u_s', name: 'Sam', at: 9 }, ada);
    const s = rosterStatus(doc);
    expect(s.cells).toEqual({ total: 4, ran: 3, ok: 1, errors: 2, running: 1 });
    expect(s.lastError).toMatchObject({ cellId: recent, index: 4, message: 'ReferenceError: c is not defined' });
    expect(s.hand).toEqual({ by: 'u_s', name: 'Sam', at: 9 });
    setHand(doc, null, ada);
    expect(readHand(doc)).toBeNull();
  });

  it('an entry is rewritten for what it says, and for activity alone only every ROSTER_ACTIVITY_MS', () => {
    const e = entry();
    expect(rosterEntryChanged(null, e)).toBe(true);
    expect(rosterEntryChanged(e, { ...e, updated: 99 })).toBe(false);
    expect(rosterEntryChanged(e, { ...e, active: e.active + ROSTER_ACTIVITY_MS - 1 })).toBe(false);
    expect(rosterEntryChanged(e, { ...e, active: e.active + ROSTER_ACTIVITY_MS })).toBe(true);
    expect(rosterEntryChanged(e, { ...e, hand: { by: 'u_s', at: 2 } })).toBe(true);
    const doc = new Y.Doc();
    setRosterEntry(doc, entry({ fork: 'w_b', created: 2 }), server);
    setRosterEntry(doc, entry({ fork: 'w_a', created: 3 }), server);
    expect(listRoster(doc).map((x) => x.fork)).toEqual(['w_b', 'w_a']);
    expect(removeRosterEntry(doc, 'w_b', server)).toBe(true);
    expect(getRosterEntry(doc, 'w_b')).toBeNull();
  });

  it('settling a copied state leaves nothing running and keeps the outputs', () => {
    const doc = new Y.Doc();
    initWorkspace(doc, { title: 'Source' }, server);
    const done = createCell(doc, { kind: 'code', source: '1 + 1', author: 'a' }, ada);
    finishExec(run(doc, done, 'r0'), { state: 'done', outputs: [{ type: 'text', text: '2' }] }, KERNEL_ORIGIN);
    const running = createCell(doc, { kind: 'code', source: 'await x', author: 'a' }, ada);
    run(doc, running, 'r1');
    const waiting = createCell(doc, { kind: 'code', source: 'y', author: 'a' }, ada);
    setPending(doc, getCell(doc, waiting)!, { runId: 'r2', requestId: null, trigger: 'upstream', requestedBy: null, queuedAt: 1 }, KERNEL_ORIGIN);
    requestRun(doc, done, who, ada);
    const all = requestRunAll(doc, who, ada);
    writeKernelStatus(doc, { state: 'busy', generation: 1, count: 2, current: running, queue: [waiting], handled: {}, limits: { timeoutMs: 1, memoryMb: 1 }, sandbox: [], updatedAt: 1 }, KERNEL_ORIGIN);
    const ask = postMessage(doc, { author: { id: 'u_ada', name: 'Ada', kind: 'person' }, text: '@agent go' }, ada);
    const runId = requestAgentRun(doc, { by: who, messageId: ask, text: 'go' }, ada);
    const reply = postMessage(doc, { author: { id: 'agent', name: 'Agent', kind: 'agent' }, text: '', status: 'streaming', replyTo: ask, runId }, agentOrigin(runId));
    startRun(doc, runId, { replyId: reply, model: 'm' }, agentOrigin(runId));
    startActivity(doc, runId, 'run_cell', '{}', agentOrigin(runId));
    createJob(doc, { id: 'j_1', kind: 'calcium', title: 'job', input: { dataset: 'd', layer: 'movie' }, params: {}, requestedBy: { id: 'u_ada', via: 'person' }, created: 1 }, server);
    updateJob(doc, 'j_1', { status: 'running' }, server);
    const map = createAtlasMap(doc, { table: 't', method: 'pca', columns: ['a'] }, who, ada);
    setAtlasCoords(doc, map, { status: 'running', progress: { stage: 'pca', done: 1, total: 2 }, at: 1 }, server);
    setRosterEntry(doc, entry(), server);
    setHand(doc, { by: 'u_s', at: 1 }, ada);

    settleForFork(doc, 'forked while running', server);

    expect(readCellRun(doc, done)).toMatchObject({ state: 'done', requested: false, outputs: [{ type: 'text', text: '2' }] });
    expect(readCellRun(doc, running)).toMatchObject({ state: 'cancelled', exec: { reason: 'forked while running' } });
    expect(readCellRun(doc, waiting)).toMatchObject({ state: 'idle', pending: null });
    expect(pendingRequests(doc)).toEqual([]);
    expect(readKernelStatus(doc)).toMatchObject({ state: 'offline', current: null, queue: [], handled: { runAll: all } });
    const r = listRuns(doc)[0]!;
    expect(r).toMatchObject({ status: 'stopped', reason: 'forked while running' });
    expect(r.activity.map((a) => a.status)).toEqual(['error']);
    expect(listMessages(doc).find((m) => m.id === reply)!.status).toBe('stopped');
    expect(listJobs(doc)[0]).toMatchObject({ status: 'stopped', error: 'forked while running' });
    expect(listAtlasMaps(doc)[0]!.coords).toMatchObject({ status: 'queued' });
    expect(listAtlasMaps(doc)[0]!.coords!.progress).toBeUndefined();
    expect(listRoster(doc)).toEqual([]);
    expect(readHand(doc)).toBeNull();
    expect(checkDocument(doc)).toEqual([]);
  });
});
