/**
 * History in two browsers: Alice names a checkpoint, then changes a cell and adds one; Bob opens
 * the history, sees the checkpoint and Alice's changes attributed to her, compares the
 * checkpoint with now (a line diff of the changed cell, the added cell), and restores it — both
 * notebooks are back as they were; Bob's Undo takes the restore back for both. A view-only
 * person sees the history and can preview, but has nothing to restore or checkpoint with.
 */
import type { Page } from '@playwright/test';
import { cellTexts, expect, openWorkspace, test, uniq, VICTOR } from '../support/plexus.ts';
import { aliceAndBob, setCellCode } from '../support/notebook.ts';

test('checkpoint, compare and restore as a change, attributed history, undo; viewers only look', async ({ plexus, actor }) => {
  const { workspace, cellIds, alice, bob } = await aliceAndBob(plexus, actor, `history ${uniq()}`, [{ kind: 'code', source: 'const speed = 10;' }]);
  const [cell] = cellIds as [string];
  const ap = alice.page;
  const bp = bob.page;
  /** The cell's source in the page's document. */
  const source = (p: Page) => cellTexts(p, cell).then((t) => t.y);
  await ap.getByTestId('history-toggle').click();
  await ap.getByTestId('history-label').fill('before the class');
  await ap.getByTestId('history-checkpoint-now').click();
  await expect(ap.getByTestId('history-message')).toContainText('Checkpoint “before the class” saved');

  // Alice changes the cell and adds another.
  await setCellCode(ap, cell, 'const speed = 99;');
  await expect.poll(() => source(bp)).toBe('const speed = 99;');
  await ap.getByTestId('add-code').click();
  await expect(bp.getByTestId('cell')).toHaveCount(2);

  // Bob sees the checkpoint and Alice's changes, attributed to her by the server.
  await bp.getByTestId('history-toggle').click();
  const cp = bp.locator('[data-testid="history-checkpoint"][data-kind="named"]').filter({ hasText: 'before the class' });
  await expect(cp).toBeVisible();
  await expect(async () => {
    await bp.getByRole('button', { name: 'Refresh' }).click();
    await expect(bp.locator('[data-testid="history-entry"][data-actor="Alice"]').first()).toContainText(/edited 1 cell|added 1 cell/, { timeout: 2_000 });
  }).toPass({ timeout: 60_000 });

  // Compare: the changed line and the added cell.
  await cp.getByTestId('history-compare-toggle').click();
  await expect(cp.getByTestId('history-compare-counts')).toContainText('1 added, 0 removed, 1 changed');
  const changed = cp.locator(`[data-testid="history-diff-cell"][data-cell="${cell}"]`);
  await expect(changed.locator('.diff-del')).toHaveText('− const speed = 10;');
  await expect(changed.locator('.diff-add')).toHaveText('+ const speed = 99;');

  // Bob restores everything: both notebooks are back at the checkpoint.
  await cp.getByTestId('history-restore').click();
  await cp.getByTestId('history-restore-confirm').click();
  await expect(bp.getByTestId('history-message')).toContainText('Restored from “before the class”: 1 cell changed back, 1 removed');
  for (const p of [ap, bp]) {
    await expect.poll(() => source(p)).toBe('const speed = 10;');
    await expect(p.getByTestId('cell')).toHaveCount(1);
  }
  // An automatic checkpoint was taken before the restore.
  await expect(bp.locator('[data-testid="history-checkpoint"][data-kind="restore"]')).toHaveCount(1);

  // Undo takes the whole restore back, for everyone.
  await bp.getByTestId('history-undo').click();
  for (const p of [ap, bp]) {
    await expect.poll(() => source(p)).toBe('const speed = 99;');
    await expect(p.getByTestId('cell')).toHaveCount(2);
  }

  // A view-only person: history and preview, no restore and no checkpoint.
  const link = await plexus.share(workspace.id, 'viewer');
  const victor = await actor(VICTOR);
  await openWorkspace(victor.page, plexus, workspace.id, link.token);
  await victor.page.getByTestId('history-toggle').click();
  const vcp = victor.page.locator('[data-testid="history-checkpoint"][data-kind="named"]');
  await vcp.getByTestId('history-preview-toggle').click();
  await expect(vcp.getByTestId('history-preview-cell')).toHaveCount(1);
  await expect(vcp.getByTestId('history-preview-cell')).toContainText('const speed = 10;');
  await expect(victor.page.getByTestId('history-restore')).toHaveCount(0);
  await expect(victor.page.getByTestId('history-checkpoint-now')).toHaveCount(0);
});
