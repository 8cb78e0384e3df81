/**
 * Where each live node is reached: `plexus:node:<id>` = its base URL, refreshed while it runs and
 * expiring soon after it stops (a node killed with -9 drops out by itself). The router looks up
 * the holder of a workspace's lease here.
 * Effects: network (Redis), timers.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../log.ts';

const KEY = (id: string) => `plexus:node:${id}`;

export class NodeDirectory {
  private timer: NodeJS.Timeout | null = null;
  private url: string | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly nodeId: string,
    /** How long an entry outlives the last refresh. */
    private readonly ttlMs: number,
    private readonly log: Logger,
  ) {}

  /** Joins the directory at `url` (once listening) and stays in it. */
  async start(url: string): Promise<void> {
    this.url = url;
    // Refreshed from now on whatever the first attempt gives (Redis may come up later).
    this.timer = setInterval(() => this.refresh().catch((e) => this.log.warn('could not refresh this node in the directory', { err: (e as Error).message })), Math.max(100, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
    await this.refresh();
  }

  private async refresh(): Promise<void> {
    if (this.url) await this.redis.set(KEY(this.nodeId), this.url, 'PX', this.ttlMs);
  }

  /** The base URL of node `id`, or null when it is not (or no longer) running. */
  async urlOf(id: string): Promise<string | null> {
    return this.redis.get(KEY(id));
  }

  /** Leaves the directory (a clean stop). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.redis.del(KEY(this.nodeId)).catch(() => {});
  }
}
