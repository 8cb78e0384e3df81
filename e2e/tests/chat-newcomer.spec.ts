/**
 * What a newcomer hit in the chat: `@agent` typed by hand (without picking it from the list) must
 * address the agent, and look like it; "Ask agent" is for one message and never carries into
 * another workspace; a tool card opens to its whole arguments.
 */
import type { Page } from '@playwright/test';
import { finishActivity, startActivity } from '@plexus/shared';
import { expect, openWorkspace, test, uniq } from '../support/plexus.ts';
import { aliceAndBob } from '../support/notebook.ts';
import { AgentPeer } from '../support/agent-peer.ts';

const lastMessage = (page: Page) => page.getByTestId('chat-message').last();

async function typeAndSend(page: Page, text: string, pickFirst = false): Promise<void> {
  const input = page.getByTestId('chat-input');
  await input.click();
  await page.keyboard.type(text);
  if (pickFirst) {
    // The @ list is open on the last word: Enter picks it (as in Slack), the next Enter sends.
    await expect(page.getByTestId('mention-list')).toBeVisible();
    await page.keyboard.press('Enter');
    await expect(input.locator('.mention')).toHaveText('@agent');
  }
  await page.keyboard.press('Enter');
  await expect(input).toHaveText('');
  await expect(lastMessage(page).locator('.chat-text')).toContainText(text.slice(-12));
}

test('@agent typed by hand becomes the mention as you type and asks the agent; look-alikes do not', async ({ plexus, actor }) => {
  const { workspace, alice, bob } = await aliceAndBob(plexus, actor, `typed mention ${uniq()}`, []);
  const peer = await AgentPeer.connect(plexus, workspace.id);
  try {
    const input = alice.page.getByTestId('chat-input');
    await input.click();
    await alice.page.keyboard.type('@agent what');
    // The typed word turned into the same chip the @ list inserts.
    await expect(input.locator('.mention')).toHaveText('@agent');
    await expect(alice.page.locator('.composer-to')).toHaveText('to the agent');
    await alice.page.keyboard.type(' is the total of 3, 4 and 5?');
    await alice.page.keyboard.press('Enter');
    await expect(input).toHaveText('');
    const asked = lastMessage(bob.page);
    await expect(asked.locator('.chat-text')).toHaveText('@agent what is the total of 3, 4 and 5?');
    // Posted, it still shows as the mention (for everyone): it asked the agent.
    await expect(asked.locator('.chat-text .mention')).toHaveText('@agent');
    // A run was requested with the message: the agent peer sees it and answers in its thread.
    const messageId = (await lastMessage(alice.page).getAttribute('data-message-id'))!;
    expect(await lastMessage(alice.page).getAttribute('data-run-id')).toBeTruthy();
    const { replyId } = await peer.answer(messageId, 'On it.');
    await expect(bob.page.locator(`[data-message-id="${replyId}"] .chat-text`)).toHaveText('On it.');

    // Ending in the typed word: Enter first picks it from the list, then sends.
    await typeAndSend(alice.page, 'thanks @agent', true);
    expect(await lastMessage(alice.page).getAttribute('data-run-id')).toBeTruthy();

    // Look-alikes are plain text: no chip, no run.
    for (const text of ['the @agentic approach', 'mail x@agent.org about it']) {
      await typeAndSend(alice.page, text);
      await expect(lastMessage(alice.page).locator('.mention')).toHaveCount(0);
      expect(await lastMessage(alice.page).getAttribute('data-run-id')).toBeNull();
    }
  } finally {
    await peer.close();
  }
});

test('"Ask agent" addresses one message, then turns off; it never carries into another workspace', async ({ plexus, actor }) => {
  const { alice } = await aliceAndBob(plexus, actor, `ask toggle ${uniq()}`, []);
  const toggle = alice.page.getByTestId('chat-ask-agent');
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  await typeAndSend(alice.page, 'summarise the notebook');
  expect(await lastMessage(alice.page).getAttribute('data-run-id')).toBeTruthy();
  await expect(toggle).toHaveAttribute('aria-pressed', 'false');
  await typeAndSend(alice.page, 'and a note for people');
  expect(await lastMessage(alice.page).getAttribute('data-run-id')).toBeNull();

  // On again, then another workspace: off there.
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  const { workspace: other } = await plexus.createWorkspace(`other ${uniq()}`, []);
  await openWorkspace(alice.page, plexus, other.id);
  await expect(alice.page.getByTestId('chat-ask-agent')).toHaveAttribute('aria-pressed', 'false');
});

test('a tool card opens to the whole arguments, pretty-printed, and the whole result', async ({ plexus, actor }) => {
  const { workspace, alice } = await aliceAndBob(plexus, actor, `tool card ${uniq()}`, []);
  const peer = await AgentPeer.connect(plexus, workspace.id);
  try {
    await alice.page.getByTestId('chat-ask-agent').click();
    await typeAndSend(alice.page, 'write a long cell');
    const messageId = (await lastMessage(alice.page).getAttribute('data-message-id'))!;
    const { run, replyId, origin } = await peer.answer(messageId, 'Writing it.');
    const source = Array.from({ length: 30 }, (_, i) => `const v${i} = ${i} * rate; // step ${i}`).join('\n');
    const act = startActivity(peer.doc, run.id, 'create_cell', JSON.stringify({ kind: 'code', source }), origin)!;
    const summary = `proposed: new code cell — ${'a long explanation of the cell, '.repeat(6)}end`;
    finishActivity(peer.doc, run.id, act, 'proposed', summary, origin);
    const card = alice.page.locator(`[data-message-id="${replyId}"]`).getByTestId('agent-activity');
    await expect(card).toHaveAttribute('data-status', 'proposed');
    // Closed: one line, cut.
    await expect(card.getByTestId('agent-activity-args')).toHaveCount(0);
    const toggle = card.getByTestId('agent-activity-toggle');
    await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    await toggle.focus();
    await alice.page.keyboard.press('Enter');
    await expect(toggle).toHaveAttribute('aria-expanded', 'true');
    const args = card.getByTestId('agent-activity-args');
    await expect(args).toContainText('"kind": "code"');
    await expect(args).toContainText('const v29 = 29 * rate; // step 29');
    await expect(card.getByTestId('agent-activity-summary')).toHaveText(summary);
    await toggle.click();
    await expect(card.getByTestId('agent-activity-args')).toHaveCount(0);
  } finally {
    await peer.close();
  }
});
