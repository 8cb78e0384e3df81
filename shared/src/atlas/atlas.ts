/**
 * The atlas (seed 004, shared): 2-D maps of a table's rows that a whole meeting looks at and
 * brushes together. A map names its table, how its coordinates are made (chosen x/y columns, PCA
 * or UMAP of numeric columns, TF-IDF + SVD of a text column, or the embeddings of a text column from
 * the server's embedding service, when it has one) and where the server put them (a
 * coordinates table `row, x, y`); the selection is stored as geometry in map coordinates (a
 * rectangle or a lasso polygon — never as row ids, so it stays small whatever it covers); highlight
 * sets and saved categories hold row numbers (0-based positions in the table). Pure module.
 *
 * | key in `atlas/<id>` | written by | value |
 * |---|---|---|
 * | `id`, `table`, `method`, `columns`, `created`, `createdBy` | whoever creates it | what the map is of |
 * | `title`, `colorBy` | anyone | display |
 * | `coords` | the server | `AtlasCoords`: status, progress, the coordinates table, point count, cluster labels |
 * | `selection` | anyone | `AtlasSelection` or absent |
 * | `highlight` | anyone (the agent too) | `AtlasHighlight`: rows shown highlighted for everyone |
 * | `categories` | anyone (the agent too) | Y.Map name → `AtlasCategory` |
 * | `viewer` | the server (anyone clears it) | `AtlasViewerHighlight`: the viewer layer that shows the selected and highlighted rows' ROIs (atlas-viewer.ts) |
 */
import * as Y from 'yjs';
import { randomId } from '../ids.ts';
import type { Origin } from '../origin.ts';
import { roots } from '../schema.ts';
import { clearAtlasViewer, readAtlasViewer, type AtlasViewerHighlight } from './viewer-record.ts';

export const ATLAS_METHODS = ['columns', 'pca', 'umap', 'tfidf', 'embeddings'] as const;
export type AtlasMethod = (typeof ATLAS_METHODS)[number];

/** Methods that place the rows of one text column (the others read numeric columns). */
export const isTextMethod = (m: AtlasMethod): boolean => m === 'tfidf' || m === 'embeddings';

/**
 * What the server can do for maps (`GET /api/config` → `{ atlas }`): `embeddings` names the model
 * of its OpenAI-compatible embedding service, or is null when it has none (text maps are then
 * TF-IDF only). Never the service's address or key.
 */
export interface AtlasServerConfig {
  embeddings: { model: string } | null;
}

export interface AtlasCoords {
  status: 'queued' | 'running' | 'done' | 'error';
  /** The registered table with the coordinates: `row` (0-based row of the source table), `x`, `y`, `cluster`. */
  table?: string;
  points?: number;
  progress?: { stage: string; done: number; total: number };
  error?: string;
  /** Cluster labels placed on the map. */
  labels?: Array<{ cluster: number; x: number; y: number; text: string; size: number }>;
  /** How the coordinates were made, in words (shown in the panel, e.g. "UMAP of 6 numeric columns"). */
  how?: string;
  at: number;
}

export type AtlasSelection =
  | { kind: 'rect'; x0: number; y0: number; x1: number; y1: number; by: string; name?: string; at: number }
  | { kind: 'lasso'; points: Array<[number, number]>; by: string; name?: string; at: number };

export interface AtlasHighlight {
  rows: number[];
  label: string;
  by: string;
  name?: string;
  at: number;
}

export interface AtlasCategory {
  rows: number[];
  note: string;
  /** A sub-agent's short summary of the rows, when one made it. */
  summary?: string;
  by: string;
  name?: string;
  at: number;
}

export interface AtlasMapView {
  id: string;
  table: string;
  method: AtlasMethod;
  columns: string[];
  title: string;
  colorBy: string | null;
  created: number;
  createdBy: string;
  coords: AtlasCoords | null;
  selection: AtlasSelection | null;
  highlight: AtlasHighlight | null;
  categories: Record<string, AtlasCategory>;
  /** Where the selected and highlighted rows show in the viewer (maps of ROI tables), or null. */
  viewer: AtlasViewerHighlight | null;
  map: Y.Map<unknown>;
}

/** Most rows a highlight or a category holds; most vertices of a lasso. */
export const MAX_ATLAS_ROWS = 10_000;
export const MAX_LASSO_POINTS = 500;

const obj = <T>(v: unknown): T | null => (v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Y.AbstractType) ? (v as T) : null);

function readMap(m: unknown): AtlasMapView | null {
  if (!(m instanceof Y.Map)) return null;
  const id = m.get('id');
  const table = m.get('table');
  if (typeof id !== 'string' || typeof table !== 'string') return null;
  const cats = m.get('categories');
  const categories: Record<string, AtlasCategory> = {};
  if (cats instanceof Y.Map) cats.forEach((v, k) => {
    const c = obj<AtlasCategory>(v);
    if (c) categories[k] = c;
  });
  const method = m.get('method');
  return {
    id,
    table,
    method: (ATLAS_METHODS as readonly unknown[]).includes(method) ? (method as AtlasMethod) : 'columns',
    columns: Array.isArray(m.get('columns')) ? (m.get('columns') as string[]) : [],
    title: typeof m.get('title') === 'string' ? (m.get('title') as string) : table,
    colorBy: typeof m.get('colorBy') === 'string' ? (m.get('colorBy') as string) : null,
    created: Number(m.get('created') ?? 0),
    createdBy: String(m.get('createdBy') ?? ''),
    coords: obj<AtlasCoords>(m.get('coords')),
    selection: obj<AtlasSelection>(m.get('selection')),
    highlight: obj<AtlasHighlight>(m.get('highlight')),
    categories,
    viewer: readAtlasViewer(m),
    map: m,
  };
}

export function getAtlasMap(doc: Y.Doc, id: string): AtlasMapView | null {
  return readMap(roots(doc).atlas.get(id));
}

/** Every map, oldest first. */
export function listAtlasMaps(doc: Y.Doc): AtlasMapView[] {
  const out: AtlasMapView[] = [];
  roots(doc).atlas.forEach((m) => {
    const v = readMap(m);
    if (v) out.push(v);
  });
  return out.sort((a, b) => a.created - b.created || (a.id < b.id ? -1 : 1));
}

/** Creates a map of `table` (its coordinates are the server's job). Returns its id. */
export function createAtlasMap(
  doc: Y.Doc,
  input: { table: string; method: AtlasMethod; columns: string[]; title?: string; colorBy?: string | null; id?: string },
  who: { id: string },
  origin: Origin,
): string {
  const id = input.id ?? `m_${randomId(10)}`;
  doc.transact(() => {
    const m = new Y.Map<unknown>();
    m.set('id', id);
    m.set('table', input.table);
    m.set('method', input.method);
    m.set('columns', input.columns.slice(0, 200));
    m.set('title', (input.title ?? input.table).slice(0, 200));
    if (input.colorBy) m.set('colorBy', input.colorBy);
    m.set('created', Date.now());
    m.set('createdBy', who.id);
    m.set('categories', new Y.Map<unknown>());
    roots(doc).atlas.set(id, m);
  }, origin);
  return id;
}

function mapOf(doc: Y.Doc, id: string): Y.Map<unknown> | null {
  const m = roots(doc).atlas.get(id);
  return m instanceof Y.Map ? m : null;
}

/** Server: the coordinates' progress and result. */
export function setAtlasCoords(doc: Y.Doc, id: string, coords: AtlasCoords, origin: Origin): boolean {
  const m = mapOf(doc, id);
  if (!m) return false;
  doc.transact(() => m.set('coords', coords), origin);
  return true;
}

export function setAtlasColorBy(doc: Y.Doc, id: string, column: string | null, origin: Origin): void {
  const m = mapOf(doc, id);
  if (m) doc.transact(() => (column ? m.set('colorBy', column) : m.delete('colorBy')), origin);
}

/** The shared selection (a released brush), or none. */
export function setAtlasSelection(doc: Y.Doc, id: string, sel: AtlasSelection | null, origin: Origin): void {
  const m = mapOf(doc, id);
  if (!m) return;
  const clean = sel && sel.kind === 'lasso' ? { ...sel, points: sel.points.slice(0, MAX_LASSO_POINTS) } : sel;
  doc.transact(() => {
    if (clean) m.set('selection', clean);
    else {
      m.delete('selection');
      // Nothing left to show: the viewer's highlight goes in the same transaction.
      if (!m.has('highlight')) clearAtlasViewer(doc, m, origin);
    }
  }, origin);
}

export function setAtlasHighlight(doc: Y.Doc, id: string, h: AtlasHighlight | null, origin: Origin): void {
  const m = mapOf(doc, id);
  if (!m) return;
  doc.transact(() => {
    if (h) m.set('highlight', { ...h, rows: [...new Set(h.rows)].slice(0, MAX_ATLAS_ROWS), label: h.label.slice(0, 200) });
    else {
      m.delete('highlight');
      if (!m.has('selection')) clearAtlasViewer(doc, m, origin);
    }
  }, origin);
}

/** Saves rows as a named category (replacing one of the same name). */
export function saveAtlasCategory(doc: Y.Doc, id: string, name: string, cat: AtlasCategory, origin: Origin): boolean {
  const cats = mapOf(doc, id)?.get('categories');
  if (!(cats instanceof Y.Map)) return false;
  const clean: AtlasCategory = { ...cat, rows: [...new Set(cat.rows)].slice(0, MAX_ATLAS_ROWS), note: cat.note.slice(0, 2000), ...(cat.summary ? { summary: cat.summary.slice(0, 2000) } : {}) };
  doc.transact(() => cats.set(name.slice(0, 100), clean), origin);
  return true;
}

export function removeAtlasCategory(doc: Y.Doc, id: string, name: string, origin: Origin): boolean {
  const cats = mapOf(doc, id)?.get('categories');
  if (!(cats instanceof Y.Map) || !cats.has(name)) return false;
  doc.transact(() => cats.delete(name), origin);
  return true;
}

export function removeAtlasMap(doc: Y.Doc, id: string, origin: Origin): boolean {
  const m = mapOf(doc, id);
  if (!roots(doc).atlas.has(id)) return false;
  doc.transact(() => {
    // Its highlight layer goes with it.
    if (m) clearAtlasViewer(doc, m, origin);
    roots(doc).atlas.delete(id);
  }, origin);
  return true;
}

/** Whether the point lies in the selection (even-odd rule for lassos). Pure. */
export function inSelection(sel: AtlasSelection, x: number, y: number): boolean {
  if (sel.kind === 'rect') return x >= Math.min(sel.x0, sel.x1) && x <= Math.max(sel.x0, sel.x1) && y >= Math.min(sel.y0, sel.y1) && y <= Math.max(sel.y0, sel.y1);
  let inside = false;
  const p = sel.points;
  for (let i = 0, j = p.length - 1; i < p.length; j = i++) {
    const [xi, yi] = p[i]!;
    const [xj, yj] = p[j]!;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** The selection as an SQL predicate over columns `x`, `y` (a rectangle exactly; a lasso by its bounding box, refined by `inSelection`). Pure. */
export function selectionBoundingBox(sel: AtlasSelection): { x0: number; y0: number; x1: number; y1: number } {
  if (sel.kind === 'rect') return { x0: Math.min(sel.x0, sel.x1), y0: Math.min(sel.y0, sel.y1), x1: Math.max(sel.x0, sel.x1), y1: Math.max(sel.y0, sel.y1) };
  const xs = sel.points.map((p) => p[0]);
  const ys = sel.points.map((p) => p[1]);
  return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
}

/** What one transaction changed that the server's atlas jobs follow. */
export interface AtlasChange {
  /** Maps created or replaced (a new `atlas/<id>` entry). */
  maps: string[];
  /** Maps removed. */
  removed: string[];
  /** Maps whose selection or highlight was set or cleared (the rows they stand for changed). */
  selections: string[];
  /** Tables registered, replaced or removed in the `data` registry. */
  tables: string[];
}

/**
 * Calls `f` after each transaction that created, replaced or removed a map, changed a map's
 * selection or highlight, or (re)registered or removed a table (any origin). Returns the unsubscribe.
 */
export function observeAtlas(doc: Y.Doc, f: (change: AtlasChange) => void): () => void {
  const { atlas, data } = roots(doc);
  const onAtlas = (events: Array<Y.YEvent<Y.AbstractType<unknown>>>) => {
    const c: AtlasChange = { maps: [], removed: [], selections: [], tables: [] };
    for (const e of events) {
      if (e.target === atlas) {
        e.changes.keys.forEach((ch, id) => (ch.action === 'delete' ? c.removed : c.maps).push(id));
      } else if (e.path.length === 1 && e instanceof Y.YMapEvent && (e.keysChanged.has(SELECTION_KEY) || e.keysChanged.has(HIGHLIGHT_KEY))) c.selections.push(String(e.path[0]));
    }
    if (c.maps.length || c.removed.length || c.selections.length) f(c);
  };
  const onData = (e: Y.YMapEvent<unknown>) => {
    const tables = [...e.keysChanged];
    if (tables.length) f({ maps: [], removed: [], selections: [], tables });
  };
  atlas.observeDeep(onAtlas);
  data.observe(onData);
  return () => {
    atlas.unobserveDeep(onAtlas);
    data.unobserve(onData);
  };
}

const SELECTION_KEY = 'selection';
const HIGHLIGHT_KEY = 'highlight';
