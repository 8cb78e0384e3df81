/**
 * React access to presenter mode: the controller of the current session and its snapshot, the
 * notebook's scroll container registration, and whether a cell is the presenter's focused one.
 */
import { useCallback, useEffect, useSyncExternalStore, type RefObject } from 'react';
import { useSession } from '../collab/context.tsx';
import { presenterFor, type PresenterController, type PresenterSnapshot } from './presenter.ts';

export function usePresenter(): [PresenterSnapshot, PresenterController] {
  const c = presenterFor(useSession());
  return [useSyncExternalStore(c.subscribe, c.getSnapshot), c];
}

/** Registers the notebook's scroll container (the presenter's anchor, the follower's scroll target). */
export function usePresenterNotebook(ref: RefObject<HTMLElement | null>): void {
  const session = useSession();
  useEffect(() => {
    const el = ref.current;
    return el ? presenterFor(session).attachNotebook(el) : undefined;
  }, [session, ref]);
}

/** True while this page follows a presenter whose keyboard focus is in `cellId` (re-renders only that cell). */
export function useIsPresenterFocus(cellId: string): boolean {
  const c = presenterFor(useSession());
  const get = useCallback(() => c.getSnapshot().focusCellId === cellId, [c, cellId]);
  return useSyncExternalStore(c.subscribe, get);
}
