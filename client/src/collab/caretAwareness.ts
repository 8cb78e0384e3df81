/**
 * tiptap's caret plugin (y-tiptap `yCursorPlugin`, used by @tiptap/extension-collaboration-caret)
 * and y-codemirror.next both publish the local caret in the awareness field `cursor`. With one
 * awareness for the whole workspace they would overwrite each other (and y-tiptap 3.0.9 ignores
 * its own `cursorStateField` argument when reading remote carets). So every tiptap editor gets a
 * view of the awareness in which `cursor` means the field `tiptapCursor` (the field named in
 * shared/src/presence.ts). The view also:
 *  - drops writes of `user` (CollaborationCaret sets it on mount; the session owns `user`, whose
 *    role the server checks), and
 *  - ignores "clear my caret" from an editor whose fragment does not hold the current caret, so
 *    unmounting a far-away markdown cell does not hide the caret of the cell being edited.
 */
import * as Y from 'yjs';
import type { Awareness } from 'y-protocols/awareness';

export const TIPTAP_CURSOR_FIELD = 'tiptapCursor';

type State = Record<string, unknown>;

function remap(state: State | null | undefined): State | null {
  if (!state) return state ?? null;
  return { ...state, cursor: state[TIPTAP_CURSOR_FIELD] ?? null };
}

/** True when the caret's anchor resolves inside `fragment`. */
function caretIn(doc: Y.Doc, fragment: Y.XmlFragment, caret: unknown): boolean {
  const anchor = (caret as { anchor?: unknown } | null)?.anchor;
  if (!anchor) return false;
  try {
    const abs = Y.createAbsolutePositionFromRelativePosition(Y.createRelativePositionFromJSON(anchor), doc);
    if (!abs) return false;
    return abs.type === fragment || (abs.type._item !== null && Y.isParentOf(fragment, abs.type._item));
  } catch {
    return false;
  }
}

/** The awareness as one tiptap editor bound to `fragment` should see it. */
export function tiptapCaretAwareness(awareness: Awareness, fragment: Y.XmlFragment) {
  const doc = awareness.doc;
  const remapAll = () => {
    const out = new Map<number, State>();
    awareness.getStates().forEach((s, id) => out.set(id, remap(s as State)!));
    return out;
  };
  return {
    doc,
    get clientID() {
      return awareness.clientID;
    },
    get states() {
      return remapAll();
    },
    getStates: remapAll,
    getLocalState: () => remap(awareness.getLocalState() as State | null),
    setLocalStateField(field: string, value: unknown) {
      if (field === 'user') return;
      if (field !== 'cursor') return awareness.setLocalStateField(field, value);
      if (value === null) {
        const cur = (awareness.getLocalState() as State | null)?.[TIPTAP_CURSOR_FIELD];
        if (cur == null || !caretIn(doc, fragment, cur)) return;
      }
      awareness.setLocalStateField(TIPTAP_CURSOR_FIELD, value);
    },
    on: (name: string, fn: (...args: any[]) => void) => awareness.on(name as 'change', fn),
    off: (name: string, fn: (...args: any[]) => void) => awareness.off(name as 'change', fn),
  };
}

/**
 * y-codemirror.next never clears the `cursor` field when its editor loses focus, so a caret
 * would linger in the last code cell someone left. Call on blur: clears the field if it still
 * points into `ytext`.
 */
export function clearCodeCaret(awareness: Awareness, ytext: Y.Text): void {
  const cur = (awareness.getLocalState() as State | null)?.cursor as { anchor?: unknown } | null | undefined;
  if (!cur?.anchor) return;
  try {
    const abs = Y.createAbsolutePositionFromRelativePosition(Y.createRelativePositionFromJSON(cur.anchor), awareness.doc);
    if (abs?.type === ytext) awareness.setLocalStateField('cursor', null);
  } catch {
    // A caret we cannot decode is not ours to clear.
  }
}
