/**
 * Data in the browser, with the real server and kernel: a CSV generated here is dropped on the
 * notebook, listed for everyone, queried by an SQL cell (a table) and drawn by JS cells (Vega-Lite
 * and Observable Plot charts); a malformed file is refused with the server's reason and registers
 * nothing; large results page over HTTP.
 */
import { getTable } from '@plexus/shared';
import { ALICE, expect, openWorkspace, test, uniq } from '../support/plexus.ts';
import { aliceAndBob, dropFile, output, pickFile } from '../support/notebook.ts';

test('an SQL cell over a dropped CSV renders a table; JS cells draw charts from it', async ({ plexus, actor }) => {
  const tag = uniq();
  const table = `trials_${tag}`;
  const csv = ['trial,rate,label', ...Array.from({ length: 120 }, (_, i) => `${i + 1},${((i * 7) % 13) / 2},g${i % 3}`)].join('\n') + '\n';
  const { cellIds, alice, bob } = await aliceAndBob(plexus, actor, `data ${tag}`, [
    { kind: 'sql', source: `SELECT trial, rate, label FROM ${table} WHERE trial <= 100 ORDER BY trial`, name: 'trials' },
    { kind: 'code', source: "vegalite({ data: { values: trials }, mark: 'point', encoding: { x: { field: 'trial', type: 'quantitative' }, y: { field: 'rate', type: 'quantitative' } } })" },
    { kind: 'code', source: "plot({ marks: [{ mark: 'dot', data: trials, options: { x: 'trial', y: 'rate' } }] })" },
  ]);
  const [sql, vl, pl] = cellIds as [string, string, string];

  await dropFile(alice.page, `${table}.csv`, csv);
  await expect(alice.page.getByTestId('upload')).toHaveAttribute('data-status', 'done');
  // Bob sees the table in his data panel, with its columns, rows and uploader.
  await bob.page.getByTestId('data-toggle').click();
  const row = bob.page.locator(`[data-testid="data-table"][data-name="${table}"]`);
  await expect(row.getByTestId('data-table-rows')).toContainText('120 rows');
  // Shown by the name alice uses here (the owner link's token carries no name).
  await expect(row.getByTestId('data-table-rows')).toContainText('by Alice');
  await expect(row.getByTestId('data-columns')).toContainText('rate DOUBLE');
  await row.getByTestId('data-table-open').click();
  await expect(row.getByTestId('table-range')).toHaveText('rows 1–50 of 120');
  await row.getByTestId('table-next').click();
  await expect(row.getByTestId('table-range')).toHaveText('rows 51–100 of 120');

  await alice.page.getByTestId('kernel-run-all').click();
  const t = output(bob.page, sql, 'output-table');
  await expect(t.getByTestId('table-range')).toHaveText('rows 1–50 of 100');
  await expect(t.locator('tbody tr')).toHaveCount(50);
  await expect(t.locator('thead')).toContainText('rate');
  // Further rows come from the server by result id.
  await t.getByTestId('table-next').click();
  await expect(t.getByTestId('table-range')).toHaveText('rows 51–100 of 100');
  await expect(t.locator('tbody tr').first().locator('td').first()).toHaveText('51');

  for (const [id, format] of [[vl, 'vega-lite'], [pl, 'plot']] as const) {
    const chart = output(bob.page, id, 'output-chart');
    await expect(chart).toHaveAttribute('data-format', format);
    await expect(chart).toHaveAttribute('data-rendered', 'true', { timeout: 60_000 });
    await expect(chart.getByTestId('chart-error')).toHaveCount(0);
    // One mark per row: 100 points.
    await expect(chart.locator('svg').first()).toBeVisible();
    expect(await chart.locator('svg circle, svg path[role="graphics-symbol"], svg .mark-symbol path').count()).toBeGreaterThanOrEqual(100);
  }
});

test('a malformed upload shows the server’s reason and registers nothing', async ({ plexus, actor }) => {
  const { workspace } = await plexus.createWorkspace(`bad upload ${uniq()}`);
  const alice = await actor(ALICE);
  await openWorkspace(alice.page, plexus, workspace.id);
  const name = `broken_${uniq()}`;
  await pickFile(alice.page, `${name}.json`, '{"id": 1, "kind": [unclosed', 'application/json');
  const up = alice.page.getByTestId('upload');
  await expect(up).toHaveAttribute('data-status', 'error');
  await expect(up.getByTestId('upload-error')).toContainText(/could not be (read|imported)/);
  await expect(alice.page.getByTestId('data-table')).toHaveCount(0);
  await expect(alice.page.getByTestId('data-empty')).toBeVisible();
  // Not in the document either (read by a fresh client).
  expect(await plexus.withDoc(workspace.id, (doc) => getTable(doc, name))).toBeNull();
  await expect(alice.page.getByTestId('data-toggle')).toHaveText('Data (0)');
  // A file type the server does not import is refused with its reason too.
  await up.getByTestId('upload-dismiss').click();
  await pickFile(alice.page, 'notes.docx', 'hello', 'application/octet-stream');
  await expect(alice.page.getByTestId('upload-error')).toContainText('upload CSV, TSV, Parquet or JSON');
});
