/**
 * Neuroglancer state ⇄ workspace document, mapped granularly so that concurrent changes merge.
 * Pure module (Y.Doc reads and writes only).
 *
 * Layout (three root types, so that no nested container is ever created lazily by two peers at
 * once — in Yjs the second of two concurrently created nested maps wins and the other's writes
 * are lost):
 *
 * | root           | type                     | content                                               |
 * |----------------|--------------------------|-------------------------------------------------------|
 * | `viewer`       | Y.Map<key, JSON>         | every top-level state key except `layers` (camera keys, `dimensions`, `layout`, unknown keys …) |
 * | `viewerLayers` | Y.Map<name, Y.Map>       | one entry per layer, see below                        |
 * | `viewerViews`  | Y.Map<id, JSON>          | named views (views.ts)                                |
 *
 * A layer entry holds `order` (fractional key), `props` (Y.Map of every layer key except `name`,
 * `shaderControls` and `annotations`), `controls` (Y.Map of shader controls by name),
 * `annotations` (Y.Map of id → {o: order key, a: annotation JSON}) and two flags saying whether the
 * original JSON carried `shaderControls` / `annotations` at all, so an empty `{}` or `[]`
 * survives the round trip. Nothing is dropped: keys Plexus does not know are stored as JSON
 * values and come back unchanged.
 */
import * as Y from 'yjs';
import type { Origin } from '../origin.ts';
import { orderKeyBetween } from '../order.ts';
import { randomId } from '../ids.ts';
import { isJsonObject, jsonEqual, type Json, type JsonObject } from '../json.ts';

/** A Neuroglancer viewer state (the JSON of `viewer.state`). */
export type NgState = JsonObject;
/** One entry of a state's `layers` array. */
export type NgLayer = JsonObject & { name: string };

export const VIEWER_ROOTS = { state: 'viewer', layers: 'viewerLayers', views: 'viewerViews' } as const;

/** The camera: the keys that say where one looks, as opposed to what is shown. */
export const CAMERA_KEYS = [
  'position',
  'crossSectionScale',
  'crossSectionOrientation',
  'crossSectionDepth',
  'projectionScale',
  'projectionOrientation',
  'projectionDepth',
] as const;
export type CameraKey = (typeof CAMERA_KEYS)[number];
export type Camera = Partial<Record<CameraKey, Json>>;

const LAYER_SPECIAL = new Set(['name', 'shaderControls', 'annotations']);

/** Typed access to the viewer roots. */
export function viewerRoots(doc: Y.Doc) {
  return {
    state: doc.getMap<Json>(VIEWER_ROOTS.state),
    layers: doc.getMap<Y.Map<unknown>>(VIEWER_ROOTS.layers),
    views: doc.getMap<Json>(VIEWER_ROOTS.views),
  };
}

interface AnnotationEntry {
  o: string;
  a: JsonObject;
}

function layerOrder(m: Y.Map<unknown>): string {
  const o = m.get('order');
  return typeof o === 'string' ? o : '';
}

/** Layer entries of the document in display order. */
function sortedLayers(doc: Y.Doc): { name: string; map: Y.Map<unknown> }[] {
  const out: { name: string; map: Y.Map<unknown> }[] = [];
  viewerRoots(doc).layers.forEach((map, name) => {
    if (map instanceof Y.Map) out.push({ name, map });
  });
  out.sort((a, b) => {
    const oa = layerOrder(a.map);
    const ob = layerOrder(b.map);
    return oa < ob ? -1 : oa > ob ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
  return out;
}

function sortedAnnotations(anns: Y.Map<AnnotationEntry>): { key: string; e: AnnotationEntry }[] {
  const out: { key: string; e: AnnotationEntry }[] = [];
  anns.forEach((e, key) => {
    if (e && typeof e === 'object' && isJsonObject((e as AnnotationEntry).a)) out.push({ key, e });
  });
  out.sort((x, y) => (x.e.o < y.e.o ? -1 : x.e.o > y.e.o ? 1 : x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  return out;
}

/** The JSON of one layer entry. */
function layerToJson(name: string, m: Y.Map<unknown>): NgLayer {
  const out: JsonObject = {};
  const props = m.get('props');
  if (props instanceof Y.Map) props.forEach((v, k) => (out[k] = v as Json));
  out.name = name;
  const controls = m.get('controls');
  if (controls instanceof Y.Map && (controls.size > 0 || m.get('hasControls') === true)) {
    const c: JsonObject = {};
    controls.forEach((v, k) => (c[k] = v as Json));
    out.shaderControls = c;
  }
  const anns = m.get('annotations');
  if (anns instanceof Y.Map && (anns.size > 0 || m.get('hasAnnotations') === true)) {
    out.annotations = sortedAnnotations(anns as Y.Map<AnnotationEntry>).map(({ e }) => e.a);
  }
  return out as NgLayer;
}

/** The Neuroglancer state held by the document (`layers` is always present, as Neuroglancer writes it). */
export function readViewerState(doc: Y.Doc): NgState {
  const { state } = viewerRoots(doc);
  const out: NgState = {};
  state.forEach((v, k) => (out[k] = v));
  out.layers = sortedLayers(doc).map(({ name, map }) => layerToJson(name, map));
  return out;
}

/** One layer's JSON, or undefined. */
export function readLayer(doc: Y.Doc, name: string): NgLayer | undefined {
  const m = viewerRoots(doc).layers.get(name);
  return m instanceof Y.Map ? layerToJson(name, m) : undefined;
}

/** The names of the layers in display order. */
export function layerNames(doc: Y.Doc): string[] {
  return sortedLayers(doc).map((l) => l.name);
}

/** The camera stored in the document. */
export function readCamera(doc: Y.Doc): Camera {
  const { state } = viewerRoots(doc);
  const cam: Camera = {};
  for (const k of CAMERA_KEYS) if (state.has(k)) cam[k] = state.get(k) as Json;
  return cam;
}

/** Layers of a state as a name-keyed list; accepts Neuroglancer's legacy object form too. */
export function normalizeLayers(layers: unknown): NgLayer[] {
  if (layers === undefined || layers === null) return [];
  if (Array.isArray(layers)) {
    return layers.filter((l): l is NgLayer => isJsonObject(l) && typeof l.name === 'string');
  }
  if (isJsonObject(layers)) {
    return Object.entries(layers).map(([name, spec]) =>
      (typeof spec === 'string' ? { name, source: spec } : { ...(isJsonObject(spec) ? spec : {}), name }) as NgLayer,
    );
  }
  return [];
}

/* ------------------------------------------------------------------------------------------ */
/* Writing                                                                                     */

function annotationKey(a: JsonObject, taken: Set<string>): string {
  const id = a.id;
  const key = typeof id === 'string' && id && !taken.has(id) ? id : randomId();
  taken.add(key);
  return key;
}

function fillLayer(m: Y.Map<unknown>, layer: NgLayer, order: string): void {
  m.set('order', order);
  const props = new Y.Map<unknown>();
  const controls = new Y.Map<unknown>();
  const anns = new Y.Map<AnnotationEntry>();
  for (const [k, v] of Object.entries(layer)) if (!LAYER_SPECIAL.has(k) && v !== undefined) props.set(k, v);
  m.set('props', props);
  m.set('controls', controls);
  m.set('annotations', anns);
  m.set('hasControls', isJsonObject(layer.shaderControls));
  m.set('hasAnnotations', Array.isArray(layer.annotations));
  if (isJsonObject(layer.shaderControls)) for (const [k, v] of Object.entries(layer.shaderControls)) controls.set(k, v);
  if (Array.isArray(layer.annotations)) {
    const taken = new Set<string>();
    let prev: string | null = null;
    for (const a of layer.annotations) {
      if (!isJsonObject(a)) continue;
      const o = orderKeyBetween(prev, null);
      prev = o;
      anns.set(annotationKey(a, taken), { o, a });
    }
  }
}

/** Where a new item goes: between the order keys of its nearest neighbours that already exist. */
function orderFor(index: number, names: string[], orderOf: (name: string) => string | undefined): string {
  let before: string | null = null;
  for (let i = index - 1; i >= 0; i--) {
    const o = orderOf(names[i]!);
    if (o !== undefined) {
      before = o;
      break;
    }
  }
  let after: string | null = null;
  for (let i = index + 1; i < names.length; i++) {
    const o = orderOf(names[i]!);
    if (o !== undefined && (before === null || o > before)) {
      after = o;
      break;
    }
  }
  return orderKeyBetween(before, after);
}

function sameRelativeOrder(a: string[], b: string[]): boolean {
  const inB = new Set(b);
  const inA = new Set(a);
  const fa = a.filter((x) => inB.has(x));
  const fb = b.filter((x) => inA.has(x));
  return fa.every((x, i) => x === fb[i]);
}

function patchMap(target: Y.Map<unknown>, base: JsonObject, next: JsonObject, skip?: Set<string>): void {
  for (const k of new Set([...Object.keys(base), ...Object.keys(next)])) {
    if (skip?.has(k)) continue;
    const nv = next[k];
    if (jsonEqual(base[k], nv)) continue;
    if (nv === undefined) target.delete(k);
    else target.set(k, nv);
  }
}

function patchAnnotations(m: Y.Map<unknown>, base: Json | undefined, next: Json | undefined): void {
  const anns = m.get('annotations');
  if (!(anns instanceof Y.Map)) return;
  const map = anns as Y.Map<AnnotationEntry>;
  if (Array.isArray(next) !== Array.isArray(base)) m.set('hasAnnotations', Array.isArray(next));
  const baseList = (Array.isArray(base) ? base : []).filter(isJsonObject);
  const nextList = (Array.isArray(next) ? next : []).filter(isJsonObject);
  // Match annotations by id; annotations without an id are matched by content.
  const keyOfDoc = new Map<string, string>();
  const byContent = new Map<string, string[]>();
  map.forEach((e, key) => {
    const id = e?.a?.id;
    if (typeof id === 'string') keyOfDoc.set(id, key);
    else {
      const c = JSON.stringify(e?.a);
      byContent.set(c, [...(byContent.get(c) ?? []), key]);
    }
  });
  const findKey = (a: JsonObject): string | undefined => {
    if (typeof a.id === 'string') return keyOfDoc.get(a.id);
    return byContent.get(JSON.stringify(a))?.[0];
  };
  const nextIds = new Set(nextList.map((a) => (typeof a.id === 'string' ? a.id : JSON.stringify(a))));
  for (const a of baseList) {
    const ident = typeof a.id === 'string' ? a.id : JSON.stringify(a);
    if (nextIds.has(ident)) continue;
    const key = findKey(a);
    if (key !== undefined) map.delete(key);
  }
  const baseById = new Map(baseList.map((a) => [typeof a.id === 'string' ? a.id : JSON.stringify(a), a]));
  const idents = nextList.map((a) => (typeof a.id === 'string' ? a.id : JSON.stringify(a)));
  const orderOf = (ident: string): string | undefined => {
    const a = nextList[idents.indexOf(ident)];
    const key = a && findKey(a);
    return key !== undefined ? map.get(key)?.o : undefined;
  };
  const reorder = !sameRelativeOrder(baseList.map((a) => (typeof a.id === 'string' ? a.id : JSON.stringify(a))), idents);
  const taken = new Set<string>();
  map.forEach((_e, k) => taken.add(k));
  let prevOrder: string | null = null;
  nextList.forEach((a, i) => {
    const ident = idents[i]!;
    const key = findKey(a);
    const before = baseById.get(ident);
    if (key === undefined) {
      const o = reorder ? orderKeyBetween(prevOrder, null) : orderFor(i, idents, orderOf);
      const k = annotationKey(a, taken);
      map.set(k, { o, a });
      if (typeof a.id === 'string') keyOfDoc.set(a.id, k);
      prevOrder = o;
      return;
    }
    const cur = map.get(key)!;
    const o = reorder ? orderKeyBetween(prevOrder, null) : cur.o;
    if (o !== cur.o || (before !== undefined && !jsonEqual(before, a)) || (before === undefined && !jsonEqual(cur.a, a))) {
      map.set(key, { o, a });
    }
    prevOrder = o;
  });
}

function patchLayer(m: Y.Map<unknown>, base: NgLayer, next: NgLayer): void {
  const props = m.get('props');
  if (props instanceof Y.Map) patchMap(props, base, next, LAYER_SPECIAL);
  if (!jsonEqual(base.shaderControls, next.shaderControls)) {
    const controls = m.get('controls');
    if (controls instanceof Y.Map) {
      const b = isJsonObject(base.shaderControls) ? base.shaderControls : {};
      const n = isJsonObject(next.shaderControls) ? next.shaderControls : {};
      patchMap(controls, b, n);
    }
    if (isJsonObject(base.shaderControls) !== isJsonObject(next.shaderControls)) m.set('hasControls', isJsonObject(next.shaderControls));
  }
  if (!jsonEqual(base.annotations, next.annotations)) patchAnnotations(m, base.annotations, next.annotations);
}

/**
 * Applies to the document the difference between two states: what changed from `base` to `next`.
 * Keys that are equal in both are left alone, so concurrent changes by others to other keys,
 * layers, controls or annotations survive. Must run inside a transaction.
 */
function patchViewer(doc: Y.Doc, base: NgState, next: NgState): void {
  const { state, layers } = viewerRoots(doc);
  patchMap(state as Y.Map<unknown>, base, next, new Set(['layers']));
  const baseLayers = normalizeLayers(base.layers);
  const nextLayers = normalizeLayers(next.layers);
  if (jsonEqual(baseLayers, nextLayers)) return;
  const baseByName = new Map(baseLayers.map((l) => [l.name, l]));
  const nextNames = nextLayers.map((l) => l.name);
  const nextSet = new Set(nextNames);
  for (const l of baseLayers) if (!nextSet.has(l.name)) layers.delete(l.name);
  const reorder = !sameRelativeOrder(baseLayers.map((l) => l.name), nextNames);
  const orderOf = (name: string): string | undefined => {
    const m = layers.get(name);
    return m instanceof Y.Map ? layerOrder(m) : undefined;
  };
  let prev: string | null = null;
  nextLayers.forEach((layer, i) => {
    const existing = layers.get(layer.name);
    const before = baseByName.get(layer.name);
    if (!(existing instanceof Y.Map) || before === undefined) {
      // New here (or re-added): the whole layer is written.
      const o = reorder ? orderKeyBetween(prev, null) : orderFor(i, nextNames, (n) => (n === layer.name ? undefined : orderOf(n)));
      const m = new Y.Map<unknown>();
      layers.set(layer.name, m);
      fillLayer(m, layer, o);
      prev = o;
      return;
    }
    if (reorder) {
      const o = orderKeyBetween(prev, null);
      existing.set('order', o);
      prev = o;
    } else prev = layerOrder(existing);
    if (!jsonEqual(before, layer)) patchLayer(existing, before, layer);
  });
}

/**
 * Records a change made in one viewer: the difference from `before` to `after` (two states of the
 * same viewer) is written to the document, leaving everything else as it is.
 */
export function applyViewerDelta(doc: Y.Doc, before: NgState, after: NgState, origin: Origin): void {
  doc.transact(() => patchViewer(doc, before, after), origin);
}

/**
 * Makes the document hold exactly `next` (an import, or loading a named view), with the
 * smallest set of changes.
 */
export function replaceViewerState(doc: Y.Doc, next: NgState, origin: Origin): void {
  doc.transact(() => {
    const current = readViewerState(doc);
    patchViewer(doc, current, { ...next, layers: normalizeLayers(next.layers) });
  }, origin);
}

/** Sets camera keys (others are untouched). */
export function setCamera(doc: Y.Doc, camera: Camera, origin: Origin): void {
  const { state } = viewerRoots(doc);
  doc.transact(() => {
    for (const k of CAMERA_KEYS) {
      const v = camera[k];
      if (v !== undefined && !jsonEqual(state.get(k), v)) state.set(k, v);
    }
  }, origin);
}

/** The viewer's layout (`xy`, `4panel`, `3d`, …), or null when the document has none. */
export function readViewerLayout(doc: Y.Doc): string | null {
  const l = viewerRoots(doc).state.get('layout');
  return typeof l === 'string' ? l : null;
}

/** Sets the shared viewer layout. */
export function setViewerLayout(doc: Y.Doc, layout: string, origin: Origin): void {
  const { state } = viewerRoots(doc);
  if (state.get('layout') !== layout) doc.transact(() => state.set('layout', layout), origin);
}

/** Raised when a change names a layer the document does not have. */
export class UnknownLayerError extends Error {
  constructor(readonly layer: string, known: string[]) {
    super(`no layer named "${layer}"${known.length ? ` (layers: ${known.join(', ')})` : ' (the viewer has no layers)'}`);
  }
}

function layerMap(doc: Y.Doc, name: string): Y.Map<unknown> {
  const m = viewerRoots(doc).layers.get(name);
  if (!(m instanceof Y.Map)) throw new UnknownLayerError(name, layerNames(doc));
  return m;
}

/** Adds a layer at the end (or replaces the layer of that name). */
export function addLayer(doc: Y.Doc, layer: NgLayer, origin: Origin): void {
  doc.transact(() => {
    const names = layerNames(doc).filter((n) => n !== layer.name);
    const last = names.length ? layerOrder(viewerRoots(doc).layers.get(names[names.length - 1]!)!) : null;
    const m = new Y.Map<unknown>();
    viewerRoots(doc).layers.set(layer.name, m);
    fillLayer(m, layer, orderKeyBetween(last, null));
    const factors = timeRenderScales(layer);
    const state = viewerRoots(doc).state;
    if (factors && state.get('relativeDisplayScales') === undefined) state.set('relativeDisplayScales', factors);
  }, origin);
}

/**
 * Neuroglancer compares units across axes numerically (1 s counts as 1 m): a time axis of 33 ms
 * frames beside 1 µm pixels is drawn 33,000 times stretched and its scale bar reads microseconds.
 * For a layer with a time axis (`s`) and spatial axes (`m`) this gives Neuroglancer's
 * `relativeDisplayScales` that draw one frame as wide as the finest spatial voxel, so the time
 * scale bar reads seconds. Null for layers without both. Pure.
 */
export function timeRenderScales(layer: NgLayer): Record<string, number> | null {
  const src = (layer as { source?: unknown }).source;
  const transform = src && typeof src === 'object' && !Array.isArray(src) ? (src as { transform?: { outputDimensions?: Record<string, unknown> } }).transform : undefined;
  const dims = transform?.outputDimensions;
  if (!dims) return null;
  let spatial = Infinity;
  const times: Array<[string, number]> = [];
  for (const [name, d] of Object.entries(dims)) {
    if (!Array.isArray(d) || typeof d[0] !== 'number' || !(d[0] > 0)) continue;
    if (d[1] === 'm') spatial = Math.min(spatial, d[0]);
    else if (d[1] === 's') times.push([name, d[0]]);
  }
  if (!Number.isFinite(spatial) || times.length === 0) return null;
  return Object.fromEntries(times.map(([name, scale]) => [name, spatial / scale]));
}

/** The document's `relativeDisplayScales` (render scale per dimension name), or null. */
export function readRenderScales(doc: Y.Doc): Record<string, number> | null {
  const v = viewerRoots(doc).state.get('relativeDisplayScales');
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const out: Record<string, number> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === 'number') out[k] = x;
  return out;
}

/** Removes a layer. */
export function removeLayer(doc: Y.Doc, name: string, origin: Origin): void {
  layerMap(doc, name);
  doc.transact(() => viewerRoots(doc).layers.delete(name), origin);
}

/** Sets (or with `undefined`, removes) top-level properties of a layer such as `visible` or `opacity`. */
export function setLayerProps(doc: Y.Doc, name: string, patch: Record<string, Json | undefined>, origin: Origin): void {
  const m = layerMap(doc, name);
  doc.transact(() => {
    const props = m.get('props') as Y.Map<unknown>;
    for (const [k, v] of Object.entries(patch)) {
      if (LAYER_SPECIAL.has(k)) throw new Error(`"${k}" cannot be set as a layer property`);
      if (v === undefined) props.delete(k);
      else if (!jsonEqual(props.get(k), v)) props.set(k, v);
    }
  }, origin);
}

/** Sets one shader control of a layer (for example the `normalized` LUT range `{range: [lo, hi]}`). */
export function setShaderControl(doc: Y.Doc, name: string, control: string, value: Json, origin: Origin): void {
  const m = layerMap(doc, name);
  doc.transact(() => {
    (m.get('controls') as Y.Map<unknown>).set(control, value);
    if (m.get('hasControls') !== true) m.set('hasControls', true);
  }, origin);
}

/** Appends annotations to an annotation layer; returns their ids. */
export function addAnnotations(doc: Y.Doc, name: string, annotations: JsonObject[], origin: Origin): string[] {
  const m = layerMap(doc, name);
  const ids: string[] = [];
  doc.transact(() => {
    const anns = m.get('annotations') as Y.Map<AnnotationEntry>;
    const existing = sortedAnnotations(anns);
    let prev = existing.length ? existing[existing.length - 1]!.e.o : null;
    const taken = new Set<string>(anns.keys());
    for (const a of annotations) {
      const id = typeof a.id === 'string' && !taken.has(a.id) ? a.id : randomId();
      taken.add(id);
      const o = orderKeyBetween(prev, null);
      prev = o;
      anns.set(id, { o, a: { ...a, id } });
      ids.push(id);
    }
    if (m.get('hasAnnotations') !== true) m.set('hasAnnotations', true);
  }, origin);
  return ids;
}

/** Removes annotations by id from a layer; returns how many existed. */
export function removeAnnotations(doc: Y.Doc, name: string, ids: string[], origin: Origin): number {
  const m = layerMap(doc, name);
  let n = 0;
  doc.transact(() => {
    const anns = m.get('annotations') as Y.Map<AnnotationEntry>;
    for (const id of ids) if (anns.has(id)) (anns.delete(id), n++);
  }, origin);
  return n;
}

/**
 * A viewer's state completed with what only the document knows: keys this Neuroglancer does not
 * understand (at the top level and per layer) are taken from `doc`, everything else from
 * `viewer`. Exports and named views use it so that nothing imported is silently dropped.
 */
export function overlayState(doc: NgState, viewer: NgState): NgState {
  const docLayers = new Map(normalizeLayers(doc.layers).map((l) => [l.name, l]));
  const out: NgState = { ...doc, ...viewer };
  if ('layers' in viewer || 'layers' in doc) {
    out.layers = normalizeLayers(viewer.layers).map((l) => ({ ...(docLayers.get(l.name) ?? {}), ...l }) as NgLayer);
  }
  return out;
}
