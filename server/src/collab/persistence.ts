/**
 * Durable persistence as a Hocuspocus extension.
 *
 * - Updates from a connection are checked on a shadow replica (shadow.ts) and appended to the
 *   SQLite log in `beforeSync`, i.e. *before* Hocuspocus applies and acknowledges them
 *   (write-ahead): an acknowledged update survives kill -9. If the append fails the connection is
 *   closed with 4503 and nothing is applied; the client keeps the change and resends it.
 * - Changes made on the server (seeding, renames, kernel, direct connections) are appended from
 *   the document's update event; if that append fails the document stays in memory, is marked
 *   dirty and a snapshot is retried until it succeeds; a dirty document is never unloaded.
 * - The log is folded into the snapshot after `compactEvery` entries, after `compactIdleMs` idle
 *   and at unload, on the store's background worker (from stored data); dirty documents and
 *   shutdown snapshot from memory. Loading stays fast.
 * - A failed load throws: Hocuspocus then refuses the connection and never shows or stores an
 *   empty document in place of the real one. A stored state that is corrupt or breaks the
 *   document schema is refused with 4424 workspace-needs-recovery: its owner recovers it
 *   (recovery.ts); a storage error is refused with 4500 load-failed (transient).
 * Effects: SQLite I/O, timers.
 */
import type { Extension, Document, beforeSyncPayload, onLoadDocumentPayload, afterLoadDocumentPayload, beforeUnloadDocumentPayload, afterUnloadDocumentPayload } from '@hocuspocus/server';
import * as Y from 'yjs';
import { CloseCodes, migrate, observeTitle, serverOrigin, writerOfToken, type Writer } from '@plexus/shared';
import type { Logger } from '../log.ts';
import { WorkspaceNotFoundError, type StoredParts, type WorkspaceStore } from '../store/workspace-store.ts';
import { ProtocolError } from './errors.ts';
import { ShadowValidator } from './shadow.ts';
import { diagnose } from './recovery.ts';

/** Origin of updates applied by the y-websocket bridge (already logged write-ahead). */
export interface YwsOrigin {
  source: 'yws';
  ownerKey: string;
}
const LOAD_ORIGIN = serverOrigin('load');

/** An update with no structs and no deletions (what an empty Y.Doc's sync step 2 carries). */
const isEmptyUpdate = (u: Uint8Array): boolean => u.length === 2 && u[0] === 0 && u[1] === 0;

function alreadyLogged(origin: unknown): boolean {
  if (!origin || typeof origin !== 'object') return false;
  const s = (origin as { source?: unknown }).source;
  return s === 'connection' || s === 'yws';
}

interface DocState {
  sinceSnapshot: number;
  dirty: boolean;
  compacting?: boolean;
  idleTimer?: NodeJS.Timeout;
  retryTimer?: NodeJS.Timeout;
  detach: () => void;
}

export interface PersistenceOptions {
  compactEvery: number;
  compactIdleMs: number;
  retryMs?: number;
}

export class DurablePersistence implements Extension {
  extensionName = 'plexus-durable-persistence';
  /** Runs before other extensions' load hooks. */
  priority = 1000;
  private readonly docs = new Map<string, { doc: Document; state: DocState }>();
  private readonly deleted = new Set<string>();
  private readonly shadows = new ShadowValidator();

  constructor(
    private readonly store: WorkspaceStore,
    private readonly log: Logger,
    private readonly opts: PersistenceOptions,
  ) {}

  async onLoadDocument({ documentName, document }: onLoadDocumentPayload): Promise<void> {
    const started = performance.now();
    let parts;
    try {
      parts = this.store.loadParts(documentName);
    } catch (e) {
      if (e instanceof WorkspaceNotFoundError) throw new ProtocolError(CloseCodes.NotFound, documentName);
      this.log.error('load failed', { ws: documentName, err: e });
      throw new ProtocolError(CloseCodes.LoadFailed, (e as Error).message);
    }
    this.applyStored(documentName, document, parts);
    // A document that would not be valid is never served (clients would render or build on it):
    // its owner recovers it first (recovery.ts). Older documents are migrated after load.
    const diagnosis = diagnose(document);
    if (diagnosis) {
      this.log.error('workspace needs recovery', { ws: documentName, problem: diagnosis.problem, details: diagnosis.details.slice(0, 5) });
      throw new ProtocolError(CloseCodes.NeedsRecovery, diagnosis.problem);
    }
    this.deleted.delete(documentName);
    this.log.info('document loaded', { ws: documentName, ms: +(performance.now() - started).toFixed(1), logEntries: parts.entries.length });
    // Remember how much log sits on top of the snapshot so a long log is compacted soon.
    this.pendingLog.set(documentName, parts.entries.length);
  }

  private readonly pendingLog = new Map<string, number>();

  /**
   * Applies snapshot and log entries in one transaction (3-5x faster than merging them first).
   * The document's `update` observers are detached meanwhile: nobody is connected yet, and with
   * an observer attached Yjs re-encodes the whole loaded state just to announce it.
   */
  private applyStored(ws: string, doc: Y.Doc, parts: StoredParts): void {
    const observers = (doc as unknown as { _observers?: unknown })._observers;
    const saved = observers instanceof Map ? observers.get('update') : undefined;
    if (saved) (observers as Map<string, unknown>).delete('update');
    const all = parts.snapshot ? [parts.snapshot, ...parts.entries] : parts.entries;
    try {
      const apply = (list: Uint8Array[]) => doc.transact(() => list.forEach((u) => Y.applyUpdate(doc, u)), LOAD_ORIGIN);
      try {
        apply(all);
      } catch {
        // Only disk corruption gets here: retry with the parts that still decode, on a fresh
        // start (the failed attempt may have applied part of an entry).
        if (doc.store.clients.size > 0) throw new Error('stored state is corrupt');
        apply(this.store.decodable(all));
      }
    } catch (e) {
      this.log.error('stored state does not apply', { ws, err: e });
      throw new ProtocolError(CloseCodes.NeedsRecovery, 'its stored state is corrupt');
    } finally {
      if (saved) (observers as Map<string, unknown>).set('update', saved);
    }
  }

  async afterLoadDocument({ documentName, document }: afterLoadDocumentPayload): Promise<void> {
    const onUpdate = (update: Uint8Array, origin: unknown) => this.onDocumentUpdate(documentName, update, origin);
    document.on('update', onUpdate);
    const stopTitle = observeTitle(document, (title) => {
      if (!this.deleted.has(documentName)) this.safely(() => this.store.rename(documentName, title));
    });
    const state: DocState = {
      sinceSnapshot: this.pendingLog.get(documentName) ?? 0,
      dirty: false,
      detach: () => {
        document.off('update', onUpdate);
        stopTitle();
      },
    };
    this.pendingLog.delete(documentName);
    this.docs.set(documentName, { doc: document, state });
    this.shadows.attach(documentName, document, alreadyLogged);
    // Build the validation replica right after this turn: off the first sync's path.
    setImmediate(() => this.shadows.prepare(documentName));
    migrate(document, serverOrigin('migrate'));
    if (state.sinceSnapshot >= this.opts.compactEvery) this.compactSoon(documentName);
  }

  /** Write-ahead append of a connection's update, before Hocuspocus applies and acknowledges it. */
  async beforeSync({ type, payload, connection, document, documentName }: beforeSyncPayload): Promise<void> {
    if (type !== 1 && type !== 2) return; // sync step 1 carries no changes
    if (connection.readOnly) {
      if (Y.snapshotContainsUpdate(Y.snapshot(document), payload)) return; // nothing new: harmless
      throw new ProtocolError(CloseCodes.ReadOnly, 'viewer connections cannot change the document');
    }
    const claims = (connection.context as { claims?: { role: string; sub: string } } | undefined)?.claims;
    const writer = claims ? writerOfToken(claims) : null;
    if (!writer) throw new ProtocolError(CloseCodes.ReadOnly, 'this connection cannot change the document');
    try {
      this.appendIncoming(documentName, payload, writer);
    } catch (e) {
      const code = e instanceof ProtocolError ? e.code : 0;
      if (code === CloseCodes.StorageUnavailable.code || code === CloseCodes.MalformedMessage.code || code === CloseCodes.SchemaViolation.code) {
        // Close the whole socket too (after Hocuspocus sends its per-document close), as frame
        // validation does: a stock provider only reconnects — and re-sends a change refused for
        // lack of storage — when its socket closes.
        const ws = connection.webSocket;
        const { reason } = e as ProtocolError;
        setImmediate(() => ws.close(code, reason));
      }
      throw e;
    }
  }

  /**
   * Checks that an incoming update (already decoded) applies atomically and keeps to the document
   * schema with `writer`'s rights, on the shadow replica, then appends it to the log; the caller
   * applies it to the live document afterwards. Throws ProtocolError (MalformedMessage,
   * SchemaViolation, StorageUnavailable) and then the caller applies nothing.
   */
  appendIncoming(ws: string, update: Uint8Array, writer: Writer): void {
    if (this.deleted.has(ws)) throw new ProtocolError(CloseCodes.NotFound, ws);
    if (isEmptyUpdate(update)) return; // e.g. the sync step 2 of a client with nothing new
    this.shadows.check(ws, update, writer);
    try {
      this.store.append(ws, update);
    } catch (e) {
      this.shadows.invalidate(ws); // the shadow has it, the live document will not
      this.log.error('append failed; update refused', { ws, err: e });
      throw new ProtocolError(CloseCodes.StorageUnavailable, (e as Error).message);
    }
    this.noteAppended(ws);
  }

  private onDocumentUpdate(ws: string, update: Uint8Array, origin: unknown): void {
    if (alreadyLogged(origin) || this.deleted.has(ws)) return;
    const entry = this.docs.get(ws);
    if (!entry) return;
    try {
      this.store.append(ws, update);
      this.noteAppended(ws);
    } catch (e) {
      // Keep the change in memory and retry as a snapshot until storage works again.
      this.log.error('append failed; document kept in memory, retrying', { ws, err: e });
      entry.state.dirty = true;
      this.scheduleRetry(ws);
    }
  }

  private noteAppended(ws: string): void {
    const entry = this.docs.get(ws);
    if (!entry) return;
    const s = entry.state;
    s.sinceSnapshot++;
    if (s.sinceSnapshot >= this.opts.compactEvery) {
      this.compactSoon(ws);
      return;
    }
    clearTimeout(s.idleTimer);
    s.idleTimer = setTimeout(() => this.compactSoon(ws), this.opts.compactIdleMs);
    s.idleTimer.unref();
  }

  /**
   * Folds the log into the snapshot without blocking the event loop: from stored data on the
   * background worker. A dirty document (changes only in memory) is snapshotted from memory.
   */
  compactSoon(ws: string): void {
    const entry = this.docs.get(ws);
    if (!entry || this.deleted.has(ws)) return;
    const s = entry.state;
    clearTimeout(s.idleTimer);
    if (s.dirty) return void this.compact(ws);
    if (s.compacting || s.sinceSnapshot === 0) return;
    s.compacting = true;
    const counted = s.sinceSnapshot;
    const started = performance.now();
    this.store.compactInBackground(ws).then(
      (folded) => {
        s.compacting = false;
        s.sinceSnapshot = Math.max(0, s.sinceSnapshot - Math.max(folded, counted));
        this.safely(() => this.store.touch(ws));
        this.log.debug('compacted in background', { ws, folded, ms: +(performance.now() - started).toFixed(1) });
      },
      (e) => {
        s.compacting = false;
        this.log.warn('background compaction failed; will retry', { ws, err: e });
        this.scheduleRetry(ws);
      },
    );
  }

  private scheduleRetry(ws: string): void {
    const entry = this.docs.get(ws);
    if (!entry || entry.state.retryTimer) return;
    entry.state.retryTimer = setTimeout(() => {
      entry.state.retryTimer = undefined;
      if (!this.compact(ws)) this.scheduleRetry(ws);
    }, this.opts.retryMs ?? 1000);
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.log.warn('store write failed', { err: e });
    }
  }

  /**
   * Snapshots a loaded document from memory, on this thread (shutdown, dirty documents, unload of
   * a dirty document). Returns false when storage failed.
   */
  compact(ws: string): boolean {
    const entry = this.docs.get(ws);
    if (!entry || this.deleted.has(ws)) return true;
    const s = entry.state;
    clearTimeout(s.idleTimer);
    if (s.sinceSnapshot === 0 && !s.dirty) return true;
    try {
      const started = performance.now();
      const upto = this.store.maxLogId(ws);
      const state = Y.encodeStateAsUpdate(entry.doc);
      if (!this.store.get(ws)) return true; // deleted meanwhile
      const folded = this.store.compact(ws, state, upto);
      this.store.touch(ws);
      s.sinceSnapshot = 0;
      s.dirty = false;
      this.log.debug('compacted', { ws, folded, bytes: state.byteLength, ms: +(performance.now() - started).toFixed(1) });
      return true;
    } catch (e) {
      this.log.error('compaction failed; document kept in memory', { ws, err: e });
      s.dirty = true;
      this.scheduleRetry(ws);
      return false;
    }
  }

  async beforeUnloadDocument({ documentName, document, instance }: beforeUnloadDocumentPayload): Promise<void> {
    // Hocuspocus can start a second, late unload of an already unloaded document (a direct
    // connection's disconnect unloads it and also schedules another unload); its checks go by
    // name, so that late unload would drop the *new* document loaded under the same name from the
    // map, and our afterUnloadDocument would stop persisting it. Refuse unloads of stale copies.
    if (instance.documents.get(documentName) !== document) throw new Error(`stale unload of ${documentName} ignored`);
    const entry = this.docs.get(documentName);
    if (!entry) return;
    // Everything but a dirty document's in-memory changes is already in the log.
    if (entry.state.dirty) {
      // Throwing keeps the document loaded (Hocuspocus skips the unload): never drop unsaved state.
      if (!this.compact(documentName)) throw new Error(`workspace ${documentName} has unsaved changes; kept in memory`);
      return;
    }
    if (entry.state.sinceSnapshot > 0) {
      this.store.compactInBackground(documentName).catch((e) => this.log.warn('compaction at unload failed; the log keeps everything', { ws: documentName, err: e }));
    }
  }

  async afterUnloadDocument({ documentName }: afterUnloadDocumentPayload): Promise<void> {
    const entry = this.docs.get(documentName);
    if (!entry) return;
    clearTimeout(entry.state.idleTimer);
    clearTimeout(entry.state.retryTimer);
    entry.state.detach();
    this.shadows.detach(documentName);
    this.docs.delete(documentName);
  }

  /** Stops persisting a workspace that was deleted (its loaded copy is about to be dropped). */
  forget(ws: string): void {
    this.deleted.add(ws);
    const entry = this.docs.get(ws);
    if (entry) {
      clearTimeout(entry.state.idleTimer);
      clearTimeout(entry.state.retryTimer);
    }
  }

  /** True when a loaded document has changes not yet in storage. */
  isDirty(ws: string): boolean {
    return this.docs.get(ws)?.state.dirty ?? false;
  }

  /** Snapshots every loaded document (shutdown). Returns the names that could not be stored. */
  flushAll(): string[] {
    const failed: string[] = [];
    for (const ws of this.docs.keys()) if (!this.compact(ws)) failed.push(ws);
    return failed;
  }
}
