/**
 * Folds a local copy's entries into one off the page's main thread (localCopy.ts): merging the
 * stored updates of a 10,000-cell document takes hundreds of milliseconds, which the page would
 * otherwise spend between two keystrokes. Answers `{ id, entries }` (entries left) or `{ id, error }`.
 */
import { mergeUpdates } from 'yjs';
import { foldEntries } from './localCopyFold.ts';

self.onmessage = (e: MessageEvent<{ id: number; name: string }>) => {
  const { id, name } = e.data;
  foldEntries(name, mergeUpdates).then(
    (entries) => self.postMessage({ id, entries }),
    (err: unknown) => self.postMessage({ id, error: err instanceof Error ? err.message : String(err) }),
  );
};
