/** Whether the structural undo manager can undo / redo (for the header buttons). */
import { useCallback, useSyncExternalStore } from 'react';
import type * as Y from 'yjs';

export function useUndoState(um: Y.UndoManager): { canUndo: boolean; canRedo: boolean } {
  const subscribe = useCallback(
    (cb: () => void) => {
      um.on('stack-item-added', cb);
      um.on('stack-item-popped', cb);
      um.on('stack-cleared', cb);
      return () => {
        um.off('stack-item-added', cb);
        um.off('stack-item-popped', cb);
        um.off('stack-cleared', cb);
      };
    },
    [um],
  );
  // Encoded as one number so the snapshot is a stable primitive.
  const bits = useSyncExternalStore(subscribe, () => (um.canUndo() ? 1 : 0) | (um.canRedo() ? 2 : 0));
  return { canUndo: (bits & 1) !== 0, canRedo: (bits & 2) !== 0 };
}
