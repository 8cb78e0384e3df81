/**
 * Kernels as a process of their own (`npm run kernel`, `PLEXUS_KERNEL=external` on the server):
 * like the agent, it polls the server for the workspaces people are in
 * (`GET /api/kernel/workspaces`, its own service token), and runs a workspace's kernel only while
 * it holds that workspace's kernel lease (`POST /api/kernel/workspaces/:id/lease`, renewed every
 * tick). Several kernel processes, on one machine or several sharing the data directory, split
 * the workspaces between them: one holds a workspace's lease, the others wait on standby and take
 * over when it stops renewing (killed, cut off) — the new kernel then reports the runs left
 * `running` as stopped, as a restarted kernel does. A holder that loses its lease stops its
 * kernel; a workspace nobody has been in for `idleMs` stops too (never while a cell runs), and the
 * lease is handed back. What cells ask of the server (volume samples, analysis jobs) goes over
 * HTTP (`POST /api/kernel/workspaces/:id/calls`); files (uploaded tables, large results) are in the
 * shared data directory.
 * Effects: network (the server), timers, starts and stops kernels (through its KernelPool).
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Requester } from '@plexus/shared';
import type { Logger } from '../log.ts';
import type { KernelPool } from './kernel-pool.ts';

export interface KernelServiceOptions {
  serverUrl: string;
  token: () => string;
  pool: KernelPool;
  log: Logger;
  /** Between two rounds: the workspace list read, every lease renewed or asked for. */
  tickMs: number;
  /** A lease lasts this long unless renewed. */
  leaseMs: number;
  /** A kernel with nobody in its workspace (and no cell running) stops after this long. */
  idleMs: number;
  /** This process's name as a lease holder (unique, also across machines). */
  runner?: string;
}

interface Held {
  /** The token this process connects to the workspace with (given with the lease; it names this runner). */
  token: string;
  expiresAt: number;
  emptySince: number | null;
  /** Stops the kernel when the lease runs out without a renewal. */
  deadline: NodeJS.Timeout | null;
}

/** One HTTP request to the server with the kernel's token; the server's error message on failure. */
async function serverRequest<T>(serverUrl: string, token: () => string, method: string, path: string, body?: unknown, timeoutMs = 5000): Promise<T> {
  const res = await fetch(serverUrl + path, {
    method,
    headers: { authorization: `Bearer ${token()}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let json: { message?: string } | null = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  if (!res.ok) throw new Error(json?.message ?? `the server answered ${res.status}`);
  return json as T;
}

/**
 * What cells ask of the server, over HTTP: the same calls a kernel inside the server makes
 * directly (http/service-api.ts serves them). Slow calls (a job's start) get a long time limit.
 */
export function remoteKernelCalls(serverUrl: string, token: () => string, runner: string) {
  // Each call names the runner: the server answers only the workspace's lease holder.
  const call = (ws: string, body: Record<string, unknown>) =>
    serverRequest<{ value: unknown }>(serverUrl, token, 'POST', `/api/kernel/workspaces/${encodeURIComponent(ws)}/calls`, { ...body, runner }, 120_000).then((r) => r.value);
  return {
    sample: (ws: string) => (op: string, dataset: string, layer: string, params: Record<string, string>) => call(ws, { kind: 'sample', op, dataset, layer, params }),
    jobs: (ws: string, op: string, args: Record<string, unknown>, by: Requester | null) => call(ws, { kind: 'job', op, args, by }),
  };
}

export class KernelService {
  readonly runner: string;
  private readonly held = new Map<string, Held>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private warned = '';
  private ticking: Promise<void> | null = null;
  /** Workspaces seen with people at the last successful read of the list. */
  private open = new Set<string>();
  /** The server's kernel directory differs from ours: files would not be found; run nothing. */
  private misplaced: string | null = null;

  constructor(private readonly opts: KernelServiceOptions) {
    this.runner = opts.runner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    opts.pool.serverUrl = opts.serverUrl;
  }

  /** The token a kernel connects to workspace `ws` with: the one given with its lease ('' without one: refused). */
  leaseToken(ws: string): string {
    return this.held.get(ws)?.token ?? '';
  }

  /** Workspaces whose lease this process holds (their kernels run here). */
  get holding(): string[] {
    return [...this.held.keys()];
  }

  start(): void {
    this.ticking = this.tick();
  }

  private warnOnce(msg: string): void {
    if (this.warned === msg) return;
    this.warned = msg;
    this.opts.log.warn(msg);
  }

  /** Lease requests give up after a third of the lease: a hung one must not outlast it. */
  private request<T>(method: string, path: string, body?: unknown): Promise<T> {
    return serverRequest<T>(this.opts.serverUrl, this.opts.token, method, path, body, Math.min(5000, Math.floor(this.opts.leaseMs / 3)));
  }

  private leasePath(ws: string): string {
    return `/api/kernel/workspaces/${encodeURIComponent(ws)}/lease`;
  }

  /**
   * One round: read where people are, renew every held lease (even when the list cannot be read),
   * ask for the open workspaces' leases, start and stop kernels. Never throws; the next round is
   * always scheduled.
   */
  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      try {
        const list = await this.request<{ workspaces: Array<{ id: string; people: number }>; kernelDir?: string }>('GET', '/api/kernel/workspaces');
        this.warned = '';
        this.open = new Set(list.workspaces.filter((w) => w.people > 0).map((w) => w.id));
        this.checkKernelDir(list.kernelDir);
      } catch (e) {
        const err = e as Error & { cause?: { code?: string } };
        this.warnOnce(`waiting for the Plexus server at ${this.opts.serverUrl}: ${err.cause?.code ?? err.message}`);
      }
      const all = [...new Set([...this.open, ...this.held.keys()])];
      await Promise.allSettled(all.map((ws) => this.round(ws, this.open.has(ws))));
    } catch (e) {
      this.opts.log.error('kernel lease round failed', { err: e });
    } finally {
      // Not unref'd: a standby process has nothing else keeping it alive.
      if (!this.stopped) this.timer = setTimeout(() => (this.ticking = this.tick()), this.opts.tickMs);
    }
  }

  /** Uploaded tables and large results are files: this process must use the server's kernel directory. */
  private checkKernelDir(serverDir: string | undefined): void {
    const mine = this.opts.pool.kernelDir;
    const wrong = serverDir && serverDir !== mine ? `the server keeps kernel files in ${serverDir} but this process would use ${mine}: run it with the same PLEXUS_DATA_DIR, shared at the same path, and the same sandbox (root or not)` : null;
    if (wrong && wrong !== this.misplaced) this.opts.log.error('kernel directory mismatch: no kernel runs here', { serverDir, kernelDir: mine });
    this.misplaced = wrong;
  }

  private async round(ws: string, open: boolean): Promise<void> {
    const h = this.held.get(ws);
    const now = Date.now();
    if (h && !open) {
      h.emptySince ??= now;
      if (now - h.emptySince >= this.opts.idleMs && !this.opts.pool.get(ws)?.busy) return this.leave(ws);
    } else if (h) h.emptySince = null;
    // Standing by is all this process may do while its files would be elsewhere, or while it is full.
    if (!h && (!open || this.misplaced || this.held.size >= this.opts.pool.capacity)) return;
    const sentAt = Date.now();
    let answer: { granted: boolean; holder: string; fresh: boolean; token?: string };
    try {
      answer = await this.request('POST', this.leasePath(ws), { runner: this.runner, ttlMs: this.opts.leaseMs });
    } catch (e) {
      if (!h) this.opts.log.warn('kernel lease request failed', { ws, err: (e as Error).message });
      // A held lease runs out by its own deadline (armed below), renewed or not.
      return;
    }
    if (this.stopped) {
      if (answer.granted && !h) await this.request('DELETE', this.leasePath(ws), { runner: this.runner }).catch(() => {});
      return;
    }
    const current = this.held.get(ws);
    // Lost (its deadline passed) while this request was on its way: that kernel may still be
    // stopping; the next round asks again.
    if (h && !current) return;
    if (!answer.granted) {
      if (current) await this.lose(ws, `another kernel process (${answer.holder}) runs this workspace now`);
      return;
    }
    // A renewal may come back `fresh` when the server lost its leases (a restart with leases in
    // memory): nobody else held it — had anyone, this process's deadline would have passed first.
    // The lease may have started when the request was sent: count from then.
    const expiresAt = sentAt + this.opts.leaseMs;
    if (current) {
      this.arm(ws, current, expiresAt);
      // A kernel that failed to start is started again while the lease is ours.
      if (!this.opts.pool.get(ws)) void this.opts.pool.ensure(ws);
      return;
    }
    if (!answer.token) {
      this.opts.log.error('the server gave a kernel lease without its token: is it an older version?', { ws });
      return;
    }
    const entry: Held = { token: answer.token, expiresAt, emptySince: null, deadline: null };
    this.held.set(ws, entry);
    this.arm(ws, entry, expiresAt);
    this.opts.log.info('kernel lease taken', { ws, runner: this.runner });
    void this.opts.pool.ensure(ws);
  }

  /** The kernel stops when its lease runs out unless a renewal moved the deadline first. */
  private arm(ws: string, h: Held, expiresAt: number): void {
    h.expiresAt = expiresAt;
    if (h.deadline) clearTimeout(h.deadline);
    h.deadline = setTimeout(() => {
      if (this.held.get(ws) === h) void this.lose(ws, 'its lease ran out before it could be renewed');
    }, Math.max(0, expiresAt - Date.now()));
  }

  private forget(ws: string): void {
    const h = this.held.get(ws);
    if (h?.deadline) clearTimeout(h.deadline);
    this.held.delete(ws);
  }

  /** The lease is gone: stop the kernel (another process runs the workspace, or will). */
  private async lose(ws: string, reason: string): Promise<void> {
    if (!this.held.has(ws)) return;
    this.forget(ws);
    this.opts.log.warn('kernel lease lost: stopping the kernel', { ws, reason });
    await this.opts.pool.stop(ws);
  }

  /** Nobody has been in the workspace for a while: stop its kernel and hand the lease back. */
  private async leave(ws: string): Promise<void> {
    this.forget(ws);
    await this.opts.pool.stop(ws);
    await this.request('DELETE', this.leasePath(ws), { runner: this.runner }).catch(() => {});
    this.opts.log.info('kernel left an empty workspace', { ws });
  }

  /** Stops every kernel and hands every lease back (a clean shutdown: others take over at once). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking?.catch(() => {});
    const held = [...this.held.keys()];
    for (const ws of held) this.forget(ws);
    await this.opts.pool.closeAll();
    await Promise.all(held.map((ws) => this.request('DELETE', this.leasePath(ws), { runner: this.runner }).catch(() => {})));
  }
}
