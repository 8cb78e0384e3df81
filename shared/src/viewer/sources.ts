/**
 * Portable data-source URLs. Volumes served by this Plexus server are stored in the document as
 * `plexus://volumes/…` and become absolute URLs of whichever origin a viewer uses (localhost, a
 * LAN address, a public name): the same workspace works from all of them, and an exported state
 * carries the exporting page's origin. Pure module.
 */
import { isJsonObject, type Json } from '../json.ts';
import { normalizeLayers, type NgLayer, type NgState } from './state-doc.ts';

/** The origin placeholder for this server's own volumes. */
export const LOCAL_ORIGIN = 'plexus://';

type Rewrite = (url: string) => string;

function rewriteSource(source: Json | undefined, f: Rewrite): Json | undefined {
  if (typeof source === 'string') return f(source);
  if (Array.isArray(source)) return source.map((s) => rewriteSource(s, f) as Json);
  if (isJsonObject(source) && typeof source.url === 'string') return { ...source, url: f(source.url) };
  return source;
}

function rewriteState(state: NgState, f: Rewrite): NgState {
  if (!('layers' in state)) return state;
  const layers = normalizeLayers(state.layers).map((l) => ('source' in l ? { ...l, source: rewriteSource(l.source, f) as Json } : l));
  return { ...state, layers };
}

function trimSlash(origin: string): string {
  return origin.endsWith('/') ? origin.slice(0, -1) : origin;
}

/** `precomputed://plexus://volumes/x` → `precomputed://http://host:port/volumes/x`. */
export function localizeSourceUrl(url: string, origin: string): string {
  const i = url.indexOf(LOCAL_ORIGIN);
  if (i < 0) return url;
  return url.slice(0, i) + trimSlash(origin) + '/' + url.slice(i + LOCAL_ORIGIN.length);
}

/** `precomputed://http://host:port/volumes/x` → `precomputed://plexus://volumes/x` (only for `origin`'s volumes). */
export function portableSourceUrl(url: string, origin: string): string {
  const prefix = trimSlash(origin) + '/volumes/';
  const i = url.indexOf(prefix);
  if (i < 0) return url;
  return url.slice(0, i) + LOCAL_ORIGIN + 'volumes/' + url.slice(i + prefix.length);
}

/** The state as a viewer at `origin` must load it. */
export function localizeState(state: NgState, origin: string): NgState {
  return rewriteState(state, (u) => localizeSourceUrl(u, origin));
}

/** The state as the document stores it. */
export function portableState(state: NgState, origin: string): NgState {
  return rewriteState(state, (u) => portableSourceUrl(u, origin));
}

/** Every data-source URL of a state (for summaries and for checking allowed hosts). */
export function sourceUrls(state: NgState): string[] {
  const out: string[] = [];
  const visit = (s: Json | undefined): void => {
    if (typeof s === 'string') out.push(s);
    else if (Array.isArray(s)) s.forEach(visit);
    else if (isJsonObject(s) && typeof s.url === 'string') out.push(s.url);
  };
  for (const l of normalizeLayers(state.layers)) visit(l.source);
  return out;
}

/** What the server says about one served layer (`GET /volumes/<dataset>/`, docs/api.md). */
export interface ServedLayer {
  name: string;
  info?: { type?: string; scales?: Array<{ resolution?: number[] }> };
  meta?: { axes?: { x?: string; y?: string; z?: string }; voxelSize?: number[] } | null;
  format?: string;
}

/**
 * The viewer layer for a volume served by this server: a portable source, the layer type from
 * its `info`, and — when its `plexus.json` says the third axis is time — a transform that names
 * it `t` in seconds, so a movie steps through frames and a projection spans all of them.
 */
export function layerForServedVolume(dataset: string, layer: ServedLayer, name = layer.name): NgLayer {
  const scheme = layer.format === 'zarr' ? 'zarr' : 'precomputed';
  const url = `${scheme}://${LOCAL_ORIGIN}volumes/${encodeURIComponent(dataset)}/${encodeURIComponent(layer.name)}`;
  const type = layer.info?.type === 'segmentation' ? 'segmentation' : 'image';
  const axes = layer.meta?.axes;
  const res = layer.info?.scales?.[0]?.resolution;
  if (axes && (axes.z === 's' || axes.z === 'none') && Array.isArray(res) && res.length === 3) {
    const um = (nm: number): [number, string] => [nm / 1e9, 'm'];
    // plexus.json: x and y resolution in nm; a time axis stored as "nm" that read as ns.
    const t: [number, string] = [res[2]! / 1e9, 's'];
    return { type, name, source: { url, transform: { outputDimensions: { x: um(res[0]!), y: um(res[1]!), t } } } } as NgLayer;
  }
  return { type, name, source: url } as NgLayer;
}
