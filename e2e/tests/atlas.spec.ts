/**
 * The atlas in two browsers, with the real server computing the coordinates: a CSV with three
 * clear numeric clusters is dropped on the notebook, Alice makes a PCA map of it, both see it
 * drawn (status done, how it was made, cluster labels), Alice brushes a rectangle around one
 * cluster with the mouse, Bob sees the selection with its count and who made it, and Bob's SQL
 * cell reads the selected rows from `<table>_map_selection`; Alice lassos another cluster and
 * Bob's cell re-runs by itself with the new rows. A second map (two columns as x/y):
 * Escape cancels a lasso, Shift+drag brushes, a saved category is shown on the map by Bob for
 * everyone, hovers show as rings for the others, Bob follows Alice's camera, a view-only person
 * sees it all without tools. Points are found on screen through `window.__plexusAtlas`.
 */
import type { Page } from '@playwright/test';
import { cellLocator, expect, openWorkspace, test, uniq, VICTOR } from '../support/plexus.ts';
import { aliceAndBob, dropFile, output } from '../support/notebook.ts';
import { CLUSTER_ROWS as ROWS, clusterCsv as csv, createMap, mapDrawn, openAtlas } from '../support/atlas.ts';

/** The page rectangle (client coordinates) around the points of the rows `rows % 3 === cluster`, from the map's own projection. */
async function clusterBox(page: Page, cluster: number) {
  return page.evaluate((cluster) => {
    const h = (globalThis as any).__plexusAtlas;
    const p = h.points();
    const r = h.canvas.getBoundingClientRect();
    const mine: number[][] = [];
    const others: number[][] = [];
    p.row.forEach((row: number, i: number) => (row % 3 === cluster ? mine : others).push(h.mapToScreen(p.x[i], p.y[i])));
    const xs = mine.map((q) => q[0]!);
    const ys = mine.map((q) => q[1]!);
    const box = { x0: Math.min(...xs) - 10, y0: Math.min(...ys) - 10, x1: Math.max(...xs) + 10, y1: Math.max(...ys) + 10 };
    const strays = others.filter((q) => q[0]! >= box.x0 && q[0]! <= box.x1 && q[1]! >= box.y0 && q[1]! <= box.y1).length;
    const inside = box.x0 >= 0 && box.y0 >= 0 && box.x1 <= r.width && box.y1 <= r.height;
    return { x0: r.left + box.x0, y0: r.top + box.y0, x1: r.left + box.x1, y1: r.top + box.y1, n: mine.length, strays, inside };
  }, cluster);
}

/** clusterBox once the map has settled (layout and camera): the same twice in a row, and on screen. */
async function settledClusterBox(page: Page, cluster: number) {
  let last = '';
  let box: Awaited<ReturnType<typeof clusterBox>> | null = null;
  await expect
    .poll(async () => {
      box = await clusterBox(page, cluster);
      const key = JSON.stringify(box);
      const same = key === last && box.inside;
      last = key;
      return same;
    })
    .toBe(true);
  return box!;
}

test('a shared map: Alice brushes a cluster, Bob sees the selection and queries it in SQL', async ({ plexus, actor }) => {
  const tag = uniq();
  const table = `blobs_${tag}`;
  const { cellIds, alice, bob } = await aliceAndBob(plexus, actor, `atlas ${tag}`, [{ kind: 'sql', source: `SELECT count(*) AS n, min(kind) AS kind FROM ${table}_map_selection`, name: 'picked' }]);
  const [sql] = cellIds as [string];
  await dropFile(alice.page, `${table}.csv`, csv());
  await expect(alice.page.getByTestId('upload')).toHaveAttribute('data-status', 'done');

  // Room for the atlas at 1,400 px: the viewer panel goes (it has nothing to show here).
  await openAtlas(alice.page, bob.page);

  // Alice makes a PCA map of the table (all numeric columns but the id).
  const ap = alice.page;
  await createMap(ap, table, { method: 'pca', exclude: ['id'], colorBy: 'kind' });

  // Both see it computed and drawn.
  for (const a of [alice, bob]) {
    await expect(a.page.getByTestId('atlas-map-tab')).toHaveCount(1);
    await expect(a.page.getByTestId('atlas-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
    await expect(a.page.getByTestId('atlas-how')).toContainText(/PCA/i);
    await expect(a.page.getByTestId('atlas-canvas')).toHaveAttribute('data-points', String(ROWS));
    await expect(a.page.getByTestId('atlas-webgl-error')).toHaveCount(0);
    await expect(a.page.getByTestId('atlas-label').first()).toBeVisible();
    await expect(a.page.getByTestId('atlas-legend')).toHaveAttribute('data-kind', 'categorical');
  }

  // Alice drags a rectangle around the first cluster (Rectangle tool, mouse drag on the canvas).
  const box = await settledClusterBox(ap, 0);
  expect(box.inside, 'the cluster is on screen').toBe(true);
  expect(box.strays, 'no point of another cluster inside the rectangle').toBe(0);
  await ap.getByTestId('atlas-tool-rect').click();
  await ap.mouse.move(box.x0, box.y0);
  await ap.mouse.down();
  await ap.mouse.move((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2, { steps: 6 });
  // Nothing is shared while the mouse is down.
  const shared = () => ap.evaluate(() => Object.values((globalThis as any).__plexus.doc.getMap('atlas').toJSON()).some((m: any) => m.selection));
  expect(await shared()).toBe(false);
  await ap.mouse.move(box.x1, box.y1, { steps: 6 });
  await ap.mouse.up();

  const bobSel = bob.page.getByTestId('atlas-selection');
  await expect(ap.getByTestId('atlas-selection')).toHaveAttribute('data-count', String(box.n));
  await expect(bobSel).toHaveAttribute('data-count', String(box.n));
  await expect(bobSel).toContainText('selected by Alice');
  await expect(bobSel).toContainText(`${table}_map_selection`);
  await expect(bob.page.getByTestId('atlas-outline')).toBeVisible();

  // Bob reads the brushed rows in SQL (the server writes the selection table after the brush).
  const cells = () => output(bob.page, sql, 'output-table').locator('tbody td');
  await expect(async () => {
    await cellLocator(bob.page, sql).getByTestId('cell-run').click();
    await expect(cells().first()).toHaveText(String(box.n), { timeout: 5_000 });
  }).toPass({ timeout: 60_000 });
  await expect(cells().nth(1)).toHaveText('north');

  // Alice lassos another cluster: Bob's cell re-runs by itself over the new selection.
  const east = await settledClusterBox(ap, 1);
  expect(east.strays).toBe(0);
  await ap.getByTestId('atlas-tool-lasso').click();
  await ap.mouse.move(east.x0, east.y0);
  await ap.mouse.down();
  for (const [x, y] of [[east.x1, east.y0], [east.x1, east.y1], [east.x0, east.y1], [east.x0, east.y0 + 2]] as const) await ap.mouse.move(x, y, { steps: 4 });
  await ap.mouse.up();
  await expect(bob.page.getByTestId('atlas-selection')).toHaveAttribute('data-kind', 'lasso');
  await expect(cells().nth(1)).toHaveText('east', { timeout: 60_000 });
  await expect(cells().first()).toHaveText(String(east.n));

  // Bob clears it (Delete with the panel focused): gone for Alice too.
  await bob.page.getByTestId('atlas-canvas').click({ position: { x: 4, y: 4 } });
  await bob.page.keyboard.press('Delete');
  await expect(ap.getByTestId('atlas-selection')).toHaveCount(0);
});

/** Client position of the point of `row` on a page's map. */
async function pointOnPage(page: Page, row: number): Promise<[number, number]> {
  return page.evaluate((row) => {
    const h = (globalThis as any).__plexusAtlas;
    const p = h.points();
    const i = p.row.indexOf(row);
    const s = h.mapToScreen(p.x[i], p.y[i]);
    const r = h.canvas.getBoundingClientRect();
    return [r.left + s[0], r.top + s[1]] as [number, number];
  }, row);
}

/** Screen distance between the points of rows 0 and 1 (it grows when the camera zooms in). */
const spread = (page: Page) =>
  page.evaluate(() => {
    const h = (globalThis as any).__plexusAtlas;
    const p = h.points();
    const [a, b] = [0, 1].map((row) => {
      const i = p.row.indexOf(row);
      return h.mapToScreen(p.x[i], p.y[i]);
    });
    return Math.hypot(b[0] - a[0], b[1] - a[1]);
  });

test('categories, highlight, hover and follow on a map of two columns; Escape cancels a brush', async ({ plexus, actor }) => {
  const tag = uniq();
  const table = `spots_${tag}`;
  const { workspace, alice, bob } = await aliceAndBob(plexus, actor, `atlas two ${tag}`, []);
  await dropFile(alice.page, `${table}.csv`, csv());
  await expect(alice.page.getByTestId('upload')).toHaveAttribute('data-status', 'done');
  await openAtlas(alice.page, bob.page);
  const ap = alice.page;
  const bp = bob.page;
  await createMap(ap, table, { method: 'columns', x: 'a', y: 'b' });
  await mapDrawn(ROWS, ap, bp);

  // Escape while drawing a lasso: nothing is shared.
  const box = await settledClusterBox(ap, 1);
  expect(box.strays).toBe(0);
  await ap.getByTestId('atlas-tool-lasso').click();
  await ap.mouse.move(box.x0, box.y0);
  await ap.mouse.down();
  await ap.mouse.move(box.x1, box.y0, { steps: 4 });
  await ap.mouse.move(box.x1, box.y1, { steps: 4 });
  await ap.keyboard.press('Escape');
  await ap.mouse.move(box.x0, box.y1, { steps: 4 });
  await ap.mouse.up();
  // Shift+drag (in the Pan tool) brushes a rectangle.
  await ap.getByTestId('atlas-tool-pan').click();
  await ap.mouse.move(box.x0, box.y0);
  await ap.keyboard.down('Shift');
  await ap.mouse.down();
  await ap.mouse.move(box.x1, box.y1, { steps: 8 });
  await ap.mouse.up();
  await ap.keyboard.up('Shift');
  await expect(bp.getByTestId('atlas-selection')).toHaveAttribute('data-count', '30');
  await expect(bp.getByTestId('atlas-selection')).toHaveAttribute('data-kind', 'rect');

  // Alice saves the selection as a category; Bob shows it on the map for everyone.
  await ap.getByTestId('atlas-selection-save').click();
  await ap.getByTestId('atlas-category-name').fill('east blob');
  await ap.getByTestId('atlas-category-note').fill('the cluster on the right');
  await ap.getByTestId('atlas-category-save').click();
  const cat = bp.locator('[data-testid="atlas-category"][data-name="east blob"]');
  await expect(cat).toHaveAttribute('data-count', '30');
  await expect(cat).toContainText('the cluster on the right');
  await cat.getByTestId('atlas-category-show').click();
  await expect(ap.getByTestId('atlas-highlight')).toContainText('east blob');
  await expect(ap.getByTestId('atlas-highlight')).toContainText('by Bob');
  await expect(ap.getByTestId('atlas-highlight')).toHaveAttribute('data-count', '30');

  // Hover: Alice's tooltip shows the row; Bob sees her ring on that point.
  const [hx, hy] = await pointOnPage(ap, 4);
  await ap.mouse.move(hx + 25, hy + 25);
  await ap.mouse.move(hx, hy, { steps: 4 });
  // Points of a cluster overlap: the hovered one is row 4 or a neighbour of the same cluster.
  const tip = ap.getByTestId('atlas-tooltip');
  await expect(tip).toContainText(/^row \d+/);
  await expect(tip).toContainText('east');
  const hovered = Number(/^row (\d+)/.exec((await tip.textContent()) ?? '')![1]);
  expect(hovered % 3).toBe(1);
  const ring = bp.getByTestId('atlas-peer-hover');
  await expect(ring).toHaveAttribute('data-name', 'Alice');
  await expect(ring).toHaveAttribute('data-row', String(hovered));

  // Bob follows Alice's camera: she zooms in, his view zooms with hers.
  const before = await spread(bp);
  await bp.locator('[data-testid="atlas-person"][data-name="Alice"]').getByTestId('atlas-follow').click();
  await ap.mouse.wheel(0, -600);
  await expect.poll(() => spread(bp)).toBeGreaterThan(before * 1.5);

  // Colour by a numeric column: the legend shows its range, for Bob too.
  await ap.getByTestId('atlas-color').selectOption('c');
  await expect(bp.getByTestId('atlas-legend')).toHaveAttribute('data-kind', 'numeric');

  // Removing the category removes it for everyone.
  await ap.locator('[data-testid="atlas-category"][data-name="east blob"]').getByTestId('atlas-category-remove').click();
  await expect(bp.getByTestId('atlas-category')).toHaveCount(0);

  // Someone with a view link sees the map and the selection, and has nothing to brush or clear with.
  const link = await plexus.share(workspace.id, 'viewer');
  const victor = await actor(VICTOR);
  await openWorkspace(victor.page, plexus, workspace.id, link.token);
  await victor.page.getByTestId('atlas-toggle').click();
  await expect(victor.page.getByTestId('atlas-canvas')).toHaveAttribute('data-points', String(ROWS));
  await expect(victor.page.getByTestId('atlas-selection')).toHaveAttribute('data-count', '30');
  await expect(victor.page.getByTestId('atlas-tool-rect')).toHaveCount(0);
  await expect(victor.page.getByTestId('atlas-selection-clear')).toHaveCount(0);
  await expect(victor.page.getByTestId('atlas-new-map')).toHaveCount(0);
});
