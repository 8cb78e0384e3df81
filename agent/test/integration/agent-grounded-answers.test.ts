/**
 * Answers are grounded in what the run's tools returned. In propose mode (the default) the agent's
 * new cell is a card: running it waits for a person's decision, visibly; a dismissed or undecided
 * proposal is reported to the model as "no result"; and an answer that states a number no tool
 * produced is withdrawn once and, if the model insists, marked as unverified for everyone.
 * Scenarios: the browser tests' own (`agent/scenarios/e2e.json`, the README demo) and a model
 * that lies whatever the tools say.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { acceptProposal, dismissProposal, getRun, listCells, listMessages, pendingProposals, type RunView } from '@plexus/shared';
import { waitFor } from '@plexus/testkit';
import { aliceOrigin, ask, agentSuite, waitRunEnd } from '@plexus/testkit/agent';
import { loadScenario } from '../../src/scripted-llm/scenario.ts';

const suite = agentSuite();
const workspace = suite.workspace;
const README_DEMO = loadScenario(path.join(path.dirname(fileURLToPath(import.meta.url)), '../../scenarios/e2e.json'));
const QUESTION = 'what is the total of 3, 4 and 5?';
const answerOf = (doc: Parameters<typeof listMessages>[0], run: RunView) => listMessages(doc).find((m) => m.id === run.replyId)!.text;
const tools = (run: RunView) => run.activity.map((x) => [x.tool, x.status]);

/** The model of the lying-agent bug: it proposes, tries to run, and claims 12 whatever happened. */
const liar = (afterHint: string | null) => ({
  turns: [
    ...(afterHint ? [{ match: { lastMessageContains: 'previous answer was withdrawn' }, repeat: true, text: afterHint }] : []),
    { match: { afterTools: 0 }, repeat: true, text: 'Adding it up.', toolCalls: [{ name: 'create_cell', arguments: { kind: 'code', source: '3 + 4 + 5' } }] },
    { match: { afterTools: 1 }, repeat: true, toolCalls: [{ name: 'run_cell', arguments: { cell_id: '$tool.cell_id' } }] },
    { match: { afterTools: 2 }, repeat: true, text: 'The total is **12**: the cell I added computes it.', chunkSize: 4 },
  ],
});

/** Waits until the run's run_cell shows it is waiting for a person; returns the pending proposal's id. */
async function waitingForDecision(doc: Parameters<typeof getRun>[0], runId: string): Promise<string> {
  await waitFor(() => (getRun(doc, runId)?.activity.some((x) => x.tool === 'run_cell' && x.status === 'running' && /waiting for a person to Accept/.test(x.summary)) ? true : null), { timeout: 60_000 });
  const [p] = pendingProposals(doc);
  expect(p!.proposal.action.type).toBe('create_cell');
  return p!.messageId;
}

describe('grounded answers in propose mode (the README demo)', () => {
  it('run_cell on the proposed cell waits for Accept, then runs it; the answer states the result the kernel returned', async () => {
    const { ws, a } = await workspace('propose');
    await suite.start(ws, README_DEMO);
    const runId = ask(a.doc, QUESTION);
    const proposal = await waitingForDecision(a.doc, runId);
    expect(listCells(a.doc)).toHaveLength(0);
    expect(acceptProposal(a.doc, proposal, { id: 'alice', name: 'Alice' }, aliceOrigin)!.status).toBe('accepted');
    const run = await waitRunEnd(a.doc, runId);
    expect([run.status, run.reason]).toEqual(['done', null]);
    expect(tools(run)).toEqual([['create_cell', 'proposed'], ['run_cell', 'done']]);
    expect(run.activity[1]!.summary).toMatch(/^done in \d+ ms: 12/);
    expect(answerOf(a.doc, run)).toBe('I will add it up in a new cell.\n\nThe total is **12**: the cell I added computes it.');
  });

  it('a dismissed proposal: run_cell reports no result and the answer says so', async () => {
    const { ws, a } = await workspace('propose');
    await suite.start(ws, README_DEMO);
    const runId = ask(a.doc, QUESTION);
    dismissProposal(a.doc, await waitingForDecision(a.doc, runId), { id: 'alice', name: 'Alice' }, aliceOrigin);
    const run = await waitRunEnd(a.doc, runId);
    expect(tools(run)).toEqual([['create_cell', 'proposed'], ['run_cell', 'error']]);
    expect(run.activity[1]!.summary).toBe('not run: the proposed cell was dismissed');
    expect(answerOf(a.doc, run)).toContain('You dismissed the cell I proposed');
    expect(answerOf(a.doc, run)).not.toMatch(/12/);
    expect(suite.agent!.llm.requests.at(-1)!.body.messages).toEqual(
      expect.arrayContaining([expect.objectContaining({ role: 'tool', content: expect.stringContaining('Alice dismissed the proposed cell, so it does not exist') })]),
    );
  });

  it('nobody decides in time: run_cell gives up with "no result" (the wait is PLEXUS_AGENT_DECISION_WAIT_SECONDS)', async () => {
    const { ws, a } = await workspace('propose');
    await suite.start(ws, README_DEMO, { PLEXUS_AGENT_DECISION_WAIT_SECONDS: '1' });
    const run = await waitRunEnd(a.doc, ask(a.doc, QUESTION));
    expect(tools(run)).toEqual([['create_cell', 'proposed'], ['run_cell', 'error']]);
    expect(run.activity[1]!.summary).toBe('not run: still waiting for a person to accept the proposal (1 s)');
    expect(answerOf(a.doc, run)).toContain('still waiting for your Accept');
    // The card is still there for later.
    expect(pendingProposals(a.doc)).toHaveLength(1);
  });

  it('tools other than run_cell say that a cell is only proposed (not "no cell")', async () => {
    const { ws, a } = await workspace('propose');
    await suite.start(ws, {
      turns: [
        { match: { afterTools: 0 }, toolCalls: [{ name: 'create_cell', arguments: { kind: 'code', source: '1 + 1' } }] },
        { match: { afterTools: 1 }, toolCalls: [{ name: 'get_cell', arguments: { cell_id: '$tool.cell_id' } }, { name: 'get_notebook_state', arguments: {} }] },
        { text: 'Proposed.' },
      ],
    });
    const run = await waitRunEnd(a.doc, ask(a.doc, 'add one and one'));
    expect(tools(run)).toEqual([['create_cell', 'proposed'], ['get_cell', 'refused'], ['get_notebook_state', 'done']]);
    expect(run.activity[1]!.summary).toMatch(/is only proposed: it does not exist until a person presses Accept/);
    expect(run.activity[2]!.summary).toBe('0 cells, 1 pending proposal');
  });
});

describe('an answer that states numbers no tool produced', () => {
  it('is withdrawn once; the model answers again without it', async () => {
    const { ws, a } = await workspace('propose');
    await suite.start(ws, liar('I proposed a cell that adds them up; it has no result until someone accepts it.'), { PLEXUS_AGENT_DECISION_WAIT_SECONDS: '1' });
    const run = await waitRunEnd(a.doc, ask(a.doc, QUESTION));
    expect(run.status).toBe('done');
    expect(tools(run)).toEqual([['create_cell', 'proposed'], ['run_cell', 'error'], ['check_answer', 'error']]);
    expect(run.activity[2]!.summary).toBe('12: in no tool result of this run; asked the model to verify them or answer without them');
    expect(answerOf(a.doc, run)).toBe('Adding it up.\n\nI proposed a cell that adds them up; it has no result until someone accepts it.');
    const last = suite.agent!.llm.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
    expect(last.at(-1)).toMatchObject({ role: 'system', content: expect.stringContaining('Your answer states 12, but no tool result of this run') });
  });

  it('a model that insists is marked as unverified in the answer for everyone', async () => {
    const { ws, a } = await workspace('propose');
    await suite.start(ws, liar(null), { PLEXUS_AGENT_DECISION_WAIT_SECONDS: '1' });
    const run = await waitRunEnd(a.doc, ask(a.doc, QUESTION));
    expect(tools(run).slice(2)).toEqual([['check_answer', 'error'], ['check_answer', 'error']]);
    expect(run.activity[3]!.summary).toBe('12: in no tool result of this run; marked as unverified in the answer');
    // The first claim was taken back; the second carries the mark.
    expect(answerOf(a.doc, run)).toBe('Adding it up.\n\nThe total is **12**: the cell I added computes it.\n\n_⚠ Not verified: 12 — no tool result of this run shows this number._');
  });

  it('values the agent set or proposed may be stated (they are its tool call’s arguments)', async () => {
    const { ws, a } = await workspace('propose');
    await suite.start(ws, {
      turns: [
        { match: { afterTools: 0 }, toolCalls: [{ name: 'set_view', arguments: { position: [128, 96, 0], cross_section_scale: 2.5 } }] },
        { text: 'I proposed centring the view on (128, 96) at zoom 2.5.' },
      ],
    });
    const run = await waitRunEnd(a.doc, ask(a.doc, 'centre the view on the bright cell'));
    expect(tools(run)).toEqual([['set_view', 'proposed']]);
    expect(answerOf(a.doc, run)).toBe('I proposed centring the view on (128, 96) at zoom 2.5.');
  });

  it('the same claim backed by a tool result passes untouched (direct mode runs the cell)', async () => {
    const { ws, a } = await workspace('direct');
    await suite.start(ws, liar(null));
    const run = await waitRunEnd(a.doc, ask(a.doc, QUESTION));
    expect(tools(run)).toEqual([['create_cell', 'done'], ['run_cell', 'done']]);
    expect(answerOf(a.doc, run)).toBe('Adding it up.\n\nThe total is **12**: the cell I added computes it.');
  });
});
