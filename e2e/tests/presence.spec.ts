/**
 * Presence: who is here (header avatars with names), where they are (a badge on the cell they
 * focus, following them from cell to cell), name changes reaching the others, and leaving.
 */
import { ALICE, BOB, cellLocator, codeContent, expect, openWorkspace, test } from '../support/plexus.ts';

test('alice sees bob’s avatar and the badge of the cell he focuses, following him', async ({ plexus, actor }) => {
  const { workspace, cellIds } = await plexus.createWorkspace('presence', [
    { kind: 'code', source: 'one()' },
    { kind: 'code', source: 'two()' },
  ]);
  const [first, second] = cellIds as [string, string];
  const bobLink = await plexus.share(workspace.id, 'editor');
  const alice = await actor(ALICE);
  const bob = await actor(BOB);
  await openWorkspace(alice.page, plexus, workspace.id);
  await openWorkspace(bob.page, plexus, workspace.id, bobLink.token);

  // Header avatars: herself first (marked), then bob, by name.
  const avatars = alice.page.getByTestId('avatar');
  await expect(avatars).toHaveCount(2);
  await expect(avatars.nth(0)).toHaveAttribute('title', 'Alice');
  await expect(avatars.nth(0)).toHaveAttribute('data-self', 'true');
  // Bob came by an editor link: his name is his own choice, the link is stamped by the server.
  await expect(avatars.nth(1)).toHaveAttribute('title', 'Bob (editor link)');
  await expect(avatars.nth(1)).toHaveText('B');
  await expect(bob.page.locator('[data-testid="avatar"][title="Alice"]')).toHaveCount(1);
  // Nobody focuses a cell yet.
  await expect(alice.page.getByTestId('cell-peer')).toHaveCount(0);

  const badgeOn = (cellId: string) => cellLocator(alice.page, cellId).getByTestId('cell-peer');

  // Bob clicks into the second cell: alice sees his badge there, and only there.
  await codeContent(bob.page, second).click();
  await expect(badgeOn(second)).toHaveCount(1);
  await expect(badgeOn(second)).toHaveAttribute('title', 'Bob');
  await expect(badgeOn(first)).toHaveCount(0);
  // Nobody sees a badge for themselves.
  await expect(bob.page.getByTestId('cell-peer')).toHaveCount(0);

  // He moves to the first cell: the badge follows.
  await codeContent(bob.page, first).click();
  await expect(badgeOn(first)).toHaveAttribute('title', 'Bob');
  await expect(badgeOn(second)).toHaveCount(0);

  // He renames himself in the header: alice's avatar and badge follow.
  await bob.page.getByTestId('user-name').click();
  await bob.page.getByTestId('user-name-input').fill('Bobby Tables');
  await bob.page.getByTestId('user-name-input').press('Enter');
  await expect(bob.page.getByTestId('user-name')).toContainText('Bobby Tables');
  await expect(avatars.nth(1)).toHaveAttribute('title', 'Bobby Tables (editor link)');
  await expect(badgeOn(first)).toHaveAttribute('title', 'Bobby Tables');
  await codeContent(bob.page, second).click();
  await expect(badgeOn(second)).toHaveAttribute('title', 'Bobby Tables');
  await expect(badgeOn(first)).toHaveCount(0);

  // Focus in the chat is not on any cell.
  await bob.page.getByTestId('chat-input').click();
  await expect(alice.page.getByTestId('cell-peer')).toHaveCount(0);

  // Bob leaves: his avatar disappears for alice.
  await bob.page.close();
  await expect(avatars).toHaveCount(1);
  await expect(avatars.nth(0)).toHaveAttribute('title', 'Alice');
});
