/**
 * A compact, bounded description of the shared viewer for prompts and tool results (seed 000's
 * `ng_state_summary`): dimensions, camera, layout, each layer in a line, named views. Long lists
 * are cut with a count of what was left out. Pure module.
 */
import type * as Y from 'yjs';
import { isJsonObject, type Json } from '../json.ts';
import { CAMERA_KEYS, normalizeLayers, readViewerState } from './state-doc.ts';
import { listNamedViews } from './views.ts';

export interface ViewerSummaryOptions {
  /** Layers described at most (default 30). */
  maxLayers?: number;
  /** Characters of the whole summary at most (default 4000). */
  maxChars?: number;
}

const round = (v: Json | undefined): Json | undefined =>
  typeof v === 'number' ? Number(v.toPrecision(6)) : Array.isArray(v) ? v.map((x) => round(x) as Json) : v;

function sourceLabel(source: Json | undefined): string {
  const url = typeof source === 'string' ? source : isJsonObject(source) && typeof source.url === 'string' ? source.url : Array.isArray(source) ? sourceLabel(source[0]) : '';
  return url.length > 90 ? `${url.slice(0, 60)}…${url.slice(-25)}` : url;
}

/** The viewer of `doc` as short text. */
export function summarizeViewer(doc: Y.Doc, opts: ViewerSummaryOptions = {}): string {
  const maxLayers = opts.maxLayers ?? 30;
  const maxChars = opts.maxChars ?? 4000;
  const s = readViewerState(doc);
  const lines: string[] = [];
  if (isJsonObject(s.dimensions)) {
    lines.push(`dimensions: ${Object.entries(s.dimensions).map(([k, v]) => `${k} ${Array.isArray(v) ? `${round(v[0])} ${v[1]}` : JSON.stringify(v)}`).join(', ')}`);
  }
  const cam = CAMERA_KEYS.filter((k) => s[k] !== undefined).map((k) => `${k} ${JSON.stringify(round(s[k]))}`);
  if (cam.length) lines.push(`camera: ${cam.join('; ')}`);
  if (s.layout !== undefined) lines.push(`layout: ${typeof s.layout === 'string' ? s.layout : JSON.stringify(s.layout).slice(0, 120)}`);
  const layers = normalizeLayers(s.layers);
  lines.push(`layers (${layers.length}):`);
  for (const l of layers.slice(0, maxLayers)) {
    const parts = [`- ${l.name}: ${typeof l.type === 'string' ? l.type : 'layer'}`];
    if (l.visible === false) parts.push('hidden');
    if (typeof l.opacity === 'number') parts.push(`opacity ${round(l.opacity)}`);
    const src = sourceLabel(l.source);
    if (src) parts.push(`source ${src}`);
    if (isJsonObject(l.shaderControls) && Object.keys(l.shaderControls).length) parts.push(`controls ${JSON.stringify(round(l.shaderControls as Json)).slice(0, 160)}`);
    if (Array.isArray(l.annotations)) parts.push(`${l.annotations.length} annotations`);
    if (Array.isArray(l.segments)) parts.push(`${l.segments.length} segments selected`);
    lines.push(parts.join(', '));
  }
  if (layers.length > maxLayers) lines.push(`… and ${layers.length - maxLayers} more layers`);
  const views = listNamedViews(doc);
  if (views.length) lines.push(`named views: ${views.slice(0, 20).map((v) => v.name).join(', ')}${views.length > 20 ? ` … (+${views.length - 20})` : ''}`);
  let out = lines.join('\n');
  if (out.length > maxChars) {
    const tail = `\n… (summary cut at ${maxChars} characters)`;
    out = out.slice(0, Math.max(0, maxChars - tail.length)) + tail;
  }
  return out;
}
