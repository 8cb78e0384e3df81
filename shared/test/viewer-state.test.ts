/**
 * The Neuroglancer state ⇄ document mapping: lossless round trips and merging of concurrent
 * changes made in different viewers.
 */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  addAnnotations,
  applyViewerDelta,
  jsonClone,
  readCamera,
  readViewerState,
  replaceViewerState,
  setCamera,
  setLayerProps,
  setShaderControl,
  removeLayer,
  userOrigin,
  overlayState,
  UnknownLayerError,
  viewerRoots,
  type NgState,
} from '../src/index.ts';
import { CALCIUM_STATE, MULTI_LAYER_STATE } from './fixtures/ng-states.ts';
import { syncPair } from './helpers.ts';

const alice = userOrigin('alice');
const bob = userOrigin('bob');

function fresh(state: NgState): Y.Doc {
  const doc = new Y.Doc();
  replaceViewerState(doc, jsonClone(state), alice);
  return doc;
}

function replica(of: Y.Doc): Y.Doc {
  const d = new Y.Doc();
  Y.applyUpdate(d, Y.encodeStateAsUpdate(of));
  return d;
}

/** Changes a copy of `s` with `f` (as a viewer would) and returns it. */
function edited(s: NgState, f: (s: any) => void): NgState {
  const c = jsonClone(s);
  f(c);
  return c;
}

describe('viewer state round trip', () => {
  it.each([
    ['image + segmentation + annotations, nested layout, unknown keys', MULTI_LAYER_STATE],
    ['time axis, empty shaderControls and empty annotations', CALCIUM_STATE],
  ])('state → doc → state is lossless: %s', (_name, state) => {
    const doc = fresh(state);
    expect(readViewerState(doc)).toStrictEqual(state);
    // …also on a replica that only received the encoded updates.
    expect(readViewerState(replica(doc))).toStrictEqual(state);
  });

  it('keeps layer and annotation order, and legacy object-form layers become a list', () => {
    const doc = new Y.Doc();
    replaceViewerState(doc, { layers: { b: 'precomputed://x', a: { type: 'image', source: 'precomputed://y' } } } as any, alice);
    expect(readViewerState(doc).layers).toStrictEqual([
      { name: 'b', source: 'precomputed://x' },
      { type: 'image', source: 'precomputed://y', name: 'a' },
    ]);
  });

  it('annotations without ids and with duplicate ids survive', () => {
    const s: NgState = { layers: [{ type: 'annotation', name: 'n', annotations: [{ type: 'point', point: [1, 2, 3] }, { type: 'point', point: [1, 2, 3] }, { type: 'point', id: 'x', point: [0, 0, 0] }, { type: 'point', id: 'x', point: [9, 9, 9] }] }] };
    expect(readViewerState(fresh(s))).toStrictEqual(s);
  });

  it('replacing a state changes only what differs', () => {
    const doc = fresh(MULTI_LAYER_STATE);
    const before = Y.encodeStateVector(doc);
    const next = edited(MULTI_LAYER_STATE, (s) => (s.layers[0].shaderControls.normalized.range = [10, 90]));
    replaceViewerState(doc, next, alice);
    expect(readViewerState(doc)).toStrictEqual(next);
    const delta = Y.encodeStateAsUpdate(doc, before);
    // One shader control rewritten, nothing else: a few hundred bytes, not the whole state.
    expect(delta.byteLength).toBeLessThan(200);
  });

  it('replacing with an identical state writes nothing', () => {
    const doc = fresh(MULTI_LAYER_STATE);
    let updates = 0;
    doc.on('update', () => updates++);
    replaceViewerState(doc, jsonClone(MULTI_LAYER_STATE), alice);
    expect(updates).toBe(0);
  });
});

describe('concurrent viewer changes merge', () => {
  it('two people change two different layers at the same time', () => {
    const a = fresh(MULTI_LAYER_STATE);
    const b = replica(a);
    const base = readViewerState(a);
    applyViewerDelta(a, base, edited(base, (s) => (s.layers[0].shaderControls.normalized.range = [0, 100])), alice);
    applyViewerDelta(b, base, edited(base, (s) => (s.layers[1].visible = true)), bob);
    syncPair(a, b);
    const merged = readViewerState(a);
    expect(merged).toStrictEqual(readViewerState(b));
    expect((merged.layers as any)[0].shaderControls.normalized.range).toEqual([0, 100]);
    expect((merged.layers as any)[1].visible).toBe(true);
  });

  it('two people change two shader controls of the same layer', () => {
    const a = fresh(MULTI_LAYER_STATE);
    const b = replica(a);
    const base = readViewerState(a);
    applyViewerDelta(a, base, edited(base, (s) => (s.layers[0].shaderControls.normalized.range = [1, 2])), alice);
    applyViewerDelta(b, base, edited(base, (s) => (s.layers[0].shaderControls.color = '#00ff00')), bob);
    syncPair(a, b);
    expect((readViewerState(b).layers as any)[0].shaderControls).toEqual({ normalized: { range: [1, 2], window: [0, 255] }, color: '#00ff00' });
  });

  it('two people add annotations to one layer and both annotations stay', () => {
    const a = fresh(MULTI_LAYER_STATE);
    const b = replica(a);
    const base = readViewerState(a);
    applyViewerDelta(a, base, edited(base, (s) => s.layers[2].annotations.push({ type: 'point', point: [1, 1, 1], id: 'from-alice' })), alice);
    applyViewerDelta(b, base, edited(base, (s) => s.layers[2].annotations.push({ type: 'point', point: [2, 2, 2], id: 'from-bob' })), bob);
    syncPair(a, b);
    const ids = (readViewerState(a).layers as any)[2].annotations.map((x: any) => x.id);
    expect(ids.slice(0, 4)).toEqual(['a1b2c3', 'box-1', 'line-7', 'ell-9']);
    expect(ids.slice(4).sort()).toEqual(['from-alice', 'from-bob']);
    expect(readViewerState(a)).toStrictEqual(readViewerState(b));
  });

  it('a camera move and a layer change at the same time both apply', () => {
    const a = fresh(MULTI_LAYER_STATE);
    const b = replica(a);
    const base = readViewerState(a);
    applyViewerDelta(a, base, edited(base, (s) => (s.position = [1, 2, 3])), alice);
    applyViewerDelta(b, base, edited(base, (s) => (s.layers[0].opacity = 0.3)), bob);
    syncPair(a, b);
    expect(readCamera(b).position).toEqual([1, 2, 3]);
    expect((readViewerState(a).layers as any)[0].opacity).toBe(0.3);
  });

  it('a delta leaves keys it did not change alone, including keys the viewer does not know', () => {
    const doc = fresh(MULTI_LAYER_STATE);
    // A viewer that drops unknown keys reports its state without them; its change must not delete them.
    const seen = edited(MULTI_LAYER_STATE, (s) => delete s.plexusTestUnknownKey);
    applyViewerDelta(doc, seen, edited(seen, (s) => (s.crossSectionScale = 9)), alice);
    expect(readViewerState(doc).plexusTestUnknownKey).toEqual(MULTI_LAYER_STATE.plexusTestUnknownKey);
    expect(readViewerState(doc).crossSectionScale).toBe(9);
  });

  it('reordering layers while someone else edits one of them keeps both', () => {
    const a = fresh(MULTI_LAYER_STATE);
    const b = replica(a);
    const base = readViewerState(a);
    applyViewerDelta(a, base, edited(base, (s) => s.layers.reverse()), alice);
    applyViewerDelta(b, base, edited(base, (s) => (s.layers[1].segments = ['1'])), bob);
    syncPair(a, b);
    const layers = readViewerState(b).layers as any[];
    expect(layers.map((l) => l.name)).toEqual(['notes', 'ground_truth', 'image']);
    expect(layers[1].segments).toEqual(['1']);
  });

  it('removing a layer while someone adds another keeps the new one only', () => {
    const a = fresh(MULTI_LAYER_STATE);
    const b = replica(a);
    const base = readViewerState(a);
    applyViewerDelta(a, base, edited(base, (s) => s.layers.splice(1, 1)), alice);
    applyViewerDelta(b, base, edited(base, (s) => s.layers.push({ type: 'image', source: 'precomputed://z', name: 'extra' })), bob);
    syncPair(a, b);
    expect((readViewerState(a).layers as any[]).map((l) => l.name)).toEqual(['image', 'notes', 'extra']);
  });
});

describe('targeted viewer writes (used by tools)', () => {
  it('set camera, layer props, a shader control and annotations', () => {
    const doc = fresh(CALCIUM_STATE);
    setCamera(doc, { position: [10, 20, 30], crossSectionScale: 2 }, alice);
    setLayerProps(doc, 'movie', { opacity: 0.5, visible: false }, alice);
    setShaderControl(doc, 'movie', 'normalized', { range: [100, 900] }, alice);
    const ids = addAnnotations(doc, 'marks', [{ type: 'point', point: [5, 5, 0], description: 'ROI 1' }], alice);
    const s = readViewerState(doc) as any;
    expect(s.position).toEqual([10, 20, 30]);
    expect(s.layers[0]).toMatchObject({ opacity: 0.5, visible: false, shaderControls: { normalized: { range: [100, 900] } } });
    expect(s.layers[1].annotations).toEqual([{ type: 'point', point: [5, 5, 0], description: 'ROI 1', id: ids[0] }]);
    removeLayer(doc, 'marks', alice);
    expect(viewerRoots(doc).layers.has('marks')).toBe(false);
  });

  it('names the known layers when a layer does not exist', () => {
    const doc = fresh(CALCIUM_STATE);
    expect(() => setLayerProps(doc, 'nope', { visible: true }, alice)).toThrow(UnknownLayerError);
    expect(() => setLayerProps(doc, 'nope', { visible: true }, alice)).toThrow(/layers: movie, marks/);
  });
});

describe('overlayState', () => {
  it('completes a viewer state with what only the document knows', () => {
    const docState = jsonClone(MULTI_LAYER_STATE) as any;
    docState.layers[0].plexusLayerNote = 'from an imported state';
    const viewer = edited(MULTI_LAYER_STATE, (s) => {
      delete s.plexusTestUnknownKey;
      s.position = [1, 1, 1];
      s.layers = [s.layers[1], s.layers[0]];
    }) as any;
    const out = overlayState(docState, viewer) as any;
    expect(out.plexusTestUnknownKey).toEqual(MULTI_LAYER_STATE.plexusTestUnknownKey);
    expect(out.position).toEqual([1, 1, 1]);
    expect(out.layers.map((l: any) => l.name)).toEqual(['ground_truth', 'image']);
    expect(out.layers[1].plexusLayerNote).toBe('from an imported state');
  });
});
