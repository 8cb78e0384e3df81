/**
 * A map of a table of ROIs shows its selected and highlighted rows' ROIs in the shared viewer: on
 * a highlight layer of their own over the ROI layer's source (selection orange, highlight magenta),
 * written in one transaction with the map's `viewer` key; ROIs people deleted stay hidden (left out
 * when written, dropped in the deletion's own transaction), the ROI layer's edits are never
 * touched, clearing the selection clears the viewer, a write for an outdated selection is dropped,
 * a table that names its segmentation (the demo's ground truth over `labels`) works the same, and
 * everything written keeps to the declared schema, whoever writes it.
 */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  ATLAS_HIGHLIGHT_COLOR, ATLAS_SELECTION_COLOR, addLayer, applyRoiEdit, atlasViewerBasis, checkDocument, checkTransaction, createAtlasMap, createJob,
  findRoiLayer, getAtlasMap, jobRoiIds, readJob, readLayer, registerTable, removeAtlasMap, removeLayer, segmentHighlightProps, segmentTableOf, serverOrigin,
  setAtlasHighlight, setAtlasSelection, syncRoiLayer, updateJob, userOrigin, writeAtlasViewer, writerOfOrigin, type AtlasSelection, type DataTable,
  type RoiEdit, type Violation,
} from '../src/index.ts';

const server = serverOrigin('atlas');
const alice = userOrigin('alice', 'Alice');
const ROI_SOURCE = { url: 'precomputed://plexus://volumes/demo-j1/rois', transform: { outputDimensions: { x: [1e-6, 'm'], y: [1e-6, 'm'], t: [30, 's'] } } };
const rect: AtlasSelection = { kind: 'rect', x0: 0, y0: 0, x1: 1, y1: 1, by: 'alice', at: 1 };
const del: RoiEdit = { action: 'delete', by: 'alice', at: 1 };
const table = (name: string, more: Partial<DataTable> = {}): DataTable =>
  ({ name, fileName: `${name}.csv`, format: 'csv', columns: [{ name: 'id', type: 'BIGINT' }, { name: 'snr', type: 'DOUBLE' }], rows: 8, bytes: 1, storedBytes: 1, uploadedBy: { id: 'alice' }, created: 1, ...more });

/** A workspace with a finished calcium analysis of 8 ROIs (table `demo_rois`), its ROI layer, and a map of that table. */
function workspace(): { doc: Y.Doc; map: string; violations: Violation[] } {
  const doc = new Y.Doc();
  const violations: Violation[] = [];
  doc.on('afterTransaction', (tr: Y.Transaction) => {
    const w = writerOfOrigin(tr.origin);
    if (w) violations.push(...checkTransaction(tr, w));
  });
  createJob(doc, { id: 'j1', kind: 'calcium', title: 'Calcium analysis', input: { dataset: 'demo', layer: 'movie' }, params: {}, requestedBy: { id: 'alice', via: 'person' }, created: 1 }, server);
  updateJob(doc, 'j1', { status: 'done', result: { dataset: 'demo-j1', layers: ['rois'], tables: { rois: 'demo_rois', traces: 't', events: 'e', shifts: 's' }, summary: { rois: 8, cells: 5, events: 9 } } }, server);
  registerTable(doc, table('demo_rois'), server);
  addLayer(doc, { type: 'segmentation', name: 'ROIs (demo)', source: ROI_SOURCE }, server);
  const map = createAtlasMap(doc, { table: 'demo_rois', method: 'pca', columns: ['snr'], title: 'ROIs' }, { id: 'alice' }, alice);
  return { doc, map, violations };
}

/** What the server does once it read the ids: the write, against the map as it is now. */
const show = (doc: Y.Doc, map: string, selection: number[], highlight: number[] = []) => writeAtlasViewer(doc, map, { selection, highlight }, atlasViewerBasis(doc, map)!, server);

describe('segmentHighlightProps', () => {
  it('lists the ids once each, coloured by their group (a later group wins), and an empty list shows nothing', () => {
    const p = segmentHighlightProps('precomputed://x', [{ ids: [5, 2, 2, 0, -1], color: '#111111' }, { ids: [5, 9], color: '#222222' }]);
    expect(p).toMatchObject({ type: 'segmentation', source: 'precomputed://x', segments: ['2', '5', '9'], segmentColors: { 2: '#111111', 5: '#222222', 9: '#222222' }, ignoreNullVisibleSet: false, notSelectedAlpha: 0, pick: false });
    expect(segmentHighlightProps('precomputed://x', [])).toMatchObject({ segments: [], ignoreNullVisibleSet: false });
  });
});

describe('a map of a calcium result\'s ROI table in the viewer', () => {
  it('shows the selected and highlighted ROIs on a layer of their own, in one server transaction, the ROI layer untouched', () => {
    const { doc, map, violations } = workspace();
    applyRoiEdit(doc, 'j1', 'ROIs (demo)', 4, del, jobRoiIds(readJob(doc, 'j1')!), alice);
    const roiLayerBefore = readLayer(doc, 'ROIs (demo)');
    expect(roiLayerBefore!.segments).toEqual(['1', '2', '3', '5', '6', '7', '8']);
    setAtlasSelection(doc, map, rect, alice);
    setAtlasHighlight(doc, map, { rows: [6, 7], label: 'bright', by: 'alice', at: 2 }, alice);
    const origins: unknown[] = [];
    doc.on('afterTransaction', (tr: Y.Transaction) => origins.push(tr.origin));
    // Rows' ids 2, 3, 4 selected (4 was deleted), 3 and 7 highlighted.
    expect(show(doc, map, [2, 3, 4], [3, 7])).toBe(true);
    expect(origins).toEqual([server]);
    const v = getAtlasMap(doc, map)!.viewer!;
    expect(v).toMatchObject({ layer: 'Atlas: ROIs', of: 'ROIs (demo)', shown: 3, hidden: 1 });
    expect(readLayer(doc, 'Atlas: ROIs')).toMatchObject({
      type: 'segmentation', source: ROI_SOURCE, segments: ['2', '3', '7'], ignoreNullVisibleSet: false, pick: false,
      segmentColors: { 2: ATLAS_SELECTION_COLOR, 3: ATLAS_HIGHLIGHT_COLOR, 7: ATLAS_HIGHLIGHT_COLOR },
    });
    // The ROI layer keeps its edits; it is still the job's ROI layer (the highlight shares its source).
    expect(readLayer(doc, 'ROIs (demo)')).toEqual(roiLayerBefore);
    expect(findRoiLayer(doc, readJob(doc, 'j1')!)).toBe('ROIs (demo)');
    expect(syncRoiLayer(doc, 'j1', alice)).toBe(false);
    // The same ids again: nothing is written.
    origins.length = 0;
    show(doc, map, [2, 3, 4], [3, 7]);
    expect(origins).toEqual([server]);
    const updates: Uint8Array[] = [];
    doc.on('update', (u: Uint8Array) => updates.push(u));
    show(doc, map, [2, 3, 4], [3, 7]);
    expect(updates).toEqual([]);
    expect(violations).toEqual([]);
    expect(checkDocument(doc)).toEqual([]);
  });

  it('a deleted ROI leaves the highlight in the deletion\'s own transaction; another ROI layer edit keeps it', () => {
    const { doc, map, violations } = workspace();
    setAtlasSelection(doc, map, rect, alice);
    show(doc, map, [1, 2, 3]);
    let transactions = 0;
    doc.on('afterTransaction', () => transactions++);
    applyRoiEdit(doc, 'j1', 'ROIs (demo)', 2, del, jobRoiIds(readJob(doc, 'j1')!), alice);
    expect(transactions).toBe(1);
    expect(readLayer(doc, 'Atlas: ROIs')).toMatchObject({ segments: ['1', '3'], segmentColors: { 1: ATLAS_SELECTION_COLOR, 3: ATLAS_SELECTION_COLOR } });
    expect(getAtlasMap(doc, map)!.viewer).toMatchObject({ shown: 2, hidden: 1 });
    expect(readLayer(doc, 'ROIs (demo)')!.segments).toEqual(['1', '3', '4', '5', '6', '7', '8']);
    // A merge keeps both ROIs drawn (as one): the highlight keeps them too.
    applyRoiEdit(doc, 'j1', 'ROIs (demo)', 3, { action: 'merge', into: 1, by: 'alice', at: 2 }, jobRoiIds(readJob(doc, 'j1')!), alice);
    expect(readLayer(doc, 'Atlas: ROIs')!.segments).toEqual(['1', '3']);
    expect(readLayer(doc, 'ROIs (demo)')!.equivalences).toEqual([['1', '3']]);
    expect(violations).toEqual([]);
  });

  it('clearing the selection clears the viewer in the same transaction (unless a highlight is left)', () => {
    const { doc, map, violations } = workspace();
    setAtlasSelection(doc, map, rect, alice);
    setAtlasHighlight(doc, map, { rows: [0], label: 'one', by: 'alice', at: 2 }, alice);
    show(doc, map, [1, 2], [5]);
    setAtlasSelection(doc, map, null, alice);
    // The highlight still stands for rows: the server rewrites the layer without the selection.
    expect(readLayer(doc, 'Atlas: ROIs')).toBeDefined();
    expect(show(doc, map, [], [5])).toBe(true);
    expect(readLayer(doc, 'Atlas: ROIs')!.segments).toEqual(['5']);
    let transactions = 0;
    doc.on('afterTransaction', () => transactions++);
    setAtlasHighlight(doc, map, null, alice);
    expect(transactions).toBe(1);
    expect(readLayer(doc, 'Atlas: ROIs')).toBeUndefined();
    expect(getAtlasMap(doc, map)!.viewer).toBeNull();
    expect(violations).toEqual([]);
  });

  it('drops a write for a selection that is no longer the map\'s, and shows nothing for an empty one', () => {
    const { doc, map } = workspace();
    setAtlasSelection(doc, map, rect, alice);
    const basis = atlasViewerBasis(doc, map)!;
    setAtlasSelection(doc, map, { ...rect, x1: 2, at: 3 }, alice);
    expect(writeAtlasViewer(doc, map, { selection: [1], highlight: [] }, basis, server)).toBe(false);
    expect(readLayer(doc, 'Atlas: ROIs')).toBeUndefined();
    show(doc, map, [1]);
    expect(readLayer(doc, 'Atlas: ROIs')!.segments).toEqual(['1']);
    // The new selection holds no rows: the layer goes.
    show(doc, map, []);
    expect(readLayer(doc, 'Atlas: ROIs')).toBeUndefined();
    expect(getAtlasMap(doc, map)!.viewer).toBeNull();
  });

  it('without the ROI layer in the viewer it says so; removing the map removes its layer; a plain table shows nothing', () => {
    const { doc, map, violations } = workspace();
    setAtlasSelection(doc, map, rect, alice);
    show(doc, map, [1, 2]);
    expect(readLayer(doc, 'Atlas: ROIs')).toBeDefined();
    removeAtlasMap(doc, map, alice);
    expect(readLayer(doc, 'Atlas: ROIs')).toBeUndefined();
    expect(readLayer(doc, 'ROIs (demo)')).toBeDefined();

    const other = createAtlasMap(doc, { table: 'demo_rois', method: 'pca', columns: ['snr'], title: 'Again' }, { id: 'alice' }, alice);
    removeLayer(doc, 'ROIs (demo)', alice);
    setAtlasSelection(doc, other, rect, alice);
    show(doc, other, [1, 2]);
    expect(getAtlasMap(doc, other)!.viewer).toMatchObject({ layer: null, of: null, shown: 2 });

    registerTable(doc, table('plain'), server);
    const plain = createAtlasMap(doc, { table: 'plain', method: 'pca', columns: ['snr'] }, { id: 'alice' }, alice);
    expect(segmentTableOf(doc, 'plain')).toBeNull();
    setAtlasSelection(doc, plain, rect, alice);
    show(doc, plain, [1, 2]);
    expect(getAtlasMap(doc, plain)!.viewer).toBeNull();
    expect(violations).toEqual([]);
    expect(checkDocument(doc)).toEqual([]);
  });
});

describe('a table that names its segmentation (the demo\'s ground truth)', () => {
  it('highlights over the segmentation layer of that source, hidden or not', () => {
    const doc = new Y.Doc();
    const labels = { url: 'precomputed://plexus://volumes/calcium-demo/labels', transform: { outputDimensions: { x: [1e-6, 'm'], y: [1e-6, 'm'], t: [30, 's'] } } };
    addLayer(doc, { type: 'segmentation', name: 'labels', source: labels, visible: false }, server);
    registerTable(doc, table('demo_neurons', { segmentSource: labels.url }), server);
    const map = createAtlasMap(doc, { table: 'demo_neurons', method: 'umap', columns: [], title: 'Neurons' }, { id: 'plexus' }, server);
    expect(segmentTableOf(doc, 'demo_neurons')).toMatchObject({ url: labels.url, layer: 'labels' });
    setAtlasSelection(doc, map, rect, alice);
    show(doc, map, [3, 9]);
    expect(readLayer(doc, 'Atlas: Neurons')).toMatchObject({ source: labels, segments: ['3', '9'] });
    expect(readLayer(doc, 'Atlas: Neurons')!.visible).toBeUndefined();
    expect(readLayer(doc, 'labels')!.visible).toBe(false);
    expect(getAtlasMap(doc, map)!.viewer).toMatchObject({ of: 'labels', shown: 2, hidden: 0 });
    expect(checkDocument(doc)).toEqual([]);
  });
});
