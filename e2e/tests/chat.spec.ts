/** Chat between people: messages reach the other person with the author's name, in one order. */
import { ALICE, BOB, expect, openWorkspace, test, uniq } from '../support/plexus.ts';

test('chat: alice posts, bob sees it with her name; bob answers, alice sees his', async ({ plexus, actor }) => {
  const { workspace } = await plexus.createWorkspace(`chat ${uniq()}`);
  const bobLink = await plexus.share(workspace.id, 'editor');
  const alice = await actor(ALICE);
  const bob = await actor(BOB);
  await openWorkspace(alice.page, plexus, workspace.id);
  await openWorkspace(bob.page, plexus, workspace.id, bobLink.token);

  const hello = `Hello Bob, the scan is ready ${uniq()}`;
  await alice.page.getByTestId('chat-input').fill(hello);
  await alice.page.getByTestId('chat-input').press('Enter');
  // Sent: the composer is cleared and the message is in alice's list.
  await expect(alice.page.getByTestId('chat-input')).toHaveText('');
  await expect(alice.page.getByTestId('chat-message')).toHaveCount(1);

  const atBob = bob.page.getByTestId('chat-message');
  await expect(atBob).toHaveCount(1);
  await expect(atBob.locator('.chat-text')).toHaveText(hello);
  await expect(atBob.locator('.chat-author')).toHaveText('Alice');

  const reply = `Thanks Alice, looking now ${uniq()}`;
  await bob.page.getByTestId('chat-input').fill(reply);
  await bob.page.getByTestId('chat-input').press('Enter');

  for (const page of [alice.page, bob.page]) {
    const msgs = page.getByTestId('chat-message');
    await expect(msgs.locator('.chat-text')).toHaveText([hello, reply]);
    await expect(msgs.locator('.chat-author')).toHaveText(['Alice', 'Bob']);
  }
  // Own messages are marked as such on each side.
  await expect(alice.page.getByTestId('chat-message').nth(0)).toHaveClass(/is-own/);
  await expect(alice.page.getByTestId('chat-message').nth(1)).not.toHaveClass(/is-own/);
  await expect(bob.page.getByTestId('chat-message').nth(1)).toHaveClass(/is-own/);

  // Empty messages are not posted.
  await bob.page.getByTestId('chat-input').fill('   ');
  await bob.page.getByTestId('chat-input').press('Enter');
  await expect(bob.page.getByTestId('chat-message')).toHaveCount(2);

  // The server stored both, with their authors.
  await expect
    .poll(async () => (await plexus.snapshot(workspace.id)).chat)
    .toEqual([
      { author: 'Alice', text: hello },
      { author: 'Bob', text: reply },
    ]);
});
