/**
 * Per-user undo: a Y.UndoManager that tracks only the transactions of one origin object, so it
 * never undoes someone else's edit. Pure module.
 */
import * as Y from 'yjs';
import type { Origin } from './origin.ts';
import { roots } from './schema.ts';
import { viewerRoots } from './viewer/state-doc.ts';

/**
 * Undo manager for notebook structure, chat and viewer edits made with `origin` (keep that object: Yjs
 * compares origins by identity). Editor bindings (CodeMirror, tiptap) add their own origins.
 */
export function createUserUndoManager(doc: Y.Doc, origin: Origin, extraOrigins: unknown[] = []): Y.UndoManager {
  const r = roots(doc);
  // The viewer roots too: a restore, a pasted state or an added layer is undone with the person's
  // other steps. Camera moves and layer edits made in Neuroglancer itself carry the viewer
  // binding's own origin, so they are not undo steps.
  const v = viewerRoots(doc);
  return new Y.UndoManager([r.cells, r.chat, r.meta, v.state, v.layers, v.views], {
    trackedOrigins: new Set<unknown>([origin, ...extraOrigins]),
    captureTimeout: 500,
  });
}
