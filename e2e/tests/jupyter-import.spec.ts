/**
 * A Jupyter notebook imported in the browser looks as it did in Jupyter: its outputs (pandas HTML
 * sanitised — the <script> and the onerror handler in it never run —, a matplotlib PNG, streams,
 * a traceback as text), its Python cells marked as not runnable in Plexus, `%%sql` cells as named
 * SQL cells, its LaTeX rendered with KaTeX and its attached image shown; another person sees the
 * same, and the export afterwards is still the notebook itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ALICE, BOB, expect, openWorkspace, test, uniq } from '../support/plexus.ts';

const fixture = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../shared/test/fixtures/jupyter/plexus-analysis-python.ipynb');

test('an imported notebook shows its outputs safely, its Python as not runnable, and its math', async ({ plexus, actor }) => {
  const { workspace } = await plexus.createWorkspace(`jupyter ${uniq()}`);
  const alice = await actor(ALICE);
  const bob = await actor(BOB);
  await openWorkspace(alice.page, plexus, workspace.id);
  await openWorkspace(bob.page, plexus, workspace.id);
  const titleBefore = await alice.page.title();

  await alice.page.getByTestId('notebook-import').setInputFiles({ name: 'analysis.ipynb', mimeType: 'application/x-ipynb+json', buffer: fs.readFileSync(fixture) });
  await expect(alice.page.getByTestId('notebook-io-done')).toContainText('Imported 10 cells from analysis.ipynb (python code kept');

  for (const page of [alice.page, bob.page]) {
    const cells = page.getByTestId('cell');
    await expect(cells).toHaveCount(10);
    // Python cells: code, marked, with their outputs.
    const setup = cells.nth(1);
    await expect(setup).toHaveAttribute('data-language', 'python');
    await expect(setup.getByTestId('cell-not-runnable')).toContainText('Python — not runnable in Plexus');
    await expect(setup.getByTestId('cell-run')).toHaveCount(0);
    await expect(setup.locator('.cm-content')).toContainText('import pandas as pd');
    await expect(setup.locator('[data-testid="output-stream"][data-name="stdout"]')).toHaveText('loaded 3 sessions\ndone\n');
    await expect(setup.locator('[data-testid="output-stream"][data-name="stderr"]')).toContainText('UserWarning: deprecated');
    // pandas' HTML table (its <style> dropped).
    const table = cells.nth(2).getByTestId('output-html');
    await expect(table.locator('table.dataframe td').first()).toHaveText('n1');
    await expect(table.locator('style')).toHaveCount(0);
    // A PNG figure and an HTML output whose script and handler were removed.
    const plot = cells.nth(3);
    const img = plot.getByTestId('output-image');
    await expect(img).toHaveAttribute('src', /^data:image\/png;base64,iVBOR/);
    await expect.poll(() => img.evaluate((el: any) => el.naturalWidth)).toBe(40);
    await expect(plot.getByTestId('output-html').locator('b')).toHaveText('bold output');
    await expect(plot.getByTestId('output-html').locator('script, [onerror]')).toHaveCount(0);
    // The traceback, as text without ANSI escapes.
    const err = cells.nth(4).getByTestId('output-error');
    await expect(err).toContainText('ZeroDivisionError: division by zero');
    await expect(err.getByTestId('output-traceback')).toContainText('----> 1 1/0');
    // %%sql cells are named SQL cells.
    await expect(cells.nth(6)).toHaveAttribute('data-kind', 'sql');
    await expect(cells.nth(6).getByTestId('sql-name-label').or(cells.nth(6).getByTestId('sql-name'))).toHaveCount(1);
    // LaTeX: inline and display math rendered by KaTeX, the TeX source hidden.
    const intro = cells.nth(0);
    await expect(intro.locator('[data-testid="math"] .katex').first()).toBeVisible();
    await expect(intro.locator('[data-testid="math"]')).toHaveCount(5);
    await expect(intro.locator('.math-display .katex-display')).toHaveCount(1);
    await expect(intro.locator('[data-testid="math"]').first().locator('annotation')).toHaveText('z_{3,4}');
    await expect(intro.locator('h1')).toHaveText('Spike sorting');
    // The image the notebook attached to the cell, shown from its attachments.
    const att = intro.getByTestId('md-attachment');
    await expect(att).toHaveAttribute('alt', 'scheme');
    await expect.poll(() => att.evaluate((el: any) => el.naturalWidth)).toBe(8);
  }
  // Nothing from the imported HTML ran, in either browser.
  for (const page of [alice.page, bob.page]) {
    expect(await page.evaluate(() => (globalThis as any).__xss)).toBeUndefined();
    expect(await page.title()).not.toBe('pwned');
  }
  expect(titleBefore).not.toBe('pwned');

  // Two browsers showed (and bound editors to) every cell: the export is still the notebook itself,
  // markdown byte for byte, outputs and ids included.
  const original = JSON.parse(fs.readFileSync(fixture, 'utf8'));
  const out = await plexus.api('GET', `/api/workspaces/${workspace.id}/export?format=ipynb`);
  const lines = (s: unknown) => ((Array.isArray(s) ? s.join('') : String(s)) || '').split(/(?<=\n)/).filter((x) => x !== '');
  expect(out.metadata).toEqual(original.metadata);
  expect(out.cells).toEqual(original.cells.map((c: any) => ({ ...c, source: lines(c.source) })));

  // Alice edits the last markdown cell in her browser: that cell exports her edit, the others
  // stay byte for byte.
  await alice.page.getByTestId('cell').nth(9).scrollIntoViewIfNeeded();
  const outro = alice.page.getByTestId('cell').nth(9).locator('.ProseMirror');
  await outro.locator('p', { hasText: 'Done.' }).click();
  await alice.page.keyboard.press('End');
  await alice.page.keyboard.insertText(' Reviewed.');
  await expect
    .poll(async () => (await plexus.api('GET', `/api/workspaces/${workspace.id}/export?format=ipynb`)).cells[9].source.join(''))
    .toContain('Done. Reviewed.');
  const edited = await plexus.api('GET', `/api/workspaces/${workspace.id}/export?format=ipynb`);
  expect(edited.cells.slice(0, 9)).toEqual(out.cells.slice(0, 9));
  expect(edited.cells[9].id).toBe('outro');

  // Bob edits the Python cell: its imported outputs stay, marked as older than the code, for both.
  const setupCode = bob.page.getByTestId('cell').nth(1).locator('.cm-content');
  await setupCode.click();
  await bob.page.keyboard.press('Control+End');
  await bob.page.keyboard.insertText('\nprint(1)');
  for (const page of [alice.page, bob.page]) await expect(page.getByTestId('cell').nth(1).getByTestId('imported-stale')).toBeVisible();
  await expect(alice.page.getByTestId('cell').nth(2).getByTestId('imported-stale')).toHaveCount(0);
  if (process.env.PLEXUS_E2E_SCREENSHOT) await alice.page.screenshot({ path: process.env.PLEXUS_E2E_SCREENSHOT, fullPage: true });
});

test('KaTeX is not part of what every workspace loads: it comes the first time math shows', async ({ plexus, actor }) => {
  const plain = await plexus.createWorkspace(`no math ${uniq()}`, [{ kind: 'markdown', source: '# Notes\n\nNo formulas here, $5 and $6 aside.' }, { kind: 'code', source: 'const x = 1;' }]);
  const withMath = await plexus.createWorkspace(`math ${uniq()}`, [{ kind: 'markdown', source: 'Energy: $E = mc^2$ and\n\n$$\\int_0^1 x\\,dx$$' }]);
  const alice = await actor(ALICE);
  const katexRequests: string[] = [];
  alice.page.on('request', (r) => /\/assets\/katex-[^/]*\.(js|css)$/.test(new URL(r.url()).pathname) && katexRequests.push(r.url()));
  await openWorkspace(alice.page, plexus, plain.workspace.id);
  await expect(alice.page.getByTestId('cell')).toHaveCount(2);
  await expect(alice.page.getByTestId('notebook')).toContainText('No formulas here');
  expect(katexRequests).toEqual([]);
  await openWorkspace(alice.page, plexus, withMath.workspace.id);
  const math = alice.page.locator('[data-testid="math"]');
  await expect(math).toHaveCount(2);
  await expect(math.first().locator('.katex')).toBeVisible();
  await expect(alice.page.locator('.math-display .katex-display')).toHaveCount(1);
  await expect(alice.page.locator('.math-pending')).toHaveCount(0);
  expect(katexRequests.some((u) => u.endsWith('.js'))).toBe(true);
});
