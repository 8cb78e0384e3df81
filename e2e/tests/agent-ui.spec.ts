/**
 * The agent in the browser, with no agent process: a Node Yjs peer (service token) writes what
 * the agent would write — runs, streamed answers, tool activity, proposals — through the shared
 * helpers, and Alice and Bob use the chat UI around it.
 */
import {
  agentOrigin,
  appendToMessage,
  finishActivity,
  finishRun,
  getCell,
  cellSource,
  getSettings,
  newCellId,
  postProposal,
  recordStep,
  setMessageStatus,
  setSuggestions,
  startActivity,
} from '@plexus/shared';
import { ALICE, BOB, cellTexts, expect, openWorkspace, test, uniq, type Actor, type Plexus } from '../support/plexus.ts';
import { aliceAndBob, pickFile } from '../support/notebook.ts';
import { AGENT_AUTHOR, AgentPeer } from '../support/agent-peer.ts';
import type { Page } from '@playwright/test';

const runsIn = (page: Page) => page.evaluate(() => (globalThis as any).__plexus.agent.runs());

/** Alice asks the agent through the @ list; returns her message id. */
async function askWithMention(page: Page, text: string): Promise<string> {
  const input = page.getByTestId('chat-input');
  await input.click();
  await page.keyboard.type('@ag');
  await expect(page.getByTestId('mention-option')).toHaveText(/@agent/);
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('mention-list')).toHaveCount(0);
  await expect(input.locator('.mention')).toHaveText('@agent');
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
  await expect(input).toHaveText('');
  const msg = page.getByTestId('chat-message').last();
  await expect(msg.locator('.chat-text')).toHaveText(new RegExp(`^@agent\\s+${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  return (await msg.getAttribute('data-message-id'))!;
}

async function setup(plexus: Plexus, actor: Parameters<typeof aliceAndBob>[1], cells: Parameters<typeof aliceAndBob>[3] = []) {
  const r = await aliceAndBob(plexus, actor, `agent ui ${uniq()}`, cells);
  return r;
}

test('@agent from the mention list posts the message and queues a run for it in one go', async ({ plexus, actor }) => {
  const { workspace, alice, bob } = await setup(plexus, actor);
  const peer = await AgentPeer.connect(plexus, workspace.id);
  try {
    // The list opens on "@", filters, and Escape closes it without sending anything.
    await alice.page.getByTestId('chat-input').click();
    await alice.page.keyboard.type('@');
    await expect(alice.page.getByTestId('mention-option')).toHaveCount(1);
    await alice.page.keyboard.press('Escape');
    await expect(alice.page.getByTestId('mention-list')).toHaveCount(0);
    await alice.page.keyboard.press('Backspace');

    const messageId = await askWithMention(alice.page, 'please summarise the notebook');
    await expect.poll(async () => (await runsIn(alice.page)).length).toBe(1);
    const [run] = await runsIn(alice.page);
    expect(run.status).toBe('queued');
    expect(run.request.by).toEqual({ id: ALICE.id, name: ALICE.name });
    expect(run.request.messageId).toBe(messageId);
    expect(run.request.text).toMatch(/^@agent\s+please summarise the notebook$/);
    // The message carries the run id; the agent's copy has the run too.
    await expect(alice.page.locator(`[data-message-id="${messageId}"]`)).toHaveAttribute('data-run-id', run.id);
    const seen = await peer.waitRun((r) => r.id === run.id, 'the run at the agent');
    expect(seen.request.messageId).toBe(messageId);
    // Bob sees Alice's message, and that it waits for the agent.
    const atBob = bob.page.locator(`[data-message-id="${messageId}"]`);
    await expect(atBob.locator('.chat-text')).toHaveText(/please summarise the notebook$/);
    await expect(atBob.getByTestId('agent-run-status')).toHaveAttribute('data-status', 'queued');
  } finally {
    await peer.close();
  }
});

test('an answer streams to everyone with its tool activity; Bob stops the run', async ({ plexus, actor }) => {
  const { workspace, alice, bob } = await setup(plexus, actor, [{ kind: 'code', source: 'x = 1' }]);
  const peer = await AgentPeer.connect(plexus, workspace.id);
  try {
    const { run, replyId, origin } = await peer.answer(await askWithMention(alice.page, 'what is x?'));
    appendToMessage(peer.doc, replyId, 'Looking at', origin);
    const reply = (p: Page) => p.locator(`[data-message-id="${replyId}"]`);
    for (const p of [alice.page, bob.page]) {
      await expect(reply(p).locator('.chat-text')).toHaveText('Looking at');
      await expect(reply(p)).toHaveClass(/is-reply/);
      await expect(reply(p).getByTestId('agent-run-status')).toHaveAttribute('data-status', 'running');
    }
    const act = startActivity(peer.doc, run.id, 'get_notebook_state', '{"cells":"all"}', origin)!;
    appendToMessage(peer.doc, replyId, ' the notebook…', origin);
    for (const p of [alice.page, bob.page]) {
      await expect(reply(p).locator('.chat-text')).toHaveText('Looking at the notebook…');
      await expect(reply(p).getByTestId('agent-activity')).toHaveAttribute('data-status', 'running');
      await expect(reply(p).getByTestId('agent-activity')).toContainText('get_notebook_state');
    }
    finishActivity(peer.doc, run.id, act, 'done', '1 cell, x = 1', origin);
    recordStep(peer.doc, run.id, { prompt: 1200, completion: 80, total: 1280 }, origin);
    for (const p of [alice.page, bob.page]) {
      await expect(reply(p).getByTestId('agent-activity')).toHaveAttribute('data-status', 'done');
      await expect(reply(p).getByTestId('agent-activity-summary')).toHaveText('1 cell, x = 1');
      await expect(reply(p).getByTestId('agent-run-status')).toContainText('step 1');
      await expect(reply(p).getByTestId('agent-run-tokens')).toContainText('1,200 / 80 tokens');
    }

    // Escape in the chat never stops a run; Bob's Stop does.
    await bob.page.getByTestId('chat-input').click();
    await bob.page.keyboard.press('Escape');
    await reply(bob.page).getByTestId('agent-run-stop').click();
    await expect(reply(bob.page).getByTestId('agent-run-stop')).toHaveText('stopping…');
    const stopped = await peer.waitRun((r) => r.id === run.id && !!r.stop, 'the stop signal');
    expect(stopped.stop!.by).toBe(BOB.id);
    expect(stopped.stop!.name).toBe('Bob');

    finishRun(peer.doc, run.id, 'stopped', 'stopped by Bob', origin);
    setMessageStatus(peer.doc, replyId, 'stopped', origin);
    for (const p of [alice.page, bob.page]) {
      await expect(reply(p).getByTestId('agent-run-status')).toHaveAttribute('data-status', 'stopped');
      await expect(reply(p).getByTestId('agent-run-status')).toHaveText('stopped: stopped by Bob');
      await expect(reply(p).getByTestId('agent-run-stop')).toHaveCount(0);
    }
  } finally {
    await peer.close();
  }
});

test('proposal cards: Alice accepts an edit and a new cell, Bob dismisses one; everyone sees the outcome', async ({ plexus, actor }) => {
  const { workspace, cellIds, alice, bob } = await setup(plexus, actor, [{ kind: 'code', source: 'x = 1\ny = 2\nprint(x + y)' }]);
  const [cell] = cellIds as [string];
  const peer = await AgentPeer.connect(plexus, workspace.id);
  try {
    const origin = agentOrigin('r_e2e_proposals');
    const newId = newCellId();
    const edit = postProposal(
      peer.doc,
      { author: AGENT_AUTHOR, proposal: { runId: 'r_e2e_proposals', title: 'Make y three', why: 'you asked for 3', action: { type: 'edit_cell', cellId: cell, base: 'x = 1\ny = 2\nprint(x + y)', proposed: 'x = 1\ny = 3\nprint(x + y)' } } },
      origin,
    );
    const create = postProposal(
      peer.doc,
      { author: AGENT_AUTHOR, proposal: { runId: 'r_e2e_proposals', title: 'Print the answer', action: { type: 'create_cell', cellId: newId, kind: 'code', source: 'print(42)', after: cell } } },
      origin,
    );
    const del = postProposal(
      peer.doc,
      { author: AGENT_AUTHOR, proposal: { runId: 'r_e2e_proposals', title: 'Remove the first cell', destructive: 'deletes a cell', action: { type: 'delete_cell', cellId: cell, source: 'x = 1' } } },
      origin,
    );
    const card = (p: Page, id: string) => p.locator(`[data-message-id="${id}"]`).getByTestId('agent-proposal');
    for (const p of [alice.page, bob.page]) {
      await expect(card(p, edit).getByTestId('proposal-diff')).toContainText('y = 2');
      await expect(card(p, edit).locator('.diff-add')).toHaveText(/y = 3/);
      await expect(card(p, edit).locator('.diff-del')).toHaveText(/y = 2/);
      await expect(card(p, create).getByTestId('proposal-source')).toHaveText('print(42)');
      await expect(card(p, del).getByTestId('proposal-destructive')).toHaveText('deletes a cell');
    }

    await card(alice.page, edit).getByTestId('proposal-accept').click();
    await expect(card(bob.page, edit).getByTestId('proposal-outcome')).toContainText('Accepted by Alice');
    await expect.poll(async () => (await cellTexts(bob.page, cell)).dom).toBe('x = 1\ny = 3\nprint(x + y)');

    await card(alice.page, create).getByTestId('proposal-accept').click();
    await expect(card(bob.page, create).getByTestId('proposal-outcome')).toContainText('Accepted by Alice');
    await expect(bob.page.locator(`[data-testid="cell"][data-cell-id="${newId}"]`)).toHaveCount(1);
    await expect.poll(async () => (await cellTexts(bob.page, newId)).y).toBe('print(42)');

    await card(bob.page, del).getByTestId('proposal-dismiss').click();
    for (const p of [alice.page, bob.page]) {
      await expect(card(p, del).getByTestId('proposal-outcome')).toHaveText('Dismissed by Bob');
      await expect(card(p, del).getByTestId('proposal-accept')).toHaveCount(0);
    }
    // The cell is still there, with Alice's accepted edit, at the agent too.
    await expect.poll(() => { const c = getCell(peer.doc, cell); return c ? cellSource(c) : null; }).toBe('x = 1\ny = 3\nprint(x + y)');
    expect(await alice.page.evaluate(() => (globalThis as any).__plexus.agent.proposals().map((p: any) => p.status))).toEqual(['accepted', 'accepted', 'dismissed']);
  } finally {
    await peer.close();
  }
});

test('offline hint without an agent peer; "Agent ready (model …)" when one is present', async ({ plexus, actor }) => {
  const { workspace } = await plexus.createWorkspace(`agent presence ${uniq()}`);
  const alice = await actor(ALICE);
  await openWorkspace(alice.page, plexus, workspace.id);
  const hint = alice.page.getByTestId('agent-offline');
  await expect(hint).toHaveText(/^Agent offline — set OPENAI_API_KEY \(and OPENAI_BASE_URL for another OpenAI-compatible endpoint\) and restart Plexus to enable it\.$/);

  // Addressed while offline (the toggle, no mention): the message still posts, the hint lights up.
  await alice.page.getByTestId('chat-ask-agent').click();
  await expect(alice.page.getByTestId('chat-ask-agent')).toHaveAttribute('aria-pressed', 'true');
  await alice.page.getByTestId('chat-input').fill('anyone there?');
  await alice.page.getByTestId('chat-input').press('Enter');
  await expect(alice.page.getByTestId('chat-message')).toHaveCount(1);
  await expect(hint).toHaveAttribute('data-highlighted', 'true');
  await expect.poll(async () => (await runsIn(alice.page)).map((r: any) => r.request.text)).toEqual(['anyone there?']);

  const peer = await AgentPeer.connect(plexus, workspace.id, { model: 'test-model-7' });
  try {
    await expect(hint).toHaveCount(0);
    await expect(alice.page.getByTestId('agent-ready')).toHaveText('Agent ready (model test-model-7)');
    await expect(alice.page.locator('[data-testid="avatar"][data-kind="agent"]')).toHaveAttribute('title', 'Agent (agent)');
  } finally {
    await peer.close();
  }
  await expect(alice.page.getByTestId('agent-offline')).toBeVisible();
});

test('selected rows of a data preview are published in awareness as dataSelection', async ({ plexus, actor }) => {
  const tag = uniq();
  const table = `sel_${tag}`;
  const { alice, bob } = await setup(plexus, actor);
  await pickFile(alice.page, `${table}.csv`, 'id,name\n1,a\n2,b\n3,c\n4,d\n');
  await expect(alice.page.getByTestId('upload')).toHaveAttribute('data-status', 'done');
  const row = alice.page.locator(`[data-testid="data-table"][data-name="${table}"]`);
  await row.getByTestId('data-table-open').click();
  const tr = (n: number) => row.locator(`tr[data-row="${n}"]`);
  await tr(0).click();
  await tr(2).click({ modifiers: ['Shift'] });
  await tr(1).click({ modifiers: ['Control'] });
  await expect(tr(0)).toHaveAttribute('aria-selected', 'true');
  await expect(tr(1)).toHaveAttribute('aria-selected', 'false');
  await expect(tr(2)).toHaveClass(/is-selected/);
  const selectionAtBob = () => bob.page.evaluate(() => (globalThis as any).__plexus.agent.dataSelections().Alice ?? null);
  await expect.poll(selectionAtBob).toEqual({ table, rows: [0, 2], values: [{ id: 1, name: 'a' }, { id: 3, name: 'c' }] });
  // Closing the preview clears it.
  await row.getByTestId('data-table-open').click();
  await expect.poll(selectionAtBob).toBeNull();
});

test('the agent mode set by Alice is seen by Bob', async ({ plexus, actor }) => {
  const { workspace, alice, bob } = await setup(plexus, actor);
  await expect(bob.page.getByTestId('agent-mode')).toHaveAttribute('data-mode', 'propose');
  await alice.page.getByTestId('agent-mode-direct').click();
  await expect(bob.page.getByTestId('agent-mode')).toHaveAttribute('data-mode', 'direct');
  await expect(bob.page.getByTestId('agent-mode-direct')).toHaveAttribute('aria-pressed', 'true');
  await expect.poll(async () => plexus.withDoc(workspace.id, (doc) => getSettings(doc).agentMode)).toBe('direct');
  await bob.page.getByTestId('agent-mode-propose').click();
  await expect(alice.page.getByTestId('agent-mode')).toHaveAttribute('data-mode', 'propose');
});

test('suggestions: a value chip asks the agent as a follow-up of that run; Reply does too', async ({ plexus, actor }) => {
  const { workspace, alice, bob } = await setup(plexus, actor, [{ kind: 'code', source: 'x = 1' }]);
  const peer = await AgentPeer.connect(plexus, workspace.id);
  try {
    const { run, replyId, origin } = await peer.answer(await askWithMention(alice.page, 'hello'), 'Hi! What next?');
    setSuggestions(peer.doc, replyId, { values: [{ label: 'Plot it', value: 'plot x please' }], actions: [{ label: 'Open viewer', action: 'open_viewer' }] }, origin);
    finishRun(peer.doc, run.id, 'done', null, origin);
    const reply = bob.page.locator(`[data-message-id="${replyId}"]`);
    await reply.getByTestId('agent-suggestion-value').click();
    const follow = await peer.waitRun((r) => r.request.text === 'plot x please', 'the follow-up run');
    expect(follow.request.followUp).toBe(run.id);
    expect(follow.request.by.id).toBe(BOB.id);
    // Reply on the answer: the next message follows up too.
    await alice.page.locator(`[data-message-id="${replyId}"]`).getByTestId('chat-reply').click();
    await expect(alice.page.getByTestId('chat-reply-target')).toBeVisible();
    // Reply moves the caret into the composer in an effect after the render that shows the
    // target: wait for it there, or the keys go to the Reply button (and Enter clicks it again).
    await expect(alice.page.getByTestId('chat-input')).toBeFocused();
    await alice.page.keyboard.type('and y?');
    await alice.page.keyboard.press('Enter');
    const second = await peer.waitRun((r) => r.request.text === 'and y?', 'the reply run');
    expect(second.request.followUp).toBe(run.id);
    await expect(alice.page.getByTestId('chat-reply-target')).toHaveCount(0);
  } finally {
    await peer.close();
  }
});

// Ctrl+. stops the newest run still going.
test('Ctrl+. stops the newest running agent run', async ({ plexus, actor }) => {
  const { workspace } = await plexus.createWorkspace(`agent stop key ${uniq()}`);
  const alice: Actor = await actor(ALICE);
  await openWorkspace(alice.page, plexus, workspace.id);
  const peer = await AgentPeer.connect(plexus, workspace.id);
  try {
    for (const t of ['first', 'second']) {
      await alice.page.getByTestId('chat-ask-agent').click(); // one message each
      await alice.page.getByTestId('chat-input').fill(t);
      await alice.page.getByTestId('chat-input').press('Enter');
    }
    const second = await peer.waitRun((r) => r.request.text === 'second');
    await alice.page.getByTestId('chat-input').press('Control+Period');
    const stopped = await peer.waitRun((r) => r.id === second.id && !!r.stop, 'the stop signal');
    expect(stopped.stop!.by).toBe(ALICE.id);
    expect((await peer.waitRun((r) => r.request.text === 'first')).stop).toBeNull();
  } finally {
    await peer.close();
  }
});
