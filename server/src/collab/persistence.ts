/**
 * Durable persistence as a Hocuspocus extension.
 *
 * - Updates from a connection are checked on a shadow replica (shadow.ts) and appended to the
 *   log (storage.ts: SQLite, synchronously; Postgres, awaited) in `beforeSync`, i.e. *before*
 *   Hocuspocus applies and acknowledges them (write-ahead): an acknowledged update survives kill -9.
 *   If the append fails the connection is closed with 4503 and nothing is applied; the client
 *   keeps the change and resends it. Hocuspocus handles one connection's messages one at a time,
 *   so an awaited append keeps each client's updates in order.
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
 * Effects: storage I/O, timers.
 */
import type { Extension, Document, beforeSyncPayload, onLoadDocumentPayload, afterLoadDocumentPayload, beforeUnloadDocumentPayload, afterUnloadDocumentPayload } from '@hocuspocus/server';
import * as Y from 'yjs';
import { CloseCodes, migrate, observeTitle, serverOrigin, writerOfToken, type TokenClaims, type Writer } from '@plexus/shared';
import type { Logger } from '../log.ts';
import { FencedError, WorkspaceNotFoundError, type Awaitable, type StoredParts, type WorkspaceStorage } from '../store/storage.ts';
import { storedUpdates } from '../store/parts.ts';
import { ProtocolError, closeIfTransient } from './errors.ts';
import { ShadowValidator, type ValidationStats } from './shadow.ts';
import { diagnoseInTurns } from './recovery.ts';
import { documentHasUpdate } from './update-known.ts';
import { PushedTimeout } from './pushed-timers.ts';

/** Origin of updates applied by the y-websocket bridge (already logged write-ahead). */
export interface YwsOrigin {
  source: 'yws';
  ownerKey: string;
  /** The peer's token claims (who sent the update, for the history's attribution). */
  claims?: { sub: string; role: string; name?: string };
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
  /** Appends of server-side changes not yet durable (asynchronous storage): unloads wait for them. */
  inflight: Set<Promise<unknown>>;
  /** Compaction once the document has been quiet for `compactIdleMs` (every append pushes it back). */
  idle: PushedTimeout;
  retryTimer?: NodeJS.Timeout;
  detach: () => void;
}

export interface PersistenceOptions {
  compactEvery: number;
  compactIdleMs: number;
  retryMs?: number;
  /** Let the pre-check accept updates without a shadow replica (default true; shadow.ts). */
  precheck?: boolean;
  /** Structs per part when a shadow replica is built from the live document a part per turn (default: the snapshots' PART_STRUCTS; shadow.ts). */
  replicaPartStructs?: number;
  /** Entries of the document's roots checked per turn when a load checks the schema (default recovery.ts CHECK_STEP; 0: in one turn). */
  checkStep?: number;
}

export class DurablePersistence implements Extension {
  extensionName = 'plexus-durable-persistence';
  /** Runs before other extensions' load hooks. */
  priority = 1000;
  private readonly docs = new Map<string, { doc: Document; state: DocState }>();
  private readonly deleted = new Set<string>();
  /** Workspaces another node took over (fenced off): nothing more of them is stored from here. */
  private readonly fenced = new Set<string>();
  private readonly shadows: ShadowValidator;
  /** How incoming updates were decided: by the pre-check or on a shadow replica (shadow.ts). */
  get validation(): ValidationStats {
    return this.shadows.stats;
  }
  /** Whether a shadow replica of `ws` is held now. */
  hasShadow(ws: string): boolean {
    return this.shadows.hasShadow(ws);
  }
  /** Called once when storage refuses a workspace's write because another node holds its fence (cluster/ownership.ts drops it). */
  onFenced: (ws: string) => void = () => {};
  /**
   * Checked before a connection's update is logged: throws (a ProtocolError, which closes the
   * connection) to refuse it. The kernel fence (app.ts) refuses a kernel process that lost its lease.
   */
  writeFence: ((ws: string, claims: TokenClaims) => Promise<void>) | null = null;
  /**
   * Called when a document loaded from a stored snapshot alone (no log on top), stored collected
   * (`StoredParts.collected`), and passed its check: `state` is then an encoded update of the
   * document as loaded (or its parts in one byte string, `packStateParts`), which whoever sends the whole state may send instead of encoding it again
   * (http/opening-reads.ts). A snapshot an older Plexus merged its log into (with every deleted
   * item's content) is not offered: the document's own encoding is much smaller then.
   */
  onLoadedState: ((ws: string, doc: Y.Doc, state: Uint8Array) => void) | null = null;
  /**
   * Workspaces whose stored snapshot, while it is all that is stored, holds a document this process
   * has checked: it wrote the snapshot (folded, from memory, created), or loaded it and checked it.
   */
  private readonly checked = new Set<string>();
  /** Loads whose document was checked, and those that skipped the check (a stored state already checked, see `checked`). */
  readonly loads = { checked: 0, trusted: 0 };

  /** The stored snapshot of `ws` was just written from a fresh encoding (a workspace created or copied). */
  markChecked(ws: string): void {
    this.checked.add(ws);
  }

  /**
   * The whole stored state of `ws` without loading it (one update, or a large one's parts in one
   * byte string: `packStateParts`, which browsers unpack), when that is one collected snapshot with no
   * log on top which this process has checked (see `checked`); null otherwise (a log, a snapshot
   * of unknown origin or not checked since this process started: loading the document reads and
   * checks them). For http/opening-reads.ts.
   */
  async collectedSnapshot(ws: string): Promise<Uint8Array | null> {
    if (!this.checked.has(ws)) return null;
    const parts = await this.store.loadParts(ws);
    return parts.snapshot && parts.entries.length === 0 && parts.collected && this.checked.has(ws) ? parts.storedSnapshot : null;
  }

  constructor(
    private readonly store: WorkspaceStorage,
    private readonly log: Logger,
    private readonly opts: PersistenceOptions,
  ) {
    this.shadows = new ShadowValidator(opts.replicaPartStructs);
  }

  async onLoadDocument({ documentName, document, requestHeaders }: onLoadDocumentPayload): Promise<void> {
    const started = performance.now();
    const deletions = this.deletions.get(documentName) ?? 0;
    let parts;
    try {
      parts = await this.store.loadParts(documentName);
    } catch (e) {
      if (e instanceof WorkspaceNotFoundError) throw new ProtocolError(CloseCodes.NotFound, documentName);
      this.log.error('load failed', { ws: documentName, err: e });
      const refusal = new ProtocolError(CloseCodes.LoadFailed, (e as Error).message);
      closeIfTransient(requestHeaders, refusal); // the client tries again once its socket closes
      throw refusal;
    }
    await this.applyStored(documentName, document, parts);
    // A document that would not be valid is never served (clients would render or build on it):
    // its owner recovers it first (recovery.ts). Older documents are migrated after load. A stored
    // state this process has checked (one collected snapshot it wrote or checked, `checked`) is not
    // checked again: it is what was checked (its state is sent to browsers unchecked on the same
    // grounds, `collectedSnapshot`). The check is done a share per turn of the event loop, like the
    // load of the parts (10,000 cells: ~0.1 s in one turn).
    const alone = parts.snapshot !== null && parts.entries.length === 0 && parts.collected;
    const trusted = alone && this.checked.has(documentName);
    const diagnosis = trusted ? null : await diagnoseInTurns(document, () => this.turn('checkTurns'), this.opts.checkStep);
    // Deleted while it loaded (a load in parts gives the event loop turns): never served.
    if ((this.deletions.get(documentName) ?? 0) !== deletions) throw new ProtocolError(CloseCodes.NotFound, documentName);
    if (trusted) this.loads.trusted++;
    else this.loads.checked++;
    if (diagnosis) {
      this.checked.delete(documentName);
      this.log.error('workspace needs recovery', { ws: documentName, problem: diagnosis.problem, details: diagnosis.details.slice(0, 5) });
      throw new ProtocolError(CloseCodes.NeedsRecovery, diagnosis.problem);
    }
    this.deleted.delete(documentName);
    this.fenced.delete(documentName);
    if (alone && parts.snapshot) {
      this.checked.add(documentName);
      this.onLoadedState?.(documentName, document, parts.storedSnapshot!);
    }
    this.log.info('document loaded', { ws: documentName, ms: +(performance.now() - started).toFixed(1), logEntries: parts.entries.length });
    // Remember how much log sits on top of the snapshot so a long log is compacted soon.
    this.pendingLog.set(documentName, parts.entries.length);
    // A snapshot stored in parts: the validation replica, where one is kept (shadow.ts decides), is
    // built from them too. (Set last: once the load can no longer fail here, `afterLoadDocument`
    // takes it, right after; `forget` drops it.)
    if (parts.snapshot && parts.snapshot.length > 1) this.loadedParts.set(documentName, storedUpdates(parts));
  }

  private readonly pendingLog = new Map<string, number>();
  /** What a load in parts applied, for `afterLoadDocument` (the validation replica's build). */
  private readonly loadedParts = new Map<string, Uint8Array[]>();

  /**
   * Applies snapshot and log entries as stored (`store.applyStored`, parts.ts) in one transaction
   * (3-5x faster than merging them first) — or, for a snapshot stored in parts (a large one,
   * split-state.mjs), one transaction per part with a turn of the event loop between parts, the
   * log with the last: the load of a 10,000-cell workspace held every other workspace of the
   * node for 1–2 s, now for one part's apply at a time (each part is complete in itself, so each
   * applies whole; `loadTurns` counts the turns).
   * The document's `update` observers are detached meanwhile: nobody is connected yet, and with
   * an observer attached Yjs re-encodes the whole loaded state just to announce it.
   */
  private async applyStored(ws: string, doc: Y.Doc, parts: StoredParts): Promise<void> {
    const observers = (doc as unknown as { _observers?: unknown })._observers;
    const saved = observers instanceof Map ? observers.get('update') : undefined;
    if (saved) (observers as Map<string, unknown>).delete('update');
    try {
      await this.store.applyStored(doc, parts, LOAD_ORIGIN, () => this.turn('loadTurns'));
    } catch (e) {
      // Only a stored change that decodes but does not apply gets here (parts.ts skips those that do not decode).
      this.log.error('stored state does not apply', { ws, err: e });
      throw new ProtocolError(CloseCodes.NeedsRecovery, 'its stored state is corrupt');
    } finally {
      if (saved) (observers as Map<string, unknown>).set('update', saved);
    }
  }

  /** Turns of the event loop given to others while loading snapshots stored in parts (tests, metrics). */
  loadTurns = 0;
  /** Turns given to others while loads check a stored state against the schema (tests). */
  checkTurns = 0;
  private async turn(counter: 'loadTurns' | 'checkTurns'): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this[counter]++;
  }
  /** Deletions seen per workspace (`forget`): a load that sees one happen while it runs refuses the document. */
  private readonly deletions = new Map<string, number>();

  async afterLoadDocument({ documentName, document }: afterLoadDocumentPayload): Promise<void> {
    const onUpdate = (update: Uint8Array, origin: unknown) => this.onDocumentUpdate(documentName, update, origin);
    document.on('update', onUpdate);
    const stopTitle = observeTitle(document, (title) => {
      if (!this.deleted.has(documentName)) this.safely(() => this.store.rename(documentName, title));
    });
    const state: DocState = {
      sinceSnapshot: this.pendingLog.get(documentName) ?? 0,
      dirty: false,
      inflight: new Set(),
      idle: new PushedTimeout(() => this.compactSoon(documentName), { unref: true }),
      detach: () => {
        document.off('update', onUpdate);
        stopTitle();
      },
    };
    this.pendingLog.delete(documentName);
    this.docs.set(documentName, { doc: document, state });
    // With synchronous appends an update is applied to the live document in the turn it was
    // checked, so the shadow (when there is one) never needs it again, and the pre-check can
    // decide against the live document. With asynchronous ones the shadow can be rebuilt (after a
    // refusal) while an update waits for its append: mirror everything then (a second apply of a
    // known update is a no-op), so such an update reaches the shadow too; and every update is
    // decided there (shadow.ts).
    const sync = this.store.syncAppends;
    // Where every update needs the validation replica, it is built right after this turn (off the
    // first sync's path) — from a load in parts, a part per turn like the load (shadow.ts).
    const stored = this.loadedParts.get(documentName);
    this.loadedParts.delete(documentName);
    this.shadows.attach(documentName, document, sync ? alreadyLogged : () => false, sync && this.opts.precheck !== false, stored);
    setImmediate(() => this.shadows.prepare(documentName));
    migrate(document, serverOrigin('migrate'));
    if (state.sinceSnapshot >= this.opts.compactEvery) this.compactSoon(documentName);
  }

  /** Write-ahead append of a connection's update, before Hocuspocus applies and acknowledges it. */
  async beforeSync({ type, payload, connection, document, documentName }: beforeSyncPayload): Promise<void> {
    if (type !== 1 && type !== 2) return; // sync step 1 carries no changes
    if (connection.readOnly) {
      if (documentHasUpdate(document, payload)) return; // nothing new: harmless
      throw new ProtocolError(CloseCodes.ReadOnly, 'viewer connections cannot change the document');
    }
    const claims = (connection.context as { claims?: TokenClaims } | undefined)?.claims;
    const writer = claims ? writerOfToken(claims) : null;
    if (!writer) throw new ProtocolError(CloseCodes.ReadOnly, 'this connection cannot change the document');
    // A reconnecting runner's sync step 2 is often empty: nothing to fence (nor to store).
    if (this.writeFence && claims!.runner !== undefined && !documentHasUpdate(document, payload)) {
      try {
        await this.writeFence(documentName, claims!);
      } catch (e) {
        const err = e instanceof ProtocolError ? e : new ProtocolError(CloseCodes.StorageUnavailable, `the lease could not be checked (${(e as Error).message})`);
        if (!(e instanceof ProtocolError)) this.log.warn('lease check failed: write refused', { ws: documentName, err: e });
        const ws = connection.webSocket;
        setImmediate(() => ws.close(err.code, err.reason));
        throw err;
      }
    }
    try {
      const appended = this.appendIncoming(documentName, payload, writer);
      if (appended) await appended;
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
   * applies it to the live document afterwards — at once, or, when this returns a promise
   * (asynchronous storage), once that resolves. Throws (or rejects with) ProtocolError
   * (MalformedMessage, SchemaViolation, StorageUnavailable) and then the caller applies nothing.
   */
  appendIncoming(ws: string, update: Uint8Array, writer: Writer): void | Promise<void> {
    if (this.deleted.has(ws)) throw new ProtocolError(CloseCodes.NotFound, ws);
    if (this.fenced.has(ws)) throw new ProtocolError(CloseCodes.WorkspaceMoved, ws);
    if (isEmptyUpdate(update)) return; // e.g. the sync step 2 of a client with nothing new
    const decided = this.shadows.check(ws, update, writer);
    // The validation replica is being built, a part per turn (from a load's parts, or from the
    // live document): check once it is, in the order updates came — against the same loaded
    // document. One unloaded meanwhile (its sender gone) has no replica to check against any more:
    // the update is refused, never logged unchecked.
    if (decided instanceof Promise) {
      const loaded = this.docs.get(ws);
      return decided.then(() => {
        if (this.docs.get(ws) !== loaded) throw new ProtocolError(CloseCodes.LoadFailed, `${ws} was unloaded while the update waited for its check`);
        return this.appendIncoming(ws, update, writer);
      });
    }
    // Nothing new: what the document has is stored or on its way there; a repeat adds nothing to keep.
    if (!decided) return;
    let appended: Awaitable<number>;
    try {
      appended = this.store.append(ws, update);
    } catch (e) {
      throw this.refused(ws, e);
    }
    if (!(appended instanceof Promise)) return this.noteAppended(ws);
    return appended.then(
      () => this.noteAppended(ws),
      (e) => {
        throw this.refused(ws, e);
      },
    );
  }

  /** An incoming update could not be stored: it is refused (the sender keeps it and sends it again). */
  private refused(ws: string, e: unknown): ProtocolError {
    this.shadows.invalidate(ws); // the shadow has it, the live document will not
    if (e instanceof WorkspaceNotFoundError) return new ProtocolError(CloseCodes.NotFound, ws);
    if (e instanceof FencedError) {
      this.fencedOff(ws);
      return new ProtocolError(CloseCodes.WorkspaceMoved, ws);
    }
    this.log.error('append failed; update refused', { ws, err: e });
    return new ProtocolError(CloseCodes.StorageUnavailable, (e as Error).message);
  }

  /**
   * Another node holds the workspace's fence: nothing of it is stored from here any more (its
   * clients reconnect, and are routed there). Its loaded copy is left to be unloaded, clean.
   */
  /** Stops storing `ws` from this node: another node serves it now (cluster/ownership.ts). */
  stopStoring(ws: string): void {
    this.fencedOff(ws, false);
  }

  /** `notify`: tell `onFenced` (storage refused a write; not when the caller already knows). */
  private fencedOff(ws: string, notify = true): void {
    if (this.fenced.has(ws)) return;
    this.fenced.add(ws);
    const entry = this.docs.get(ws);
    if (entry) {
      entry.state.idle.cancel();
      clearTimeout(entry.state.retryTimer);
      entry.state.dirty = false;
      entry.state.sinceSnapshot = 0;
    }
    if (!notify) return;
    this.log.warn('workspace fenced off: another node serves it now', { ws });
    this.onFenced(ws);
  }

  private onDocumentUpdate(ws: string, update: Uint8Array, origin: unknown): void {
    if (alreadyLogged(origin) || this.deleted.has(ws) || this.fenced.has(ws)) return;
    const entry = this.docs.get(ws);
    if (!entry) return;
    // Keep the change in memory and retry as a snapshot until storage works again.
    const keep = (e: unknown) => {
      if (e instanceof FencedError) return this.fencedOff(ws);
      this.log.error('append failed; document kept in memory, retrying', { ws, err: e });
      entry.state.dirty = true;
      this.scheduleRetry(ws);
    };
    let appended: Awaitable<number>;
    try {
      appended = this.store.append(ws, update);
    } catch (e) {
      return keep(e);
    }
    if (!(appended instanceof Promise)) return this.noteAppended(ws);
    const inflight = entry.state.inflight;
    const done = appended.then(() => this.noteAppended(ws), keep).finally(() => inflight.delete(done));
    inflight.add(done);
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
    s.idle.after(this.opts.compactIdleMs);
  }

  /**
   * Folds the log into the snapshot without blocking the event loop: from stored data on the
   * background worker. A dirty document (changes only in memory) is snapshotted from memory.
   */
  compactSoon(ws: string): void {
    const entry = this.docs.get(ws);
    if (!entry || this.deleted.has(ws)) return;
    const s = entry.state;
    s.idle.cancel();
    if (s.dirty) return void this.compact(ws);
    if (s.compacting || s.sinceSnapshot === 0) return;
    s.compacting = true;
    const counted = s.sinceSnapshot;
    const started = performance.now();
    this.store.compactInBackground(ws).then(
      (folded) => {
        s.compacting = false;
        s.sinceSnapshot = Math.max(0, s.sinceSnapshot - Math.max(folded, counted));
        if (folded > 0) this.checked.add(ws);
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
      void this.compact(ws).then((ok) => ok || this.scheduleRetry(ws));
    }, this.opts.retryMs ?? 1000);
  }

  private safely(fn: () => Awaitable<void>): void {
    const failed = (e: unknown) => this.log.warn('store write failed', { err: e });
    try {
      const r = fn();
      if (r instanceof Promise) r.catch(failed);
    } catch (e) {
      failed(e);
    }
  }

  /**
   * Snapshots a loaded document from memory, on this thread (shutdown, dirty documents, unload of
   * a dirty document). Resolves to false when storage failed. (The state is taken synchronously
   * when called; with synchronous storage everything is done then.)
   */
  async compact(ws: string): Promise<boolean> {
    const entry = this.docs.get(ws);
    if (!entry || this.deleted.has(ws) || this.fenced.has(ws)) return true;
    const s = entry.state;
    s.idle.cancel();
    if (s.sinceSnapshot === 0 && !s.dirty) return true;
    // Taken now, so a change that fails to append while the snapshot is written marks it dirty again.
    const counted = s.sinceSnapshot;
    s.dirty = false;
    try {
      const started = performance.now();
      const state = Y.encodeStateAsUpdate(entry.doc);
      const folded = await this.store.snapshotFromMemory(ws, state);
      this.checked.add(ws);
      await this.store.touch(ws);
      s.sinceSnapshot = Math.max(0, s.sinceSnapshot - counted);
      this.log.debug('compacted', { ws, folded, bytes: state.byteLength, ms: +(performance.now() - started).toFixed(1) });
      return true;
    } catch (e) {
      if (e instanceof FencedError) {
        this.fencedOff(ws);
        return true;
      }
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
    // Server-side changes still on their way to storage decide whether the document is dirty.
    if (entry.state.inflight.size) await Promise.all([...entry.state.inflight]);
    if (this.fenced.has(documentName)) return; // another node serves it: nothing to store from here
    // Everything but a dirty document's in-memory changes is already in the log.
    if (entry.state.dirty) {
      // Throwing keeps the document loaded (Hocuspocus skips the unload): never drop unsaved state.
      if (!(await this.compact(documentName))) throw new Error(`workspace ${documentName} has unsaved changes; kept in memory`);
      return;
    }
    if (entry.state.sinceSnapshot > 0) {
      // Not awaited (the unload goes on), but a clean shutdown waits for it (flushAll).
      const folding = this.store
        .compactInBackground(documentName)
        .then((folded) => void (folded > 0 && this.checked.add(documentName)))
        .catch((e) => this.log.warn('compaction at unload failed; the log keeps everything', { ws: documentName, err: e }))
        .finally(() => this.unloadCompactions.delete(folding));
      this.unloadCompactions.add(folding);
    }
  }

  /** Compactions started by unloads, still running. */
  private readonly unloadCompactions = new Set<Promise<unknown>>();
  /** How many of them (health: an idle node has folded what it unloaded). */
  get unloadFoldsRunning(): number {
    return this.unloadCompactions.size;
  }
  /** How long a clean stop waits for them (storage that hangs must not hang the stop; the log keeps everything anyway). */
  unloadCompactionWaitMs = 10_000;

  async afterUnloadDocument({ documentName }: afterUnloadDocumentPayload): Promise<void> {
    const entry = this.docs.get(documentName);
    if (!entry) return;
    entry.state.idle.cancel();
    clearTimeout(entry.state.retryTimer);
    entry.state.detach();
    this.shadows.detach(documentName);
    this.docs.delete(documentName);
    this.fenced.delete(documentName);
  }

  /** Stops persisting a workspace that was deleted (its loaded copy is about to be dropped). */
  forget(ws: string): void {
    this.deleted.add(ws);
    this.deletions.set(ws, (this.deletions.get(ws) ?? 0) + 1);
    this.checked.delete(ws);
    this.loadedParts.delete(ws);
    const entry = this.docs.get(ws);
    if (entry) {
      entry.state.idle.cancel();
      clearTimeout(entry.state.retryTimer);
    }
  }

  /** True when a loaded document has changes not yet in storage. */
  isDirty(ws: string): boolean {
    return this.docs.get(ws)?.state.dirty ?? false;
  }

  /**
   * Snapshots every loaded document (shutdown), and lets the compactions of documents unloaded just
   * before finish (a store closed under them would leave their log unfolded: nothing lost, but a
   * clean stop promises a folded log). Resolves to the names that could not be stored.
   */
  async flushAll(): Promise<string[]> {
    const failed: string[] = [];
    const deadline = Date.now() + this.unloadCompactionWaitMs;
    await this.unloadCompactionsDone(deadline);
    // Documents keep unloading while this runs (the stop closes their clients' sockets meanwhile):
    // one that leaves the map before its turn is skipped here, and its unload's compaction — added
    // before it left — is waited for below.
    for (const [ws, { state }] of [...this.docs]) {
      if (state.inflight.size) await Promise.all([...state.inflight]);
      if (!(await this.compact(ws))) failed.push(ws);
    }
    await this.unloadCompactionsDone(deadline);
    return failed;
  }

  /** Resolves once no compaction started by an unload runs, those started while it waits included, or at `deadline`. */
  private async unloadCompactionsDone(deadline: number): Promise<void> {
    while (this.unloadCompactions.size) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all([...this.unloadCompactions]), new Promise((r) => (timer = setTimeout(r, left)))]);
      clearTimeout(timer);
    }
  }
}
