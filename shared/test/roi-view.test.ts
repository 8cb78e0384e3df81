/**
 * ROI edits of a calcium result reach the job and its viewer layer together: the visible set a
 * segmentation layer shows after deletes and merges, one transaction for both writes, two people
 * deleting at once converging once a peer re-derives the layer (`syncRoiLayer`), and the ROI
 * layer put back into a viewer that lost it. The written keys keep to the declared schema.
 */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  addLayer,
  applyRoiEdit,
  checkDocument,
  createJob,
  effectiveRoiIds,
  ensureRoiLayer,
  findRoiLayer,
  jobRoiIds,
  observeRoiEdits,
  readJob,
  readLayer,
  removeLayer,
  roiIsCell,
  roiSegmentProps,
  serverOrigin,
  syncRoiLayer,
  tablesReplaced,
  updateJob,
  userOrigin,
  type RoiEdit,
} from '../src/index.ts';

const server = serverOrigin('test');
const alice = userOrigin('alice', 'Alice');
const bob = userOrigin('bob', 'Bob');
const del = (by = 'alice'): RoiEdit => ({ action: 'delete', by, at: 1 });
const merge = (into: number): RoiEdit => ({ action: 'merge', into, by: 'alice', at: 1 });
const classify = (cell: boolean): RoiEdit => ({ action: 'classify', cell, by: 'alice', at: 1 });

describe('roiIsCell and effectiveRoiIds', () => {
  it('a person overrules the soma decision either way; a reclassified ROI keeps its id', () => {
    expect(roiIsCell(1, false, {})).toBe(false);
    expect(roiIsCell(1, false, { 1: classify(true) })).toBe(true);
    expect(roiIsCell(1, true, { 1: classify(false) })).toBe(false);
    expect(roiIsCell(1, true, { 2: classify(false) })).toBe(true);
    expect([...effectiveRoiIds([1, 2, 3], { 1: classify(true), 2: merge(1), 3: del() })]).toEqual([[1, 1], [2, 1]]);
  });
});

function doneJob(doc: Y.Doc, id = 'j1', created = 1, rois = 5): void {
  createJob(doc, { id, kind: 'calcium', title: 'Calcium analysis of demo/movie', input: { dataset: 'demo', layer: 'movie' }, params: {}, requestedBy: { id: 'alice', via: 'person' }, created }, server);
  updateJob(doc, id, { status: 'done', result: { dataset: `demo-${id}`, layers: ['rois'], tables: { rois: 'demo_rois', traces: 'demo_traces', events: 'demo_events', shifts: 'demo_shifts' }, summary: { rois, cells: 2, events: 9 }, reusedRegistration: false, seconds: 3 } }, server);
  addLayer(doc, { type: 'segmentation', name: 'ROIs (demo)', source: `precomputed://plexus://volumes/demo-${id}/rois` }, server);
}

describe('roiSegmentProps', () => {
  it('shows everything without edits, the rest after deletes, one segment per merged group', () => {
    const ids = [1, 2, 3, 4, 5];
    expect(roiSegmentProps(ids, {})).toEqual({ segments: undefined, equivalences: undefined, ignoreNullVisibleSet: undefined });
    expect(roiSegmentProps(ids, { 3: del() })).toEqual({ segments: ['1', '2', '4', '5'], equivalences: undefined, ignoreNullVisibleSet: undefined });
    // 2 into 5 and 4 into 5: one group {2,4,5}, which Neuroglancer names by its smallest id.
    expect(roiSegmentProps(ids, { 2: merge(5), 4: merge(5) })).toEqual({ segments: ['1', '2', '3'], equivalences: [['2', '4', '5']], ignoreNullVisibleSet: undefined });
    // Merged into a deleted ROI: gone too.
    expect(roiSegmentProps(ids, { 2: merge(3), 3: del() }).segments).toEqual(['1', '4', '5']);
    // Overruling the soma decision changes nothing in the viewer, alone or beside a delete.
    expect(roiSegmentProps(ids, { 3: classify(true) })).toEqual({ segments: undefined, equivalences: undefined, ignoreNullVisibleSet: undefined });
    expect(roiSegmentProps(ids, { 3: classify(false), 4: del() }).segments).toEqual(['1', '2', '3', '5']);
    // Everything deleted: an empty visible set must mean "nothing", not "everything".
    expect(roiSegmentProps([1, 2], { 1: del(), 2: del() })).toEqual({ segments: [], equivalences: undefined, ignoreNullVisibleSet: false });
  });
});

describe('applyRoiEdit', () => {
  it('writes the edit and the layer in one transaction, and undoing the edit shows every ROI again', () => {
    const doc = new Y.Doc();
    doneJob(doc);
    const job = readJob(doc, 'j1')!;
    expect(jobRoiIds(job)).toEqual([1, 2, 3, 4, 5]);
    const layer = findRoiLayer(doc, job);
    expect(layer).toBe('ROIs (demo)');
    let transactions = 0;
    doc.on('afterTransaction', () => transactions++);
    applyRoiEdit(doc, 'j1', layer, 2, del(), jobRoiIds(job), alice);
    expect(transactions).toBe(1);
    expect(readJob(doc, 'j1')!.roiEdits['2']).toMatchObject({ action: 'delete' });
    expect(readLayer(doc, 'ROIs (demo)')!.segments).toEqual(['1', '3', '4', '5']);
    applyRoiEdit(doc, 'j1', layer, 2, null, jobRoiIds(job), alice);
    expect(readLayer(doc, 'ROIs (demo)')!.segments).toBeUndefined();
    expect(checkDocument(doc)).toEqual([]);
  });

  it('two people deleting at once: the job keeps both, and a peer that re-derives the layer makes everyone converge', () => {
    const a = new Y.Doc();
    doneJob(a);
    const b = new Y.Doc();
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
    const ids = jobRoiIds(readJob(a, 'j1')!);
    const seen: string[][] = [];
    const off = observeRoiEdits(b, (jobIds, local) => !local && seen.push(jobIds));
    applyRoiEdit(a, 'j1', 'ROIs (demo)', 1, del('alice'), ids, alice);
    applyRoiEdit(b, 'j1', 'ROIs (demo)', 4, del('bob'), ids, bob);
    const ua = Y.encodeStateAsUpdate(a);
    const ub = Y.encodeStateAsUpdate(b);
    Y.applyUpdate(a, ub);
    Y.applyUpdate(b, ua);
    off();
    expect(seen).toEqual([['j1']]);
    expect(Object.keys(readJob(a, 'j1')!.roiEdits).sort()).toEqual(['1', '4']);
    // The layer holds one writer's set only: one deletion still shows.
    expect((readLayer(a, 'ROIs (demo)')!.segments as string[]).length).toBe(4);
    expect(syncRoiLayer(a, 'j1', alice)).toBe(true);
    expect(syncRoiLayer(b, 'j1', bob)).toBe(true);
    Y.applyUpdate(a, Y.encodeStateAsUpdate(b));
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
    for (const d of [a, b]) expect(readLayer(d, 'ROIs (demo)')!.segments).toEqual(['2', '3', '5']);
    expect(syncRoiLayer(a, 'j1', alice)).toBe(false);
  });
});

describe('ensureRoiLayer', () => {
  it('puts back a removed ROI layer with the edits applied, and shows a hidden one', () => {
    const doc = new Y.Doc();
    doneJob(doc);
    applyRoiEdit(doc, 'j1', 'ROIs (demo)', 3, del(), [1, 2, 3, 4, 5], alice);
    removeLayer(doc, 'ROIs (demo)', alice);
    const job = readJob(doc, 'j1')!;
    expect(findRoiLayer(doc, job)).toBeNull();
    const name = ensureRoiLayer(doc, job, { name: 'rois', info: { type: 'segmentation' } }, alice);
    expect(name).toBe('ROIs (demo)');
    expect(readLayer(doc, name)).toMatchObject({ type: 'segmentation', source: 'precomputed://plexus://volumes/demo-j1/rois', segments: ['1', '2', '4', '5'] });
    expect(checkDocument(doc)).toEqual([]);
  });

  it('knows when a newer run of the same movie replaced a result\'s tables', () => {
    const doc = new Y.Doc();
    doneJob(doc, 'j1', 1);
    doneJob(doc, 'j2', 2);
    expect(tablesReplaced(readJob(doc, 'j1')!, [readJob(doc, 'j1')!, readJob(doc, 'j2')!])).toBe(true);
    expect(tablesReplaced(readJob(doc, 'j2')!, [readJob(doc, 'j1')!, readJob(doc, 'j2')!])).toBe(false);
  });
});
