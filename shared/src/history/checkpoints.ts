/**
 * Checkpoints: named or automatic copies of the whole workspace document that the server keeps
 * (the state itself is stored on the server, never in the document); their records live in the
 * `checkpoints` root so everyone sees a new checkpoint at once. Only the server writes them: a
 * person asks for one over HTTP, and the server stamps who asked from the token.
 *
 * | key in `checkpoints/<id>` | written by | value |
 * |---|---|---|
 * | (the whole record) | the server | `CheckpointRecord` |
 *
 * Pure module.
 */
import type * as Y from 'yjs';
import type { Origin } from '../origin.ts';
import { roots } from '../schema.ts';

/** Why a checkpoint was made: by a person's request, or automatically before something that changes a lot. */
export const CHECKPOINT_KINDS = ['named', 'agent-run', 'activity', 'import', 'restore', 'fork'] as const;
export type CheckpointKind = (typeof CHECKPOINT_KINDS)[number];

/** Who made a change or a checkpoint, as the server knows it from the connection's token. */
export interface Actor {
  id: string;
  name?: string;
  kind: 'person' | 'agent' | 'kernel' | 'server';
}

export interface CheckpointRecord {
  id: string;
  label: string;
  kind: CheckpointKind;
  by: Actor;
  at: number;
  /** Size of the stored state (bytes). */
  bytes: number;
  /** Cells in the notebook at the time. */
  cells: number;
  /** The agent run it was made before (kind `agent-run`). */
  run?: string;
}

/** Longest label a checkpoint may have. */
export const MAX_CHECKPOINT_LABEL = 200;

const isRecord = (v: unknown): v is CheckpointRecord =>
  !!v && typeof v === 'object' && typeof (v as CheckpointRecord).id === 'string' && typeof (v as CheckpointRecord).at === 'number';

/** Every checkpoint, newest first. */
export function listCheckpoints(doc: Y.Doc): CheckpointRecord[] {
  const out: CheckpointRecord[] = [];
  roots(doc).checkpoints.forEach((v) => {
    if (isRecord(v)) out.push(v);
  });
  return out.sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1));
}

export function getCheckpoint(doc: Y.Doc, id: string): CheckpointRecord | null {
  const v = roots(doc).checkpoints.get(id);
  return isRecord(v) ? v : null;
}

/** Server: records a stored checkpoint. */
export function putCheckpoint(doc: Y.Doc, rec: CheckpointRecord, origin: Origin): void {
  doc.transact(() => roots(doc).checkpoints.set(rec.id, { ...rec, label: rec.label.slice(0, MAX_CHECKPOINT_LABEL) }), origin);
}

/** Server: forgets checkpoints (retention). */
export function removeCheckpoints(doc: Y.Doc, ids: string[], origin: Origin): void {
  const root = roots(doc).checkpoints;
  doc.transact(() => ids.forEach((id) => root.delete(id)), origin);
}

/** Words for a checkpoint's kind (history panel, agent context). */
export const CHECKPOINT_KIND_WORDS: Record<CheckpointKind, string> = {
  named: 'checkpoint',
  'agent-run': 'before an agent run',
  activity: 'automatic',
  import: 'before an import',
  restore: 'before a restore',
  fork: 'fork point',
};
