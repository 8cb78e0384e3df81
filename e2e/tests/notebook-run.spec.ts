/**
 * Running cells in the browser, with the real server and kernel: a run requested by one person
 * reaches everyone (status, count, who asked, outputs of dependents), edits make outputs stale
 * for both, errors point at their line, Interrupt stops an endless loop, viewers see but cannot run.
 */
import { ALICE, VICTOR, cellLocator, codeContent, expect, openWorkspace, test, uniq } from '../support/plexus.ts';
import { aliceAndBob, cellState, output, setCellCode, textOutputs } from '../support/notebook.ts';

test('alice edits and runs the upstream cell; bob sees the dependent outputs update', async ({ plexus, actor }) => {
  const { cellIds, alice, bob } = await aliceAndBob(plexus, actor, `run ${uniq()}`, [
    { kind: 'code', source: 'const x = 1;' },
    { kind: 'code', source: 'const y = x * 10;\nconsole.log("y is", y);\ny' },
    { kind: 'code', source: 'y + 1' },
  ]);
  const [root, mid, leaf] = cellIds as [string, string, string];
  await expect(alice.page.getByTestId('kernel-status')).not.toHaveAttribute('data-state', 'offline');

  await alice.page.getByTestId('kernel-run-all').click();
  await expect.poll(() => textOutputs(bob.page, leaf)).toEqual(['11']);
  await expect(output(bob.page, mid, 'output-stream')).toHaveText('y is 10\n');

  // Alice changes the root and runs it with Ctrl+Enter; bob does nothing.
  await setCellCode(alice.page, root, 'const x = 5;');
  await alice.page.keyboard.press('Control+Enter');
  await expect.poll(() => textOutputs(bob.page, leaf)).toEqual(['51']);
  await expect(output(bob.page, mid, 'output-text')).toHaveText('50');
  await expect(output(bob.page, mid, 'output-stream')).toHaveText('y is 50\n');
  for (const id of [root, mid, leaf]) {
    await expect(cellLocator(bob.page, id).getByTestId('cell-status')).toHaveAttribute('data-state', 'done');
    await expect(cellLocator(bob.page, id).getByTestId('cell-by')).toHaveText('by Alice');
    await expect(cellLocator(bob.page, id).getByTestId('cell-stale')).toHaveCount(0);
  }
  await expect(cellLocator(bob.page, leaf).getByTestId('cell-count')).toHaveText(/^\[\d+\]$/);
  await expect(cellLocator(bob.page, leaf).getByTestId('cell-duration')).toHaveText(/\d+(\.\d)? m?s/);

  // Shift+Enter in bob's root cell runs it and moves the caret to the next cell.
  await setCellCode(bob.page, root, 'const x = 7;');
  await bob.page.keyboard.press('Shift+Enter');
  await expect.poll(() => textOutputs(alice.page, leaf)).toEqual(['71']);
  await expect(cellLocator(alice.page, root).getByTestId('cell-by')).toHaveText('by Bob');
  await expect.poll(() => bob.page.evaluate(() => (globalThis as any).document.activeElement?.closest('[data-testid="cell"]')?.dataset.cellId)).toBe(mid);
});

test('stale: editing a cell after its run marks the output stale for both people', async ({ plexus, actor }) => {
  const { cellIds, alice, bob } = await aliceAndBob(plexus, actor, `stale ${uniq()}`, [
    { kind: 'code', source: 'const a = 2;\na' },
    { kind: 'code', source: 'a * 3' },
  ]);
  const [root, dep] = cellIds as [string, string];

  await cellLocator(alice.page, root).getByTestId('cell-run').click();
  await expect.poll(() => textOutputs(bob.page, dep)).toEqual(['6']);
  for (const p of [alice.page, bob.page]) await expect(cellLocator(p, root).getByTestId('cell-stale')).toHaveCount(0);

  // Bob edits the root without running it: its output no longer matches, for both.
  await codeContent(bob.page, root).click();
  await bob.page.keyboard.press('Control+End');
  await bob.page.keyboard.insertText(' // changed');
  for (const p of [alice.page, bob.page]) {
    await expect(cellLocator(p, root).getByTestId('cell-stale')).toBeVisible();
    await expect(cellLocator(p, root).getByTestId('cell-stale')).toHaveAttribute('title', /source changed/);
    await expect(cellLocator(p, root).getByTestId('cell-outputs')).toHaveClass(/is-stale/);
  }
  // Running it again makes it fresh everywhere.
  const depCount = async () => Number(((await cellLocator(alice.page, dep).getByTestId('cell-count').textContent()) ?? '').replace(/\D/g, '') || 0);
  const depRuns = await depCount();
  await cellLocator(alice.page, root).getByTestId('cell-run').click();
  for (const p of [alice.page, bob.page]) await expect(cellLocator(p, root).getByTestId('cell-stale')).toHaveCount(0);
  // Its dependent runs again too: let that run end first — a restart cancels a running cell, and
  // a cancelled run has no output to mark stale (seen on a loaded machine).
  await expect.poll(depCount, { timeout: 60_000 }).toBeGreaterThan(depRuns);
  await expect(cellLocator(alice.page, dep).getByTestId('cell-status')).toHaveAttribute('data-state', 'done', { timeout: 60_000 });
  // Restart: the kernel forgets every value and marks the outputs stale.
  await alice.page.getByTestId('kernel-restart').click();
  for (const p of [alice.page, bob.page]) await expect(cellLocator(p, dep).getByTestId('cell-stale')).toBeVisible({ timeout: 60_000 });
});

test('errors: a throwing cell shows the error with its line; an endless loop is stopped by Interrupt', async ({ plexus, actor }) => {
  const { workspace, cellIds } = await plexus.createWorkspace(`errors ${uniq()}`, [
    { kind: 'code', source: 'const n = 1;\nconst m = n.nope.deeper;' },
    { kind: 'code', source: 'let i = 0;\nwhile (true) { i++; }' },
  ]);
  const [bad, loop] = cellIds as [string, string];
  const alice = await actor(ALICE);
  await openWorkspace(alice.page, plexus, workspace.id);

  await cellLocator(alice.page, bad).getByTestId('cell-run').click();
  await expect(cellLocator(alice.page, bad).getByTestId('cell-status')).toHaveAttribute('data-state', 'error');
  const err = output(alice.page, bad, 'output-error');
  await expect(err).toContainText('TypeError');
  await expect(err).toContainText('deeper');
  await expect(err.getByTestId('error-line')).toContainText('line 2');
  // The line is marked in the editor too.
  await expect(cellLocator(alice.page, bad).locator('.cm-line.cm-error-line')).toHaveText('const m = n.nope.deeper;');

  await cellLocator(alice.page, loop).getByTestId('cell-run').click();
  await expect(cellLocator(alice.page, loop).getByTestId('cell-status')).toHaveAttribute('data-state', 'running');
  await expect(cellLocator(alice.page, loop).getByTestId('cell-elapsed')).toBeVisible();
  await expect(alice.page.getByTestId('kernel-status')).toHaveAttribute('data-state', 'busy');
  await alice.page.getByTestId('kernel-interrupt').click();
  await expect(cellLocator(alice.page, loop).getByTestId('cell-status')).toHaveAttribute('data-state', 'cancelled', { timeout: 60_000 });
  // The error says what happened once (not "Interrupted: interrupted").
  await expect(output(alice.page, loop, 'output-error')).toContainText('Interrupted: the run was stopped before it finished');
  await expect(alice.page.getByTestId('kernel-status')).toHaveAttribute('data-state', 'idle', { timeout: 60_000 });
  expect(await cellState(alice.page, bad)).toBe('error');
});

test('viewers see outputs and status but no run or edit controls', async ({ plexus, actor }) => {
  const { workspace, cellIds } = await plexus.createWorkspace(`viewer ${uniq()}`, [
    { kind: 'code', source: '40 + 2' },
    { kind: 'sql', source: 'SELECT 1 AS one', name: 'ones' },
  ]);
  const [cell, sql] = cellIds as [string, string];
  const viewLink = await plexus.share(workspace.id, 'viewer');
  const alice = await actor(ALICE);
  const victor = await actor(VICTOR);
  await openWorkspace(alice.page, plexus, workspace.id);
  await openWorkspace(victor.page, plexus, workspace.id, viewLink.token);
  await alice.page.getByTestId('kernel-run-all').click();
  await expect.poll(() => textOutputs(victor.page, cell)).toEqual(['42']);
  await expect(output(victor.page, sql, 'output-table')).toContainText('one');
  await expect(cellLocator(victor.page, cell).getByTestId('cell-status')).toHaveAttribute('data-state', 'done');
  await expect(victor.page.getByTestId('kernel-status')).toBeVisible();
  await expect(cellLocator(victor.page, sql).getByTestId('sql-name-label')).toHaveText('ones');
  for (const id of ['cell-run', 'kernel-run-all', 'kernel-interrupt', 'kernel-restart', 'sql-name', 'notebook-import', 'data-dropzone'])
    await expect(victor.page.getByTestId(id)).toHaveCount(0);
  await expect(victor.page.getByTestId('notebook-export-ipynb')).toBeVisible();
});
