/**
 * This browser's copy of a workspace document in IndexedDB (offline work, quick reopening), in the
 * layout y-indexeddb gives it (one database per document: an `updates` store of Yjs updates under
 * auto-increment keys, and a `custom` store), so copies written by earlier versions stay readable
 * and the other way round. What differs from y-indexeddb: the page's main thread never encodes the
 * whole document for it (speed issue, gap 3).
 * - When its database opens, y-indexeddb stores the whole document as it is then
 *   (`encodeStateAsUpdate`). Opening a workspace, the database usually opens after the document
 *   fetched while opening has been applied: for 10,000 cells that encode held the main thread
 *   ~0.8 s, right before the notebook rendered. Here the updates made before the database opened
 *   are kept in memory and written when it opens, and a document applied without an `'update'`
 *   event (quietApply.ts) is handed over as its bytes (`keep`).
 * - y-indexeddb folds its entries into one after every 500 (encoding the whole document again, in
 *   a pause of typing); here the stored entries are merged (`Y.mergeUpdates`) by a worker
 *   (localCopyFold.ts), in one IndexedDB transaction: entries added meanwhile wait for it, and
 *   nothing is lost if the page closes during it.
 * Updates this copy applied itself (origin: the copy) are not stored again.
 * Effects: IndexedDB, a worker.
 */
import * as Y from 'yjs';
import { FOLD_STORE, foldEntries, openCopyDb } from './localCopyFold.ts';

/** Entries after which the copy is folded into one (as y-indexeddb, 500). */
export const FOLD_AT = 500;
/** The fold waits for this long without a new entry (ms; y-indexeddb waits 1 s). */
const FOLD_DELAY_MS = 1000;

let worker: Worker | null | undefined;
/** The worker itself failed (it could not start or run): the fold is done on the page instead. */
class FoldWorkerFailed extends Error {}
let nextFold = 1;
const folds = new Map<number, { resolve: (n: number) => void; reject: (e: Error) => void }>();

/** The page's fold worker (one for every copy), or null where workers cannot start (the fold then runs here). */
function foldWorker(): Worker | null {
  if (worker !== undefined) return worker;
  try {
    worker = new Worker(new URL('./localCopyFold.worker.ts', import.meta.url), { type: 'module', name: 'plexus-local-copy-fold' });
    worker.onmessage = (e: MessageEvent<{ id: number; entries?: number; error?: string }>) => {
      const f = folds.get(e.data.id);
      folds.delete(e.data.id);
      if (e.data.error !== undefined) f?.reject(new Error(e.data.error));
      else f?.resolve(e.data.entries ?? 0);
    };
    worker.onerror = (e) => {
      // The worker could not start or run: fold here from now on.
      for (const f of folds.values()) f.reject(new FoldWorkerFailed(e.message || 'the local copy fold worker failed'));
      folds.clear();
      worker = null;
    };
  } catch {
    worker = null;
  }
  return worker;
}

/** Folds done by the worker and on the page (tests). */
export const foldStats = { inWorker: 0, onPage: 0 };

function foldHere(name: string): Promise<number> {
  foldStats.onPage++;
  return foldEntries(name, Y.mergeUpdates);
}

/** Folds the copy `name` in the worker, or here; resolves with the entries left. */
function fold(name: string): Promise<number> {
  const w = foldWorker();
  if (!w) return foldHere(name);
  const id = nextFold++;
  return new Promise<number>((resolve, reject) => {
    folds.set(id, { resolve, reject });
    w.postMessage({ id, name });
  }).then(
    (left) => {
      foldStats.inWorker++;
      return left;
    },
    // Only when the worker failed: a fold that failed in it (an entry that is not an update)
    // would fail here as well, after merging everything again on the page.
    (e: unknown) => (e instanceof FoldWorkerFailed ? foldHere(name) : Promise.reject(e)),
  );
}

export class LocalCopy {
  /** Folds done so far on this page, by the worker and here (tests read them through the session). */
  readonly foldStats = foldStats;
  db: IDBDatabase | null = null;
  /** The stored entries have been applied to the document. */
  synced = false;
  readonly whenSynced: Promise<LocalCopy>;
  /** Resolves once the copy is loaded (as whenSynced) or known not to be kept (no IndexedDB, or it failed). */
  readonly whenSettled: Promise<void>;
  /** Entries in the store, as far as this page knows (another tab may add its own). */
  entries = 0;
  private readonly opened: Promise<IDBDatabase | null>;
  /** Updates made before the database opened, written when it does. */
  private waiting: Uint8Array[] = [];
  private destroyed = false;
  /** No database to keep updates in (none could be opened, or it failed). */
  private gaveUp = false;
  private settle: () => void = () => {};
  private foldTimer: ReturnType<typeof setTimeout> | undefined;
  private folding: Promise<void> | null = null;

  constructor(
    readonly name: string,
    readonly doc: Y.Doc,
  ) {
    let synced!: (c: LocalCopy) => void;
    this.whenSynced = new Promise((resolve) => (synced = resolve));
    this.whenSettled = new Promise((resolve) => (this.settle = resolve));
    void this.whenSynced.then(() => this.settle());
    doc.on('update', this.onUpdate);
    doc.on('destroy', this.destroy);
    this.opened = openCopyDb(name).then(
      (db) => {
        if (this.destroyed) {
          db.close();
          return null;
        }
        return this.load(db).then(() => {
          if (this.destroyed) return db;
          this.synced = true;
          synced(this);
          return db;
        });
      },
      (e: unknown) => {
        // No IndexedDB (a private window may refuse it): the page works without a copy, and
        // nothing waits in memory for a database that will not come.
        console.warn('Plexus: this browser keeps no copy of the workspace (IndexedDB could not be opened)', e);
        this.giveUp();
        return null;
      },
    );
  }

  /** Reads what is stored and writes what came before the database opened, in one transaction; applies what was read. */
  private load(db: IDBDatabase): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const tx = db.transaction([FOLD_STORE], 'readwrite');
      const store = tx.objectStore(FOLD_STORE);
      const read = store.getAll();
      let stored: Uint8Array[] = [];
      read.onsuccess = () => {
        stored = (read.result as unknown[]).filter((u): u is Uint8Array => u instanceof Uint8Array);
        // From here on, updates go straight to the database (in later transactions: after this one).
        for (const u of this.waiting) store.add(u);
        this.entries = stored.length + this.waiting.length;
        this.waiting = [];
        this.db = db;
      };
      tx.oncomplete = () => {
        if (!this.destroyed && stored.length) Y.transact(this.doc, () => stored.forEach((u) => Y.applyUpdate(this.doc, u)), this, false);
        if (this.entries >= FOLD_AT) this.scheduleFold();
        resolve();
      };
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    }).catch((e: unknown) => {
      console.warn('Plexus: the copy of the workspace kept in this browser could not be read; nothing more is kept in it', e);
      this.giveUp();
    });
  }

  /** Keeps nothing more (no database, or one that failed): updates are neither written nor held. */
  private giveUp(): void {
    this.gaveUp = true;
    this.settle();
    this.doc.off('update', this.onUpdate);
    this.waiting = [];
    this.db = null;
  }

  /** Whether updates are (or will be, once the database opens) kept in this browser. */
  get keeping(): boolean {
    return !this.gaveUp && !this.destroyed;
  }

  /** Updates waiting in memory for the database to open (tests). */
  get waitingUpdates(): number {
    return this.waiting.length;
  }

  private onUpdate = (update: Uint8Array, origin: unknown): void => {
    if (origin !== this) this.keep(update);
  };

  /** Stores `update` (for one applied without an `'update'` event: the document fetched while opening). */
  keep(update: Uint8Array): void {
    if (this.destroyed || this.gaveUp) return;
    if (!this.db) {
      this.waiting.push(update);
      return;
    }
    try {
      this.db.transaction([FOLD_STORE], 'readwrite').objectStore(FOLD_STORE).add(update);
    } catch (e) {
      // The database was closed under us (deleted or upgraded in another tab): nothing more is kept.
      console.warn('Plexus: the copy of the workspace kept in this browser was closed; nothing more is kept in it', e);
      this.giveUp();
      return;
    }
    if (++this.entries >= FOLD_AT) this.scheduleFold();
  }

  private scheduleFold(): void {
    clearTimeout(this.foldTimer);
    this.foldTimer = setTimeout(() => void this.foldNow(), FOLD_DELAY_MS);
  }

  /** Folds the stored entries into one now (FOLD_DELAY_MS after the FOLD_AT-th entry). */
  private foldNow(): Promise<void> {
    clearTimeout(this.foldTimer);
    if (this.destroyed || !this.db) return Promise.resolve();
    this.folding ??= fold(this.name)
      .then(
        (left) => {
          this.entries = left;
        },
        (e: unknown) => console.warn('Plexus: the copy of the workspace kept in this browser could not be folded', e),
      )
      .finally(() => (this.folding = null));
    return this.folding;
  }

  destroy = (): Promise<void> => {
    clearTimeout(this.foldTimer);
    this.doc.off('update', this.onUpdate);
    this.doc.off('destroy', this.destroy);
    this.destroyed = true;
    this.waiting = [];
    return this.opened.then((db) => db?.close());
  };

  /** Closes the copy and deletes it from this browser. */
  clearData(): Promise<void> {
    return this.destroy().then(
      () =>
        new Promise<void>((resolve) => {
          const r = indexedDB.deleteDatabase(this.name);
          r.onsuccess = r.onerror = r.onblocked = () => resolve();
        }),
    );
  }
}
