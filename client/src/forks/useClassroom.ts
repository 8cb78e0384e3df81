/**
 * What a workspace says about forks, as React state: where it was forked from, a student's raised
 * hand, and the roster of a hand-out's forks (written by the server, pushed through sync). The
 * open state of the roster panel is local UI state (zustand).
 */
import { useCallback, useRef, useSyncExternalStore } from 'react';
import type * as Y from 'yjs';
import { listRoster, observeClassroom, readForkedFrom, readHand, type ForkOrigin, type RaisedHand, type RosterEntry } from '@plexus/shared';
import { create } from 'zustand';

/** `read()` as of the last change `subscribe` reports; the same object while its JSON stays the same. */
function useDerived<T>(subscribe: (cb: () => void) => () => void, read: () => T): T {
  const cache = useRef<{ json: string; value: T } | null>(null);
  const get = () => {
    const value = read();
    const json = JSON.stringify(value);
    if (cache.current?.json !== json) cache.current = { json, value };
    return cache.current.value;
  };
  return useSyncExternalStore(subscribe, get);
}

const useClassroomValue = <T>(doc: Y.Doc, read: (doc: Y.Doc) => T): T =>
  useDerived(useCallback((cb: () => void) => observeClassroom(doc, cb), [doc]), () => read(doc));

/** The forks on this workspace's roster (it handed them out), the earliest first. */
export const useRoster = (doc: Y.Doc): RosterEntry[] => useClassroomValue(doc, listRoster);

/** This fork's raised hand, if it is up. */
export const useHand = (doc: Y.Doc): RaisedHand | null => useClassroomValue(doc, readHand);

/** Where this workspace was forked from (null: it is no fork). */
export function useForkedFrom(doc: Y.Doc): ForkOrigin | null {
  const subscribe = useCallback(
    (cb: () => void) => {
      // After each transaction, not on 'update' (which makes Yjs encode every change; quietApply.ts).
      doc.on('afterTransaction', cb);
      return () => doc.off('afterTransaction', cb);
    },
    [doc],
  );
  return useDerived(subscribe, () => readForkedFrom(doc));
}

/** Whether the roster panel (above the notebook) is open: local to this browser tab. */
export const useRosterPanel = create<{ open: boolean; setOpen(open: boolean): void }>((set) => ({
  open: false,
  setOpen: (open) => set({ open }),
}));
