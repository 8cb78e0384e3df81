/**
 * Durable workspace storage in Postgres (`PLEXUS_DATABASE_URL`): the same guarantees as the SQLite
 * store (storage.ts), for servers that share one database.
 *
 * - **Write-ahead appends.** `append` resolves once the entry is committed (synchronous_commit on,
 *   checked at start): the server acknowledges the update after that, so an acknowledged update
 *   survives kill -9 of any server. Appends to one workspace queue on this server and go out in
 *   batches (one statement, one commit, for everything that arrived while the previous commit was
 *   in flight: group commit), so a burst costs one round trip, not one per keystroke.
 * - **Sequence numbers** live in the workspace's row (`last_seq`): the append statement bumps it and
 *   inserts the entries under it, so appends to one workspace from any number of servers queue on
 *   that row lock and get gap-free numbers in commit order. A global sequence would not do: numbers
 *   taken by concurrent transactions commit out of order, and a compaction that read up to entry 10
 *   while 9 was still uncommitted would set its watermark above an entry it never saw.
 * - **Loads** read the snapshot and the log above it in one statement (one consistent view).
 * - **Compaction** (compaction.mjs) runs under a transaction-level advisory lock keyed by the
 *   workspace — one compaction of a workspace at a time across every server — on a worker thread
 *   (merging is CPU work), and writes the snapshot and deletes the folded entries in one transaction.
 * Effects: network (Postgres), a worker thread.
 */
import { Worker } from 'node:worker_threads';
import { randomId } from '@plexus/shared';
import { unpackStateParts } from '@plexus/shared/state-parts';
import type { ForkRecord, ForkRows, LoadedState, StoredParts, WorkspaceRecord, WorkspaceStorage } from '../storage.ts';
import { FencedError, WorkspaceNotFoundError, type StorageFencing } from '../storage.ts';
import { PartsReader } from '../parts.ts';
import { CompactionRuns } from '../compaction-runs.ts';
import { bytes, type PgDatabase } from './database.ts';
import { COMPACTION_LOCK, compactWorkspace } from './compaction.mjs';
import { PART_STRUCTS } from '../split-state.mjs';

/** Most entries (and bytes) one append statement carries. */
const MAX_BATCH = 512;
const MAX_BATCH_BYTES = 4 * 1024 * 1024;

const APPEND = `
WITH head AS (
  UPDATE workspaces SET last_seq = last_seq + cardinality($2::bytea[]) WHERE id = $1 RETURNING last_seq
)
INSERT INTO log (ws, seq, data)
SELECT $1, head.last_seq - cardinality($2::bytea[]) + u.ord, u.data
FROM head, unnest($2::bytea[]) WITH ORDINALITY AS u(data, ord)
RETURNING seq`;

/** The same, for a node that claimed the workspace's fence: nothing is written when the fence moved on. */
const APPEND_FENCED = `
WITH head AS (
  UPDATE workspaces SET last_seq = last_seq + cardinality($2::bytea[]) WHERE id = $1 AND fence = $3 RETURNING last_seq
)
INSERT INTO log (ws, seq, data)
SELECT $1, head.last_seq - cardinality($2::bytea[]) + u.ord, u.data
FROM head, unnest($2::bytea[]) WITH ORDINALITY AS u(data, ord)
RETURNING seq`;

/** Snapshot (part 0), log entries above it (part 1) and the registry row (part 2): one statement, one view. */
const LOAD_PARTS = `
SELECT 0 AS part, upto AS seq, data, collected FROM snapshots WHERE ws = $1
UNION ALL
SELECT 1, seq, data, false FROM log WHERE ws = $1 AND seq > COALESCE((SELECT upto FROM snapshots WHERE ws = $1), 0)
UNION ALL
SELECT 2, 0, NULL, false FROM workspaces WHERE id = $1
ORDER BY part, seq`;

const RECORD = 'SELECT id, name, created, updated, epoch FROM workspaces';

/** The fence of a write made without a claim while fencing is required: matches no row. */
const NO_CLAIM = -1;

interface Pending {
  update: Uint8Array;
  /** The fencing token when the write was made (undefined: unfenced, a single server). */
  fence: number | undefined;
  resolve: (seq: number) => void;
  reject: (e: unknown) => void;
}

export class PgWorkspaceStore extends PartsReader implements WorkspaceStorage {
  readonly kind = 'postgres';
  readonly syncAppends = false;
  readonly forks: ForkRows;
  readonly fencing: StorageFencing;
  /** Fencing tokens this process claimed, by workspace (cluster/: the node holding each lease). */
  private readonly fences = new Map<string, number>();
  /** Several nodes: a write to a workspace this process holds no claim of is refused (fenced), never written unfenced. */
  private fencingRequired = false;
  private readonly queues = new Map<string, Pending[]>();
  private readonly draining = new Set<Promise<void>>();
  private worker: Worker | null = null;
  private readonly waiting = new Map<string, Array<(r: { folded: number; error?: string }) => void>>();
  /** Compactions the worker carried out; why it stopped, when it did (compaction then runs inline). */
  workerCompactions = 0;
  workerFailure: string | null = null;

  constructor(
    private readonly db: PgDatabase,
    /** `snapshotPartStructs`: as for the SQLite store (workspace-store.ts). */
    opts: { background?: boolean; snapshotPartStructs?: number } = {},
  ) {
    super();
    this.partStructs = opts.snapshotPartStructs ?? PART_STRUCTS;
    db.retain();
    this.forks = new PgForkRows(db);
    this.fencing = {
      claim: async (ws) => {
        const { rows } = await this.db.query<{ fence: string }>('UPDATE workspaces SET fence = fence + 1 WHERE id = $1 RETURNING fence', [ws]);
        if (!rows[0]) throw new WorkspaceNotFoundError(ws);
        const token = Number(rows[0].fence);
        this.fences.set(ws, token);
        return token;
      },
      release: (ws) => void this.fences.delete(ws),
      token: (ws) => this.fences.get(ws),
      require: () => void (this.fencingRequired = true),
      verify: async (list) => {
        const mine = list.filter((ws) => this.fences.has(ws));
        if (!mine.length) return [];
        const { rows } = await this.db.query<{ id: string; fence: string }>('SELECT id, fence FROM workspaces WHERE id = ANY($1)', [mine]);
        const stored = new Map(rows.map((r) => [r.id, Number(r.fence)]));
        return mine.filter((ws) => stored.get(ws) !== this.fences.get(ws));
      },
    };
    if (opts.background) this.startWorker();
  }

  private readonly partStructs: number;

  private startWorker(): void {
    const worker = new Worker(new URL('./compaction-worker.mjs', import.meta.url), { workerData: { url: this.db.url, partStructs: this.partStructs }, execArgv: [] });
    worker.unref();
    worker.on('message', (m: { type: string; ws: string; folded?: number; message?: string }) => {
      if (m.type === 'compacted') this.workerCompactions++;
      this.settle(m.ws, m.type === 'compacted' ? { folded: m.folded ?? 0 } : { folded: 0, error: m.message ?? 'compaction failed' });
    });
    worker.on('error', (e) => {
      this.workerFailure = e.message;
      console.error(`plexus: the Postgres compaction worker failed (${e.message}); compaction now runs on the server's thread`);
      this.worker = null;
      for (const ws of [...this.waiting.keys()]) this.settle(ws, { folded: 0, error: e.message });
    });
    this.worker = worker;
  }

  private settle(ws: string, r: { folded: number; error?: string }): void {
    const waiters = this.waiting.get(ws) ?? [];
    this.waiting.delete(ws);
    for (const w of waiters) w(r);
  }

  append(ws: string, update: Uint8Array): Promise<number> {
    // The token when the write is made, not when its batch goes out: a write made before this node
    // dropped the workspace must not go out with no fence, or with a later claim's.
    const fence = this.writeFence(ws);
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(ws);
      if (queue) return void queue.push({ update, fence, resolve, reject });
      this.queues.set(ws, (queue = [{ update, fence, resolve, reject }]));
      const draining = this.drain(ws, queue);
      this.draining.add(draining);
      void draining.then(() => this.draining.delete(draining));
    });
  }

  /** Writes a workspace's queued appends, a batch per statement, until none is left. */
  private async drain(ws: string, queue: Pending[]): Promise<void> {
    while (queue.length) {
      let size = 0;
      let n = 0;
      const fence = queue[0]!.fence;
      while (n < queue.length && n < MAX_BATCH && queue[n]!.fence === fence && (n === 0 || size + queue[n]!.update.byteLength <= MAX_BATCH_BYTES)) size += queue[n++]!.update.byteLength;
      const batch = queue.splice(0, n);
      try {
        const { rows } =
          fence === undefined
            ? await this.db.query<{ seq: number }>({ name: 'plexus-append', text: APPEND, values: [ws, batch.map((p) => p.update)] })
            : await this.db.query<{ seq: number }>({ name: 'plexus-append-fenced', text: APPEND_FENCED, values: [ws, batch.map((p) => p.update), fence] });
        if (rows.length !== batch.length) throw await this.notWritten(ws, fence);
        const first = Math.min(...rows.map((r) => r.seq));
        batch.forEach((p, i) => p.resolve(first + i));
      } catch (e) {
        batch.forEach((p) => p.reject(e));
      }
    }
    this.queues.delete(ws);
  }

  /** The fence a write made now carries: this process's claim; with fencing required and no claim, one that matches nothing. */
  private writeFence(ws: string): number | undefined {
    return this.fences.get(ws) ?? (this.fencingRequired ? NO_CLAIM : undefined);
  }

  /** Why an append wrote nothing: the workspace is gone, or another node took its fence. */
  private async notWritten(ws: string, fence: number | undefined): Promise<Error> {
    if (fence === undefined) return new WorkspaceNotFoundError(ws);
    const { rows } = await this.db.query<{ fence: string }>('SELECT fence FROM workspaces WHERE id = $1', [ws]);
    return rows[0] ? new FencedError(ws, fence) : new WorkspaceNotFoundError(ws);
  }

  async touch(ws: string, when = Date.now()): Promise<void> {
    await this.db.query('UPDATE workspaces SET updated = $1 WHERE id = $2', [when, ws]);
  }

  async loadParts(ws: string): Promise<StoredParts> {
    const { rows } = await this.db.query<{ part: number; seq: number; data: Buffer | null; collected: boolean }>({ name: 'plexus-load-parts', text: LOAD_PARTS, values: [ws] });
    if (!rows.some((r) => r.part === 2)) throw new WorkspaceNotFoundError(ws);
    const snap = rows.find((r) => r.part === 0);
    const log = rows.filter((r) => r.part === 1);
    return {
      snapshot: snap ? unpackStateParts(bytes(snap.data!)) : null,
      storedSnapshot: snap ? bytes(snap.data!) : null,
      entries: log.map((r) => bytes(r.data!)),
      upto: log.length ? log[log.length - 1]!.seq : (snap?.seq ?? 0),
      collected: snap?.collected === true,
    };
  }

  async load(ws: string): Promise<LoadedState> {
    return this.merged(await this.loadParts(ws));
  }

  async compact(ws: string, state: Uint8Array, upto: number): Promise<number> {
    return this.db.transaction(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [COMPACTION_LOCK, ws]);
      const snap = await c.query<{ upto: number }>('SELECT upto FROM snapshots WHERE ws = $1', [ws]);
      if ((snap.rows[0]?.upto ?? 0) > upto) return 0; // a newer snapshot exists
      await c.query('INSERT INTO snapshots (ws, upto, data, collected) VALUES ($1, $2, $3, true) ON CONFLICT (ws) DO UPDATE SET upto = excluded.upto, data = excluded.data, collected = true', [ws, upto, state]);
      return (await c.query('DELETE FROM log WHERE ws = $1 AND seq <= $2', [ws, upto])).rowCount ?? 0;
    });
  }

  async snapshotFromMemory(ws: string, state: Uint8Array): Promise<number> {
    const fence = this.writeFence(ws);
    const r = await this.inline(ws, { wait: true, state, fence });
    if (r.fenced) throw new FencedError(ws, fence!);
    return r.folded;
  }

  private inline(ws: string, opts: { wait: boolean; state?: Uint8Array; fence?: number }): Promise<{ folded: number; fenced?: boolean }> {
    return this.db.withClient((c) => compactWorkspace(c, ws, { ...opts, partStructs: this.partStructs }));
  }

  /** Folds every entry stored now, on the worker (inline without one); one compaction of a workspace at a time (compaction-runs.ts). */
  compactInBackground(ws: string): Promise<number> {
    return this.compactions.request(ws);
  }

  private readonly compactions = new CompactionRuns((ws) => this.compactOnce(ws));

  private compactOnce(ws: string): Promise<number> {
    if (!this.worker) return this.inline(ws, { wait: false }).then((r) => r.folded);
    return new Promise((resolve, reject) => {
      const done = (r: { folded: number; error?: string }) => (r.error ? reject(new Error(r.error)) : resolve(r.folded));
      const waiters = this.waiting.get(ws);
      if (waiters) return void waiters.push(done); // never here: CompactionRuns sends one request per workspace at a time
      this.waiting.set(ws, [done]);
      this.worker!.postMessage({ type: 'compact', ws });
    });
  }

  async maxLogId(ws: string): Promise<number> {
    const { rows } = await this.db.query<{ m: number | null }>('SELECT MAX(seq) AS m FROM log WHERE ws = $1', [ws]);
    return rows[0]?.m ?? 0;
  }

  async logLength(ws: string): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>('SELECT count(*)::int AS n FROM log WHERE ws = $1 AND seq > COALESCE((SELECT upto FROM snapshots WHERE ws = $1), 0)', [ws]);
    return rows[0]?.n ?? 0;
  }

  /** The log's head, which every append moves and no compaction resets (`last_seq`). */
  async logHead(ws: string): Promise<number> {
    const { rows } = await this.db.query<{ h: number }>('SELECT last_seq AS h FROM workspaces WHERE id = $1', [ws]);
    return Number(rows[0]?.h ?? 0);
  }

  async get(id: string): Promise<WorkspaceRecord | undefined> {
    const { rows } = await this.db.query<WorkspaceRecord>({ name: 'plexus-get-workspace', text: `${RECORD} WHERE id = $1`, values: [id] });
    return rows[0];
  }

  async list(): Promise<WorkspaceRecord[]> {
    return (await this.db.query<WorkspaceRecord>(`${RECORD} ORDER BY updated DESC`)).rows;
  }

  async renewEpoch(id: string): Promise<string> {
    const epoch = randomId(16);
    await this.db.query('UPDATE workspaces SET epoch = $1 WHERE id = $2', [epoch, id]);
    return epoch;
  }

  async create(rec: { id: string; name: string; state: Uint8Array; now?: number }, fork?: ForkRecord): Promise<WorkspaceRecord> {
    const now = rec.now ?? Date.now();
    const epoch = randomId(16);
    await this.db.transaction(async (c) => {
      await c.query('INSERT INTO workspaces (id, name, created, updated, epoch) VALUES ($1, $2, $3, $3, $4)', [rec.id, rec.name, now, epoch]);
      await c.query('INSERT INTO snapshots (ws, upto, data, collected) VALUES ($1, 0, $2, true) ON CONFLICT (ws) DO UPDATE SET upto = 0, data = excluded.data, collected = true', [rec.id, rec.state]);
      if (fork) await insertFork(c, fork);
    });
    return { id: rec.id, name: rec.name, created: now, updated: now, epoch };
  }

  async rename(id: string, name: string): Promise<void> {
    await this.db.query('UPDATE workspaces SET name = $1, updated = $2 WHERE id = $3', [name, Date.now(), id]);
  }

  async linkGeneration(id: string): Promise<number> {
    const { rows } = await this.db.query<{ gen: string }>('SELECT gen FROM link_generations WHERE ws = $1', [id]);
    return rows[0] ? Number(rows[0].gen) : 0;
  }

  async resetLinks(id: string): Promise<number> {
    const { rows } = await this.db.query<{ gen: string }>(
      'INSERT INTO link_generations (ws, gen) VALUES ($1, 1) ON CONFLICT (ws) DO UPDATE SET gen = link_generations.gen + 1 RETURNING gen',
      [id],
    );
    return Number(rows[0]!.gen);
  }

  async delete(id: string): Promise<boolean> {
    return this.db.transaction(async (c) => {
      const n = (await c.query('DELETE FROM workspaces WHERE id = $1', [id])).rowCount ?? 0;
      await c.query('DELETE FROM log WHERE ws = $1', [id]);
      await c.query('DELETE FROM link_generations WHERE ws = $1', [id]);
      await c.query('DELETE FROM snapshots WHERE ws = $1', [id]);
      return n > 0;
    });
  }

  async close(): Promise<void> {
    // Appends still queued finish first (their senders wait for them).
    while (this.draining.size) await Promise.all([...this.draining]);
    this.worker?.postMessage({ type: 'stop' });
    this.worker = null;
    await this.db.release();
  }
}

async function insertFork(c: { query: (text: string, values: unknown[]) => Promise<unknown> }, r: ForkRecord): Promise<void> {
  await c.query('INSERT INTO forks (id, source, by_id, by_name, student, handout, created) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
    r.id, r.source, r.by, r.byName, r.student, r.handout, r.created,
  ]);
}

interface ForkRow {
  id: string;
  source: string;
  by_id: string;
  by_name: string | null;
  student: string | null;
  handout: boolean;
  created: number;
}
const fromRow = (r: ForkRow): ForkRecord => ({ id: r.id, source: r.source, by: r.by_id, byName: r.by_name, student: r.student, handout: r.handout, created: r.created });

/** The fork registry's rows in Postgres. */
class PgForkRows implements ForkRows {
  constructor(private readonly db: PgDatabase) {}

  add(rec: ForkRecord): Promise<void> {
    return insertFork(this.db, rec);
  }

  private async one(where: string, values: unknown[]): Promise<ForkRecord | null> {
    const { rows } = await this.db.query<ForkRow>(`SELECT * FROM forks WHERE ${where}`, values);
    return rows[0] ? fromRow(rows[0]) : null;
  }

  get(id: string): Promise<ForkRecord | null> {
    return this.one('id = $1', [id]);
  }

  ofStudent(source: string, student: string): Promise<ForkRecord | null> {
    return this.one('source = $1 AND student = $2', [source, student]);
  }

  async handouts(source: string): Promise<ForkRecord[]> {
    return (await this.db.query<ForkRow>('SELECT * FROM forks WHERE source = $1 AND handout ORDER BY created, id', [source])).rows.map(fromRow);
  }

  async remove(id: string): Promise<void> {
    await this.db.query('DELETE FROM forks WHERE id = $1', [id]);
  }

  async removeSource(source: string): Promise<void> {
    await this.db.query('DELETE FROM forks WHERE source = $1', [source]);
  }
}
