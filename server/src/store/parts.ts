/**
 * Reading stored parts (a snapshot and the log entries on top of it), the same for every storage
 * (storage.ts): applying them to a document as stored, merging them into one update, and skipping
 * parts that no longer decode.
 * Effects: applies into the document it is given; counts skipped parts.
 */
import * as Y from 'yjs';
import type { LoadedState, StoredParts } from './storage.ts';
import { mergeInTree } from './log-compaction.mjs';

/** What is stored, in the order it applies: the snapshot's parts, then the log entries. */
export function storedUpdates({ snapshot, entries }: Pick<StoredParts, 'snapshot' | 'entries'>): Uint8Array[] {
  return snapshot ? [...snapshot, ...entries] : entries;
}

/** Applies `updates` to `doc` in order, in one transaction with `origin`. */
function applyInOne(doc: Y.Doc, updates: readonly Uint8Array[], origin: unknown): void {
  doc.transact(() => updates.forEach((u) => Y.applyUpdate(doc, u)), origin);
}

export class PartsReader {
  /** Log entries skipped at load because they no longer decode (disk corruption). */
  corruptEntriesSkipped = 0;

  /**
   * Keeps the parts that still decode. Only disk corruption makes one fail (every entry was
   * validated before it was logged): skip it rather than refuse the whole workspace.
   */
  decodable(parts: Uint8Array[]): Uint8Array[] {
    const good = parts.filter((p) => {
      try {
        Y.decodeUpdate(p);
        return true;
      } catch {
        return false;
      }
    });
    this.corruptEntriesSkipped += parts.length - good.length;
    return good;
  }

  /**
   * Applies what is stored into `doc` as stored — the snapshot's parts, then the log, in order,
   * not merged first (3–5× faster than a merge; merging a large snapshot stored in parts would hold
   * the event loop, §41) — with `origin`. Everything goes in one transaction, unless `between` is
   * given: then each snapshot part but the last has a transaction of its own and `between` is
   * awaited after it (a load gives the event loop a turn there), the log going with the last part.
   * A stored change that no longer decodes (disk corruption) is skipped, as `load` skips it: the
   * parts that decode are applied again — into `doc` if the failed attempt left it empty, else
   * onto a fresh copy whose state then joins `doc` (the failed attempt may have added structs of
   * the entry that failed, whose delete set did not decode; a load checks the result against the
   * schema, and structs of a corrupt snapshot part's dependants are left out, pending). Resolves
   * to whether anything is stored.
   */
  async applyStored(doc: Y.Doc, parts: StoredParts, origin: unknown, between?: () => Promise<void>): Promise<boolean> {
    const all = storedUpdates(parts);
    if (all.length === 0) return false;
    const apply = (into: Y.Doc, list: Uint8Array[]) => applyInOne(into, list, origin);
    try {
      const cut = between && parts.snapshot && parts.snapshot.length > 1 ? parts.snapshot.length - 1 : 0;
      for (let i = 0; i < cut; i++) {
        apply(doc, [parts.snapshot![i]!]);
        await between!();
      }
      apply(doc, all.slice(cut));
    } catch {
      const good = this.decodable(all);
      if (doc.store.clients.size === 0) apply(doc, good);
      else {
        const fresh = new Y.Doc();
        try {
          apply(fresh, good);
          Y.applyUpdate(doc, Y.encodeStateAsUpdate(fresh), origin);
        } finally {
          fresh.destroy();
        }
      }
    }
    return true;
  }

  /**
   * A new document holding what is stored, applied as stored in one transaction with `origin`;
   * when a stored change no longer decodes, a new document of the parts that do (as `load` merges
   * them). Null when nothing is stored.
   */
  async storedDoc(parts: StoredParts, origin?: unknown): Promise<Y.Doc | null> {
    const all = storedUpdates(parts);
    if (all.length === 0) return null;
    const docOf = (list: Uint8Array[]) => {
      const doc = new Y.Doc();
      try {
        applyInOne(doc, list, origin ?? null);
        return doc;
      } catch (e) {
        doc.destroy();
        throw e;
      }
    };
    try {
      return docOf(all);
    } catch {
      return docOf(this.decodable(all));
    }
  }

  /** Snapshot + log as one merged update. */
  protected merged({ snapshot, entries, upto }: StoredParts): LoadedState {
    const parts = storedUpdates({ snapshot, entries });
    if (parts.length === 0) return { update: null, logEntries: 0, upto };
    if (parts.length === 1) return { update: parts[0]!, logEntries: entries.length, upto };
    try {
      return { update: mergeInTree(parts), logEntries: entries.length, upto };
    } catch {
      return { update: mergeInTree(this.decodable(parts)), logEntries: entries.length, upto };
    }
  }
}
