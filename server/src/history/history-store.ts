/**
 * Durable history of every workspace in SQLite (the default; `HistoryStorage` in storage.ts, and
 * postgres/postgres-history.ts with `PLEXUS_DATABASE_URL`), in its own file (`plexus.history.db`,
 * WAL) so its writes never take the update log's lock: the stored states of checkpoints (deflated
 * Yjs updates; their records also live in the document) and the attribution journal — who changed
 * what, one row per person and stretch of time, written by the server from the connection that
 * sent each update (attribution.ts). Effects: file I/O.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import type { Actor } from '@plexus/shared';
import { readSummary } from '@plexus/shared';
import type { HistoryStorage, JournalEntry } from '../store/storage.ts';

export type { JournalEntry };

const deflateRaw = promisify(zlib.deflateRaw);

/** A checkpoint's state as stored: deflated on libuv's thread pool, off the event loop. */
export const deflateState = (state: Uint8Array): Promise<Buffer> => deflateRaw(state, { level: 6 });
/** A stored checkpoint's state back. */
export const inflateState = (data: Buffer): Uint8Array => new Uint8Array(zlib.inflateRawSync(data));

/** A journal row as stored (both stores use these columns but for the times' names). */
export interface JournalRow {
  id: number;
  ws: string;
  start: number;
  end: number;
  actor_id: string;
  actor_name: string | null;
  actor_kind: string;
  summary: string;
}

export const journalEntry = (r: JournalRow): JournalEntry => ({
  id: r.id,
  ws: r.ws,
  start: r.start,
  end: r.end,
  actor: { id: r.actor_id, ...(r.actor_name ? { name: r.actor_name } : {}), kind: (['person', 'agent', 'kernel', 'server'].includes(r.actor_kind) ? r.actor_kind : 'server') as Actor['kind'] },
  summary: readSummary(safeJson(r.summary)),
});

const SCHEMA = `
CREATE TABLE IF NOT EXISTS checkpoint_states (
  ws TEXT NOT NULL,
  id TEXT NOT NULL,
  at INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (ws, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS journal (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  ws TEXT NOT NULL,
  start INTEGER NOT NULL,
  end INTEGER NOT NULL,
  actor_id TEXT NOT NULL,
  actor_name TEXT,
  actor_kind TEXT NOT NULL,
  summary TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS journal_by_ws ON journal (ws, end);
`;

export class HistoryStore implements HistoryStorage {
  private readonly db: Database.Database;
  private readonly stmts;

  constructor(readonly file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${process.env.PLEXUS_SQLITE_SYNC === 'FULL' ? 'FULL' : 'NORMAL'}`);
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA);
    this.stmts = {
      putState: this.db.prepare('INSERT OR REPLACE INTO checkpoint_states (ws, id, at, data) VALUES (?, ?, ?, ?)'),
      getState: this.db.prepare('SELECT data FROM checkpoint_states WHERE ws = ? AND id = ?'),
      dropState: this.db.prepare('DELETE FROM checkpoint_states WHERE ws = ? AND id = ?'),
      stateIds: this.db.prepare('SELECT id, at, length(data) AS bytes FROM checkpoint_states WHERE ws = ? ORDER BY at'),
      stateBytes: this.db.prepare('SELECT coalesce(sum(length(data)), 0) AS bytes, count(*) AS n FROM checkpoint_states WHERE ws = ?'),
      journal: this.db.prepare('INSERT INTO journal (ws, start, end, actor_id, actor_name, actor_kind, summary) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      readJournal: this.db.prepare('SELECT * FROM journal WHERE ws = ? AND end >= ? AND start <= ? ORDER BY end DESC, id DESC LIMIT ?'),
    };
  }

  /**
   * Stores a checkpoint's state (a Yjs update of the whole document); resolves to the stored
   * bytes. Deflating runs on libuv's thread pool: the event loop only inserts the result.
   */
  async putState(ws: string, id: string, at: number, state: Uint8Array): Promise<number> {
    const data = await deflateState(state);
    this.stmts.putState.run(ws, id, at, data);
    return data.length;
  }

  /** A checkpoint's state, or null when it is not stored. */
  getState(ws: string, id: string): Uint8Array | null {
    const row = this.stmts.getState.get(ws, id) as { data: Buffer } | undefined;
    return row ? inflateState(row.data) : null;
  }

  dropStates(ws: string, ids: string[]): void {
    this.db.transaction(() => ids.forEach((id) => this.stmts.dropState.run(ws, id)))();
  }

  /** Stored checkpoints of a workspace, oldest first. */
  states(ws: string): Array<{ id: string; at: number; bytes: number }> {
    return this.stmts.stateIds.all(ws) as Array<{ id: string; at: number; bytes: number }>;
  }

  /** What a workspace's checkpoints cost on disk. */
  usage(ws: string): { bytes: number; checkpoints: number } {
    const r = this.stmts.stateBytes.get(ws) as { bytes: number; n: number };
    return { bytes: r.bytes, checkpoints: r.n };
  }

  appendJournal(entries: Array<Omit<JournalEntry, 'id'>>): void {
    if (!entries.length) return;
    this.db.transaction(() => {
      for (const e of entries) this.stmts.journal.run(e.ws, e.start, e.end, e.actor.id, e.actor.name ?? null, e.actor.kind, JSON.stringify(e.summary));
    })();
  }

  /** Journal entries overlapping [from, to], newest first. */
  journal(ws: string, from = 0, to = Number.MAX_SAFE_INTEGER, limit = 500): JournalEntry[] {
    return (this.stmts.readJournal.all(ws, from, to, limit) as JournalRow[]).map(journalEntry);
  }

  /** Forgets everything of a deleted workspace. */
  deleteWorkspace(ws: string): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM checkpoint_states WHERE ws = ?').run(ws);
      this.db.prepare('DELETE FROM journal WHERE ws = ?').run(ws);
    })();
  }

  close(): void {
    this.db.close();
  }
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
}
