/**
 * An analysis plan in two browsers, with the real agent process and the scripted model: the
 * workspace waits for Go, so both people see the plan and its assumptions first; Alice edits the
 * assumptions and Bob sees them change; Bob removes a step and presses Go; both watch the steps
 * run and be verified; the closing message links to the cells the steps made, and a link focuses
 * its cell.
 */
import type { Page } from '@playwright/test';
import { expect, test, uniq } from '../support/plexus.ts';
import { aliceAndBob } from '../support/notebook.ts';
import { agentAnswer, askAgent, startAgentProcess, type AgentProcess } from '../support/agent.ts';

let agent: AgentProcess;
test.beforeAll(async () => {
  agent = await startAgentProcess('plan.json');
});
test.afterAll(async () => {
  await agent?.stop();
});

const ask = askAgent;
const answer = agentAnswer;
const step = (page: Page, runId: string, id: string) => answer(page, runId).locator(`[data-testid="plan-step"][data-step="${id}"]`);

test('both people see the plan wait for Go, steer it, watch each step run and be verified, and follow the summary’s links', async ({ plexus, actor }) => {
  const { alice, bob } = await aliceAndBob(plexus, actor, `agent plans ${uniq()}`, []);
  await expect(alice.page.getByTestId('agent-ready')).toBeVisible({ timeout: 60_000 });
  await alice.page.getByTestId('agent-mode-direct').click();
  await alice.page.getByTestId('plan-approval-wait').click();
  await expect(bob.page.getByTestId('plan-approval')).toHaveAttribute('data-mode', 'wait');
  const runId = await ask(alice.page, 'derive the double and square of a base and their sum');

  // Both see the plan waiting, with its assumptions, parameters, alternatives and steps.
  for (const p of [alice.page, bob.page]) {
    await expect(answer(p, runId).getByTestId('plan-go')).toBeVisible({ timeout: 60_000 });
    await expect(answer(p, runId).getByTestId('plan-clarified')).toHaveText('Derive the double and the square of a base number, then their sum');
    await expect(answer(p, runId).getByTestId('plan-step')).toHaveCount(3);
    await expect(answer(p, runId).getByTestId('plan-params')).toContainText('base = 3');
    await expect(answer(p, runId).getByTestId('plan-alternative')).toHaveText('Use a base of 10');
  }
  // Alice adds an assumption; Bob's copy of the text changes with it.
  const editor = answer(alice.page, runId).getByTestId('plan-assumptions-editor');
  await editor.click();
  await editor.press('End');
  await alice.page.keyboard.type('\nintegers only');
  await expect(answer(bob.page, runId).getByTestId('plan-assumptions-editor')).toHaveValue('the base is 3\nintegers only');
  // Bob removes the last step and presses Go.
  await step(bob.page, runId, 's3').getByTestId('plan-step-remove').click();
  await expect(step(alice.page, runId, 's3').getByTestId('plan-step-removed')).toHaveText('removed by Bob: it will be skipped');
  await answer(bob.page, runId).getByTestId('plan-go').click();

  for (const p of [alice.page, bob.page]) {
    await expect(step(p, runId, 's1')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
    await expect(step(p, runId, 's2')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
    await expect(step(p, runId, 's3').getByTestId('plan-step-reason')).toHaveText('removed by Bob');
    await expect(answer(p, runId).getByTestId('agent-run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
    await expect(answer(p, runId).getByTestId('plan-progress')).toHaveText('2 of 3 steps done');
  }
  // The verifier's checks are one click away.
  await step(alice.page, runId, 's2').getByTestId('plan-step-toggle').click();
  await expect(step(alice.page, runId, 's2').getByTestId('plan-step-checks')).toContainText('model judgement');
  await expect(step(alice.page, runId, 's2').getByTestId('plan-step-result')).toContainText('square = 9');
  // The summary names the numbers and links the cells; a link focuses its cell.
  const summary = answer(alice.page, runId).locator('.chat-text');
  await expect(summary).toContainText('2 of 3 steps done, 1 skipped');
  const link = summary.getByTestId('plan-step-link').nth(1);
  const cellId = await link.getAttribute('data-target');
  expect(cellId).toMatch(/^c_/);
  await link.click();
  await expect.poll(() => alice.page.evaluate(() => (document.activeElement?.closest('[data-cell-id]') as HTMLElement | null)?.dataset.cellId ?? null)).toBe(cellId);
});
