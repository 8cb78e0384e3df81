// Folding a workspace's update log into its snapshot, shared by the store (main thread) and the
// background worker. Plain JavaScript so a worker thread can load it without a TypeScript loader;
// types are in log-compaction.d.mts. Effects: SQLite reads and one write transaction.
import * as Y from 'yjs';
import { isStateParts, packStateParts, unpackStateParts } from '@plexus/shared/state-parts';
import { PART_STRUCTS, splitDoc, splitUpdate } from './split-state.mjs';

/**
 * Merges many updates into one. `Y.mergeUpdates` over a flat list is quadratic (30,000 single
 * keystrokes take ~35 s); merging groups of `fan` level by level is O(n log n).
 */
export function mergeInTree(parts, fan = 32) {
  if (parts.length === 0) return null;
  while (parts.length > 1) {
    const next = [];
    for (let i = 0; i < parts.length; i += fan) {
      const group = parts.slice(i, i + fan);
      next.push(group.length === 1 ? group[0] : Y.mergeUpdates(group));
    }
    parts = next;
  }
  return parts[0];
}

/**
 * The state that `parts` (a snapshot, then log entries, in order) make, as one update, with the
 * content of deleted items collected. `Y.mergeUpdates` keeps every deleted character and every
 * replaced output forever: a snapshot folded by merging grew with the workspace's whole history
 * (an output rewritten 100 times: 1.1 MB merged against 10 KB collected), and every load read it
 * all. Applying into a document (garbage collection on, as the live one has it) and encoding that
 * keeps only what the document holds; what Yjs could not integrate yet is kept as it is. About
 * 1.8× the time of a merge, on the background worker.
 */
export function foldUpdates(parts) {
  return folded(parts, (doc) => Y.encodeStateAsUpdate(doc));
}

/**
 * As `foldUpdates`, as it is best stored: in parts (`packStateParts`) when the document is larger
 * than `partStructs` structs, cut from the document itself (split-state.mjs `splitDoc`: no second
 * decode of the whole state), else whole.
 */
export function foldToStorable(parts, partStructs = PART_STRUCTS) {
  return folded(parts, (doc) => {
    const cut = splitDoc(doc, partStructs);
    return cut ? packStateParts(cut) : Y.encodeStateAsUpdate(doc);
  });
}

/** `parts` applied into a fresh document (garbage collection on), handed to `encode`. */
function folded(parts, encode) {
  const doc = new Y.Doc();
  try {
    doc.transact(() => {
      for (const p of parts) Y.applyUpdate(doc, p);
    });
    return encode(doc);
  } finally {
    doc.destroy();
  }
}

/**
 * Folds every log entry of `ws` present now into its snapshot, from stored data alone (the live
 * document is not needed, so this can run on another thread): snapshot and entries are applied
 * into one document and encoded (`foldUpdates`). Entries appended meanwhile stay in the log; if a newer
 * snapshot appeared meanwhile nothing is written.
 *
 * Snapshots live in their own database (attached as `snap`), so writing one — a large blob — takes
 * only that database's write lock: the server's thread, the only writer of the log, never waits for
 * it. The folded log entries are dropped afterwards by `dropFolded` (by the log's writer), in a
 * separate transaction: a crash in between leaves entries the snapshot already holds, which loads
 * skip (they read the log after the snapshot's `upto`).
 * A state larger than `partStructs` structs is stored in parts (split-state.mjs); with no log to
 * fold, a snapshot stored whole is cut into parts (`cutStoredSnapshot`).
 * Returns the number of entries folded and the last one (`upto`; 0 when nothing was folded).
 */
export function compactFromLog(db, ws, partStructs = PART_STRUCTS) {
  const snap = db.prepare('SELECT upto, data FROM snap.snapshots WHERE ws = ?').get(ws);
  const from = snap ? snap.upto : 0;
  const rows = db.prepare('SELECT seq, data FROM main.log WHERE ws = ? AND seq > ? ORDER BY seq').all(ws, from);
  if (rows.length === 0) {
    if (snap) cutStoredSnapshot(db, ws, snap, partStructs);
    return { folded: 0, upto: 0 };
  }
  const upto = rows[rows.length - 1].seq;
  const entries = rows.map((r) => new Uint8Array(r.data));
  const state = foldToStorable(snap ? [...unpackStateParts(new Uint8Array(snap.data)), ...entries] : entries, partStructs);
  const written = db.transaction(() => {
    const now = db.prepare('SELECT upto FROM snap.snapshots WHERE ws = ?').get(ws);
    if ((now ? now.upto : 0) !== from) return false; // someone else compacted meanwhile
    if (!db.prepare('SELECT 1 FROM main.workspaces WHERE id = ?').get(ws)) return false; // deleted meanwhile
    db.prepare('INSERT INTO snap.snapshots (ws, upto, data, collected) VALUES (?, ?, ?, 1) ON CONFLICT(ws) DO UPDATE SET upto = excluded.upto, data = excluded.data, collected = 1').run(ws, upto, state);
    return true;
  })();
  return written ? { folded: rows.length, upto } : { folded: 0, upto: 0 };
}

/**
 * A stored snapshot written whole (at creation, or from memory) is stored again in parts when it
 * is larger than one, so that its next load can apply it a part at a time (split-state.mjs) —
 * unless it changed meanwhile. Returns whether it was.
 */
export function cutStoredSnapshot(db, ws, snap, partStructs = PART_STRUCTS) {
  const data = new Uint8Array(snap.data);
  if (!partStructs || isStateParts(data)) return false;
  const parts = splitUpdate(data, partStructs);
  if (parts.length < 2) return false;
  return db.prepare('UPDATE snap.snapshots SET data = ? WHERE ws = ? AND upto = ? AND data = ?').run(packStateParts(parts), ws, snap.upto, snap.data).changes > 0;
}

/** Drops the log entries of `ws` a snapshot holds (up to `upto`); returns how many. */
export function dropFolded(db, ws, upto) {
  return db.prepare('DELETE FROM main.log WHERE ws = ? AND seq <= ?').run(ws, upto).changes;
}
