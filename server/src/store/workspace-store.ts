/**
 * Durable workspace storage in SQLite (better-sqlite3, WAL). Each workspace is an append-only log
 * of Yjs updates plus a compacted snapshot: an update is appended (synchronously, before the server
 * applies or acknowledges it) and survives kill -9; compaction folds the log into the snapshot in
 * one transaction. Also the workspace registry (name, times, epoch).
 * Effects: file I/O on the SQLite database.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import * as Y from 'yjs';
import { randomId } from '@plexus/shared';

export interface WorkspaceRecord {
  id: string;
  name: string;
  created: number;
  updated: number;
  /** Document session id: changes whenever the stored document is created anew. */
  epoch: string;
}

export interface LoadedState {
  /** The merged state (snapshot + log), or null when the workspace has no content yet. */
  update: Uint8Array | null;
  /** Number of log entries on top of the snapshot (compaction hint). */
  logEntries: number;
  /** Highest log id included. */
  upto: number;
}

export class WorkspaceNotFoundError extends Error {
  constructor(readonly id: string) {
    super(`workspace ${id} does not exist`);
  }
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS workspaces (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created INTEGER NOT NULL,
  updated INTEGER NOT NULL,
  epoch TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS updates (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  ws TEXT NOT NULL,
  data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS updates_ws ON updates(ws, id);
CREATE TABLE IF NOT EXISTS snapshots (
  ws TEXT PRIMARY KEY,
  upto INTEGER NOT NULL,
  data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/**
 * Merges many updates into one. `Y.mergeUpdates` over a flat list is quadratic (30,000 single
 * keystrokes take ~35 s); merging groups of 32 level by level keeps a 100,000-entry log (left by
 * a crash before compaction) to well under a second.
 */
export function mergeInTree(parts: Uint8Array[], fan = 32): Uint8Array {
  while (parts.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < parts.length; i += fan) {
      const group = parts.slice(i, i + fan);
      next.push(group.length === 1 ? group[0]! : Y.mergeUpdates(group));
    }
    parts = next;
  }
  return parts[0]!;
}

export class WorkspaceStore {
  readonly db: Database.Database;
  private readonly stmts;

  constructor(readonly file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.db = new Database(file);
    // WAL + synchronous=NORMAL: a committed write survives a process crash (kill -9); only an OS
    // crash or power loss can lose the last transactions. Set PLEXUS_SQLITE_SYNC=FULL for that.
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${process.env.PLEXUS_SQLITE_SYNC === 'FULL' ? 'FULL' : 'NORMAL'}`);
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA);
    this.stmts = {
      append: this.db.prepare<[string, Uint8Array]>('INSERT INTO updates (ws, data) VALUES (?, ?)'),
      touch: this.db.prepare<[number, string]>('UPDATE workspaces SET updated = ? WHERE id = ?'),
      get: this.db.prepare<[string], WorkspaceRecord>('SELECT id, name, created, updated, epoch FROM workspaces WHERE id = ?'),
      list: this.db.prepare<[], WorkspaceRecord>('SELECT id, name, created, updated, epoch FROM workspaces ORDER BY updated DESC'),
      insert: this.db.prepare<[string, string, number, number, string]>(
        'INSERT INTO workspaces (id, name, created, updated, epoch) VALUES (?, ?, ?, ?, ?)',
      ),
      rename: this.db.prepare<[string, number, string]>('UPDATE workspaces SET name = ?, updated = ? WHERE id = ?'),
      snapshot: this.db.prepare<[string], { upto: number; data: Buffer }>('SELECT upto, data FROM snapshots WHERE ws = ?'),
      logAfter: this.db.prepare<[string, number], { id: number; data: Buffer }>('SELECT id, data FROM updates WHERE ws = ? AND id > ? ORDER BY id'),
      maxLogId: this.db.prepare<[string], { m: number | null }>('SELECT MAX(id) AS m FROM updates WHERE ws = ?'),
      putSnapshot: this.db.prepare<[string, number, Uint8Array]>(
        'INSERT INTO snapshots (ws, upto, data) VALUES (?, ?, ?) ON CONFLICT(ws) DO UPDATE SET upto = excluded.upto, data = excluded.data',
      ),
      dropLogUpTo: this.db.prepare<[string, number]>('DELETE FROM updates WHERE ws = ? AND id <= ?'),
      countLog: this.db.prepare<[string, number], { n: number }>('SELECT COUNT(*) AS n FROM updates WHERE ws = ? AND id > ?'),
    };
  }

  /** Appends one update to a workspace's log. Synchronous: when it returns, the update is durable. */
  append(ws: string, update: Uint8Array): number {
    const info = this.stmts.append.run(ws, update);
    return Number(info.lastInsertRowid);
  }

  /** Marks a workspace as modified now (for the list's ordering). */
  touch(ws: string, when = Date.now()): void {
    this.stmts.touch.run(when, ws);
  }

  /** Reads snapshot + log of a workspace as one merged update. */
  load(ws: string): LoadedState {
    if (!this.stmts.get.get(ws)) throw new WorkspaceNotFoundError(ws);
    const snap = this.stmts.snapshot.get(ws);
    const rows = this.stmts.logAfter.all(ws, snap?.upto ?? 0);
    const parts: Uint8Array[] = [];
    if (snap) parts.push(new Uint8Array(snap.data));
    for (const r of rows) parts.push(new Uint8Array(r.data));
    const upto = rows.length ? rows[rows.length - 1]!.id : (snap?.upto ?? 0);
    if (parts.length === 0) return { update: null, logEntries: 0, upto };
    if (parts.length === 1) return { update: parts[0]!, logEntries: rows.length, upto };
    try {
      return { update: mergeInTree(parts), logEntries: rows.length, upto };
    } catch {
      // Only disk corruption gets here (every entry was validated before it was logged): keep
      // every entry that still decodes rather than refusing the whole workspace.
      const good = parts.filter((p) => {
        try {
          Y.decodeUpdate(p);
          return true;
        } catch {
          return false;
        }
      });
      this.corruptEntriesSkipped += parts.length - good.length;
      return { update: good.length ? mergeInTree(good) : null, logEntries: rows.length, upto };
    }
  }

  /** Log entries skipped at load because they no longer decode (disk corruption). */
  corruptEntriesSkipped = 0;

  /**
   * Replaces log entries up to `upto` by `state` (which must contain them all), atomically.
   * Returns the number of log entries folded in.
   */
  compact(ws: string, state: Uint8Array, upto: number): number {
    const tx = this.db.transaction(() => {
      const snap = this.stmts.snapshot.get(ws);
      if (snap && snap.upto > upto) return 0; // a newer snapshot exists
      this.stmts.putSnapshot.run(ws, upto, state);
      return this.stmts.dropLogUpTo.run(ws, upto).changes;
    });
    return tx();
  }

  /** Highest log id of a workspace (0 when the log is empty). */
  maxLogId(ws: string): number {
    return this.stmts.maxLogId.get(ws)?.m ?? 0;
  }

  /** Log entries on top of the snapshot. */
  logLength(ws: string): number {
    const snap = this.stmts.snapshot.get(ws);
    return this.stmts.countLog.get(ws, snap?.upto ?? 0)?.n ?? 0;
  }

  get(id: string): WorkspaceRecord | undefined {
    return this.stmts.get.get(id) ?? undefined;
  }

  list(): WorkspaceRecord[] {
    return this.stmts.list.all();
  }

  /** Creates a workspace with initial content (a full Yjs update) and a fresh epoch. */
  create(rec: { id: string; name: string; state: Uint8Array; now?: number }): WorkspaceRecord {
    const now = rec.now ?? Date.now();
    const epoch = randomId(16);
    this.db.transaction(() => {
      this.stmts.insert.run(rec.id, rec.name, now, now, epoch);
      this.stmts.putSnapshot.run(rec.id, 0, rec.state);
    })();
    return { id: rec.id, name: rec.name, created: now, updated: now, epoch };
  }

  rename(id: string, name: string): void {
    this.stmts.rename.run(name, Date.now(), id);
  }

  /** Deletes a workspace with its log and snapshot. */
  delete(id: string): boolean {
    return this.db.transaction(() => {
      const n = this.db.prepare('DELETE FROM workspaces WHERE id = ?').run(id).changes;
      this.db.prepare('DELETE FROM updates WHERE ws = ?').run(id);
      this.db.prepare('DELETE FROM snapshots WHERE ws = ?').run(id);
      return n > 0;
    })();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
