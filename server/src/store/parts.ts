/**
 * Reading stored parts (a snapshot and the log entries on top of it), the same for every storage
 * (storage.ts): merging them into one update, and skipping parts that no longer decode.
 * Effects: none (pure, but counts skipped parts).
 */
import * as Y from 'yjs';
import type { LoadedState, StoredParts } from './storage.ts';
import { mergeInTree } from './log-compaction.mjs';

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

  /** Snapshot + log as one merged update. */
  protected merged({ snapshot, entries, upto }: StoredParts): LoadedState {
    const parts = snapshot ? [...snapshot, ...entries] : entries;
    if (parts.length === 0) return { update: null, logEntries: 0, upto };
    if (parts.length === 1) return { update: parts[0]!, logEntries: entries.length, upto };
    try {
      return { update: mergeInTree(parts), logEntries: entries.length, upto };
    } catch {
      return { update: mergeInTree(this.decodable(parts)), logEntries: entries.length, upto };
    }
  }
}
