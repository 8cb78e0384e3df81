/**
 * The real agent process (as `npm start` runs it) against the scripted OpenAI-compatible model, in
 * two browsers: both watch the answer stream and the agent's new cell appear and run; in the
 * default (propose) mode the agent waits for a person's Accept before it runs the cell it proposed
 * and reports only what the run produced; Stop pressed by the second person stops a run the first
 * one started.
 */
import type { Page } from '@playwright/test';
import { docCellIds, expect, test, uniq } from '../support/plexus.ts';
import { aliceAndBob, output } from '../support/notebook.ts';
import { agentAnswer, askAgent, startAgentProcess, type AgentProcess } from '../support/agent.ts';

let agent: AgentProcess;
test.beforeAll(async () => {
  agent = await startAgentProcess('e2e.json');
});
test.afterAll(async () => {
  await agent?.stop();
});

const ask = askAgent;
const answer = agentAnswer;

test('both people watch the answer stream and the agent’s cell appear and run', async ({ plexus, actor }) => {
  const { alice, bob } = await aliceAndBob(plexus, actor, `agent live ${uniq()}`, []);
  for (const p of [alice.page, bob.page]) await expect(p.getByTestId('agent-ready')).toBeVisible({ timeout: 60_000 });
  await alice.page.getByTestId('agent-mode-direct').click();
  await expect(bob.page.getByTestId('agent-mode')).toHaveAttribute('data-mode', 'direct');
  const runId = await ask(alice.page, 'what is the total of 3, 4 and 5?');
  // Bob watches the answer grow: he sees a part of it before it is complete.
  const atBob = answer(bob.page, runId);
  await expect(atBob).toContainText('I will add it up', { timeout: 60_000 });
  const partial = (await atBob.locator('.chat-text').textContent()) ?? '';
  expect(partial).not.toContain('The total is');
  // The agent's cell appears for both, runs on the kernel, and its output reaches both.
  for (const p of [alice.page, bob.page]) {
    await expect.poll(async () => (await docCellIds(p)).length, { timeout: 60_000 }).toBe(1);
    const [cell] = await docCellIds(p);
    await expect(output(p, cell!, 'output-text')).toHaveText('12', { timeout: 60_000 });
    await expect(answer(p, runId)).toContainText('The total is 12', { timeout: 60_000 });
    await expect(answer(p, runId).getByTestId('agent-run-status')).toHaveAttribute('data-status', 'done');
    await expect(answer(p, runId).getByTestId('agent-activity')).toHaveCount(2);
  }
  await expect(answer(bob.page, runId).getByTestId('agent-activity').first()).toContainText('create_cell');
  // The answer's markdown is rendered: **12** is bold.
  await expect(answer(bob.page, runId).locator('.chat-text strong')).toHaveText('12');
});

test('default mode (propose): the agent waits for Alice’s Accept, runs the cell it proposed and reports its result; Bob watches', async ({ plexus, actor }) => {
  const { alice, bob } = await aliceAndBob(plexus, actor, `agent propose ${uniq()}`, []);
  await expect(alice.page.getByTestId('agent-ready')).toBeVisible({ timeout: 60_000 });
  // A new workspace is in propose mode: nobody chose it.
  for (const p of [alice.page, bob.page]) await expect(p.getByTestId('agent-mode')).toHaveAttribute('data-mode', 'propose');
  const runId = await ask(alice.page, 'what is the total of 3, 4 and 5?');
  const card = (p: Page) => p.getByTestId('agent-proposal').last();
  await expect(card(bob.page)).toBeVisible({ timeout: 60_000 });
  await expect(card(bob.page).getByTestId('proposal-source')).toContainText('reduce');
  expect(await docCellIds(bob.page)).toEqual([]);
  // The run shows everyone that it waits for a person, and claims nothing meanwhile.
  await expect(answer(bob.page, runId).getByTestId('agent-activity').last()).toContainText('waiting for a person to Accept', { timeout: 60_000 });
  await expect(answer(bob.page, runId)).not.toContainText('The total is');
  await card(alice.page).getByTestId('proposal-accept').click();
  await expect(card(bob.page).getByTestId('proposal-outcome')).toContainText('Accepted by Alice');
  for (const p of [alice.page, bob.page]) {
    await expect.poll(async () => (await docCellIds(p)).length).toBe(1);
    const [cell] = await docCellIds(p);
    await expect(output(p, cell!, 'output-text')).toHaveText('12', { timeout: 60_000 });
    await expect(answer(p, runId).getByTestId('agent-run-status')).toHaveAttribute('data-status', 'done', { timeout: 30_000 });
    await expect(answer(p, runId)).toContainText('The total is 12');
    await expect(answer(p, runId)).not.toContainText('Not verified');
  }
});

test('Bob dismisses the proposed cell: the agent says it has no result instead of inventing one', async ({ plexus, actor }) => {
  const { alice, bob } = await aliceAndBob(plexus, actor, `agent dismiss ${uniq()}`, []);
  await expect(alice.page.getByTestId('agent-ready')).toBeVisible({ timeout: 60_000 });
  const runId = await ask(alice.page, 'what is the total of 3, 4 and 5?');
  const card = bob.page.getByTestId('agent-proposal').last();
  await expect(card).toBeVisible({ timeout: 60_000 });
  await card.getByTestId('proposal-dismiss').click();
  for (const p of [alice.page, bob.page]) {
    await expect(answer(p, runId).getByTestId('agent-run-status')).toHaveAttribute('data-status', 'done', { timeout: 30_000 });
    await expect(answer(p, runId)).toContainText('You dismissed the cell I proposed');
    await expect(answer(p, runId).locator('.chat-text')).not.toContainText('12');
  }
  expect(await docCellIds(alice.page)).toEqual([]);
});

test('Bob stops a run Alice started', async ({ plexus, actor }) => {
  const { alice, bob } = await aliceAndBob(plexus, actor, `agent stop ${uniq()}`, []);
  await expect(alice.page.getByTestId('agent-ready')).toBeVisible({ timeout: 60_000 });
  const runId = await ask(alice.page, 'write an essay on calcium imaging');
  const atBob = answer(bob.page, runId);
  await expect(atBob).toContainText('Calcium imaging records', { timeout: 60_000 });
  await atBob.getByTestId('agent-run-stop').click();
  for (const p of [alice.page, bob.page]) {
    await expect(answer(p, runId).getByTestId('agent-run-status')).toHaveAttribute('data-status', 'stopped', { timeout: 60_000 });
    await expect(answer(p, runId)).toContainText('stopped by Bob');
  }
  // Nothing more is written after the stop.
  const text = await answer(alice.page, runId).locator('.chat-text').textContent();
  await alice.page.waitForTimeout(500);
  expect(await answer(alice.page, runId).locator('.chat-text').textContent()).toBe(text);
  expect(agent.llm.requests.some((r) => r.aborted)).toBe(true);
});
