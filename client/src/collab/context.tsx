/**
 * React access to the current workspace session. Components read the doc, awareness and origin
 * from here; writes go through the @plexus/shared helpers with `session.origin`.
 */
import { createContext, useContext, useSyncExternalStore } from 'react';
import { canWrite } from '@plexus/shared';
import type { SessionSnapshot, WorkspaceSession } from './session.ts';

export const SessionContext = createContext<WorkspaceSession | null>(null);

export function useSession(): WorkspaceSession {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a workspace');
  return s;
}

export function useSessionSnapshot(): SessionSnapshot {
  const s = useSession();
  return useSyncExternalStore(s.subscribe, s.getSnapshot);
}

/** Whether the local user may change the document. */
export function useCanEdit(): boolean {
  return canWrite(useSession().role);
}
