/**
 * Segments of a segmentation shown highlighted in the shared Neuroglancer viewer without touching
 * the layer that draws them: a second segmentation layer over the same source that lists only the
 * highlighted segments, each group in its own colour. Pure module (Y.Doc reads and writes only).
 *
 * Why a layer of its own (Neuroglancer 2.41, `layer/segmentation`): a segmentation layer has one
 * visible set, `segments`, and that is what ROI edits use to hide deleted ROIs (roi-view.ts), so it
 * cannot also carry a highlight. Stated colours (`segmentColors`) on that layer would leave every
 * other ROI in its random colour (a weak highlight), overwrite colours people chose and do nothing
 * while the layer is hidden (the demo's ground-truth `labels` is); `segmentQuery` only filters the
 * segment list of the layer panel, not what is drawn. The highlight layer instead sets:
 * - `segments`: the highlighted ids, and `ignoreNullVisibleSet: false`, so an empty list shows
 *   nothing (the default would show every segment);
 * - `segmentColors`: id → colour (later groups win for an id in two);
 * - `notSelectedAlpha: 0`, `selectedAlpha` high enough to stand out over the layer below;
 * - `pick: false`, so hovering and clicking still reach the layers below (the ROI layer itself).
 */
import type * as Y from 'yjs';
import { isJsonObject, type Json, type JsonObject } from '../json.ts';
import type { Origin } from '../origin.ts';
import { addLayer, normalizeLayers, readLayer, readViewerState, setLayerProps, type NgLayer } from './state-doc.ts';

/** One set of segments drawn in one colour. */
export interface SegmentGroup {
  ids: readonly number[];
  color: string;
}

/** The URL of a layer's (first) data source, whatever form its `source` has; '' when it has none. */
export function layerSourceUrl(layer: NgLayer | JsonObject | undefined): string {
  const s = layer?.source;
  if (typeof s === 'string') return s;
  if (Array.isArray(s)) return layerSourceUrl({ source: s[0] ?? null });
  if (isJsonObject(s) && typeof s.url === 'string') return s.url;
  return '';
}

/** The name of the first layer (of `type`, when given; none of `skip`) whose source URL is `url`, or null. */
export function findLayerBySource(doc: Y.Doc, url: string, opts: { type?: string; skip?: ReadonlySet<string> } = {}): string | null {
  if (!url) return null;
  const hit = normalizeLayers(readViewerState(doc).layers).find((l) => layerSourceUrl(l) === url && (opts.type === undefined || l.type === opts.type) && !opts.skip?.has(l.name));
  return hit ? hit.name : null;
}

/** The layer properties (all but `name`) of a highlight of `groups` over `source` (a layer's `source` value). Pure. */
export function segmentHighlightProps(source: Json, groups: readonly SegmentGroup[]): JsonObject {
  const colors = new Map<number, string>();
  for (const g of groups) for (const id of g.ids) if (Number.isSafeInteger(id) && id > 0) colors.set(id, g.color);
  const ids = [...colors.keys()].sort((a, b) => a - b);
  return {
    type: 'segmentation',
    source,
    segments: ids.map(String),
    segmentColors: Object.fromEntries(ids.map((id) => [String(id), colors.get(id)!])),
    ignoreNullVisibleSet: false,
    selectedAlpha: 0.85,
    notSelectedAlpha: 0,
    hoverHighlight: false,
    pick: false,
  };
}

/** The segment ids a highlight layer lists (`segments`, hidden `!id` entries left out). */
export function highlightedSegments(layer: NgLayer | undefined): number[] {
  const s = layer?.segments;
  if (!Array.isArray(s)) return [];
  return s.filter((v): v is string | number => (typeof v === 'string' && !v.startsWith('!')) || typeof v === 'number').map(Number).filter((n) => Number.isSafeInteger(n) && n > 0);
}

/**
 * Makes layer `name` the highlight of `groups` over `source`: added at the top when missing,
 * otherwise only the properties that differ are written. One transaction.
 */
export function writeSegmentHighlight(doc: Y.Doc, name: string, source: Json, groups: readonly SegmentGroup[], origin: Origin): void {
  const props = segmentHighlightProps(source, groups);
  doc.transact(() => {
    if (readLayer(doc, name)) setLayerProps(doc, name, props, origin);
    else addLayer(doc, { ...props, name } as NgLayer, origin);
  }, origin);
}

/** Drops from highlight layer `name` the segments `keep` refuses (with their colours). Returns how many it dropped. */
export function pruneSegmentHighlight(doc: Y.Doc, name: string, keep: (id: number) => boolean, origin: Origin): number {
  const layer = readLayer(doc, name);
  if (!layer || layer.type !== 'segmentation') return 0;
  const ids = highlightedSegments(layer);
  const gone = ids.filter((id) => !keep(id));
  if (!gone.length) return 0;
  const colors = isJsonObject(layer.segmentColors) ? layer.segmentColors : {};
  const left = ids.filter((id) => keep(id));
  setLayerProps(doc, name, {
    segments: left.map(String),
    segmentColors: Object.fromEntries(left.filter((id) => typeof colors[String(id)] === 'string').map((id) => [String(id), colors[String(id)]!])),
  }, origin);
  return gone.length;
}
