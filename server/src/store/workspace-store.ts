/**
 * Durable workspace storage in SQLite (better-sqlite3, WAL). Each workspace is an append-only log
 * of Yjs updates plus a compacted snapshot: an update is appended (synchronously, before the server
 * applies or acknowledges it) and survives kill -9; compaction folds the log into the snapshot.
 * Also the workspace registry (name, times, epoch) and the fork registry's table (sqlite-forks.ts).
 * The default `WorkspaceStorage` (storage.ts; Postgres is postgres/): every answer synchronous.
 *
 * Two database files, so the event loop never waits on a lock: `plexus.db` (registry and log) is
 * written only by this connection on the server's thread; snapshots — large blobs, written by the
 * compaction worker — live in `plexus.snapshots.db` (attached as `snap`), whose write lock the
 * appends never need. A compaction commits the snapshot first and drops the folded log entries
 * afterwards; a crash in between leaves entries the snapshot already holds, which loads skip.
 * Effects: file I/O on the SQLite databases.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { randomId } from '@plexus/shared';
import { Worker } from 'node:worker_threads';
import { compactFromLog, dropFolded, mergeInTree } from './log-compaction.mjs';
import { PART_STRUCTS } from './split-state.mjs';
import { unpackStateParts } from '@plexus/shared/state-parts';
import { CompactionRuns } from './compaction-runs.ts';
import { PartsReader } from './parts.ts';
import { SqliteForkRows } from './sqlite-forks.ts';
import { WorkspaceNotFoundError, type ForkRecord, type LoadedState, type StoredParts, type WorkspaceRecord, type WorkspaceStorage } from './storage.ts';

export { mergeInTree, WorkspaceNotFoundError };
export type { LoadedState, StoredParts, WorkspaceRecord };

const SCHEMA = `
CREATE TABLE IF NOT EXISTS workspaces (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created INTEGER NOT NULL,
  updated INTEGER NOT NULL,
  epoch TEXT NOT NULL
);
-- One row per update, clustered by (workspace, sequence): an append writes one page. Sequence
-- numbers are per workspace and only grow (snapshots record the last one they contain).
CREATE TABLE IF NOT EXISTS log (
  ws TEXT NOT NULL,
  seq INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (ws, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- Share links of a workspace signed before its last reset no longer work (api: share/reset).
CREATE TABLE IF NOT EXISTS link_generations (ws TEXT PRIMARY KEY, gen INTEGER NOT NULL);
`;

const SNAPSHOT_SCHEMA = `
-- collected: 1 when data is a document's own encoding (StoredParts.collected), 0 when unknown.
CREATE TABLE IF NOT EXISTS snap.snapshots (
  ws TEXT PRIMARY KEY,
  upto INTEGER NOT NULL,
  data BLOB NOT NULL,
  collected INTEGER NOT NULL DEFAULT 0
);
`;

/** The snapshot database beside the main one (`plexus.db` → `plexus.snapshots.db`). */
export const snapshotFileOf = (file: string): string => file.replace(/(\.db)?$/, '.snapshots.db');

export class WorkspaceStore extends PartsReader implements WorkspaceStorage {
  readonly kind = 'sqlite';
  /** `append` returns once the entry is committed, synchronously. */
  readonly syncAppends = true;
  readonly db: Database.Database;
  private readonly stmts;

  private readonly nextSeq = new Map<string, number>();
  private readonly partStructs: number;
  private worker: Worker | null = null;
  private readonly pending = new Map<string, Array<(r: { folded: number; error?: string }) => void>>();

  constructor(
    readonly file: string,
    /**
     * `background`: run WAL checkpoints and log compaction on a worker thread (the server does).
     * `snapshotPartStructs`: a snapshot of more structs than this is stored in parts, which a load
     * applies with turns of the event loop in between (split-state.mjs; 0: stored whole).
     */
    opts: { background?: boolean; checkpointMs?: number; snapshotPartStructs?: number } = {},
  ) {
    super();
    this.partStructs = opts.snapshotPartStructs ?? PART_STRUCTS;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.db = new Database(file);
    // WAL + synchronous=NORMAL: a committed write survives a process crash (kill -9); only an OS
    // crash or power loss can lose the last transactions. Set PLEXUS_SQLITE_SYNC=FULL for that.
    const sync = process.env.PLEXUS_SQLITE_SYNC === 'FULL' ? 'FULL' : 'NORMAL';
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${sync}`);
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA);
    this.snapshotFile = snapshotFileOf(file);
    this.db.prepare('ATTACH DATABASE ? AS snap').run(this.snapshotFile);
    this.db.pragma('snap.journal_mode = WAL');
    this.db.pragma(`snap.synchronous = ${sync}`);
    this.db.exec(SNAPSHOT_SCHEMA);
    this.migrateLegacyLog();
    this.migrateSnapshots();
    if (opts.background) {
      // Checkpoints (the only fsyncs in WAL mode) move to the worker: appends never wait for one.
      this.db.pragma('wal_autocheckpoint = 0');
      this.worker = new Worker(new URL('./background-worker.mjs', import.meta.url), {
        workerData: { file, snapshotFile: this.snapshotFile, sync, checkpointMs: opts.checkpointMs ?? 1000, partStructs: this.partStructs },
        // Plain JavaScript: none of the process's loaders or preloads (a TypeScript loader, a
        // benchmark probe) — one the worker could not load silently moved compaction back onto
        // the event loop.
        execArgv: [],
      });
      this.worker.unref();
      this.worker.on('message', (m: { type: string; ws?: string; folded?: number; upto?: number; message?: string }) => {
        if (m.type === 'cut' && m.message) console.warn(`plexus: a snapshot of ${m.ws} was not stored in parts (${m.message}); it stays whole`);
        if (!m.ws || m.type === 'cut') return;
        const waiters = this.pending.get(m.ws) ?? [];
        this.pending.delete(m.ws);
        let result: { folded: number; error?: string } = m.type === 'compacted' ? { folded: m.folded ?? 0 } : { folded: 0, error: m.message };
        if (m.type === 'compacted') this.workerCompactions++;
        // The snapshot is committed: drop what it holds from the log (this thread writes the log).
        if (m.type === 'compacted' && m.upto) {
          try {
            this.dropFolded(m.ws, m.upto);
          } catch (e) {
            result = { folded: m.folded ?? 0 }; // the entries stay; loads skip them, the next compaction drops them
            this.dropFailures++;
            void e;
          }
        }
        for (const w of waiters) w(result);
      });
      this.worker.on('error', (e) => {
        // Background work is an optimisation: fall back to doing it inline — loudly, since every
        // compaction then runs on the event loop.
        this.workerFailure = e.message;
        console.error(`plexus: the storage worker failed (${e.message}); compaction and checkpoints now run on the server's thread`);
        this.worker = null;
        this.db.pragma('wal_autocheckpoint = 1000');
        for (const [, ws] of this.pending) for (const w of ws) w({ folded: 0, error: e.message });
        this.pending.clear();
      });
    }
    this.stmts = {
      append: this.db.prepare<[string, number, Uint8Array]>('INSERT INTO log (ws, seq, data) VALUES (?, ?, ?)'),
      touch: this.db.prepare<[number, string]>('UPDATE workspaces SET updated = ? WHERE id = ?'),
      get: this.db.prepare<[string], WorkspaceRecord>('SELECT id, name, created, updated, epoch FROM workspaces WHERE id = ?'),
      list: this.db.prepare<[], WorkspaceRecord>('SELECT id, name, created, updated, epoch FROM workspaces ORDER BY updated DESC'),
      insert: this.db.prepare<[string, string, number, number, string]>(
        'INSERT INTO workspaces (id, name, created, updated, epoch) VALUES (?, ?, ?, ?, ?)',
      ),
      rename: this.db.prepare<[string, number, string]>('UPDATE workspaces SET name = ?, updated = ? WHERE id = ?'),
      snapshot: this.db.prepare<[string], { upto: number; data: Buffer; collected: number }>('SELECT upto, data, collected FROM snap.snapshots WHERE ws = ?'),
      logAfter: this.db.prepare<[string, number], { seq: number; data: Buffer }>('SELECT seq, data FROM log WHERE ws = ? AND seq > ? ORDER BY seq'),
      maxSeq: this.db.prepare<[string], { m: number | null }>('SELECT MAX(seq) AS m FROM log WHERE ws = ?'),
      putSnapshot: this.db.prepare<[string, number, Uint8Array]>(
        'INSERT INTO snap.snapshots (ws, upto, data, collected) VALUES (?, ?, ?, 1) ON CONFLICT(ws) DO UPDATE SET upto = excluded.upto, data = excluded.data, collected = 1',
      ),
      countLog: this.db.prepare<[string, number], { n: number }>('SELECT COUNT(*) AS n FROM log WHERE ws = ? AND seq > ?'),
      snapshotUpto: this.db.prepare<[string], { upto: number }>('SELECT upto FROM snap.snapshots WHERE ws = ?'),
    };
  }

  /** Databases written before the log table existed kept an `updates` table: move its rows. */
  private migrateLegacyLog(): void {
    const legacy = this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'updates'").get();
    if (!legacy) return;
    this.db.transaction(() => {
      this.db.exec('INSERT OR IGNORE INTO log (ws, seq, data) SELECT ws, id, data FROM updates; DROP TABLE updates;');
    })();
  }

  /**
   * Databases written before snapshots had their own file kept them in `plexus.db`: copy them over
   * (committed there first), then drop the old table. Also drops snapshots of workspaces that no
   * longer exist (a crash between deleting a workspace and its snapshot).
   */
  private migrateSnapshots(): void {
    // Snapshots from before the `collected` column: of unknown origin (0) until their next fold.
    if (!this.db.prepare("SELECT 1 FROM pragma_table_info('snapshots', 'snap') WHERE name = 'collected'").get())
      this.db.exec('ALTER TABLE snap.snapshots ADD COLUMN collected INTEGER NOT NULL DEFAULT 0');
    const legacy = this.db.prepare("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name = 'snapshots'").get();
    if (legacy) {
      this.db.transaction(() => {
        this.db.exec('INSERT OR REPLACE INTO snap.snapshots (ws, upto, data) SELECT ws, upto, data FROM main.snapshots');
      })();
      this.db.exec('DROP TABLE main.snapshots');
    }
    this.db.exec('DELETE FROM snap.snapshots WHERE ws NOT IN (SELECT id FROM main.workspaces)');
  }

  /** The snapshot database's file. */
  readonly snapshotFile: string;

  /** Compactions the background worker carried out. */
  workerCompactions = 0;

  /** Why the background worker stopped, when it did (work then runs inline). */
  workerFailure: string | null = null;

  /** Times dropping folded log entries failed (they stay, harmlessly, until the next compaction). */
  dropFailures = 0;

  private dropFolded(ws: string, upto: number): number {
    return dropFolded(this.db, ws, upto);
  }

  private seqFor(ws: string): number {
    let next = this.nextSeq.get(ws);
    if (next === undefined) {
      // The snapshot's watermark only (its data is megabytes for a large workspace).
      next = Math.max(this.stmts.snapshotUpto.get(ws)?.upto ?? 0, this.stmts.maxSeq.get(ws)?.m ?? 0) + 1;
    }
    this.nextSeq.set(ws, next + 1);
    return next;
  }

  /** Appends one update to a workspace's log. Synchronous: when it returns, the update is durable. */
  append(ws: string, update: Uint8Array): number {
    const seq = this.seqFor(ws);
    try {
      this.stmts.append.run(ws, seq, update);
    } catch (e) {
      this.nextSeq.delete(ws); // re-read from the database next time
      throw e;
    }
    return seq;
  }

  /** Marks a workspace as modified now (for the list's ordering). */
  touch(ws: string, when = Date.now()): void {
    this.stmts.touch.run(when, ws);
  }

  /** Reads the snapshot and the log entries on top of it, unmerged. */
  loadParts(ws: string): StoredParts {
    if (!this.stmts.get.get(ws)) throw new WorkspaceNotFoundError(ws);
    const snap = this.stmts.snapshot.get(ws);
    const rows = this.stmts.logAfter.all(ws, snap?.upto ?? 0);
    // A view of what SQLite returned (`new Uint8Array(buffer)` would copy megabytes).
    const stored = snap ? new Uint8Array(snap.data.buffer, snap.data.byteOffset, snap.data.byteLength) : null;
    return {
      snapshot: stored ? unpackStateParts(stored) : null,
      storedSnapshot: stored,
      entries: rows.map((r) => new Uint8Array(r.data)),
      upto: rows.length ? rows[rows.length - 1]!.seq : (snap?.upto ?? 0),
      collected: snap?.collected === 1,
    };
  }

  /** Reads snapshot + log of a workspace as one merged update. */
  load(ws: string): LoadedState {
    return this.merged(this.loadParts(ws));
  }

  /**
   * Replaces log entries up to `upto` by `state` (which must contain them all), atomically.
   * Returns the number of log entries folded in.
   */
  compact(ws: string, state: Uint8Array, upto: number): number {
    const written = this.db.transaction(() => {
      const snap = this.stmts.snapshot.get(ws);
      if (snap && snap.upto > upto) return false; // a newer snapshot exists
      this.stmts.putSnapshot.run(ws, upto, state);
      return true;
    })();
    return written ? this.dropFolded(ws, upto) : 0;
  }

  /** Stores a loaded document's state as the snapshot, folding in every log entry stored now (storage.ts). */
  snapshotFromMemory(ws: string, state: Uint8Array): number {
    if (!this.get(ws)) return 0; // deleted meanwhile
    return this.compact(ws, state, this.maxLogId(ws));
  }

  /** Highest sequence number of a workspace's log (0 when it is empty). */
  maxLogId(ws: string): number {
    return this.stmts.maxSeq.get(ws)?.m ?? 0;
  }

  /** Folds the log into the snapshot from stored data, on this thread. */
  compactLog(ws: string): number {
    const { folded, upto } = compactFromLog(this.db, ws, this.partStructs);
    if (upto) this.dropFolded(ws, upto);
    return folded;
  }

  /**
   * Folds the log into the snapshot on the background worker (or inline without one). Resolves
   * with the number of entries folded; rejects when storage failed.
   */
  compactInBackground(ws: string): Promise<number> {
    // One at a time per workspace; a request made while one runs runs after it (compaction-runs.ts).
    return this.compactions.request(ws);
  }

  private readonly compactions = new CompactionRuns((ws) => this.compactOnce(ws));

  private compactOnce(ws: string): Promise<number> {
    if (!this.worker) return Promise.resolve().then(() => this.compactLog(ws));
    return new Promise((resolve, reject) => {
      const waiters = this.pending.get(ws);
      const done = (r: { folded: number; error?: string }) => (r.error ? reject(new Error(r.error)) : resolve(r.folded));
      if (waiters) return void waiters.push(done); // never here: CompactionRuns sends one request per workspace at a time
      this.pending.set(ws, [done]);
      this.worker!.postMessage({ type: 'compact', ws });
    });
  }

  /** Log entries on top of the snapshot. */
  logLength(ws: string): number {
    return this.stmts.countLog.get(ws, this.stmts.snapshotUpto.get(ws)?.upto ?? 0)?.n ?? 0;
  }

  /** The last change stored, in the log or folded (storage.ts). */
  logHead(ws: string): number {
    return Math.max(this.stmts.snapshotUpto.get(ws)?.upto ?? 0, this.maxLogId(ws));
  }

  get(id: string): WorkspaceRecord | undefined {
    return this.stmts.get.get(id) ?? undefined;
  }

  list(): WorkspaceRecord[] {
    return this.stmts.list.all();
  }

  /** Gives a workspace a new epoch: clients holding local state of the old one drop it (4409). */
  renewEpoch(id: string): string {
    const epoch = randomId(16);
    this.db.prepare('UPDATE workspaces SET epoch = ? WHERE id = ?').run(epoch, id);
    return epoch;
  }

  /** The fork registry's table, in this database (created on first use). */
  get forks(): SqliteForkRows {
    return (this.forkRows ??= new SqliteForkRows(this.db));
  }
  private forkRows: SqliteForkRows | null = null;

  /** Creates a workspace with initial content (a full Yjs update) and a fresh epoch; with `fork`, also its fork record, in one transaction. */
  create(rec: { id: string; name: string; state: Uint8Array; now?: number }, fork?: ForkRecord): WorkspaceRecord {
    if (fork) {
      const forks = this.forks;
      return this.db.transaction(() => {
        const w = this.create(rec);
        forks.add(fork);
        return w;
      })();
    }
    const now = rec.now ?? Date.now();
    const epoch = randomId(16);
    // The snapshot first: a crash before the registry row leaves an orphan that the next start drops.
    this.stmts.putSnapshot.run(rec.id, 0, rec.state);
    this.stmts.insert.run(rec.id, rec.name, now, now, epoch);
    // A large workspace is stored again in parts, off the event loop, once this is committed.
    if (this.worker && this.partStructs && rec.state.byteLength >= 2 * this.partStructs) setImmediate(() => this.worker?.postMessage({ type: 'cut', ws: rec.id }));
    return { id: rec.id, name: rec.name, created: now, updated: now, epoch };
  }

  rename(id: string, name: string): void {
    this.stmts.rename.run(name, Date.now(), id);
  }

  /** Deletes a workspace with its log and snapshot. */
  linkGeneration(id: string): number {
    return this.db.prepare<[string], { gen: number }>('SELECT gen FROM link_generations WHERE ws = ?').get(id)?.gen ?? 0;
  }

  resetLinks(id: string): number {
    return this.db
      .prepare<[string], { gen: number }>('INSERT INTO link_generations (ws, gen) VALUES (?, 1) ON CONFLICT(ws) DO UPDATE SET gen = gen + 1 RETURNING gen')
      .get(id)!.gen;
  }

  delete(id: string): boolean {
    this.nextSeq.delete(id);
    const n = this.db.transaction(() => {
      const n = this.db.prepare('DELETE FROM main.workspaces WHERE id = ?').run(id).changes;
      this.db.prepare('DELETE FROM main.log WHERE ws = ?').run(id);
      this.db.prepare('DELETE FROM main.link_generations WHERE ws = ?').run(id);
      return n;
    })();
    // The registry row first: a crash before this leaves an orphan that the next start drops.
    this.db.prepare('DELETE FROM snap.snapshots WHERE ws = ?').run(id);
    return n > 0;
  }

  close(): void {
    if (this.worker) {
      this.worker.postMessage({ type: 'stop' });
      this.worker = null;
    }
    if (this.db.open) {
      this.db.pragma('main.wal_checkpoint(TRUNCATE)');
      this.db.pragma('snap.wal_checkpoint(TRUNCATE)');
      this.db.close();
    }
  }
}
