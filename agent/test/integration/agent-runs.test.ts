/**
 * The agent end to end: real server + kernel, a person's client, the real agent peer and `openai`
 * client against the scripted model. Creating and running a cell, concurrent typing, Stop during a
 * stream and during a tool call, Undo after a person edited the same cell, bad model output, and
 * restarts of the agent.
 */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  acceptProposal, cellSource, getCell, getRun, listCells, listMessages, proposalsOfRun, readCamera, readCellRun, readViewerLayout, requestRunStop,
  requestRunUndo, insertCellText, userOrigin,
} from '@plexus/shared';
import { client, addCell } from '@plexus/testkit/kernel';
import { waitFor } from '@plexus/testkit';
import { alice, aliceOrigin, ask, agentSuite, waitRunEnd, type AgentUnderTest } from '@plexus/testkit/agent';

const suite = agentSuite();
const ctx = suite.ctx;
const workspace = suite.workspace;
let agent: AgentUnderTest | undefined;

const replyText = (doc: Y.Doc, runId: string) => listMessages(doc).find((m) => m.id === getRun(doc, runId)?.replyId)?.text ?? '';

describe('agent runs', () => {
  it('creates a cell, runs it on the kernel and answers with the result', async () => {
    const { ws, a } = await workspace();
    agent = await suite.start(ws, {
      turns: [
        { text: 'I will compute it in a cell.', toolCalls: [{ name: 'create_cell', arguments: { kind: 'code', source: 'const answer = 6 * 7;\nanswer' } }] },
        { toolCalls: [{ name: 'run_cell', arguments: { cell_id: '$tool.cell_id' } }] },
        { text: 'The answer is **42**.', chunkSize: 3 },
      ],
    });
    const runId = ask(a.doc, 'what is six times seven? use the notebook');
    const run = await waitRunEnd(a.doc, runId);
    expect(run.status).toBe('done');
    expect(run.steps).toBe(3);
    expect(run.tokens.total).toBeGreaterThan(0);
    const cell = listCells(a.doc).find((c) => cellSource(c).includes('6 * 7'))!;
    expect(cell).toBeTruthy();
    const cellRun = readCellRun(a.doc, cell.id)!;
    expect(cellRun.state).toBe('done');
    expect(JSON.stringify(cellRun.outputs)).toContain('42');
    expect(run.activity.map((x) => [x.tool, x.status])).toEqual([['create_cell', 'done'], ['run_cell', 'done']]);
    expect(run.activity[1]!.summary).toContain('42');
    expect(run.audit.map((x) => x.target)).toEqual([`cell:${cell.id}`]);
    expect(replyText(a.doc, runId)).toContain('The answer is **42**.');
    // The model saw the run result in the tool message.
    const lastReq = agent.llm.conversation.at(-1)!.body as { messages: Array<{ role: string; content: string }> };
    expect(lastReq.messages.filter((m) => m.role === 'tool').at(-1)!.content).toContain('42');
  });

  it('set_view writes the layout it reports (directly, and through a proposal a person accepts)', async () => {
    const { ws, a } = await workspace();
    agent = await suite.start(ws, { turns: [{ toolCalls: [{ name: 'set_view', arguments: { layout: '4panel', position: [10, 20, 3] } }] }, { text: 'Done.' }] });
    const direct = await waitRunEnd(a.doc, ask(a.doc, 'show four panels'));
    expect(direct.activity.map((x) => [x.tool, x.status])).toEqual([['set_view', 'done']]);
    await waitFor(() => readViewerLayout(a.doc) === '4panel', { message: 'layout written' });
    expect(readCamera(a.doc).position).toEqual([10, 20, 3]);
    await agent.close();

    const p = await workspace('propose');
    agent = await suite.start(p.ws, { turns: [{ toolCalls: [{ name: 'set_view', arguments: { layout: 'xy-3d' } }] }, { text: 'Proposed.' }] });
    const run = await waitRunEnd(p.a.doc, ask(p.a.doc, 'a 3d layout please'));
    const [card] = proposalsOfRun(p.a.doc, run.id);
    expect(card?.proposal.action).toMatchObject({ type: 'set_camera', layout: 'xy-3d' });
    expect(readViewerLayout(p.a.doc)).not.toBe('xy-3d');
    expect(acceptProposal(p.a.doc, card!.messageId, alice, aliceOrigin)?.status).toBe('accepted');
    expect(readViewerLayout(p.a.doc)).toBe('xy-3d');
  });

  it('a person typing in the cell the agent rewrites keeps every character; the agent edit lands too', async () => {
    const { ws, a } = await workspace();
    const original = 'function area(r) {\n  return 3.14 * r * r;\n}\narea(2)';
    const cellId = addCell(a.doc, 'code', original);
    const rewritten = 'function area(r) {\n  // exact value of pi\n  return Math.PI * r * r;\n}\narea(2)';
    agent = await suite.start(
      ws,
      { turns: [{ toolCalls: [{ name: 'get_cell', arguments: { cell_id: cellId } }] }, { toolCalls: [{ name: 'update_cell', arguments: { cell_id: cellId, source: rewritten } }] }, { text: 'Done.' }] },
      { PLEXUS_AGENT_TYPING_CHARS: '2', PLEXUS_AGENT_TYPING_PAUSE_MS: '5' },
    );
    // Alice's client watches the agent's presence: focus on the cell, caret inside its text.
    const seenPresence: string[] = [];
    a.provider.awareness!.on('change', () => {
      for (const st of a.provider.awareness!.getStates().values()) {
        const s = st as { user?: { kind?: string; name?: string }; focus?: { cellId?: string }; cursor?: { head?: unknown } };
        if (s.user?.kind !== 'agent' || !s.cursor?.head) continue;
        const pos = Y.createAbsolutePositionFromRelativePosition(Y.createRelativePositionFromJSON(s.cursor.head), a.doc);
        if (pos && pos.type === getCell(a.doc, cellId)!.map.get('source') && s.focus?.cellId === cellId) seenPresence.push(`${s.user.name}@${pos.index}`);
      }
    });
    const runId = ask(a.doc, 'use Math.PI');
    // Alice types at the end of the cell while the agent types in the middle.
    await waitFor(() => (getRun(a.doc, runId)?.activity.some((x) => x.tool === 'update_cell') ? true : null), { timeout: 60_000 });
    const typed = ' // twelve point five';
    for (const ch of typed) {
      const t = cellSource(getCell(a.doc, cellId)!);
      insertCellText(a.doc, cellId, t.length, ch, aliceOrigin);
      await new Promise((r) => setTimeout(r, 3));
    }
    const run = await waitRunEnd(a.doc, runId);
    expect(run.status).toBe('done');
    await waitFor(() => (cellSource(getCell(agent!.peer.doc, cellId)!) === cellSource(getCell(a.doc, cellId)!) ? true : null));
    expect(cellSource(getCell(a.doc, cellId)!)).toBe(rewritten + typed);
    expect(seenPresence.length).toBeGreaterThan(0);
    expect(seenPresence[0]).toMatch(/^Plexus agent@\d+$/);
  });

  it('Stop during a long model stream ends the run as stopped within its stream, keeping the partial answer', async () => {
    const { ws, a } = await workspace();
    agent = await suite.start(ws, { turns: [{ text: 'word '.repeat(400), chunkSize: 5, delayMs: 20 }] });
    const runId = ask(a.doc, 'write a long essay');
    await waitFor(() => (replyText(a.doc, runId).length > 50 ? true : null), { timeout: 60_000 });
    requestRunStop(a.doc, runId, alice, aliceOrigin);
    const run = await waitRunEnd(a.doc, runId, 5000);
    expect(run.status).toBe('stopped');
    expect(run.reason).toBe('stopped by Alice');
    const text = replyText(a.doc, runId);
    expect(text).toContain('word word');
    expect(text).toContain('_Stopped: stopped by Alice_');
    expect(text.length).toBeLessThan(2000);
    await waitFor(() => (agent!.llm.conversation[0]!.aborted ? true : null), { timeout: 60_000, message: 'the model stream to be aborted' });
  });

  it('Stop during a tool call (a cell that loops) ends the run', async () => {
    const { ws, a } = await workspace();
    const loop = addCell(a.doc, 'code', 'while (true) {}');
    agent = await suite.start(ws, { turns: [{ toolCalls: [{ name: 'run_cell', arguments: { cell_id: loop, timeout_s: 60 } }] }, { text: 'never reached' }] });
    const runId = ask(a.doc, 'run the loop');
    await waitFor(() => (getRun(a.doc, runId)?.activity[0]?.status === 'running' ? true : null), { timeout: 60_000 });
    requestRunStop(a.doc, runId, alice, aliceOrigin);
    const run = await waitRunEnd(a.doc, runId, 5000);
    expect(run.status).toBe('stopped');
    expect(agent.llm.conversation).toHaveLength(1);
    expect(replyText(a.doc, runId)).not.toContain('never reached');
  });

  it('Undo run reverts exactly the run’s changes after a person edited the same cell', async () => {
    const { ws, a } = await workspace();
    const cellId = addCell(a.doc, 'code', 'const threshold = 0.5;\nconst window = 10;\nthreshold * window');
    agent = await suite.start(ws, {
      turns: [
        { toolCalls: [{ name: 'replace_in_cell', arguments: { cell_id: cellId, find: 'threshold = 0.5', replace: 'threshold = 0.8' } }, { name: 'create_cell', arguments: { kind: 'markdown', source: '## Notes from the agent' } }] },
        { text: 'Changed the threshold and added notes.' },
      ],
    });
    const runId = ask(a.doc, 'raise the threshold');
    const run = await waitRunEnd(a.doc, runId);
    expect(run.status).toBe('done');
    expect(run.audit).toHaveLength(2);
    expect(cellSource(getCell(a.doc, cellId)!)).toContain('threshold = 0.8');
    // Alice edits another part of the same cell afterwards.
    const t = cellSource(getCell(a.doc, cellId)!);
    insertCellText(a.doc, cellId, t.indexOf('10'), '2', aliceOrigin); // window = 210
    requestRunUndo(a.doc, runId, alice, aliceOrigin);
    const undone = await waitFor(() => getRun(a.doc, runId)?.undone ?? null, { timeout: 60_000 });
    expect(undone!.ok).toBe(true);
    await waitFor(() => (listCells(a.doc).length === 1 ? true : null), { message: 'the agent cell to be removed' });
    expect(cellSource(getCell(a.doc, cellId)!)).toBe('const threshold = 0.5;\nconst window = 210;\nthreshold * window');
  });

  it('malformed tool arguments and unknown tools go back to the model as errors; the run goes on', async () => {
    const { ws, a } = await workspace();
    agent = await suite.start(ws, {
      turns: [
        { toolCalls: [{ name: 'run_cell', arguments: '{"cell_id": ' }, { name: 'rm_rf', arguments: {} }, { name: 'create_cell', arguments: { kind: 'python', source: 1 } }] },
        { text: 'Sorry about that.' },
      ],
    });
    const runId = ask(a.doc, 'do something');
    const run = await waitRunEnd(a.doc, runId);
    expect(run.status).toBe('done');
    expect(run.activity.map((x) => x.status)).toEqual(['error', 'error', 'error']);
    const tools = (agent.llm.conversation[1]!.body as { messages: Array<{ role: string; content: string }> }).messages.filter((m) => m.role === 'tool').map((m) => String(JSON.parse(m.content).error));
    expect(tools[0]).toContain('not valid JSON');
    expect(tools[1]).toContain('unknown tool "rm_rf"');
    expect(tools[2]).toMatch(/arguments\.kind: must be one of/);
    expect(tools[2]).toMatch(/arguments\.source: expected string/);
    expect(listCells(a.doc)).toHaveLength(0);
  });

  it('an endless tool loop stops at the step budget with a visible reason, after a wrap-up hint', async () => {
    const { ws, a } = await workspace();
    agent = await suite.start(ws, { turns: [{ repeat: true, toolCalls: [{ name: 'get_notebook_state', arguments: {} }] }] }, { PLEXUS_AGENT_MAX_STEPS: '6' });
    const runId = ask(a.doc, 'loop forever');
    const run = await waitRunEnd(a.doc, runId);
    expect(run.status).toBe('stopped');
    expect(run.reason).toBe('step budget reached (6 steps)');
    expect(run.steps).toBe(6);
    expect(replyText(a.doc, runId)).toContain('step budget reached');
    const bodies = agent.llm.conversation.map((r) => r.body as { messages: Array<{ role: string; content: string }>; tool_choice?: string });
    expect(bodies).toHaveLength(6);
    expect(bodies[3]!.messages.some((m) => m.role === 'system' && m.content.includes('steps left'))).toBe(true);
    expect(bodies[5]!.tool_choice).toBe('none');
  });

  it('two people asking at once get two runs, each answered in its own thread', async () => {
    const { ws, a } = await workspace();
    const b = await client(ctx.server, ws, ctx.clients);
    // Each run's model request waits until both runs have asked the model: both are then in flight
    // at once, whatever the machine's load (without this, one short answer could end first).
    const asked = new Set<string>();
    let bothAsked!: () => void;
    const both = new Promise<void>((r) => (bothAsked = r));
    const lastUser = (body: string) => JSON.stringify((JSON.parse(body) as { messages: Array<{ role: string }> }).messages.filter((m) => m.role === 'user').at(-1) ?? '');
    agent = await suite.start(ws, {
      turns: [
        { match: { lastUserContains: 'mean' }, text: 'The mean is 2.', chunkSize: 2, delayMs: 10 },
        { match: { lastUserContains: 'max' }, text: 'The max is 3.', chunkSize: 2, delayMs: 10 },
      ],
    }, {}, {
      holdModelRequest: async (body) => {
        const last = lastUser(body);
        const which = last.includes('mean') ? 'mean' : last.includes('max') ? 'max' : null;
        if (!which) return;
        asked.add(which);
        if (asked.size === 2) bothAsked();
        await both;
      },
    });
    const bob = { id: 'bob', name: 'Bob' };
    const r1 = ask(a.doc, 'what is the mean of 1, 2 and 3?');
    const r2 = ask(b.doc, 'what is the max of 1, 2 and 3?', bob, userOrigin('bob', 'Bob'));
    const [one, two] = await Promise.all([waitRunEnd(a.doc, r1), waitRunEnd(a.doc, r2)]);
    expect([one.status, two.status]).toEqual(['done', 'done']);
    expect(two.request.by).toEqual(bob);
    const msgs = listMessages(a.doc);
    const reply = (r: typeof one) => msgs.find((m) => m.id === r.replyId)!;
    expect(reply(one).text).toBe('The mean is 2.');
    expect(reply(two).text).toBe('The max is 3.');
    expect(reply(one).replyTo).toBe(one.request.messageId);
    expect(reply(two).replyTo).toBe(two.request.messageId);
    // They ran at the same time (each started before the other ended): both asked the model before either answered.
    expect([...asked].sort()).toEqual(['max', 'mean']);
    expect(one.startedAt!).toBeLessThan(two.endedAt!);
    expect(two.startedAt!).toBeLessThan(one.endedAt!);
  });

  it('a restarted agent gets a new Yjs client id, fails the run it was doing, and serves new requests', async () => {
    const { ws, a } = await workspace();
    agent = await suite.start(ws, { turns: [{ text: 'slow '.repeat(500), chunkSize: 5, delayMs: 20 }] });
    const first = agent.peer.clientId;
    const runId = ask(a.doc, 'long answer');
    await waitFor(() => (replyText(a.doc, runId).length > 20 ? true : null), { timeout: 60_000 });
    // Crash: the replica disappears without finishing its run.
    agent.peer.vanish();
    await agent.llm.close();
    // The crashed process no longer renews its lease: it runs out (here at once) and the next one takes over.
    ctx.server.agentLeases.expire(ws);
    agent = await suite.start(ws, { turns: [{ text: 'Back again.' }] });
    expect(agent.peer.clientId).not.toBe(first);
    const failed = await waitRunEnd(a.doc, runId);
    expect(failed.status).toBe('error');
    expect(failed.reason).toMatch(/agent restarted/);
    const second = await waitRunEnd(a.doc, ask(a.doc, 'hello again'));
    expect(second.status).toBe('done');
    // Every replica agrees.
    await waitFor(() => (Y.encodeStateVector(agent!.peer.doc).toString() === Y.encodeStateVector(a.doc).toString() ? true : null));
    expect(agent.peer.doc.getArray('chat').toJSON()).toEqual(a.doc.getArray('chat').toJSON());
  });
});
