/**
 * What the server needs from durable storage, independent of where it lives: the embedded SQLite
 * store (`workspace-store.ts`, `history/history-store.ts`; the default) or Postgres
 * (`postgres/`, `PLEXUS_DATABASE_URL`). Chosen once at start by `open-storage.ts`.
 *
 * Results are `Awaitable`: the SQLite implementation answers synchronously (a keystroke's
 * write-ahead append returns once it is committed, without a turn of the event loop, so the
 * default stays as fast as it was), Postgres with promises. Callers `await` what they get, except
 * on the hot path (`append`), which checks `syncAppends` / `instanceof Promise` so the SQLite path
 * stays synchronous.
 *
 * Guarantees every implementation gives:
 * - `append` resolves (or returns) only once the update is durable: the server acknowledges an
 *   update to its sender after that, so an acknowledged update survives kill -9 of the server.
 * - Per-workspace sequence numbers are gap-free and grow in commit order, so a snapshot's `upto`
 *   is a watermark: no entry at or below it can appear after it was taken.
 * - Loads read one consistent view: the snapshot and the log entries above its `upto`.
 * - Compaction folds the log into the snapshot and drops the folded entries; at most one
 *   compaction of a workspace runs at a time (Postgres: across every server using the database).
 * Effects: none (types only).
 */
import type { Actor, ChangeSummary } from '@plexus/shared';
import type * as Y from 'yjs';

export type Awaitable<T> = T | Promise<T>;

export interface WorkspaceRecord {
  id: string;
  name: string;
  created: number;
  updated: number;
  /** Document session id: changes whenever the stored document is created anew. */
  epoch: string;
}

/** The stored parts of a workspace, for applying without merging first. */
export interface StoredParts {
  /**
   * The snapshot's updates: one, or a large one's parts in the order they apply (stored cut by
   * split-state.mjs, so a load can apply them with turns of the event loop in between); null for none.
   */
  snapshot: Uint8Array[] | null;
  /** The snapshot's bytes as stored: its one update, or its parts in one byte string (`packStateParts`), to send as they are. */
  storedSnapshot: Uint8Array | null;
  entries: Uint8Array[];
  upto: number;
  /**
   * The snapshot was written from a document's own encoding (deleted content collected): by this
   * version's folds, snapshots from memory, creation and recovery. False for one an older Plexus
   * merged its log into (every deleted item's content kept), or none.
   */
  collected: boolean;
}

export interface LoadedState {
  /** The merged state (snapshot + log), or null when the workspace has no content yet. */
  update: Uint8Array | null;
  /** Number of log entries on top of the snapshot (compaction hint). */
  logEntries: number;
  /** Highest log id included. */
  upto: number;
}

/** One fork in the server's fork registry (forks/registry.ts). */
export interface ForkRecord {
  /** The fork's workspace id. */
  id: string;
  source: string;
  /** Who forked: a presence id (`<token subject>/<device>`), and the name they gave. */
  by: string;
  byName: string | null;
  /** Hand-out forks: the student (one fork per student and source). */
  student: string | null;
  handout: boolean;
  created: number;
}

export class WorkspaceNotFoundError extends Error {
  constructor(readonly id: string) {
    super(`workspace ${id} does not exist`);
  }
}

/**
 * The rows of the fork registry, as stored (whether their workspaces still exist is the
 * registry's business, forks/registry.ts).
 */
export interface ForkRows {
  add(rec: ForkRecord): Awaitable<void>;
  get(id: string): Awaitable<ForkRecord | null>;
  ofStudent(source: string, student: string): Awaitable<ForkRecord | null>;
  /** Hand-out forks of `source`, oldest first. */
  handouts(source: string): Awaitable<ForkRecord[]>;
  remove(id: string): Awaitable<void>;
  /** Removes the rows of every fork made from `source`. */
  removeSource(source: string): Awaitable<void>;
}

/** Workspace registry, update log and snapshots, and the fork registry. */
export interface WorkspaceStorage {
  readonly kind: 'sqlite' | 'postgres';
  /** True when `append` returns a number once the update is durable; false when it returns a promise. */
  readonly syncAppends: boolean;

  /** Appends one update to a workspace's log; durable when it returns / resolves. Resolves to its sequence number. */
  append(ws: string, update: Uint8Array): Awaitable<number>;
  /** Marks a workspace as modified now (for the list's ordering). */
  touch(ws: string, when?: number): Awaitable<void>;
  /** Reads the snapshot and the log entries on top of it, unmerged (one consistent view). Throws WorkspaceNotFoundError. */
  loadParts(ws: string): Awaitable<StoredParts>;
  /** Reads snapshot + log of a workspace as one merged update. */
  load(ws: string): Awaitable<LoadedState>;
  /**
   * Applies loaded parts into `doc` as stored (in order, not merged first), skipping a change that
   * no longer decodes as `load` does; between snapshot parts it awaits `between` when given (parts.ts).
   * Resolves to whether anything is stored.
   */
  applyStored(doc: Y.Doc, parts: StoredParts, origin: unknown, between?: () => Promise<void>): Promise<boolean>;
  /** A new document holding loaded parts (in order, one transaction; the parts that decode when one does not); null when nothing is stored. */
  storedDoc(parts: StoredParts, origin?: unknown): Promise<Y.Doc | null>;
  /** Log entries skipped at load because they no longer decode. */
  readonly corruptEntriesSkipped: number;
  /**
   * Replaces log entries up to `upto` by `state`, atomically (recovery: `state` may deliberately
   * leave some of them out). Returns the number of log entries folded in.
   */
  compact(ws: string, state: Uint8Array, upto: number): Awaitable<number>;
  /**
   * Stores a loaded document's state `state` (taken now, from memory) as the snapshot, folding in
   * every log entry stored now; entries appended meanwhile stay. For dirty documents and shutdown.
   * Returns the number of log entries folded (0 when the workspace no longer exists).
   */
  snapshotFromMemory(ws: string, state: Uint8Array): Awaitable<number>;
  /**
   * Folds the log into the snapshot from stored data, off the event loop where possible: every entry
   * stored when it is called (a request made while one runs runs after it, compaction-runs.ts), unless
   * another server's compaction of the workspace runs then (it gives up). Resolves with the number folded.
   */
  compactInBackground(ws: string): Promise<number>;
  /** Highest sequence number of a workspace's log (0 when it is empty). */
  maxLogId(ws: string): Awaitable<number>;
  /** Log entries on top of the snapshot. */
  logLength(ws: string): Awaitable<number>;
  /**
   * The number of the last change stored for a workspace, whether still in the log or folded into
   * the snapshot (0 for none): it only grows while changes are stored, and folding keeps it.
   */
  logHead(ws: string): Awaitable<number>;

  get(id: string): Awaitable<WorkspaceRecord | undefined>;
  list(): Awaitable<WorkspaceRecord[]>;
  /** Gives a workspace a new epoch: clients holding local state of the old one drop it (4409). */
  renewEpoch(id: string): Awaitable<string>;
  /** Creates a workspace with initial content (a full Yjs update) and a fresh epoch; with `fork`, records it in the fork registry in the same transaction. */
  create(rec: { id: string; name: string; state: Uint8Array; now?: number }, fork?: ForkRecord): Awaitable<WorkspaceRecord>;
  rename(id: string, name: string): Awaitable<void>;
  /** The generation of a workspace's share links (0 until its owner first resets them): links signed with an older one no longer work. */
  linkGeneration(id: string): Awaitable<number>;
  /** Revokes every share link of a workspace made so far; resolves to the new generation (new links carry it). */
  resetLinks(id: string): Awaitable<number>;
  /** Deletes a workspace with its log and snapshot. */
  delete(id: string): Awaitable<boolean>;

  /** The fork registry's rows, beside the workspace registry. */
  readonly forks: ForkRows;
  /** Fencing of the node serving each workspace (Postgres only: the store several nodes share; cluster/). */
  readonly fencing?: StorageFencing;

  close(): Awaitable<void>;
}

/**
 * Fencing tokens (several nodes on one database). The node that holds a workspace's lease claims
 * the next token before it loads the workspace; from then on its appends and snapshots carry it and
 * the store refuses any that carry an older one with FencedError — so a node that lost the lease
 * while paused or cut off can never store anything for that workspace again.
 */
export interface StorageFencing {
  /** Takes the next token of `ws` for this process (every earlier holder is fenced off at once). Throws WorkspaceNotFoundError. */
  claim(ws: string): Promise<number>;
  /** This process no longer writes `ws` fenced (it unloaded it). */
  release(ws: string): void;
  /** The token this process holds for `ws`, if it claimed one. */
  token(ws: string): number | undefined;
  /** From now on a write to a workspace with no claim is refused (several nodes: never written unfenced). */
  require(): void;
  /** Of the workspaces in `list` this process claimed, those whose stored fence moved on (another node claimed them). */
  verify(list: string[]): Promise<string[]>;
}

/** A write carried a fencing token older than the workspace's: another node serves it now. */
export class FencedError extends Error {
  constructor(
    readonly ws: string,
    readonly token: number,
  ) {
    super(`workspace ${ws} is served by another node now (fencing token ${token} is stale)`);
    this.name = 'FencedError';
  }
}

/** One stretch of attributed changes in the history journal (history/attribution.ts). */
export interface JournalEntry {
  id: number;
  ws: string;
  start: number;
  end: number;
  actor: Actor;
  summary: ChangeSummary;
}

/**
 * Checkpoint states (deflated Yjs updates of whole documents) and the attribution journal
 * (history/). SQLite: `plexus.history.db`; Postgres: the same database as the workspaces.
 */
export interface HistoryStorage {
  /** Stores a checkpoint's state (deflated off the event loop); resolves to the stored bytes. */
  putState(ws: string, id: string, at: number, state: Uint8Array): Promise<number>;
  /** A checkpoint's state, or null when it is not stored. */
  getState(ws: string, id: string): Awaitable<Uint8Array | null>;
  dropStates(ws: string, ids: string[]): Awaitable<void>;
  /** Stored checkpoints of a workspace, oldest first. */
  states(ws: string): Awaitable<Array<{ id: string; at: number; bytes: number }>>;
  /** What a workspace's checkpoints cost on disk. */
  usage(ws: string): Awaitable<{ bytes: number; checkpoints: number }>;
  appendJournal(entries: Array<Omit<JournalEntry, 'id'>>): Awaitable<void>;
  /** Journal entries overlapping [from, to], newest first. */
  journal(ws: string, from?: number, to?: number, limit?: number): Awaitable<JournalEntry[]>;
  /** Forgets everything of a deleted workspace. */
  deleteWorkspace(ws: string): Awaitable<void>;
  close(): Awaitable<void>;
}
