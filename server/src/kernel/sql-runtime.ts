/**
 * One workspace's SQL runtime: the sandboxed DuckDB worker process (runner/sql-worker.mjs) with
 * its uploaded tables attached read-only, a query time limit (interrupt, then kill) and a memory
 * limit (DuckDB's max_memory plus the process's address-space limit).
 * Effects: child processes, timers.
 */
import path from 'node:path';
import type { TableColumn } from '@plexus/shared';
import { SandboxedChild } from './child.ts';
import { RUNNER_DIR } from './sandbox.ts';

export interface SqlRuntimeOptions {
  cwd: string;
  uid?: number;
  memoryMb: number;
  /** DuckDB's threads (default 2). */
  threads?: number;
  /** Read results a chunk per call into DuckDB, as its reader does (benchmarks' baseline: PLEXUS_SQL_CHUNK_HOPS=1). */
  chunkHops?: boolean;
  /** Small queries on one DuckDB thread, the rest on all (default true; false: all threads for every query, PLEXUS_SQL_ADAPTIVE_THREADS=0). */
  adaptiveThreads?: boolean;
  /** Below this a query's last run counts as small (default 5 ms; tests set it). */
  smallQueryMs?: number;
  timeoutMs: number;
  maxFrameBytes: number;
  /** Uploaded tables: SQL name and stored file. */
  tables: Array<{ name: string; file: string }>;
}

export type SqlOutcome =
  | { ok: true; columns: TableColumn[]; rows: Array<Record<string, unknown>>; totalRows: number; materialized: boolean }
  | { ok: false; error: { name: string; message: string }; fatal?: string };

/** What an SQL cell's run sends the worker. */
export interface SqlQuery {
  sql: string;
  params: Record<string, unknown>;
  name?: string;
  maxRows: number;
  materialize?: boolean;
}

/** A query sent ahead in a batch (queryAhead), in the order the kernel will ask for its result. */
interface AheadQuery {
  id: number;
  /** The caller's name for it (the kernel: the cell), reported when it is thrown away. */
  tag: string;
  key: string;
  outcome: SqlOutcome | null;
  /** The kernel asks for it now. */
  waiter: ((o: SqlOutcome) => void) | null;
}

const queryKey = (q: SqlQuery) => JSON.stringify([q.sql, q.name ?? null, q.maxRows, q.materialize ?? null]);

export class SqlRuntime {
  private child: SandboxedChild | null = null;
  private ready: Promise<void> | null = null;
  private pending = new Map<number, (o: SqlOutcome) => void>();
  private ahead: AheadQuery[] = [];
  private aheadBatch: string | null = null;
  /** SQL cells sent ahead whose results were thrown away: the worker may have run them (their tables replaced). */
  onAheadDropped: ((tags: string[]) => void) | null = null;
  /** Batches sent ahead, and cells whose result came from one or was thrown away (tests, benchmarks). */
  readonly stats = { batches: 0, aheadUsed: 0, aheadDropped: 0 };
  private nextId = 1;
  death: string | null = null;
  layers: string[] = [];

  constructor(private readonly opts: SqlRuntimeOptions) {}

  start(): Promise<void> {
    if (this.ready) return this.ready;
    const child = new SandboxedChild({
      cwd: this.opts.cwd,
      maxFrameBytes: this.opts.maxFrameBytes,
      launch: {
        isolateNetwork: true,
        uid: this.opts.uid,
        limits: { addressSpace: (2048 + 3 * this.opts.memoryMb) * 1024 * 1024, cpuSeconds: 24 * 3600, processes: 256, openFiles: 512, fileSize: 0 },
        nodeArgs: ['--no-warnings', path.join(RUNNER_DIR, 'sql-worker.mjs')],
      },
      init: { type: 'init', tables: this.opts.tables, memoryMb: this.opts.memoryMb, threads: this.opts.threads ?? 2, chunkHops: this.opts.chunkHops === true, adaptiveThreads: this.opts.adaptiveThreads !== false, ...(this.opts.smallQueryMs !== undefined ? { smallQueryMs: this.opts.smallQueryMs } : {}) },
      onMessage: (m) => this.onMessage(m),
      describeExit: (exit) => exit.killedFor ?? (exit.signal ? `the SQL engine was killed by ${exit.signal}` : `the SQL engine exited (code ${exit.code})`),
    });
    this.child = child;
    this.layers = child.layers;
    this.ready = child.ready;
    child.death.then((reason) => {
      this.death = reason;
      this.ahead = [];
      for (const cb of this.pending.values()) cb({ ok: false, error: { name: 'KernelError', message: reason }, fatal: reason });
      this.pending.clear();
    });
    return this.ready;
  }

  private onMessage(m: Record<string, unknown>): void {
    const cb = this.pending.get(Number(m.id));
    if (!cb) return;
    this.pending.delete(Number(m.id));
    cb(this.outcomeOf(m));
  }

  private outcomeOf(m: Record<string, unknown>): SqlOutcome {
    if (m.type === 'result') {
      return {
        ok: true,
        columns: Array.isArray(m.columns) ? (m.columns as TableColumn[]) : [],
        rows: Array.isArray(m.rows) ? (m.rows as Array<Record<string, unknown>>) : [],
        totalRows: Number(m.totalRows ?? 0),
        materialized: m.materialized === true,
      };
    }
    const e = (m.error ?? {}) as { name?: unknown; message?: unknown };
    return { ok: false, error: { name: String(e.name ?? 'SQLError').slice(0, 100), message: String(e.message ?? 'query failed').slice(0, 4000) } };
  }

  /** Results still expected from the batch sent ahead (queryAhead sends another only at 0). */
  get expecting(): number {
    return this.ahead.length;
  }

  /**
   * Sends consecutive SQL cells without parameters ahead, as one batch: the worker runs them one
   * after another and query() then finds each result waiting (no round trip per cell). As with
   * JavaScript (js-runtime.ts, runAhead), results hold only while the kernel asks for exactly these
   * queries in this order; anything else throws the rest away and calls the batch off in the
   * worker, and a failure stops it there. Only when idle and started.
   */
  queryAhead(queries: Array<SqlQuery & { tag: string }>): void {
    if (queries.length < 2 || this.ahead.length || this.pending.size || !this.child || !this.child.running || this.death) return;
    const batch = `q${++this.stats.batches}`;
    this.aheadBatch = batch;
    for (const { tag, ...q } of queries) {
      const entry: AheadQuery = { id: this.nextId++, tag, key: queryKey(q), outcome: null, waiter: null };
      this.ahead.push(entry);
      // Answered through `pending` like any query: kept for the kernel until it asks.
      this.pending.set(entry.id, (o) => {
        if (entry.waiter) return entry.waiter(o);
        entry.outcome = o;
        const i = this.ahead.indexOf(entry);
        // The worker stopped the batch at this failure: the queries after it never ran.
        if (!o.ok && i >= 0) this.truncateAhead(i + 1);
      });
      this.child.send({ type: 'query', id: entry.id, batch, ...q });
    }
  }

  private dropAhead(): void {
    if (!this.ahead.length) return;
    const dropped = this.ahead.map((e) => e.tag);
    // Only from the first query thrown away: one the kernel already waits for must still be answered.
    const from = this.ahead[0]!.id;
    this.truncateAhead(0);
    if (this.aheadBatch) this.child?.send({ type: 'cancel-batch', batch: this.aheadBatch, from });
    this.aheadBatch = null;
    this.onAheadDropped?.(dropped);
  }

  private truncateAhead(keep: number): void {
    for (const e of this.ahead.slice(keep)) this.pending.delete(e.id);
    this.stats.aheadDropped += Math.max(0, this.ahead.length - keep);
    this.ahead.length = Math.min(this.ahead.length, keep);
  }

  /** Runs an SQL cell. Never rejects. */
  async query(input: SqlQuery): Promise<SqlOutcome> {
    try {
      await this.start();
      if (this.death) throw new Error(this.death);
    } catch (e) {
      const reason = this.death ?? (e as Error).message;
      return { ok: false, error: { name: 'KernelError', message: reason }, fatal: reason };
    }
    const secs = Math.round(this.opts.timeoutMs / 100) / 10;
    const head = this.ahead[0];
    if (head && !Object.keys(input.params).length && head.key === queryKey(input)) {
      this.ahead.shift();
      if (!this.ahead.length) this.aheadBatch = null;
      this.stats.aheadUsed++;
      if (head.outcome) return head.outcome;
      return new Promise<SqlOutcome>((resolve) => {
        const done = this.deadline(resolve, secs);
        head.waiter = (o) => {
          // The worker stopped the batch at this failure: the queries after it never ran.
          if (!o.ok) {
            this.truncateAhead(0);
            this.aheadBatch = null;
          }
          done(o);
        };
      });
    }
    this.dropAhead();
    const id = this.nextId++;
    return new Promise<SqlOutcome>((resolve) => {
      this.pending.set(id, this.deadline(resolve, secs));
      this.child!.send({ type: 'query', id, ...input });
    });
  }

  /** The query's time limit, from now: interrupt, then kill; `resolve` wrapped to stop both. */
  private deadline(resolve: (o: SqlOutcome) => void, secs: number): (o: SqlOutcome) => void {
    const child = this.child!;
    const interruptTimer = setTimeout(() => child.send({ type: 'interrupt' }), this.opts.timeoutMs);
    const killTimer = setTimeout(() => child.kill(`the query timed out after ${secs} s and did not stop; the SQL engine was restarted`), this.opts.timeoutMs + 3000);
    return (o) => {
      clearTimeout(interruptTimer);
      clearTimeout(killTimer);
      if (!o.ok && /interrupt/i.test(o.error.message) && !o.fatal) o.error.message = `the query timed out after ${secs} s or was interrupted`;
      resolve(o);
    };
  }

  interrupt(): void {
    this.dropAhead();
    this.child?.send({ type: 'interrupt' });
  }

  drop(names: string[]): void {
    if (!names.length) return;
    this.dropAhead();
    this.child?.send({ type: 'drop', names });
  }

  dispose(): Promise<void> {
    if (!this.child) return Promise.resolve();
    this.child.kill('stopped');
    return this.child.exited.then(() => {});
  }
}
