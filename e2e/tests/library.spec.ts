/**
 * The method library in two browsers: every workspace has the shipped method notes; Alice adds a
 * Markdown document with the file picker and Bob sees it listed and reads it; Alice tags a
 * markdown cell as a note and it joins the library for both; removing it takes it out for both.
 */
import { cellLocator, expect, test, uniq } from '../support/plexus.ts';
import { aliceAndBob } from '../support/notebook.ts';

test('shipped notes, an upload and a note cell: both people see the same library', async ({ plexus, actor }) => {
  const { alice, bob, cellIds } = await aliceAndBob(plexus, actor, `library ${uniq()}`, [{ kind: 'markdown', source: '# Imaging protocol\n\nWe image at 30 Hz with GCaMP6f.' }]);
  for (const p of [alice.page, bob.page]) {
    if ((await p.getByTestId('data-panel').count()) === 0) await p.getByTestId('data-toggle').click();
    await expect(p.locator('[data-testid="library-doc"][data-builtin="true"]')).toHaveCount(6);
  }
  await expect(bob.page.locator('[data-testid="library-doc"][data-name="neuropil.md"]')).toBeVisible();

  await alice.page.getByTestId('library-upload').setInputFiles({ name: 'lab-pitfalls.md', mimeType: 'text/markdown', buffer: Buffer.from('# Lab pitfalls\n\n## Bleaching\n\nOur rig bleaches 5 % per minute: detrend before ΔF/F.\n') });
  const doc = bob.page.locator('[data-testid="library-doc"][data-name="lab-pitfalls.md"]');
  await expect(doc).toBeVisible({ timeout: 30_000 });
  await expect(doc).toHaveAttribute('data-builtin', 'false');
  await doc.getByTestId('library-doc-open').click();
  await expect(doc.getByTestId('library-doc-text')).toContainText('Our rig bleaches 5 % per minute');

  const cell = cellLocator(alice.page, cellIds[0]!);
  await cell.hover();
  await cell.getByTestId('cell-note-toggle').click();
  await expect(bob.page.getByTestId('library-note')).toHaveText('Imaging protocol', { timeout: 30_000 });

  // Removing asks first (it is for everyone).
  alice.page.once('dialog', (d) => void d.accept());
  await alice.page.locator('[data-testid="library-doc"][data-name="lab-pitfalls.md"]').getByTestId('library-remove').click();
  await expect(doc).toHaveCount(0, { timeout: 30_000 });
});
