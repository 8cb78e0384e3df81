/**
 * Who is in a live workspace: people are connections whose token role is not `service` (services
 * are the kernel and the agent). Read from the claims AccessControl stored as each Hocuspocus
 * connection's context; y-websocket peers are counted by the bridge (`YwsBridge.people`).
 * Pure reads of live server state.
 */
import type { Connection, Document, Hocuspocus } from '@hocuspocus/server';
import { getTitle } from '@plexus/shared';
import type { ConnectionContext } from './access.ts';

/** True unless the connection was authenticated with a service token. */
export const isPersonConnection = (c: Connection): boolean => (c.context as ConnectionContext | undefined)?.claims?.role !== 'service';

/** Hocuspocus connections held by people on a live document. */
export function peopleConnected(doc: Document): number {
  let n = 0;
  for (const c of doc.getConnections()) if (isPersonConnection(c)) n++;
  return n;
}

export interface OccupiedWorkspace {
  id: string;
  title: string;
  /** People connected (either protocol). */
  people: number;
}

/** Loaded workspaces with at least one person connected. `ywsPeople` counts a workspace's y-websocket people. */
export function occupiedWorkspaces(hocuspocus: Hocuspocus, ywsPeople: (id: string) => number): OccupiedWorkspace[] {
  const out: OccupiedWorkspace[] = [];
  for (const [id, doc] of hocuspocus.documents) {
    if (doc.isLoading || doc.isDestroyed) continue;
    const people = peopleConnected(doc) + ywsPeople(id);
    if (people > 0) out.push({ id, title: getTitle(doc), people });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
