/**
 * A map's rows in the shared viewer: when a map's table is a table of ROIs — a calcium analysis's
 * `rois` table (its `id` column holds the ids of the job's ROI layer) or a table registered with
 * the segmentation its ids name (`segmentSource`: the demo's ground-truth neurons and `labels`) —
 * the ROIs of its selected rows (orange) and highlighted rows (magenta) show in the viewer for
 * everyone, on a layer of their own over the ROI layer (segment-highlight.ts says why), and the
 * map's `viewer` key says which layer and how many (viewer-record.ts). ROIs people deleted stay
 * hidden. The server reads the rows' ids (only it has the table: server/src/atlas) and writes them
 * with `writeAtlasViewer`; clearing the selection clears it (atlas.ts). Pure module.
 */
import type * as Y from 'yjs';
import { jsonEqual } from '../json.ts';
import type { Origin } from '../origin.ts';
import { listJobs } from '../analysis/jobs.ts';
import { calciumResult, findRoiLayer, jobRoiIds, roiLayerSource, roiShown, tablesReplaced } from '../analysis/roi-view.ts';
import { getTable } from '../notebook/data.ts';
import { layerNames, readLayer, removeLayer } from '../viewer/state-doc.ts';
import { findLayerBySource, writeSegmentHighlight } from '../viewer/segment-highlight.ts';
import { getAtlasMap, MAX_ATLAS_ROWS, type AtlasSelection } from './atlas.ts';
import { ATLAS_HIGHLIGHT_COLOR, ATLAS_SELECTION_COLOR, ATLAS_VIEWER_KEY, atlasHighlightLayers, clearAtlasViewer, type AtlasViewerHighlight } from './viewer-record.ts';

/** The segmentation a table's `id` column names. */
export interface SegmentTable {
  /** Its portable source URL. */
  url: string;
  /** The viewer layer that draws it now (never a highlight layer), or null. */
  layer: string | null;
  /** Whether an id is still drawn (false for ROIs people deleted). */
  shown: (id: number) => boolean;
}

/**
 * The segmentation whose segment ids table `table`'s `id` column holds, or null: the newest
 * finished calcium analysis whose `rois` table it is, else the table's `segmentSource`.
 */
export function segmentTableOf(doc: Y.Doc, table: string): SegmentTable | null {
  const t = getTable(doc, table);
  if (!t || !t.columns.some((c) => c.name === 'id')) return null;
  const jobs = listJobs(doc);
  const job = jobs.find((j) => calciumResult(j)?.tables.rois === table && !tablesReplaced(j, jobs));
  if (job) return { url: roiLayerSource(job)!, layer: findRoiLayer(doc, job), shown: roiShown(jobRoiIds(job), job.roiEdits) };
  if (!t.segmentSource) return null;
  return { url: t.segmentSource, layer: findLayerBySource(doc, t.segmentSource, { type: 'segmentation', skip: atlasHighlightLayers(doc) }), shown: () => true };
}

/** What the rows of a map stood for when their ids were read: the write is dropped when the map moved on since. */
export interface AtlasViewerBasis {
  selection: AtlasSelection | null;
  highlight: number[] | null;
}

/** The basis of a map as it is now (to hand back to `writeAtlasViewer`). */
export function atlasViewerBasis(doc: Y.Doc, mapId: string): AtlasViewerBasis | null {
  const m = getAtlasMap(doc, mapId);
  return m ? { selection: m.selection, highlight: m.highlight?.rows ?? null } : null;
}

const ids = (list: readonly number[]) => [...new Set(list.filter((n) => Number.isSafeInteger(n) && n > 0))].slice(0, MAX_ATLAS_ROWS);

function freeLayerName(doc: Y.Doc, base: string): string {
  const taken = new Set(layerNames(doc));
  let name = base.slice(0, 190);
  for (let i = 2; taken.has(name); i++) name = `${base.slice(0, 190)} ${i}`;
  return name;
}

/**
 * Shows the segments `found` (the `id` values of the map's selected and highlighted rows) in the
 * viewer, in one transaction: the map's highlight layer is added or updated over the layer that
 * draws its table's segments (deleted ROIs left out) and its `viewer` key says so; with nothing to
 * show, or a table that names no segments, both go. Dropped when `basis` no longer matches the
 * map (a newer selection is on its way). Writes nothing when it already shows exactly that.
 * Returns whether the map's viewer highlight now stands for `basis`.
 */
export function writeAtlasViewer(doc: Y.Doc, mapId: string, found: { selection: readonly number[]; highlight: readonly number[] }, basis: AtlasViewerBasis, origin: Origin): boolean {
  let ok = false;
  doc.transact(() => {
    const m = getAtlasMap(doc, mapId);
    if (!m || !jsonEqual(m.selection, basis.selection) || !jsonEqual(m.highlight?.rows ?? null, basis.highlight)) return;
    ok = true;
    const target = segmentTableOf(doc, m.table);
    const selected = ids(found.selection);
    const highlighted = ids(found.highlight);
    if (!target || (!selected.length && !highlighted.length)) return clearAtlasViewer(doc, m.map, origin);
    const all = ids([...selected, ...highlighted]);
    const shown = all.filter(target.shown);
    const mine = m.viewer?.layer && readLayer(doc, m.viewer.layer) ? m.viewer.layer : null;
    let layer: string | null = null;
    const over = target.layer ? readLayer(doc, target.layer) : undefined;
    if (over?.source !== undefined) {
      layer = mine ?? freeLayerName(doc, `Atlas: ${m.title}`);
      writeSegmentHighlight(doc, layer, over.source, [
        { ids: selected.filter(target.shown), color: ATLAS_SELECTION_COLOR },
        { ids: highlighted.filter(target.shown), color: ATLAS_HIGHLIGHT_COLOR },
      ], origin);
    } else if (mine) removeLayer(doc, mine, origin);
    const next: AtlasViewerHighlight = { layer, of: over ? target.layer : null, shown: shown.length, hidden: all.length - shown.length, at: Date.now() };
    if (!m.viewer || !jsonEqual({ ...m.viewer, at: 0 }, { ...next, at: 0 })) m.map.set(ATLAS_VIEWER_KEY, next);
  }, origin);
  return ok;
}
