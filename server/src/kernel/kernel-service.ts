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
  expiresAt: number;
  emptySince: number | null;
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
export function remoteKernelCalls(serverUrl: string, token: () => string) {
  const call = (ws: string, body: Record<string, unknown>) =>
    serverRequest<{ value: unknown }>(serverUrl, token, 'POST', `/api/kernel/workspaces/${encodeURIComponent(ws)}/calls`, body, 120_000).then((r) => r.value);
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

  constructor(private readonly opts: KernelServiceOptions) {
    this.runner = opts.runner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    opts.pool.serverUrl = opts.serverUrl;
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

  private request<T>(method: string, path: string, body?: unknown): Promise<T> {
    return serverRequest<T>(this.opts.serverUrl, this.opts.token, method, path, body);
  }

  private leasePath(ws: string): string {
    return `/api/kernel/workspaces/${encodeURIComponent(ws)}/lease`;
  }

  /** One round: read who is where, renew or ask for leases, start and stop kernels. */
  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      const { workspaces } = await this.request<{ workspaces: Array<{ id: string; people: number }> }>('GET', '/api/kernel/workspaces');
      this.warned = '';
      const open = new Set(workspaces.filter((w) => w.people > 0).map((w) => w.id));
      await Promise.all([...new Set([...open, ...this.held.keys()])].map((ws) => this.round(ws, open.has(ws))));
    } catch (e) {
      const err = e as Error & { cause?: { code?: string } };
      this.warnOnce(`waiting for the Plexus server at ${this.opts.serverUrl}: ${err.cause?.code ?? err.message}`);
      // The server unreachable: a kernel whose lease ran out meanwhile may already have a successor.
      const now = Date.now();
      for (const [ws, h] of this.held) if (now > h.expiresAt) await this.lose(ws, 'its lease ran out while the server was unreachable');
    }
    if (!this.stopped) {
      // Not unref'd: a standby process has nothing else keeping it alive.
      this.timer = setTimeout(() => (this.ticking = this.tick()), this.opts.tickMs);
    }
  }

  private async round(ws: string, open: boolean): Promise<void> {
    const h = this.held.get(ws);
    const now = Date.now();
    if (h && !open) {
      h.emptySince ??= now;
      if (now - h.emptySince >= this.opts.idleMs && !this.opts.pool.get(ws)?.busy) return this.leave(ws);
    } else if (h) h.emptySince = null;
    if (!h && !open) return;
    let answer: { granted: boolean; holder: string; expiresAt: number };
    try {
      answer = await this.request('POST', this.leasePath(ws), { runner: this.runner, ttlMs: this.opts.leaseMs });
    } catch (e) {
      if (h && Date.now() > h.expiresAt) await this.lose(ws, 'it could not renew its lease');
      else this.opts.log.warn('kernel lease request failed', { ws, err: (e as Error).message });
      return;
    }
    if (this.stopped) return;
    if (!answer.granted) {
      if (h) await this.lose(ws, `another kernel process (${answer.holder}) runs this workspace now`);
      return;
    }
    // The server's clock says when it ends; renewals come every tick, well before.
    const expiresAt = Date.now() + this.opts.leaseMs;
    if (h) {
      h.expiresAt = expiresAt;
      return;
    }
    this.held.set(ws, { expiresAt, emptySince: null });
    this.opts.log.info('kernel lease taken', { ws, runner: this.runner });
    void this.opts.pool.ensure(ws);
  }

  /** The lease is gone: stop the kernel (another process runs the workspace, or will). */
  private async lose(ws: string, reason: string): Promise<void> {
    this.held.delete(ws);
    this.opts.log.warn('kernel lease lost: stopping the kernel', { ws, reason });
    await this.opts.pool.stop(ws);
  }

  /** Nobody has been in the workspace for a while: stop its kernel and hand the lease back. */
  private async leave(ws: string): Promise<void> {
    this.held.delete(ws);
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
    this.held.clear();
    await this.opts.pool.closeAll();
    await Promise.all(held.map((ws) => this.request('DELETE', this.leasePath(ws), { runner: this.runner }).catch(() => {})));
  }
}
