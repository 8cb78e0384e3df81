/**
 * Live run state of one cell (queued/running/done…, outputs, staleness) and of the kernel, from
 * the document. Typing in a cell re-renders its run UI only when the output flips between fresh
 * and stale (the source hash is cheap; a full re-read per keystroke is not needed).
 * Effects: Yjs observers (removed on unmount).
 */
import { useCallback, useMemo, useRef, useSyncExternalStore } from 'react';
import type * as Y from 'yjs';
import { cellText, getCell, readCellRun, readKernelStatus, roots, staleReason, type CellRunView, type KernelStatus } from '@plexus/shared';
import { useYVersion } from '../../collab/useY.ts';

const IDLE: CellRunView = { state: 'idle', pending: null, exec: null, outputs: [], stale: false, staleReason: null, requested: false };

/** The run view of a cell, re-read when anything but its text changes (or its staleness flips). */
export function useCellRun(doc: Y.Doc, cellId: string, cellMap: Y.Map<unknown>, enabled = true): CellRunView {
  const snap = useRef<CellRunView | null>(null);
  const read = useCallback(() => readCellRun(doc, cellId) ?? IDLE, [doc, cellId]);
  const subscribe = useCallback(
    (cb: () => void) => {
      if (!enabled) return () => {};
      snap.current = read();
      const h = (events: Array<Y.YEvent<any>>) => {
        const source = getCell(doc, cellId);
        const text = source ? cellText(source) : undefined;
        const onlyText = text !== undefined && events.every((e) => e.target === text);
        if (onlyText) {
          // Typing: only the stale badge can change.
          const stale = source ? staleReason(source) : null;
          if (stale === (snap.current?.staleReason ?? null)) return;
        }
        snap.current = read();
        cb();
      };
      cellMap.observeDeep(h);
      return () => cellMap.unobserveDeep(h);
    },
    [cellMap, doc, cellId, read, enabled],
  );
  return useSyncExternalStore(subscribe, () => (enabled ? (snap.current ??= read()) : IDLE));
}

/** The kernel's status as everyone sees it. */
export function useKernelStatus(doc: Y.Doc): KernelStatus {
  const root = roots(doc).kernel;
  const v = useYVersion(root);
  return useMemo(() => readKernelStatus(doc), [doc, v]);
}
