/**
 * One agent runner per workspace: a lease the server grants to one agent process at a time. The
 * holder renews it well before it expires; another process asking meanwhile is told who holds it
 * and stays on standby (it does not even join the document). A holder that stops renewing (killed,
 * cut off) loses the lease when it expires, and the next process to ask takes over — and, since
 * the previous holder can no longer be running anything, fails the runs it left `running`.
 * Kept in memory here (one node); several nodes keep it in Redis (cluster/agent-leases-redis.ts).
 * Pure module (the clock is injected).
 */

export interface LeaseAnswer {
  granted: boolean;
  /** The runner holding the lease now (the caller when granted). */
  holder: string;
  expiresAt: number;
  /** Granted to a runner that did not hold it: runs still marked running belong to nobody. */
  fresh: boolean;
}

/** What the API asks of a lease store (answers may come at once or, from Redis, as promises). */
export interface AgentLeaseStore {
  acquire(ws: string, runner: string, ttlMs: number): LeaseAnswer | Promise<LeaseAnswer>;
  release(ws: string, runner: string): boolean | Promise<boolean>;
  expire(ws: string): void | Promise<void>;
  holder(ws: string): string | null | Promise<string | null>;
}

export class AgentLeases implements AgentLeaseStore {
  private readonly leases = new Map<string, { runner: string; expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Grants or renews the lease of workspace `ws` to `runner` for `ttlMs`, unless another runner holds it. */
  acquire(ws: string, runner: string, ttlMs: number): LeaseAnswer {
    const t = this.now();
    const cur = this.leases.get(ws);
    if (cur && cur.runner !== runner && cur.expiresAt > t) return { granted: false, holder: cur.runner, expiresAt: cur.expiresAt, fresh: false };
    const expiresAt = t + ttlMs;
    this.leases.set(ws, { runner, expiresAt });
    return { granted: true, holder: runner, expiresAt, fresh: cur?.runner !== runner };
  }

  /** Gives the lease up (a clean shutdown), if `runner` holds it. */
  release(ws: string, runner: string): boolean {
    if (this.leases.get(ws)?.runner !== runner) return false;
    this.leases.delete(ws);
    return true;
  }

  /** Ends a lease now, whoever holds it (tests: the holder "crashed" and its time ran out). */
  expire(ws: string): void {
    const cur = this.leases.get(ws);
    if (cur) cur.expiresAt = this.now() - 1;
  }

  holder(ws: string): string | null {
    const cur = this.leases.get(ws);
    return cur && cur.expiresAt > this.now() ? cur.runner : null;
  }
}
