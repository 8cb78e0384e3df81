/**
 * The history's HTTP routes (docs/api.md, "History"): the journal of who changed what with the
 * checkpoints, taking a checkpoint, and a checkpoint's state as a read-only Y.Doc (cached: a
 * stored state never changes). Effects: network.
 */
import * as Y from 'yjs';
import type { Actor, ChangeSummary, CheckpointRecord } from '@plexus/shared';
import { apiBinary, apiRequest } from '../api/http.ts';

const ws = (id: string) => `/api/workspaces/${encodeURIComponent(id)}`;

export interface HistoryEntry {
  start: number;
  end: number;
  actor: Actor;
  summary: ChangeSummary;
  /** Still being written to (the last minute). */
  open?: boolean;
}

export interface HistoryPage {
  entries: HistoryEntry[];
  checkpoints: CheckpointRecord[];
  usage: { bytes: number; checkpoints: number };
}

export const fetchHistory = (token: string, workspaceId: string, signal?: AbortSignal) =>
  apiRequest<HistoryPage>(`${ws(workspaceId)}/history?limit=500`, { token, signal });

export const createCheckpoint = (token: string, workspaceId: string, input: { label?: string; kind?: 'named' | 'restore'; name?: string }) =>
  apiRequest<{ checkpoint: CheckpointRecord }>(`${ws(workspaceId)}/checkpoints`, { method: 'POST', token, body: input }).then((r) => r.checkpoint);

const cache = new Map<string, Promise<Y.Doc>>();

/** A checkpoint's state as a document of its own (never connected: read it, restore from it). */
export function checkpointDoc(token: string, workspaceId: string, id: string): Promise<Y.Doc> {
  const key = `${workspaceId}/${id}`;
  let p = cache.get(key);
  if (!p) {
    p = apiBinary(`${ws(workspaceId)}/checkpoints/${encodeURIComponent(id)}`, { token, what: 'The checkpoint' }).then((buf) => {
      const doc = new Y.Doc();
      Y.applyUpdate(doc, new Uint8Array(buf));
      return doc;
    });
    p.catch(() => cache.delete(key));
    cache.set(key, p);
  }
  return p;
}
