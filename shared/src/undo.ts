/**
 * Per-user undo: a Y.UndoManager that tracks only the transactions of one origin object, so it
 * never undoes someone else's edit. Pure module.
 */
import * as Y from 'yjs';
import type { Origin } from './origin.ts';
import { roots } from './schema.ts';

/**
 * Undo manager for notebook structure and chat edits made with `origin` (keep that object: Yjs
 * compares origins by identity). Editor bindings (CodeMirror, tiptap) add their own origins.
 */
export function createUserUndoManager(doc: Y.Doc, origin: Origin, extraOrigins: unknown[] = []): Y.UndoManager {
  const r = roots(doc);
  return new Y.UndoManager([r.cells, r.chat, r.meta], {
    trackedOrigins: new Set<unknown>([origin, ...extraOrigins]),
    captureTimeout: 500,
  });
}
