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
  timeoutMs: number;
  maxFrameBytes: number;
  /** Uploaded tables: SQL name and stored file. */
  tables: Array<{ name: string; file: string }>;
}

export type SqlOutcome =
  | { ok: true; columns: TableColumn[]; rows: Array<Record<string, unknown>>; totalRows: number; materialized: boolean }
  | { ok: false; error: { name: string; message: string }; fatal?: string };

export class SqlRuntime {
  private child: SandboxedChild | null = null;
  private ready: Promise<void> | null = null;
  private pending = new Map<number, (o: SqlOutcome) => void>();
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
      init: { type: 'init', tables: this.opts.tables, memoryMb: this.opts.memoryMb, threads: 2 },
      onMessage: (m) => this.onMessage(m),
      describeExit: (exit) => exit.killedFor ?? (exit.signal ? `the SQL engine was killed by ${exit.signal}` : `the SQL engine exited (code ${exit.code})`),
    });
    this.child = child;
    this.layers = child.layers;
    this.ready = child.ready;
    child.death.then((reason) => {
      this.death = reason;
      for (const cb of this.pending.values()) cb({ ok: false, error: { name: 'KernelError', message: reason }, fatal: reason });
      this.pending.clear();
    });
    return this.ready;
  }

  private onMessage(m: Record<string, unknown>): void {
    const cb = this.pending.get(Number(m.id));
    if (!cb) return;
    this.pending.delete(Number(m.id));
    if (m.type === 'result') {
      cb({
        ok: true,
        columns: Array.isArray(m.columns) ? (m.columns as TableColumn[]) : [],
        rows: Array.isArray(m.rows) ? (m.rows as Array<Record<string, unknown>>) : [],
        totalRows: Number(m.totalRows ?? 0),
        materialized: m.materialized === true,
      });
    } else {
      const e = (m.error ?? {}) as { name?: unknown; message?: unknown };
      cb({ ok: false, error: { name: String(e.name ?? 'SQLError').slice(0, 100), message: String(e.message ?? 'query failed').slice(0, 4000) } });
    }
  }

  /** Runs an SQL cell. Never rejects. */
  async query(input: { sql: string; params: Record<string, unknown>; name?: string; maxRows: number; materialize?: boolean }): Promise<SqlOutcome> {
    try {
      await this.start();
      if (this.death) throw new Error(this.death);
    } catch (e) {
      const reason = this.death ?? (e as Error).message;
      return { ok: false, error: { name: 'KernelError', message: reason }, fatal: reason };
    }
    const id = this.nextId++;
    const secs = Math.round(this.opts.timeoutMs / 100) / 10;
    return new Promise<SqlOutcome>((resolve) => {
      const child = this.child!;
      const interruptTimer = setTimeout(() => child.send({ type: 'interrupt' }), this.opts.timeoutMs);
      const killTimer = setTimeout(() => child.kill(`the query timed out after ${secs} s and did not stop; the SQL engine was restarted`), this.opts.timeoutMs + 3000);
      this.pending.set(id, (o) => {
        clearTimeout(interruptTimer);
        clearTimeout(killTimer);
        if (!o.ok && /interrupt/i.test(o.error.message) && !o.fatal) o.error.message = `the query timed out after ${secs} s or was interrupted`;
        resolve(o);
      });
      child.send({ type: 'query', id, ...input });
    });
  }

  interrupt(): void {
    this.child?.send({ type: 'interrupt' });
  }

  drop(names: string[]): void {
    if (names.length) this.child?.send({ type: 'drop', names });
  }

  dispose(): Promise<void> {
    if (!this.child) return Promise.resolve();
    this.child.kill('stopped');
    return this.child.exited.then(() => {});
  }
}
