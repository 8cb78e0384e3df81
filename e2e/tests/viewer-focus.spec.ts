/**
 * Keys stay where the person is: Neuroglancer used to focus its viewer by itself (pointer over it,
 * focus falling back to the page), so a view-only person's typing opened its help panel over the
 * viewer. Now its shortcuts act only after a click into the viewer — for viewers and editors.
 */
import type { Page } from '@playwright/test';
import { ALICE, VICTOR, expect, openWorkspace, test, uniq } from '../support/plexus.ts';

const ngHelp = (page: Page) => page.locator('.neuroglancer-help-body');

async function typeOverTheViewer(page: Page): Promise<void> {
  const box = (await page.getByTestId('viewer-panel').boundingBox())!;
  // The pointer rests on the viewer (Neuroglancer used to take focus here), focus is on the page.
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.move(box.x + box.width / 2 + 20, box.y + box.height / 2 + 10);
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  for (const key of ['h', 'l', '1', 'x']) await page.keyboard.press(key);
  await expect.poll(() => page.evaluate(() => document.activeElement === document.body)).toBe(true);
  // The app's own `?` still answers from the page: the keys above were handled, and reached no viewer.
  await page.keyboard.press('Shift+Slash');
  await expect(page.getByTestId('help-popover')).toBeVisible();
  // The list has the run keys people reach for first.
  await expect(page.getByTestId('help-popover')).toContainText('Ctrl+Enter');
  await expect(page.getByTestId('help-popover')).toContainText('Shift+Enter');
  await expect(ngHelp(page)).toHaveCount(0);
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('help-popover')).toHaveCount(0);
}

test('typing with the pointer over the viewer never reaches Neuroglancer until the person clicks into it', async ({ plexus, actor }) => {
  const { workspace } = await plexus.createWorkspace(`viewer focus ${uniq()}`, [{ kind: 'code', source: 'x = 1' }]);
  const viewLink = await plexus.share(workspace.id, 'viewer');
  const victor = await actor(VICTOR);
  const alice = await actor(ALICE);
  await openWorkspace(alice.page, plexus, workspace.id);
  // A layer first (an empty viewer shows its hint over Neuroglancer).
  await alice.page.getByTestId('viewer-empty-add').first().click({ timeout: 60_000 });
  await expect(alice.page.getByTestId('viewer-empty')).toHaveCount(0);
  await openWorkspace(victor.page, plexus, workspace.id, viewLink.token);
  await expect(victor.page.getByTestId('viewer-empty')).toHaveCount(0);
  for (const page of [victor.page, alice.page]) {
    await expect(page.getByTestId('viewer-panel').locator('canvas').first()).toBeVisible();
    await typeOverTheViewer(page);
    // Typing in the chat (Alice) is for the chat, whatever the pointer does.
    if (page === alice.page) {
      await page.getByTestId('chat-input').click();
      const box = (await page.getByTestId('viewer-panel').boundingBox())!;
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.keyboard.type('hello');
      await expect(page.getByTestId('chat-input')).toHaveText('hello');
      await expect(ngHelp(page)).toHaveCount(0);
    }
    // A click into the viewer gives it the keys: its shortcuts work as in Neuroglancer.
    const box = (await page.getByTestId('viewer-panel').boundingBox())!;
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.keyboard.press('h');
    await expect(ngHelp(page)).toHaveCount(1);
  }
});
