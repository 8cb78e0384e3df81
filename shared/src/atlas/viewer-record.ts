/**
 * Where a map's selection and highlight show in the shared viewer: the map's `viewer` key names
 * the highlight layer (segment-highlight.ts) that draws the segments (ROIs) its selected and
 * highlighted rows stand for, and how many. The server writes both (atlas-viewer.ts, it alone can
 * read the rows' ids); people's transactions clear them with the selection and drop deleted ROIs
 * from them with the deletion (roi-view.ts), so nothing stale shows in between. Pure module (it
 * reads the atlas root itself, so that atlas.ts and roi-view.ts can both use it).
 */
import * as Y from 'yjs';
import type { Origin } from '../origin.ts';
import { roots } from '../schema.ts';
import { readLayer, removeLayer } from '../viewer/state-doc.ts';
import { layerSourceUrl, pruneSegmentHighlight } from '../viewer/segment-highlight.ts';

/** The colours of the map's selection and of its highlight, on the map and in the viewer alike. */
export const ATLAS_SELECTION_COLOR = '#ff4f00';
export const ATLAS_HIGHLIGHT_COLOR = '#d6008f';

/** The `viewer` key of a map. */
export interface AtlasViewerHighlight {
  /** The viewer layer that draws the segments; null when the viewer has no layer of them to draw over. */
  layer: string | null;
  /** The segmentation layer whose segments they are (its name when written), or null. */
  of: string | null;
  /** Segments shown (selected or highlighted rows' ids). */
  shown: number;
  /** Rows' ids left out because their ROI was deleted. */
  hidden: number;
  at: number;
}

export const ATLAS_VIEWER_KEY = 'viewer';

/** A map's viewer highlight, read defensively. */
export function readAtlasViewer(m: Y.Map<unknown>): AtlasViewerHighlight | null {
  const v = m.get(ATLAS_VIEWER_KEY) as Partial<AtlasViewerHighlight> | undefined;
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const str = (x: unknown) => (typeof x === 'string' ? x : null);
  const count = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : 0);
  return { layer: str(v.layer), of: str(v.of), shown: count(v.shown), hidden: count(v.hidden), at: count(v.at) };
}

/** The names of every map's highlight layer (they share their source with the layer they highlight). */
export function atlasHighlightLayers(doc: Y.Doc): Set<string> {
  const out = new Set<string>();
  roots(doc).atlas.forEach((m) => {
    const layer = m instanceof Y.Map ? readAtlasViewer(m)?.layer : null;
    if (layer) out.add(layer);
  });
  return out;
}

/** Removes a map's highlight layer and its `viewer` key (inside the caller's transaction, or its own). */
export function clearAtlasViewer(doc: Y.Doc, m: Y.Map<unknown>, origin: Origin): void {
  const v = readAtlasViewer(m);
  if (!v && !m.has(ATLAS_VIEWER_KEY)) return;
  doc.transact(() => {
    if (v?.layer && readLayer(doc, v.layer)) removeLayer(doc, v.layer, origin);
    m.delete(ATLAS_VIEWER_KEY);
  }, origin);
}

/**
 * Drops the segments `keep` refuses from every map's highlight layer drawn over source `url`
 * (an ROI deleted: it disappears from the highlight with the deletion). Returns how many.
 */
export function pruneAtlasViewers(doc: Y.Doc, url: string, keep: (id: number) => boolean, origin: Origin): number {
  if (!url) return 0;
  let dropped = 0;
  doc.transact(() => {
    roots(doc).atlas.forEach((m) => {
      const v = m instanceof Y.Map ? readAtlasViewer(m) : null;
      if (!v?.layer || layerSourceUrl(readLayer(doc, v.layer)) !== url) return;
      const n = pruneSegmentHighlight(doc, v.layer, keep, origin);
      if (n) m.set(ATLAS_VIEWER_KEY, { ...v, shown: Math.max(0, v.shown - n), hidden: v.hidden + n, at: Date.now() });
      dropped += n;
    });
  }, origin);
  return dropped;
}
