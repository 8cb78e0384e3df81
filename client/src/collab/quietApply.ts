/**
 * Applying a whole document fetched while opening (speed issue, gap 3) without Yjs encoding it a
 * second time. After every transaction Yjs encodes the transaction's changes as an update for the
 * document's `'update'` listeners; for a 16 MiB, 10,000-cell document that re-encode costs as much
 * as a third of applying it, on the main thread, before anything is editable. The listeners a
 * session has then do not need it: the provider ignores what came through itself (the origin
 * given here) and the local copy (localCopy.ts) is given the fetched bytes as they are
 * (`keep`). Hooks that only want to know "the document changed" listen to
 * `'afterTransaction'`, which costs nothing extra.
 *
 * The listeners are set aside for those transactions only: a transaction that another listener
 * starts meanwhile (nested, cleaned up right after it) has them back, so its update is sent and
 * stored as usual. The session also loads its local copy this way (origin: the copy, which
 * ignores its own) while its socket is not yet connected.
 * Relies on lib0's Observable keeping listeners in `_observers` (a Map of Sets), as lib0 0.2.x
 * does; quietApply.test.ts fails if that changes.
 */
import * as Y from 'yjs';

type Listeners = Map<string, Set<unknown>>;

/**
 * From now until the returned function is called, transactions with `origin` raise no `'update'`
 * event (and Yjs encodes nothing for them); every other transaction does, as always.
 */
export function quietTransactions(doc: Y.Doc, origin: unknown): () => void {
  const listeners = (doc as unknown as { _observers?: Listeners })._observers;
  if (!(listeners instanceof Map)) return () => {};
  let held: Set<unknown> | undefined;
  const restore = () => {
    if (!held) return;
    // A listener added meanwhile went into a new set: keep it too.
    const added = listeners.get('update');
    if (added) for (const f of added) held.add(f);
    listeners.set('update', held);
    held = undefined;
  };
  // Yjs emits 'afterTransactionCleanup' right before it decides whether to encode for 'update';
  // the listeners come back as soon as that transaction's cleanup is over (before any other task
  // can add or remove one), or before the next transaction's if it is nested.
  const onCleanup = (tr: Y.Transaction) => {
    if (tr.origin !== origin) return restore();
    if (held || !listeners.has('update')) return;
    held = listeners.get('update');
    listeners.delete('update');
    queueMicrotask(restore);
  };
  doc.on('afterTransactionCleanup', onCleanup);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    restore();
    doc.off('afterTransactionCleanup', onCleanup);
  };
}

/**
 * Applies `updates` (one, or a large document's parts as the server stores them) with `origin`, in
 * one transaction, without an `'update'` event (and its encoding) for it.
 */
export function applyWithoutUpdateEvent(doc: Y.Doc, updates: readonly Uint8Array[], origin: unknown): void {
  const loud = quietTransactions(doc, origin);
  try {
    // Not local (as `Y.applyUpdate` alone marks it): what arrived is not this tab's own change.
    Y.transact(doc, () => updates.forEach((u) => Y.applyUpdate(doc, u, origin)), origin, false);
  } finally {
    loud();
  }
}
