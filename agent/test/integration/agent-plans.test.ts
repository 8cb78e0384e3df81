/**
 * The agent plans, verifies and cites (seed 002, 004): requests are routed; an analysis is a
 * shared plan in the document — brief, assumptions, alternatives, steps as a DAG — run by
 * sub-agents with small contexts, each step verified and retried once, failed steps' dependants
 * skipped, people steering the plan while it runs, Stop keeping finished work, and questions
 * answered from the method library with a citation. Real server, kernel, agent peer and `openai`
 * client; scripted model. Interleavings are controlled by holding model requests, never by time.
 */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  addPlanStep, editAssumptions, editStepGoal, getBrief, getCell, getRoute, hasStepPlan, listMessages, listPlanSteps, postMessage, pickAlternative,
  pressGo, removePlanStep, requestRunStop, requestRunUndo, getRun, setSetting, type PlanStepView,
} from '@plexus/shared';
import { waitFor } from '@plexus/testkit';
import { client } from '@plexus/testkit/kernel';
import { agentSuite, alice, aliceOrigin, ask, waitRunEnd } from '@plexus/testkit/agent';
import type { ScriptedTurn } from '../../src/scripted-llm/scenario.ts';
import { requestTask } from '../../src/scripted-llm/server.ts';
import type { RecordedRequest } from '../../src/scripted-llm/server.ts';

const suite = agentSuite();

type Msg = { role: string; content?: unknown; tool_calls?: unknown };
const messagesOf = (body: Record<string, unknown>) => (body.messages as Msg[]) ?? [];
const text = (m: Msg | undefined) => (typeof m?.content === 'string' ? m.content : '');
const userText = (body: Record<string, unknown>) => text(messagesOf(body).find((m) => m.role === 'user'));
const toolCount = (body: Record<string, unknown>) => messagesOf(body).filter((m) => m.role === 'tool').length;
/** The first request of a step's attempt (no tool results yet), for step `id`. */
const isStepStart = (body: Record<string, unknown>, id: string) => requestTask(body) === 'step' && userText(body).includes(`(${id}) of`) && toolCount(body) === 0;
const stepStarts = (reqs: RecordedRequest[], id: string) => reqs.filter((r) => isStepStart(r.body, id));
const contextChars = (body: Record<string, unknown>) => messagesOf(body).reduce((n, m) => n + text(m).length, 0);

const route = (kind: 'question' | 'analysis' | 'action', scopes?: string[]): ScriptedTurn => ({ match: { task: 'route' }, text: JSON.stringify({ kind, ...(scopes ? { scopes } : {}), reason: 'scripted' }) });
const plan = (p: Record<string, unknown>, lastUserContains?: string): ScriptedTurn => ({ match: { task: 'plan', ...(lastUserContains ? { lastUserContains } : {}) }, text: JSON.stringify(p) });
/** A step that only reports (attempt by attempt: scripted turns are used in order). */
const report = (id: string, summary: string, values: Record<string, number | string> = {}): ScriptedTurn => ({
  match: { task: 'step', lastUserContains: `(${id}) of`, afterTools: 0 },
  toolCalls: [{ name: 'report_result', arguments: { summary, values } }],
});
/** A step that writes a code cell, runs it and reports. */
const cellStep = (id: string, source: string, summary: string, values: Record<string, number>): ScriptedTurn[] => {
  const key = `(${id}) of`;
  return [
    { match: { task: 'step', lastUserContains: key, afterTools: 0 }, toolCalls: [{ name: 'create_cell', arguments: { kind: 'code', source } }] },
    { match: { task: 'step', lastUserContains: key, afterTools: 1 }, toolCalls: [{ name: 'run_cell', arguments: { cell_id: '$tool.cell_id' } }] },
    { match: { task: 'step', lastUserContains: key, afterTools: 2 }, toolCalls: [{ name: 'report_result', arguments: { summary, values } }] },
  ];
};
const step = (id: string, goal: string, dependsOn: string[] = [], extra: Record<string, unknown> = {}) => ({ id, goal, dependsOn, scope: ['notebook'], ...extra });

/** A one-shot gate: `wait()` resolves once `open()` was called. */
function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { wait: () => p, open: () => open() };
}

const stepsById = (steps: PlanStepView[]) => Object.fromEntries(steps.map((s) => [s.id, s]));
const replyText = (doc: Y.Doc, replyId: string | null) => listMessages(doc).find((m) => m.id === replyId)?.text ?? '';

describe('analysis plans', () => {
  it('a 6-step DAG runs with two steps in parallel, each verified, with a summary linking what each made; a second person sees every status', async () => {
    const { ws, a } = await suite.workspace('direct');
    const bob = await client(suite.ctx.server, ws, suite.ctx.clients);
    // s2 and s3 both need s1; each one's first model request is held until the other's has
    // arrived: the run can only get past them if both steps are in flight at once.
    const s2 = gate();
    const s3 = gate();
    await suite.start(
      ws,
      {
        turns: [
          route('analysis', ['notebook']),
          plan({
            clarified: 'Compute six derived numbers', assumptions: ['plain JavaScript'], alternatives: [], parameters: { base: 2 },
            steps: [step('s1', 'Define the base'), step('s2', 'Double it', ['s1']), step('s3', 'Square it', ['s1']), step('s4', 'Add one to the double', ['s2']), step('s5', 'Halve the square', ['s3']), step('s6', 'Sum both', ['s4', 's5'])],
          }),
          ...cellStep('s1', 'const base = 2; base', 'base is 2', { base: 2 }),
          ...cellStep('s2', 'const dbl = base * 2; dbl', 'double is 4', { double: 4 }),
          ...cellStep('s3', 'const sq = base * base; sq', 'square is 4', { square: 4 }),
          ...cellStep('s4', 'const inc = dbl + 1; inc', 'incremented double is 5', { incremented: 5 }),
          ...cellStep('s5', 'const half = sq / 2; half', 'half square is 2', { half: 2 }),
          ...cellStep('s6', 'const total = inc + half; total', 'the sum is 7', { total: 7 }),
        ],
      },
      {},
      {
        holdModelRequest: async (raw) => {
          const body = JSON.parse(raw) as Record<string, unknown>;
          if (isStepStart(body, 's2')) {
            s2.open();
            await s3.wait();
          } else if (isStepStart(body, 's3')) {
            s3.open();
            await s2.wait();
          }
        },
      },
    );
    const seen = new Map<string, Set<string>>();
    const runs = bob.doc.getMap('runs');
    const runId = ask(a.doc, 'compute six derived numbers from a base of 2');
    runs.observeDeep(() => {
      for (const s of listPlanSteps(bob.doc, runId)) {
        if (!seen.has(s.id)) seen.set(s.id, new Set());
        seen.get(s.id)!.add(s.status);
      }
    });
    const run = await waitRunEnd(a.doc, runId, 150_000);
    expect(run.status).toBe('done');
    expect(getRoute(a.doc, runId)?.kind).toBe('analysis');
    const steps = stepsById(listPlanSteps(a.doc, runId));
    expect(Object.values(steps).map((s) => [s.id, s.status, s.attempts])).toEqual(['s1', 's2', 's3', 's4', 's5', 's6'].map((id) => [id, 'done', 1]));
    for (const s of Object.values(steps)) {
      expect(s.verdict?.passed).toBe(true);
      expect(s.verdict!.checks.map((c) => c.name)).toEqual(expect.arrayContaining(['reported', 'finite values', 'model judgement']));
      const cell = s.provenance.find((p) => p.kind === 'cell');
      expect(cell, `step ${s.id} links its cell`).toBeTruthy();
      expect(getCell(a.doc, cell!.id)).toBeTruthy();
      // The second person saw the step go through every status it held across a model round trip
      // (a plan's steps are created and the first one starts in the same instant: the server
      // relays those two writes together, so "pending" is not a separate state for s1).
      expect([...seen.get(s.id)!]).toEqual(expect.arrayContaining(['running', 'verifying', 'done']));
    }
    expect(steps.s6!.values).toEqual({ total: 7 });
    // Every step was verified by the model as well as by the checks.
    expect(suite.agent!.llm.requests.filter((r) => requestTask(r.body) === 'verify')).toHaveLength(6);
    // Tool activity is filed under its step.
    expect(new Set(run.activity.map((x) => x.step))).toEqual(new Set(['s1', 's2', 's3', 's4', 's5', 's6']));
    const summary = replyText(a.doc, run.replyId);
    expect(summary).toContain('6 of 6 steps done');
    expect(summary).toContain('`total = 7`');
    expect(summary).toMatch(/\[cell \d+\]\(plexus:cell\/c_[\w-]+\)/);
    expect(replyText(bob.doc, run.replyId)).toBe(summary);
  }, 180_000);

  it('an implausible result fails verification, is retried once with the issues, then fails: its dependants are skipped, the rest completes', async () => {
    const { ws, a } = await suite.workspace('direct');
    await suite.start(ws, {
      turns: [
        route('analysis'),
        plan({
          clarified: 'Mean intensity and what builds on it', assumptions: [], alternatives: [], parameters: {},
          steps: [
            step('s1', 'Measure the mean intensity of the movie', [], { expect: { mean_intensity: { min: 0, max: 65535, why: 'the movie is uint16 data' } } }),
            step('s2', 'Normalise by the mean intensity', ['s1']),
            step('s3', 'Count the tables', []),
          ],
        }),
        report('s1', 'the mean intensity is -12.5', { mean_intensity: -12.5 }),
        report('s1', 'the mean intensity is -3 after a fix', { mean_intensity: -3 }),
        report('s3', 'there are no tables', { n_tables: 0 }),
      ],
    });
    const runId = ask(a.doc, 'measure the mean intensity and normalise by it; also count tables');
    const run = await waitRunEnd(a.doc, runId, 150_000);
    expect(run.status).toBe('done');
    const steps = stepsById(listPlanSteps(a.doc, runId));
    expect(steps.s1).toMatchObject({ status: 'failed', attempts: 2 });
    expect(steps.s1!.reason).toContain('mean_intensity = -3 is below 0, but the movie is uint16 data');
    expect(steps.s2).toMatchObject({ status: 'skipped', reason: 'depends on step 1 (failed)' });
    expect(steps.s3).toMatchObject({ status: 'done', attempts: 1 });
    // Exactly one retry, and it carried the issues of the first attempt.
    const attempts = stepStarts(suite.agent!.llm.requests, 's1');
    expect(attempts).toHaveLength(2);
    expect(userText(attempts[0]!.body)).not.toContain('FAILED verification');
    expect(userText(attempts[1]!.body)).toContain('FAILED verification');
    expect(userText(attempts[1]!.body)).toContain('mean_intensity = -12.5 is below 0, but the movie is uint16 data');
    expect(stepStarts(suite.agent!.llm.requests, 's2')).toHaveLength(0);
    const summary = replyText(a.doc, run.replyId);
    expect(summary).toContain('1 of 3 steps done, 1 failed, 1 skipped');
    expect(summary).toContain('(retried once)');
  }, 180_000);

  it('people remove a pending step, edit another and add one while step 1 runs: the executor follows the edited plan', async () => {
    const { ws, a } = await suite.workspace('direct');
    const s1Held = gate();
    const s1Arrived = gate();
    await suite.start(
      ws,
      {
        turns: [
          route('analysis'),
          plan({ clarified: 'Three counts', assumptions: [], alternatives: [], parameters: {}, steps: [step('s1', 'Count the cells'), step('s2', 'Count the dendrites', ['s1']), step('s3', 'Count the vessels', ['s1'])] }),
          report('s1', 'counted cells', { n_cells: 12 }),
          report('s3', 'counted the cells twice', { n_cells_again: 12 }),
          { match: { task: 'step', lastUserContains: 'Goal: Write a short note', afterTools: 0 }, toolCalls: [{ name: 'report_result', arguments: { summary: 'noted', values: {} } }] },
        ],
      },
      {},
      {
        holdModelRequest: async (raw) => {
          const body = JSON.parse(raw) as Record<string, unknown>;
          if (isStepStart(body, 's1')) {
            s1Arrived.open();
            await s1Held.wait();
          }
        },
      },
    );
    const runId = ask(a.doc, 'count cells, dendrites and vessels');
    await s1Arrived.wait();
    expect(listPlanSteps(a.doc, runId).map((s) => s.status)).toEqual(['running', 'pending', 'pending']);
    expect(removePlanStep(a.doc, runId, 's2', alice, aliceOrigin)).toBe(true);
    expect(editStepGoal(a.doc, runId, 's3', 'Count the cells twice', aliceOrigin)).toBe(true);
    const added = addPlanStep(a.doc, runId, { goal: 'Write a short note', dependsOn: ['s3'], afterId: 's3' }, alice, aliceOrigin)!;
    s1Held.open();
    const run = await waitRunEnd(a.doc, runId, 150_000);
    expect(run.status).toBe('done');
    const steps = stepsById(listPlanSteps(a.doc, runId));
    expect(steps.s2).toMatchObject({ status: 'skipped', reason: 'removed by Alice' });
    expect(steps.s3).toMatchObject({ status: 'done', goal: 'Count the cells twice' });
    expect(steps[added]).toMatchObject({ status: 'done', addedBy: alice });
    expect(stepStarts(suite.agent!.llm.requests, 's2')).toHaveLength(0);
    expect(userText(stepStarts(suite.agent!.llm.requests, 's3')[0]!.body)).toContain('Goal: Count the cells twice');
    // The added step got the result of the step it depends on.
    expect(userText(stepStarts(suite.agent!.llm.requests, added)[0]!.body)).toContain('counted the cells twice');
  }, 180_000);

  it('Stop during step 3 of 5 keeps steps 1–2 and their cells, skips 3–5 and closes the model stream', async () => {
    const { ws, a } = await suite.workspace('direct');
    await suite.start(ws, {
      turns: [
        route('analysis'),
        plan({ clarified: 'A chain of five', assumptions: [], alternatives: [], parameters: {}, steps: [step('s1', 'One'), step('s2', 'Two', ['s1']), step('s3', 'Three', ['s2']), step('s4', 'Four', ['s3']), step('s5', 'Five', ['s4'])] }),
        ...cellStep('s1', 'const one = 1; one', 'one', { one: 1 }),
        ...cellStep('s2', 'const two = one + 1; two', 'two', { two: 2 }),
        // Step 3 streams its first piece and then nothing for a minute: Stop comes while it streams.
        { match: { task: 'step', lastUserContains: '(s3) of', afterTools: 0 }, text: 'Thinking about step three for a long time.', chunkSize: 4, delayMs: 60_000 },
      ],
    });
    const runId = ask(a.doc, 'run a chain of five steps');
    const s3 = await waitFor(() => stepStarts(suite.agent!.llm.requests, 's3')[0] ?? null, { timeout: 120_000, message: 'step 3 to ask the model' });
    expect(requestRunStop(a.doc, runId, alice, aliceOrigin)).toBe(true);
    const run = await waitRunEnd(a.doc, runId, 60_000);
    expect(run.status).toBe('stopped');
    const steps = listPlanSteps(a.doc, runId);
    expect(steps.map((s) => s.status)).toEqual(['done', 'done', 'skipped', 'skipped', 'skipped']);
    expect(steps[2]!.reason).toBe('stopped by Alice');
    for (const s of steps.slice(0, 2)) expect(getCell(a.doc, s.provenance.find((p) => p.kind === 'cell')!.id)).toBeTruthy();
    await waitFor(() => s3.aborted || null, { timeout: 30_000, message: 'the model stream of step 3 to be closed' });
    expect(replyText(a.doc, run.replyId)).toContain('Analysis stopped');
    // Undo run still reverts the whole run: the cells its steps made are gone.
    const made = steps.slice(0, 2).map((s) => s.provenance.find((p) => p.kind === 'cell')!.id);
    expect(requestRunUndo(a.doc, runId, alice, aliceOrigin)).toBe(true);
    await waitFor(() => getRun(a.doc, runId)?.undone ?? null, { message: 'the undo' });
    expect(getRun(a.doc, runId)!.undone!.ok).toBe(true);
    for (const id of made) expect(getCell(a.doc, id)).toBeFalsy();
  }, 180_000);

  it('waits for Go when the workspace asks: assumptions are editable, a picked alternative re-plans, Go starts the edited plan', async () => {
    const { ws, a } = await suite.workspace('direct');
    setSetting(a.doc, 'planApproval', 'wait', aliceOrigin);
    await suite.start(ws, {
      turns: [
        route('analysis'),
        plan({ clarified: 'Event rate per cell', assumptions: ['frame rate 30 Hz'], alternatives: [{ label: 'Use ΔF/F peaks', request: 'event rate from ΔF/F peaks instead of deconvolution' }], parameters: { frameRate: 30 }, steps: [step('s1', 'Compute the event rate')] }, 'event rate per cell'),
        plan({ clarified: 'Event rate from ΔF/F peaks', assumptions: ['frame rate 30 Hz', 'peaks above 3 sigma'], alternatives: [], parameters: { frameRate: 30 }, steps: [step('s1', 'Find ΔF/F peaks and their rate')] }, 'ΔF/F peaks'),
        report('s1', 'peaks found', { event_rate_hz: 0.2 }),
      ],
    });
    const runId = ask(a.doc, 'event rate per cell');
    await waitFor(() => getBrief(a.doc, runId)?.waiting || null, { message: 'the brief to wait for Go' });
    expect(getBrief(a.doc, runId)!.assumptions).toBe('frame rate 30 Hz');
    // Waiting is a state: nothing runs until a person decides.
    expect(suite.agent!.llm.requests.filter((r) => requestTask(r.body) === 'step')).toHaveLength(0);
    pickAlternative(a.doc, runId, getBrief(a.doc, runId)!.alternatives[0]!, alice, aliceOrigin);
    await waitFor(() => (getBrief(a.doc, runId)?.clarified === 'Event rate from ΔF/F peaks' ? true : null), { message: 'the re-plan' });
    expect(getBrief(a.doc, runId)!.waiting).toBe(true);
    editAssumptions(a.doc, runId, 'frame rate 15 Hz\npeaks above 3 sigma', aliceOrigin);
    pressGo(a.doc, runId, alice, aliceOrigin);
    const run = await waitRunEnd(a.doc, runId, 120_000);
    expect(run.status).toBe('done');
    expect(getBrief(a.doc, runId)!.waiting).toBe(false);
    const [first] = stepStarts(suite.agent!.llm.requests, 's1');
    expect(userText(first!.body)).toContain('Goal: Find ΔF/F peaks and their rate');
    expect(userText(first!.body)).toContain('frame rate 15 Hz');
    expect(suite.agent!.llm.requests.filter((r) => requestTask(r.body) === 'plan').map((r) => userText(r.body))).toEqual(['event rate per cell', 'event rate from ΔF/F peaks instead of deconvolution']);
  }, 180_000);

  it('Stop while the plan waits for Go: nothing runs, every step is skipped with the reason', async () => {
    const { ws, a } = await suite.workspace('direct');
    setSetting(a.doc, 'planApproval', 'wait', aliceOrigin);
    await suite.start(ws, { turns: [route('analysis'), plan({ clarified: 'Two steps', assumptions: [], alternatives: [], parameters: {}, steps: [step('s1', 'One'), step('s2', 'Two', ['s1'])] })] });
    const runId = ask(a.doc, 'two steps please');
    await waitFor(() => getBrief(a.doc, runId)?.waiting || null, { message: 'the brief to wait for Go' });
    requestRunStop(a.doc, runId, alice, aliceOrigin);
    const run = await waitRunEnd(a.doc, runId);
    expect(run.status).toBe('stopped');
    expect(listPlanSteps(a.doc, runId).map((s) => [s.status, s.reason])).toEqual([['skipped', 'stopped by Alice'], ['skipped', 'stopped by Alice']]);
    expect(suite.agent!.llm.requests.filter((r) => requestTask(r.body) === 'step')).toHaveLength(0);
  }, 120_000);

  it('the per-step context stays the same size however long the run and the chat, and holds the goal, its dependencies\' results and cells', async () => {
    const { ws, a } = await suite.workspace('direct');
    // A long meeting before the request: none of it belongs in a step's context.
    a.doc.transact(() => {
      for (let i = 0; i < 40; i++) postMessage(a.doc, { author: { ...alice, kind: 'person' }, text: `note ${i}: ${'lorem ipsum '.repeat(120)}` }, aliceOrigin);
    }, aliceOrigin);
    const n = 12;
    const long = (i: number) => `step ${i} summary: ${'measured and checked the values carefully; '.repeat(12)}`.slice(0, 590);
    const values = (i: number) => Object.fromEntries(Array.from({ length: 12 }, (_, k) => [`value_${i}_${k}`, i * 100 + k]));
    const ids = Array.from({ length: n }, (_, i) => `s${i + 1}`);
    await suite.start(ws, {
      turns: [
        route('analysis'),
        plan({ clarified: 'A long chain', assumptions: ['one', 'two'], alternatives: [], parameters: {}, steps: ids.map((id, i) => step(id, `Goal number ${i + 1}: extend the chain`, i ? [ids[i - 1]!] : [])) }),
        ...cellStep('s1', 'const chain = [1]; chain.length', long(1), values(1)),
        ...ids.slice(1).map((id, i) => report(id, long(i + 2), values(i + 2))),
      ],
    });
    const runId = ask(a.doc, 'run a long chain');
    const run = await waitRunEnd(a.doc, runId, 170_000);
    expect(run.status).toBe('done');
    const sizes = ids.map((id) => contextChars(stepStarts(suite.agent!.llm.requests, id)[0]!.body));
    // Small by design: bounded, no growth along the chain (steps differ only in the library
    // passages their goals retrieve and the digits of their numbers), and nothing accumulates:
    // step 12 sees step 11's result, not those of steps 1–10.
    expect(Math.max(...sizes), `context sizes ${sizes.join(', ')}`).toBeLessThan(12_000);
    expect(Math.max(...sizes.slice(1)) / Math.min(...sizes.slice(1)), `context sizes ${sizes.join(', ')}`).toBeLessThan(1.3);
    const last = userText(stepStarts(suite.agent!.llm.requests, ids[n - 1]!)[0]!.body);
    for (let i = 1; i < n - 1; i++) expect(last).not.toContain(long(i));
    // Not by truncation: each holds its goal, its dependency's summary and values, and the cells it made.
    for (let i = 1; i < n; i++) {
      const u = userText(stepStarts(suite.agent!.llm.requests, ids[i]!)[0]!.body);
      expect(u).toContain(`Goal: Goal number ${i + 1}: extend the chain`);
      expect(u).toContain(long(i));
      expect(u).toContain(`value_${i}_11 = ${i * 100 + 11}`);
      expect(u).not.toContain('lorem ipsum');
    }
    expect(userText(stepStarts(suite.agent!.llm.requests, 's2')[0]!.body)).toMatch(/cell 1 \(c_[\w-]+, code, done\): const chain = \[1\]; chain\.length/);
  }, 180_000);
});

describe('questions and routing', () => {
  it('a method question is answered from the library with a citation, without a plan', async () => {
    const { ws, a } = await suite.workspace('direct');
    await suite.start(ws, {
      turns: [
        route('question', ['library']),
        { match: { lastUserContains: 'baseline' }, text: 'Take F0 as a running low percentile of F over a window of about a minute (from dff.md).' },
      ],
    });
    const runId = ask(a.doc, 'How should I choose the baseline F0 for ΔF/F?');
    const run = await waitRunEnd(a.doc, runId);
    expect(run.status).toBe('done');
    expect(getRoute(a.doc, runId)).toMatchObject({ kind: 'question' });
    expect(hasStepPlan(a.doc, runId)).toBe(false);
    const answerRequest = suite.agent!.llm.requests.find((r) => requestTask(r.body) === null)!;
    const system = text(messagesOf(answerRequest.body)[0]);
    expect(system).toContain('## From the method library');
    expect(system).toContain('### dff.md');
    expect(replyText(a.doc, run.replyId)).toContain('(from dff.md)');
    // Only the tools in scope were offered: the library's and the chat's, plus reading the notebook.
    const offered = (answerRequest.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(offered).not.toContain('add_layer');
    expect(offered).toContain('get_notebook_state');
  }, 120_000);

  it('many table rows go to a sub-agent with its own context; the conversation gets back only its short summary', async () => {
    const { ws, a } = await suite.workspace('direct');
    const csv = 'n\tsquare\n' + Array.from({ length: 300 }, (_, i) => `${i}\t${i * i}`).join('\n') + '\n';
    const up = await fetch(`${suite.ctx.server.url}/api/workspaces/${ws}/uploads?name=squares.tsv`, { method: 'POST', headers: { authorization: `Bearer ${suite.ctx.server.ownerToken}`, 'content-type': 'application/octet-stream' }, body: csv });
    expect(up.status).toBe(201);
    await waitFor(() => (a.doc.getMap('data').has('squares') ? true : null), { message: 'the table' });
    await suite.start(ws, {
      turns: [
        { match: { lastUserContains: 'squares', afterTools: 0 }, toolCalls: [{ name: 'summarize_table', arguments: { table: 'squares', question: 'How does square grow with n?', max_rows: 300 } }] },
        { match: { task: 'summarise', lastUserContains: 'How does square grow' }, toolCalls: [{ name: 'report_result', arguments: { summary: 'square is n squared for every row; it grows quadratically', values: { rows_checked: 300 } } }] },
        { match: { lastUserContains: 'squares', afterTools: 1 }, text: 'It grows quadratically: square = n² in all 300 rows.' },
      ],
    });
    const run = await waitRunEnd(a.doc, ask(a.doc, 'how does the squares table grow?'));
    expect(run.status).toBe('done');
    expect(run.activity.map((x) => [x.tool, x.status])).toEqual([['summarize_table', 'done']]);
    const sub = suite.agent!.llm.requests.find((r) => requestTask(r.body) === 'summarise')!;
    expect(userText(sub.body)).toContain('299\t89401');
    const [, second] = suite.agent!.llm.conversation;
    const toolResult = messagesOf(second!.body).filter((m) => m.role === 'tool').map(text).join('');
    expect(toolResult).toContain('grows quadratically');
    expect(toolResult).not.toContain('89401');
    expect(contextChars(second!.body)).toBeLessThan(contextChars(sub.body));
  }, 120_000);

  it('the workspace\'s agent instructions are part of every prompt', async () => {
    const { ws, a } = await suite.workspace('direct');
    const { setAgentInstructions } = await import('@plexus/shared');
    setAgentInstructions(a.doc, 'Always report frame rates in Hz.', aliceOrigin);
    await suite.start(ws, { turns: [{ match: { lastUserContains: 'hello' }, text: 'Hello.' }] });
    const run = await waitRunEnd(a.doc, ask(a.doc, 'hello'));
    expect(run.status).toBe('done');
    const chat = suite.agent!.llm.requests.find((r) => requestTask(r.body) === null)!;
    expect(text(messagesOf(chat.body)[0])).toContain('Always report frame rates in Hz.');
  }, 120_000);
});

