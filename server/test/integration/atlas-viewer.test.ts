/**
 * The atlas and the viewer on a real server (kernel, DuckDB, job processes), over a small
 * simulated recording:
 * - The seeded demo: its ground-truth neurons are table `demo_neurons` (ids = the `labels`
 *   segments), a map of them reaches done by itself, a markdown cell explains the atlas and the SQL
 *   cell after it counts the selection; brushing the map re-runs that cell for everyone and lights
 *   the selected neurons up in the viewer over `labels` (which stays hidden).
 * - A calcium analysis's ROI table mapped: a brush shows exactly the ROIs whose rows are inside it
 *   (computed here independently) on a highlight layer the server writes in one transaction, the
 *   ROI layer untouched; an ROI deleted by a person leaves the highlight in the deletion's own
 *   transaction and stays hidden after the server rewrote table, map and selection; a category
 *   shown on the map joins in magenta; clearing the selection, then the highlight, clears the
 *   viewer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  ATLAS_HIGHLIGHT_COLOR, ATLAS_SELECTION_COLOR, applyRoiEdit, cellSource, createAtlasMap, findRoiLayer, getAtlasMap, getTable, jobRoiIds, listCells, readJob,
  readLayer, requestRun, saveAtlasCategory, setAtlasHighlight, setAtlasSelection, type AtlasCoords, type AtlasSelection, type Job,
} from '@plexus/shared';
import { api, waitFor, type HpClient } from '@plexus/testkit';
import { alice, aliceOrigin, client, startKernelServer, waitRun } from '@plexus/testkit/kernel';
import type { PlexusServer } from '../../src/app.ts';
import { DEMO_MAP_ID, DEMO_NEURONS_TABLE } from '../../src/demo-atlas.ts';
import { demoLayerSource } from '../../src/demo-viewer.ts';
import { SMALL_RECORDING } from '../fixtures/small-recording.ts';

let s: PlexusServer;
const clients: HpClient[] = [];

beforeAll(async () => {
  // The seeded demo on the small recording (the server generates it); jobNice 0: a busy machine.
  s = await startKernelServer({ jobNice: 0, seedDemo: true, demoData: SMALL_RECORDING });
});
afterAll(async () => {
  clients.forEach((c) => c.destroy());
  await s.close();
});

const query = async (ws: string, sql: string) => {
  const r = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/data/query`, { sql, limit: 1000 });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json.rows as Array<Record<string, any>>;
};
const waitCoords = (c: HpClient, id: string, extra: (co: AtlasCoords) => boolean = () => true) =>
  waitFor(() => {
    const co = getAtlasMap(c.doc, id)?.coords;
    if (co?.status === 'error') throw new Error(co.error);
    return co?.status === 'done' && extra(co) ? co : null;
  }, { timeout: 180_000, message: `map ${id} done` }) as Promise<AtlasCoords>;
/** The ids a highlight layer shows, ascending, once `pred` holds for them. */
const layerShows = (c: HpClient, layer: string, want: number[], message: string) =>
  waitFor(() => {
    const segs = readLayer(c.doc, layer)?.segments;
    const ids = Array.isArray(segs) ? segs.map(Number).sort((a, b) => a - b) : null;
    return JSON.stringify(ids) === JSON.stringify(want) ? ids : null;
  }, { timeout: 180_000, message });
/** A rectangle round every point of a coordinates table whose x (and y) are within the given bounds. */
const rectOf = (x0: number, y0: number, x1: number, y1: number): AtlasSelection => ({ kind: 'rect', x0, y0, x1, y1, by: 'alice', name: 'Alice', at: Date.now() });

describe('the atlas in the viewer', { timeout: 600_000 }, () => {
  it('the seeded demo has its neurons table, a map of it, and a cell that explains the atlas and one that reads the selection', async () => {
    const c = await client(s, 'demo', clients);
    const table = (await waitFor(() => getTable(c.doc, DEMO_NEURONS_TABLE), { timeout: 180_000, message: 'the demo neurons table' }))!;
    expect(table.rows).toBe(12);
    expect(table.segmentSource).toBe(demoLayerSource('labels'));
    expect(table.columns.map((x) => x.name)).toEqual(['id', 'centroid_x', 'centroid_y', 'area_px', 'snr', 'silent', 'spikes', 'rate_hz', 'label_px', 'peak_snr']);
    const done = await waitCoords(c, DEMO_MAP_ID);
    expect(done.points).toBe(12);
    expect(done.how).toContain('UMAP of 5 numeric columns');
    expect(getAtlasMap(c.doc, DEMO_MAP_ID)).toMatchObject({ title: 'Demo neurons', table: DEMO_NEURONS_TABLE, colorBy: 'rate_hz' });

    const cells = listCells(c.doc);
    const explain = cells.findIndex((x) => x.kind === 'markdown' && cellSource(x).startsWith('## Atlas'));
    expect(explain).toBeGreaterThan(cells.findIndex((x) => cellSource(x).includes('calcium.evaluate')));
    const text = cellSource(cells[explain]!);
    for (const words of ['*Atlas* in the header', 'Lasso', 'demo_neurons_map_selection', 'light up in the viewer', 'Save as category', '@agent']) expect(text).toContain(words);
    const sql = cells[explain + 1]!;
    expect([sql.kind, sql.name]).toEqual(['sql', 'selected_neurons']);
    expect(cellSource(sql)).toContain('FROM demo_neurons_map_selection');

    // Brushing the whole map: the SQL cell runs again by itself, and every neuron lights up over `labels`.
    await waitFor(() => getTable(c.doc, 'demo_neurons_map_selection'), { timeout: 60_000, message: 'the selection table' });
    requestRun(c.doc, sql.id, alice, aliceOrigin);
    const counts = (n: number) => waitRun(c.doc, sql.id, (v) => v.state === 'done' && JSON.stringify(v.outputs).includes(`"neurons":${n}`), `selected_neurons to count ${n}`, 120_000);
    await counts(0);
    const [b] = await query('demo', 'SELECT min(x) AS x0, min(y) AS y0, max(x) AS x1, max(y) AS y1 FROM demo_neurons_map');
    setAtlasSelection(c.doc, DEMO_MAP_ID, rectOf(b!.x0, b!.y0, b!.x1, b!.y1), aliceOrigin);
    await counts(12);
    const ids = (await query('demo', 'SELECT id FROM demo_neurons ORDER BY id')).map((r) => Number(r.id));
    await layerShows(c, 'Atlas: Demo neurons', ids, 'every neuron in the viewer');
    expect(readLayer(c.doc, 'Atlas: Demo neurons')!.source).toEqual(readLayer(c.doc, 'labels')!.source);
    expect(readLayer(c.doc, 'labels')!.visible).toBe(false);
    expect(getAtlasMap(c.doc, DEMO_MAP_ID)!.viewer).toMatchObject({ layer: 'Atlas: Demo neurons', of: 'labels', shown: 12, hidden: 0 });
  });

  it('a map of an analysis\'s ROIs: the selected ROIs show in the viewer, deleted ones stay hidden, clearing clears', async () => {
    const created = await api(s.url, s.ownerToken, 'POST', '/api/workspaces', { name: 'Atlas ROIs' });
    const ws = created.json.workspace.id as string;
    const c = await client(s, ws, clients);
    await waitFor(async () => (await api(s.url, s.ownerToken, 'GET', '/volumes/calcium-demo/')).status === 200, { timeout: 120_000, message: 'the recording generated' });
    const r = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/jobs`, { kind: 'calcium', dataset: 'calcium-demo', layer: 'movie', params: { tauDecay: 'GCaMP6f' } });
    expect(r.status).toBe(201);
    const jobId = r.json.job as string;
    const job = (await waitFor(() => {
      const j = readJob(c.doc, jobId);
      if (j?.status === 'error') throw new Error(j.error ?? 'job failed');
      return j?.status === 'done' && getTable(c.doc, 'calcium_demo_rois') ? j : null;
    }, { timeout: 180_000, message: 'the analysis' })) as Job;
    const roiLayer = findRoiLayer(c.doc, job)!;
    expect(roiLayer).toBe('ROIs (calcium-demo)');
    const map = createAtlasMap(c.doc, { table: 'calcium_demo_rois', method: 'columns', columns: ['centroid_x', 'centroid_y'], title: 'ROIs' }, alice, aliceOrigin);
    await waitCoords(c, map);
    await waitFor(() => getTable(c.doc, 'calcium_demo_rois_map_selection'), { timeout: 60_000, message: 'the selection table' });

    // The ROIs in the left half of the field, from the table itself (x, y of a "columns" map are the centroids).
    const rois = (await query(ws, 'SELECT id, centroid_x AS x, centroid_y AS y FROM calcium_demo_rois')).map((x) => ({ id: Number(x.id), x: Number(x.x), y: Number(x.y) }));
    expect(rois.length).toBeGreaterThan(5);
    const xs = rois.map((x) => x.x).sort((a, b) => a - b);
    const cut = xs[Math.floor(xs.length / 2)]!;
    const rect = rectOf(xs[0]! - 1, -1, cut, 1000);
    const left = rois.filter((x) => x.x <= cut).map((x) => x.id).sort((a, b) => a - b);
    expect(left.length).toBeGreaterThan(2);
    expect(left.length).toBeLessThan(rois.length);

    // The server adds the highlight layer and says so in the map in the same transaction (the
    // helper's origin is the unit tests' to check: a direct connection wraps server writes in its own).
    const live = s.hocuspocus.documents.get(ws) as unknown as Y.Doc;
    const added: unknown[] = [];
    const onTr = () => {
      if (readLayer(live, 'Atlas: ROIs') && !added.length) added.push({ viewer: getAtlasMap(live, map)?.viewer?.layer ?? null });
    };
    live.on('afterTransaction', onTr);
    const roiLayerBefore = readLayer(c.doc, roiLayer);
    setAtlasSelection(c.doc, map, rect, aliceOrigin);
    await layerShows(c, 'Atlas: ROIs', left, 'the selected ROIs in the viewer');
    live.off('afterTransaction', onTr);
    expect(added).toEqual([{ viewer: 'Atlas: ROIs' }]);
    const layer = readLayer(c.doc, 'Atlas: ROIs')!;
    expect(layer).toMatchObject({ type: 'segmentation', source: roiLayerBefore!.source, ignoreNullVisibleSet: false, pick: false });
    expect(Object.values(layer.segmentColors as Record<string, string>)).toEqual(left.map(() => ATLAS_SELECTION_COLOR));
    expect(getAtlasMap(c.doc, map)!.viewer).toMatchObject({ layer: 'Atlas: ROIs', of: roiLayer, shown: left.length, hidden: 0 });
    expect(readLayer(c.doc, roiLayer)).toEqual(roiLayerBefore);

    // A person deletes a selected ROI: it leaves the ROI layer and the highlight together.
    const gone = left[0]!;
    let transactions = 0;
    const count = () => transactions++;
    c.doc.on('afterTransaction', count);
    applyRoiEdit(c.doc, jobId, roiLayer, gone, { action: 'delete', by: 'alice', name: 'Alice', at: Date.now() }, jobRoiIds(job), aliceOrigin);
    c.doc.off('afterTransaction', count);
    expect(transactions).toBe(1);
    const kept = left.filter((id) => id !== gone);
    expect(readLayer(c.doc, 'Atlas: ROIs')!.segments).toEqual(kept.map(String));
    expect(readLayer(c.doc, roiLayer)!.segments).not.toContain(String(gone));
    // The server rewrites the table (the edit column), the map and its selection: the ROI stays
    // hidden (read on the server's own document once its atlas is idle: a client may lag behind).
    await waitFor(() => getTable(live, 'calcium_demo_rois')?.columns.some((x) => x.name === 'edit'), { timeout: 60_000, message: 'the curated table' });
    await s.atlas!.idle(ws);
    expect(getAtlasMap(live, map)!.coords).toMatchObject({ status: 'done' });
    expect(getTable(live, 'calcium_demo_rois_map_selection')!.created).toBeGreaterThan(getTable(live, 'calcium_demo_rois')!.created);
    expect(readLayer(live, 'Atlas: ROIs')!.segments).toEqual(kept.map(String));
    expect(getAtlasMap(live, map)!.viewer).toMatchObject({ shown: kept.length, hidden: 1 });
    expect(readLayer(live, roiLayer)!.segments).toEqual(jobRoiIds(job).filter((id) => id !== gone).map(String));

    // A category of two right-hand ROIs shown on the map: they join, in the highlight colour.
    const right = rois.filter((x) => x.x > cut).slice(0, 2).map((x) => x.id);
    // Their row numbers, as the map's rows endpoint answers them.
    const all = await api(s.url, s.ownerToken, 'GET', `/api/workspaces/${ws}/atlas/${map}/rows?rows=${rois.map((_, i) => i).join(',')}`);
    const rows = (all.json.rows as Array<{ row: number; id: number }>).filter((x) => right.includes(Number(x.id))).map((x) => x.row);
    expect(rows).toHaveLength(2);
    saveAtlasCategory(c.doc, map, 'right', { rows, note: 'two on the right', by: 'alice', at: Date.now() }, aliceOrigin);
    setAtlasHighlight(c.doc, map, { rows, label: 'right', by: 'alice', at: Date.now() }, aliceOrigin);
    await layerShows(c, 'Atlas: ROIs', [...kept, ...right].sort((a, b) => a - b), 'the category joins');
    for (const id of right) expect((readLayer(c.doc, 'Atlas: ROIs')!.segmentColors as Record<string, string>)[String(id)]).toBe(ATLAS_HIGHLIGHT_COLOR);

    // Clearing the selection leaves the category; clearing the highlight clears the viewer at once.
    setAtlasSelection(c.doc, map, null, aliceOrigin);
    await layerShows(c, 'Atlas: ROIs', [...right].sort((a, b) => a - b), 'only the category');
    setAtlasHighlight(c.doc, map, null, aliceOrigin);
    expect(readLayer(c.doc, 'Atlas: ROIs')).toBeUndefined();
    expect(getAtlasMap(c.doc, map)!.viewer).toBeNull();
    await waitFor(() => !getAtlasMap(live, map)?.highlight, { message: 'the clear on the server' });
    await s.atlas!.idle(ws);
    expect(readLayer(live, 'Atlas: ROIs')).toBeUndefined();
    expect(readLayer(live, roiLayer)).toBeDefined();
  });
});
