/**
 * Named views (bookmarks) shared in the document: the camera, the layout and how each layer is
 * displayed. Loading a view changes only those — layers, annotations and data added since stay,
 * so going back to a bookmark never destroys anyone's work. Pure module.
 */
import * as Y from 'yjs';
import type { Origin } from '../origin.ts';
import { randomId } from '../ids.ts';
import { isJsonObject, type Json, type JsonObject } from '../json.ts';
import {
  CAMERA_KEYS,
  normalizeLayers,
  readViewerState,
  setCamera,
  viewerRoots,
  type Camera,
  type NgState,
} from './state-doc.ts';

/** Layer keys a named view restores. */
export const VIEW_LAYER_KEYS = ['visible', 'opacity', 'shaderControls', 'segments', 'selectedAlpha', 'objectAlpha'] as const;

export interface NamedView {
  id: string;
  name: string;
  camera: Camera;
  layout?: Json;
  /** Display settings per layer name. */
  layers: Record<string, JsonObject>;
  by: string;
  created: number;
}

function isNamedView(v: unknown): v is NamedView {
  return isJsonObject(v) && typeof v.id === 'string' && typeof v.name === 'string' && isJsonObject(v.camera);
}

/** The part of a state a named view keeps. */
export function viewFromState(state: NgState): Pick<NamedView, 'camera' | 'layout' | 'layers'> {
  const camera: Camera = {};
  for (const k of CAMERA_KEYS) if (state[k] !== undefined) camera[k] = state[k];
  const layers: Record<string, JsonObject> = {};
  for (const l of normalizeLayers(state.layers)) {
    const d: JsonObject = {};
    for (const k of VIEW_LAYER_KEYS) if (l[k] !== undefined) d[k] = l[k]!;
    layers[l.name] = d;
  }
  return { camera, layout: state.layout, layers };
}

/** Saves the current view of `state` under `name`; returns its id. */
export function saveNamedView(doc: Y.Doc, name: string, state: NgState, by: string, origin: Origin): string {
  const clean = name.trim().slice(0, 120);
  if (!clean) throw new Error('a view needs a name');
  const id = randomId();
  const view: NamedView = { id, name: clean, ...viewFromState(state), by, created: Date.now() };
  doc.transact(() => viewerRoots(doc).views.set(id, JSON.parse(JSON.stringify(view)) as Json), origin);
  return id;
}

/** All named views, oldest first. */
export function listNamedViews(doc: Y.Doc): NamedView[] {
  const out: NamedView[] = [];
  viewerRoots(doc).views.forEach((v) => {
    if (isNamedView(v)) out.push(v);
  });
  return out.sort((a, b) => a.created - b.created || (a.id < b.id ? -1 : 1));
}

/** Finds a named view by id or (case-insensitive) name. */
export function findNamedView(doc: Y.Doc, idOrName: string): NamedView | undefined {
  const views = listNamedViews(doc);
  return views.find((v) => v.id === idOrName) ?? views.find((v) => v.name.toLowerCase() === idOrName.trim().toLowerCase());
}

/** Deletes a named view. */
export function deleteNamedView(doc: Y.Doc, id: string, origin: Origin): void {
  doc.transact(() => viewerRoots(doc).views.delete(id), origin);
}

/**
 * Applies a named view to the document's viewer state: camera, layout and the display settings
 * of layers that still exist. Returns the names of layers of the view that no longer exist.
 */
export function loadNamedView(doc: Y.Doc, view: NamedView, origin: Origin): string[] {
  const missing: string[] = [];
  doc.transact(() => {
    setCamera(doc, view.camera, origin);
    const { state, layers } = viewerRoots(doc);
    if (view.layout !== undefined) state.set('layout', view.layout);
    const current = new Set(normalizeLayers(readViewerState(doc).layers).map((l) => l.name));
    for (const [name, display] of Object.entries(view.layers)) {
      if (!current.has(name)) {
        missing.push(name);
        continue;
      }
      const m = layers.get(name)!;
      const props = m.get('props') as Y.Map<unknown>;
      for (const [k, v] of Object.entries(display)) {
        if (k === 'shaderControls' && isJsonObject(v)) {
          const controls = m.get('controls') as Y.Map<unknown>;
          for (const [c, cv] of Object.entries(v)) controls.set(c, cv);
          m.set('hasControls', true);
        } else props.set(k, v);
      }
    }
  }, origin);
  return missing;
}
