/**
 * A long line in a code cell wraps inside the cell: no sideways scrolling that would carry the code
 * under the line numbers, and the line numbers stay in their gutter.
 */
import { ALICE, expect, openWorkspace, test, uniq } from '../support/plexus.ts';

test('long lines wrap in code cells; the gutter keeps its place', async ({ plexus, actor }) => {
  const long = `const columns = [${Array.from({ length: 40 }, (_, i) => `'column_${i}'`).join(', ')}];`;
  const { workspace, cellIds } = await plexus.createWorkspace(`wrap ${uniq()}`, [{ kind: 'code', source: `${long}\ncolumns.length` }]);
  const alice = await actor(ALICE);
  await alice.page.setViewportSize({ width: 1400, height: 900 });
  await openWorkspace(alice.page, plexus, workspace.id);
  const cell = alice.page.locator(`[data-cell-id="${cellIds[0]}"]`);
  const scroller = cell.locator('.cm-scroller');
  await expect(cell.locator('.cm-line').first()).toContainText('column_39');
  const m = await scroller.evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth }));
  expect(m.scrollWidth).toBeLessThanOrEqual(m.clientWidth + 1);
  // The first line takes several visual rows; the second line's number sits beside it, in the gutter.
  const first = (await cell.locator('.cm-line').first().boundingBox())!;
  const lineHeight = (await cell.locator('.cm-line').nth(1).boundingBox())!.height;
  expect(first.height).toBeGreaterThan(2 * lineHeight);
  const gutter = (await cell.locator('.cm-gutters').boundingBox())!;
  const content = (await cell.locator('.cm-content').boundingBox())!;
  expect(gutter.x + gutter.width).toBeLessThanOrEqual(content.x + 1);
});
