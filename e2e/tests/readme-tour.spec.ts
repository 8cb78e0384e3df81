/**
 * The README's tour as a newcomer follows it, with the real agent process in the default
 * (propose) mode against the scripted model: open the owner link, create a workspace, add and run
 * a cell with Ctrl+Enter, press ? for the shortcuts, share an edit link, and in the other browser
 * type "@agent what is the total of 3, 4 and 5?" by hand. The agent proposes a cell, waits for
 * an Accept, runs it, and answers with the number the kernel returned.
 */
import type { Page } from '@playwright/test';
import { ALICE, BOB, docCellIds, expect, test, uniq, waitLive } from '../support/plexus.ts';
import { output } from '../support/notebook.ts';
import { startAgentProcess, type AgentProcess } from '../support/agent.ts';

let agent: AgentProcess;
test.beforeAll(async () => {
  agent = await startAgentProcess('e2e.json');
});
test.afterAll(async () => {
  await agent?.stop();
});

const answerTo = (page: Page, runId: string) => page.locator(`[data-testid="chat-message"][data-run-id="${runId}"]`).filter({ has: page.getByTestId('agent-run') }).last();

test('the README tour, agent demo in the default mode included', async ({ plexus, actor }) => {
  // 1. The owner link printed by `npm start` opens the workspace list.
  const alice = await actor(ALICE);
  await alice.page.goto(`${plexus.url}/?token=${encodeURIComponent(plexus.ownerToken)}`);
  await expect(alice.page.getByRole('heading', { name: 'Workspaces' })).toBeVisible();
  const name = `Tour ${uniq()}`;
  await alice.page.getByTestId('workspace-new-name').fill(name);
  await alice.page.getByTestId('workspace-create').click();
  await waitLive(alice.page);
  const workspaceId = alice.page.url().split('/w/')[1]!;

  // 2. Add a code cell with the button, type, Ctrl+Enter runs it.
  await alice.page.getByTestId('add-code').click();
  await expect.poll(async () => (await docCellIds(alice.page)).length).toBe(1);
  const [cell] = await docCellIds(alice.page);
  await alice.page.locator(`[data-cell-id="${cell}"] .cm-content`).click();
  await alice.page.keyboard.type('6 * 7');
  await alice.page.keyboard.press('Control+Enter');
  await expect(output(alice.page, cell!, 'output-text')).toHaveText('42', { timeout: 60_000 });

  // 3. ? lists the shortcuts, the run keys among them.
  await alice.page.locator('body').click({ position: { x: 5, y: 300 } });
  await alice.page.keyboard.press('Shift+Slash');
  await expect(alice.page.getByTestId('help-popover')).toContainText('Ctrl+Enter');
  await alice.page.keyboard.press('Escape');

  // 4. Share an edit link; Bob opens it in his own browser.
  await alice.page.getByTestId('share').click();
  await alice.page.getByTestId('share-edit').click();
  const link = await alice.page.getByTestId('share-url').inputValue();
  await alice.page.keyboard.press('Escape');
  const bob = await actor(BOB);
  await bob.page.goto(link);
  await waitLive(bob.page);
  expect(bob.page.url()).toContain(workspaceId);
  // Both see each other (the agent, a collaborator too, has its own avatar once it joins).
  for (const p of [alice.page, bob.page]) await expect(p.locator('[data-testid="avatar"][data-kind="person"]')).toHaveCount(2);

  // 5. The agent demo, in the mode a new workspace has: propose.
  for (const p of [alice.page, bob.page]) {
    await expect(p.getByTestId('agent-ready')).toBeVisible({ timeout: 60_000 });
    await expect(p.getByTestId('agent-mode')).toHaveAttribute('data-mode', 'propose');
  }
  const input = bob.page.getByTestId('chat-input');
  await input.click();
  await bob.page.keyboard.type('@agent what is the total of 3, 4 and 5?');
  await bob.page.keyboard.press('Enter');
  await expect(input).toHaveText('');
  const asked = bob.page.getByTestId('chat-message').filter({ hasText: 'what is the total of 3, 4 and 5?' }).last();
  await expect(asked.locator('.mention')).toHaveText('@agent');
  const runId = (await asked.getAttribute('data-run-id'))!;
  expect(runId).toBeTruthy();

  // The agent proposes its cell and waits, visibly, without claiming anything.
  const card = alice.page.getByTestId('agent-proposal').last();
  await expect(card).toBeVisible({ timeout: 60_000 });
  await expect(answerTo(bob.page, runId).getByTestId('agent-activity').last()).toContainText('waiting for a person to Accept', { timeout: 60_000 });
  await expect(answerTo(bob.page, runId)).not.toContainText('The total is');
  await card.getByTestId('proposal-accept').click();

  // Accepted: the cell appears and runs for both; the answer states the kernel's result.
  for (const p of [alice.page, bob.page]) {
    await expect.poll(async () => (await docCellIds(p)).length, { timeout: 60_000 }).toBe(2);
    const agentCell = (await docCellIds(p)).find((id) => id !== cell)!;
    await expect(output(p, agentCell, 'output-text')).toHaveText('12', { timeout: 60_000 });
    await expect(answerTo(p, runId).getByTestId('agent-run-status')).toHaveAttribute('data-status', 'done', { timeout: 30_000 });
    await expect(answerTo(p, runId)).toContainText('The total is 12');
    await expect(answerTo(p, runId)).not.toContainText('Not verified');
  }
});
