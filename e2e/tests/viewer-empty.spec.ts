/**
 * A new workspace's viewer explains itself instead of showing a black Neuroglancer: editors get
 * the server's volumes to add in one click (for everyone), view-only people the explanation.
 */
import { expect, ownerEditorViewer, test, uniq } from '../support/plexus.ts';

test('an empty viewer offers the server’s volumes; one click adds a layer for everyone; viewers only read', async ({ plexus, actor }) => {
  const { workspace } = await plexus.createWorkspace(`empty viewer ${uniq()}`, []);
  const { alice, bob, victor } = await ownerEditorViewer(plexus, actor, workspace.id);
  for (const p of [alice.page, bob.page, victor.page]) await expect(p.getByTestId('viewer-empty')).toContainText('No layers in the viewer yet');
  await expect(victor.page.getByTestId('viewer-empty-add')).toHaveCount(0);
  const add = alice.page.getByTestId('viewer-empty-add');
  await expect(add.first()).toBeVisible({ timeout: 60_000 });
  const label = (await add.first().textContent())!.replace('+', '').trim();
  await add.first().click();
  // The layer is in the shared state, and the hint is gone for everyone.
  for (const p of [alice.page, bob.page, victor.page]) await expect(p.getByTestId('viewer-empty')).toHaveCount(0);
  await expect
    .poll(() => alice.page.evaluate(() => ((globalThis as any).__plexusViewer.docState().layers ?? []).map((l: { name: string }) => l.name)))
    .toEqual([label]);
});
