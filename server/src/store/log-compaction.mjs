// Folding a workspace's update log into its snapshot, shared by the store (main thread) and the
// background worker. Plain JavaScript so a worker thread can load it without a TypeScript loader;
// types are in log-compaction.d.mts. Effects: SQLite reads and one write transaction.
import * as Y from 'yjs';

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
 * Folds every log entry of `ws` present now into its snapshot, from stored data alone (the live
 * document is not needed, so this can run on another thread). The small entries are merged
 * first and the large snapshot only once. Entries appended meanwhile stay in the log; if a newer
 * snapshot appeared meanwhile nothing is written. Returns the number of entries folded.
 */
export function compactFromLog(db, ws) {
  const snap = db.prepare('SELECT upto, data FROM snapshots WHERE ws = ?').get(ws);
  const from = snap ? snap.upto : 0;
  const rows = db.prepare('SELECT seq, data FROM log WHERE ws = ? AND seq > ? ORDER BY seq').all(ws, from);
  if (rows.length === 0) return 0;
  const upto = rows[rows.length - 1].seq;
  const entries = mergeInTree(rows.map((r) => new Uint8Array(r.data)));
  const state = snap ? Y.mergeUpdates([new Uint8Array(snap.data), entries]) : entries;
  return db.transaction(() => {
    const now = db.prepare('SELECT upto FROM snapshots WHERE ws = ?').get(ws);
    if ((now ? now.upto : 0) !== from) return 0; // someone else compacted meanwhile
    if (!db.prepare('SELECT 1 FROM workspaces WHERE id = ?').get(ws)) return 0; // deleted meanwhile
    db.prepare('INSERT INTO snapshots (ws, upto, data) VALUES (?, ?, ?) ON CONFLICT(ws) DO UPDATE SET upto = excluded.upto, data = excluded.data').run(ws, upto, state);
    return db.prepare('DELETE FROM log WHERE ws = ? AND seq <= ?').run(ws, upto).changes;
  })();
}
