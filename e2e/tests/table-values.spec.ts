/**
 * Table outputs show numbers people can read (1.00895, not 1.0089480392156858), right-aligned, with
 * the full value on hover and in what they copy.
 */
import { expect, openWorkspace, test, uniq, ALICE } from '../support/plexus.ts';
import { output } from '../support/notebook.ts';

test('fractions show at 6 significant digits; the title and a copy keep the full value', async ({ plexus, actor }) => {
  const { workspace, cellIds } = await plexus.createWorkspace(`table values ${uniq()}`, [
    { kind: 'sql', name: 'ratios', source: 'SELECT 1.0089480392156858::DOUBLE AS ratio, 42 AS n, 0.1::DOUBLE + 0.2::DOUBLE AS sum' },
  ]);
  const alice = await actor(ALICE);
  await openWorkspace(alice.page, plexus, workspace.id);
  const cell = cellIds[0]!;
  await alice.page.locator(`[data-cell-id="${cell}"]`).getByTestId('cell-run').click();
  const table = output(alice.page, cell, 'output-table');
  const row = table.locator('tbody tr').first();
  await expect(row.locator('td')).toHaveText(['1.00895', '42', '0.3']);
  await expect(row.locator('td').first()).toHaveAttribute('title', '1.0089480392156858');
  await expect(row.locator('td').nth(1)).not.toHaveAttribute('title', /./);
  // Copying the row gives the values as stored.
  const copied = await alice.page.evaluate(() => {
    const tr = document.querySelector('[data-testid="output-table"] tbody tr')!;
    const range = document.createRange();
    range.selectNodeContents(tr);
    const sel = window.getSelection()!;
    sel.removeAllRanges();
    sel.addRange(range);
    let text = '';
    const read = (e: ClipboardEvent) => (text = e.clipboardData!.getData('text/plain'));
    document.addEventListener('copy', read);
    document.execCommand('copy');
    document.removeEventListener('copy', read);
    return text;
  });
  expect(copied).toBe('1.0089480392156858\t42\t0.30000000000000004');
});
