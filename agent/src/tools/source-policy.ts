/**
 * Which data sources the agent may point a viewer layer at: this server's own volumes
 * (`…://plexus://volumes/…`), Neuroglancer's in-document annotations (`local://annotations`), and
 * URL prefixes an administrator allowed (PLEXUS_AGENT_SOURCE_PREFIXES). Everything else — another
 * host, a file path, a data: URL — is refused, whatever the model was told. Pure module.
 */
import { isJsonObject, type Json } from '@plexus/shared';


/** The URLs a layer source names (string, {url}, or a list of those). */
export function sourceUrlsOf(source: Json | undefined): string[] {
  if (typeof source === 'string') return [source];
  if (Array.isArray(source)) return source.flatMap((s) => sourceUrlsOf(s));
  if (isJsonObject(source) && typeof source.url === 'string') return [source.url];
  return [];
}

/** Strips data-format prefixes such as `precomputed://` (but keeps storage schemes like gs://). */
function locator(url: string): string {
  let u = url.trim();
  for (let i = 0; i < 4; i++) {
    const m = /^([a-z0-9]+):\/\/(.*)$/i.exec(u);
    if (!m) break;
    const rest = m[2]!;
    // `precomputed://https://…` names a format then a location; `gs://bucket/…` is a location.
    if (/^[a-z0-9]+:\/\//i.test(rest)) u = rest;
    else break;
  }
  return u;
}

/** Why `url` is not allowed, or null when it is. */
export function refuseSource(url: string, allowedPrefixes: readonly string[]): string | null {
  if (/[\s\\]/.test(url) || url.includes('..') || /%2e|%2f|%5c/i.test(url)) return `source "${url}" contains characters or path segments that are not allowed`;
  const loc = locator(url);
  if (loc.startsWith('plexus://volumes/')) return null;
  if (loc === 'local://annotations' || loc.startsWith('local://annotations/')) return null;
  for (const p of allowedPrefixes) if (p && loc.startsWith(p)) return null;
  return `source "${url}" is outside this workspace: layers may only use this server's volumes (list_volumes)${allowedPrefixes.length ? ` or ${allowedPrefixes.join(', ')}` : ''}`;
}

/** Why a layer's sources are not allowed, or null. */
export function refuseLayerSources(source: Json | undefined, allowedPrefixes: readonly string[]): string | null {
  const urls = sourceUrlsOf(source);
  if (urls.length === 0) return 'the layer has no source';
  for (const u of urls) {
    const why = refuseSource(u, allowedPrefixes);
    if (why) return why;
  }
  return null;
}
