/**
 * Which workspaces this browser keeps a synced IndexedDB copy of, recorded in localStorage so that
 * index.html (before the bundle, without opening IndexedDB) can skip fetching the whole document
 * early: the local copy shows it sooner, and the socket's sync is then a small diff.
 */
import { readStoredMap } from '../api/tokens.ts';

/** Read by index.html too. */
const LOCAL_COPIES_KEY = 'plexus.localCopies';

/** Whether this browser keeps a synced IndexedDB copy of workspace `id` (as far as it recorded). */
export function hasLocalCopy(id: string): boolean {
  return readStoredMap(LOCAL_COPIES_KEY)[id] !== undefined;
}

/** Records (or forgets) that this browser keeps a synced IndexedDB copy of workspace `id`. */
export function markLocalCopy(id: string, kept: boolean): void {
  try {
    const map = readStoredMap(LOCAL_COPIES_KEY);
    if (kept === (map[id] !== undefined)) return;
    if (kept) map[id] = '1';
    else delete map[id];
    localStorage.setItem(LOCAL_COPIES_KEY, JSON.stringify(map));
  } catch {
    // Storage blocked or full: the next visit fetches the document early, as for a first visit.
  }
}
