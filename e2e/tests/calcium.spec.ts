/**
 * A calcium analysis seen by two people: Alice starts one on the demo movie from the viewer's
 * + Layer menu; Bob's analyses panel shows it running (stage and progress) and then done with its
 * summary, and his viewer gets the ROI layer. Alice deletes an ROI: Bob's ROI list strikes it
 * and his Neuroglancer stops showing that segment; Bob undoes it and Alice's viewer shows it
 * again. A view-only person sees the results but none of the controls.
 * PLEXUS_E2E_SHOTS=<dir> also saves screenshots of the panel (running, done).
 */
import type { Page } from '@playwright/test';
import { ALICE, BOB, VICTOR, expect, openWorkspace, test, uniq } from '../support/plexus.ts';
import { docState, ngState, waitViewer } from '../support/viewer.ts';

const SHOTS = process.env.PLEXUS_E2E_SHOTS;

/**
 * Records, in the page, every job status and progress line its analyses panel shows, and whether
 * the toolbar's toggle said a job was going (a fast job may pass by between two polls).
 */
const recordPanel = (page: Page) =>
  page.evaluate(() => {
    const g = globalThis as any;
    const seen: { statuses: string[]; progress: string[] } = { statuses: [], progress: [] };
    g.__jobsSeen = seen;
    const look = () => {
      const toggle = g.document.querySelector('[data-testid="analyses-toggle"]');
      if (Number(toggle?.getAttribute('data-active') ?? 0) > 0 && !seen.statuses.includes('active')) seen.statuses.push('active');
      for (const el of g.document.querySelectorAll('[data-testid="job"]')) {
        const s = el.getAttribute('data-status');
        if (s && !seen.statuses.includes(s)) seen.statuses.push(s);
      }
      for (const el of g.document.querySelectorAll('[data-testid="job-progress"]')) {
        const t = el.textContent ?? '';
        if (t && !seen.progress.includes(t)) seen.progress.push(t);
      }
    };
    new g.MutationObserver(look).observe(g.document.body, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['data-status', 'data-active'] });
    look();
  });
const panelSeen = (page: Page): Promise<{ statuses: string[]; progress: string[] }> => page.evaluate(() => (globalThis as any).__jobsSeen);

/** The ROI layer as Neuroglancer holds it in the page (segments it shows; undefined = every segment). */
const ngRoiLayer = async (page: Page, name: string) => {
  const layer = ((await ngState(page)).layers ?? []).find((l: { name: string }) => l.name === name);
  return layer ? { segments: (layer.segments ?? []) as string[], ignoreNullVisibleSet: layer.ignoreNullVisibleSet as boolean | undefined } : null;
};

test('Alice analyses the demo movie; Bob follows it, gets the ROI layer, and sees her ROI deletion in his list and viewer; both overrule the soma rule', async ({ plexus, actor }) => {
  test.setTimeout(240_000);
  const { workspace } = await plexus.createWorkspace(`calcium ${uniq()}`);
  const bobLink = await plexus.share(workspace.id, 'editor');
  const alice = await actor(ALICE);
  const bob = await actor(BOB);
  await openWorkspace(alice.page, plexus, workspace.id);
  await openWorkspace(bob.page, plexus, workspace.id, bobLink.token);
  await waitViewer(alice.page);
  await waitViewer(bob.page);

  // No analyses yet: no toggle, no panel. Bob watches his page from now on.
  await expect(bob.page.getByTestId('notebook-toolbar')).toBeVisible();
  await expect(bob.page.getByTestId('analyses-toggle')).toHaveCount(0);
  await recordPanel(bob.page);

  // Alice: + Layer → Analyse on the movie (the other layers are no movies: no Analyse there).
  await alice.page.getByTestId('viewer-add-layer').click();
  const menu = alice.page.getByTestId('viewer-add-layer-menu');
  await expect(menu.locator('[data-testid="viewer-add-volume"][data-layer="calcium-demo/movie"]')).toBeVisible({ timeout: 60_000 });
  await expect(menu.locator('[data-testid="viewer-analyse"][data-layer="calcium-demo/labels"]')).toHaveCount(0);
  await menu.locator('[data-testid="viewer-analyse"][data-layer="calcium-demo/movie"]').click();
  // Her panel opens by itself on the new job.
  await expect(alice.page.getByTestId('analyses-panel').getByTestId('job')).toHaveCount(1);

  // Bob's toolbar shows it going; he opens the panel: by Alice, running with a stage.
  await bob.page.getByTestId('analyses-toggle').click();
  const bobJob = bob.page.getByTestId('job');
  await expect(bobJob).toHaveCount(1);
  await expect(bobJob.getByTestId('job-by')).toContainText('Alice');
  await expect(bobJob.getByTestId('job-title')).toHaveText('Calcium analysis of calcium-demo/movie');
  if (SHOTS) {
    // A stage that counts (frames, ROIs) makes the better picture.
    await expect.poll(async () => (await panelSeen(bob.page)).progress.some((t) => t.includes('/')) || (await bobJob.getAttribute('data-status')) === 'done', { timeout: 60_000 }).toBe(true);
    if ((await bobJob.getAttribute('data-status')) !== 'done') await bob.page.screenshot({ path: `${SHOTS}/analyses-running.png` });
  }
  await expect(bobJob).toHaveAttribute('data-status', 'done', { timeout: 180_000 });
  const seen = await panelSeen(bob.page);
  expect(seen.statuses).toContain('active');
  expect(seen.statuses).toContain('running');
  expect(seen.progress.some((t) => /^(starting|reference image|registration|detection|extraction|traces|writing results|publishing)\b/.test(t)), seen.progress.join(' | ')).toBe(true);

  // Done: the summary, the same for both.
  const summary = bobJob.getByTestId('job-summary');
  const rois = Number(await summary.getAttribute('data-rois'));
  expect(rois).toBeGreaterThanOrEqual(1);
  await expect(summary).toContainText(/ROIs? · \d+ cells? · \d+ events?/);
  await expect(alice.page.getByTestId('job-summary')).toHaveAttribute('data-rois', String(rois));
  const jobId = (await bobJob.getAttribute('data-job-id'))!;
  const result = await plexus.api<{ result: { dataset: string } }>('GET', `/api/workspaces/${workspace.id}/jobs/${jobId}`);

  // Bob's viewer holds the ROI layer, in the document and in Neuroglancer.
  const layerName = 'ROIs (calcium-demo)';
  await expect
    .poll(async () => ((await docState(bob.page)).layers ?? []).find((l: { name: string }) => l.name === layerName)?.source?.url ?? null)
    .toBe(`precomputed://plexus://volumes/${result.result.dataset}/rois`);
  await expect.poll(async () => (await ngRoiLayer(bob.page, layerName)) !== null).toBe(true);

  // Both open the ROI list; Alice deletes the first ROI.
  await alice.page.getByTestId('job-rois-toggle').click();
  await bob.page.getByTestId('job-rois-toggle').click();
  const aliceRows = alice.page.getByTestId('roi-row');
  await expect(aliceRows).toHaveCount(rois);
  const roi = (await aliceRows.first().getAttribute('data-roi'))!;
  await aliceRows.first().getByTestId('roi-delete').click();

  // Bob: struck through in his list, gone from his Neuroglancer layer (the others still shown).
  const bobRow = bob.page.locator(`[data-testid="roi-row"][data-roi="${roi}"]`);
  await expect(bobRow).toHaveAttribute('data-state', 'deleted');
  await expect(bobRow.getByTestId('roi-note')).toContainText('deleted by Alice');
  const others = Array.from({ length: rois }, (_, i) => String(i + 1)).filter((id) => id !== roi);
  await expect.poll(async () => (await ngRoiLayer(bob.page, layerName))?.segments.slice().sort()).toEqual(others.slice().sort());
  if (others.length === 0) expect((await ngRoiLayer(bob.page, layerName))?.ignoreNullVisibleSet).toBe(false);
  if (SHOTS) {
    await bobRow.scrollIntoViewIfNeeded();
    await bob.page.screenshot({ path: `${SHOTS}/analyses-done.png` });
  }

  // Bob takes it back: Alice's list and viewer show every ROI again.
  await bobRow.getByTestId('roi-restore').click();
  await expect(alice.page.locator(`[data-testid="roi-row"][data-roi="${roi}"]`)).toHaveAttribute('data-state', 'live');
  await expect.poll(async () => (await ngRoiLayer(alice.page, layerName))?.segments).toEqual([]);
  await expect.poll(async () => (await ngRoiLayer(alice.page, layerName))?.ignoreNullVisibleSet).toBeUndefined();

  // Alice merges one ROI into another: Bob's Neuroglancer draws them as one segment.
  let mergedCells = 0;
  if (rois >= 3) {
    const [a, b] = ['3', '2'];
    if ((await alice.page.locator(`[data-testid="roi-row"][data-roi="${a}"]`).getByTestId('roi-cell').getAttribute('data-cell')) === 'true') mergedCells = 1;
    await alice.page.locator(`[data-testid="roi-row"][data-roi="${a}"]`).getByTestId('roi-merge').selectOption(b);
    await expect(bob.page.locator(`[data-testid="roi-row"][data-roi="${a}"]`)).toHaveAttribute('data-state', 'merged');
    await expect(bob.page.locator(`[data-testid="roi-row"][data-roi="${a}"]`).getByTestId('roi-note')).toContainText(`merged into #${b} by Alice`);
    await expect.poll(async () => ((await ngState(bob.page)).layers ?? []).find((l: { name: string }) => l.name === layerName)?.equivalences).toEqual([[b, a]]);
    expect((await ngRoiLayer(bob.page, layerName))?.segments).not.toContain(a);
  }

  // Bob overrules the soma rule for the first ROI; Alice sees the new decision, marked as a person's.
  const firstRow = (p: typeof bob.page) => p.locator(`[data-testid="roi-row"][data-roi="${roi}"]`).getByTestId('roi-cell');
  const was = (await firstRow(bob.page).getAttribute('data-cell')) === 'true';
  await firstRow(bob.page).getByTestId('roi-classify').click();
  await expect(firstRow(alice.page)).toHaveAttribute('data-cell', was ? 'false' : 'true');
  await expect(firstRow(alice.page).getByTestId('roi-classify')).toHaveAttribute('title', new RegExp(`Marked ${was ? 'not a cell' : 'a cell'} by Bob; the pipeline said ${was ? 'cell' : 'not a cell'}`));
  // Alice clicks again: back to the pipeline's decision for both.
  await firstRow(alice.page).getByTestId('roi-classify').click();
  await expect(firstRow(bob.page)).toHaveAttribute('data-cell', was ? 'true' : 'false');
  await expect(firstRow(bob.page).getByTestId('roi-classify')).not.toHaveClass(/roi-overruled/);

  // Query cells: a named SQL cell over the ROI table, run at once, lists the cells — the
  // pipeline's, less the one merged into another (the server wrote the edits into the table).
  const cells = Number(await summary.getAttribute('data-cells')) - mergedCells;
  await alice.page.getByTestId('job-query').click();
  const cell = alice.page.locator('[data-testid="cell"][data-kind="sql"]');
  await expect(cell).toHaveCount(1);
  await expect(cell.locator('.cm-content')).toHaveText('SELECT * FROM calcium_demo_rois WHERE is_cell = 1');
  await expect(cell.getByTestId('cell-status')).toHaveAttribute('data-state', 'done', { timeout: 60_000 });
  await expect(cell.getByTestId('table-range')).toContainText(cells > 0 ? `of ${cells.toLocaleString('en')}` : 'no rows');

  // Figure: a code cell drawing the ROIs on the mean image, shown as a picture to Alice and Bob.
  await alice.page.getByTestId('job-figure').click();
  const figCell = alice.page.locator('[data-testid="cell"][data-kind="code"]').filter({ hasText: 'calcium.figure' });
  await expect(figCell).toHaveCount(1);
  await expect(figCell.getByTestId('cell-status')).toHaveAttribute('data-state', 'done', { timeout: 60_000 });
  for (const p of [alice.page, bob.page]) {
    const img = p.locator('[data-testid="cell"][data-kind="code"]').filter({ hasText: 'calcium.figure' }).getByTestId('output-image');
    await expect(img).toHaveAttribute('src', /^data:image\/svg\+xml/);
    await expect.poll(() => img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBeGreaterThan(200);
  }

  // A view-only person sees the result and the ROIs, but no controls.
  const viewLink = await plexus.share(workspace.id, 'viewer');
  const victor = await actor(VICTOR);
  await openWorkspace(victor.page, plexus, workspace.id, viewLink.token);
  await victor.page.getByTestId('analyses-toggle').click();
  await expect(victor.page.getByTestId('job')).toHaveAttribute('data-status', 'done');
  await victor.page.getByTestId('job-rois-toggle').click();
  await expect(victor.page.getByTestId('roi-row')).toHaveCount(rois);
  for (const id of ['roi-delete', 'roi-merge', 'roi-classify', 'job-figure', 'job-stop', 'job-show-rois', 'job-query', 'viewer-analyse']) await expect(victor.page.getByTestId(id)).toHaveCount(0);
});
