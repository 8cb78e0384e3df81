/**
 * The IndexedDB side of a local copy (localCopy.ts), shared by the page and the fold worker:
 * opening a copy's database in y-indexeddb's layout, and folding its entries into one.
 * Effects: IndexedDB.
 */

/** The store of Yjs updates (y-indexeddb's name). */
export const FOLD_STORE = 'updates';
/** y-indexeddb's store for other values (created for compatibility; unused here). */
const CUSTOM_STORE = 'custom';

/** Opens (creating it if new) the database of the copy `name`. */
export function openCopyDb(name: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    // The request each event comes from (its target), not the object `open` returned: a stand-in
    // that hands its handlers on to the real request later (tests do) works too.
    const request = (e: Event) => e.target as IDBOpenDBRequest;
    const r = indexedDB.open(name);
    r.onupgradeneeded = (e) => {
      const db = request(e).result;
      if (!db.objectStoreNames.contains(FOLD_STORE)) db.createObjectStore(FOLD_STORE, { autoIncrement: true });
      if (!db.objectStoreNames.contains(CUSTOM_STORE)) db.createObjectStore(CUSTOM_STORE);
    };
    r.onsuccess = (e) => {
      const db = request(e).result;
      // Another tab deletes or upgrades the database: let it.
      db.onversionchange = () => db.close();
      resolve(db);
    };
    r.onerror = (e) => reject(request(e).error);
    r.onblocked = () => reject(new Error(`the copy ${name} is blocked by another tab`));
  });
}

/**
 * Merges every entry of the copy `name` into one (`merge`: Y.mergeUpdates) in one readwrite
 * transaction: the entries read are deleted and their merge added, or nothing changes. Entries
 * other tabs add meanwhile wait for the transaction and stay as they are. Resolves with the number
 * of entries left (1 when it merged).
 */
export async function foldEntries(name: string, merge: (updates: Uint8Array[]) => Uint8Array): Promise<number> {
  const db = await openCopyDb(name);
  try {
    return await new Promise<number>((resolve, reject) => {
      const tx = db.transaction([FOLD_STORE], 'readwrite');
      const store = tx.objectStore(FOLD_STORE);
      const keys = store.getAllKeys();
      const values = store.getAll();
      let left = 0;
      values.onsuccess = () => {
        const updates = (values.result as unknown[]).filter((u): u is Uint8Array => u instanceof Uint8Array);
        const ks = keys.result as IDBValidKey[];
        left = ks.length;
        if (ks.length < 2 || updates.length !== ks.length) return;
        let merged: Uint8Array;
        try {
          merged = merge(updates);
        } catch (e) {
          // An entry that is not a Yjs update: leave the copy as it is (the page reads what it can).
          tx.abort();
          reject(e instanceof Error ? e : new Error(String(e)));
          return;
        }
        store.delete(IDBKeyRange.bound(ks[0]!, ks[ks.length - 1]!));
        store.add(merged);
        left = 1;
      };
      tx.oncomplete = () => resolve(left);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error ?? new Error('the fold was aborted'));
    });
  } finally {
    db.close();
  }
}
