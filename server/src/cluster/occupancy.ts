/**
 * Which workspaces have people in them, across every node (what the agent polls to know where to
 * join, `GET /api/agent/workspaces`). Each node publishes the workspaces it serves that have people
 * (`plexus:occupied:<node id>`, JSON, expiring unless refreshed) and answers with the union of every
 * live node's list — each workspace is served by one node, whose connections include the clients
 * relayed to it, so nothing is counted twice.
 * Effects: network (Redis), timers.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../log.ts';
import type { OccupiedWorkspace } from '../collab/people.ts';

const NODES = 'plexus:nodes';
const KEY = (id: string) => `plexus:occupied:${id}`;

export class Occupancy {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly nodeId: string,
    private readonly local: () => OccupiedWorkspace[],
    private readonly ttlMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.publish().catch((e) => this.log.warn('could not publish occupied workspaces', { err: (e as Error).message })), Math.max(100, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
    void this.publish().catch(() => {});
  }

  /** Publishes this node's list now. */
  async publish(): Promise<void> {
    await this.redis.multi().sadd(NODES, this.nodeId).set(KEY(this.nodeId), JSON.stringify(this.local()), 'PX', this.ttlMs).exec();
  }

  /** Every live node's occupied workspaces (this node's from memory), sorted by id. */
  async all(): Promise<OccupiedWorkspace[]> {
    const ids = (await this.redis.smembers(NODES)).filter((id) => id !== this.nodeId);
    const lists = ids.length ? await this.redis.mget(ids.map(KEY)) : [];
    const byId = new Map<string, OccupiedWorkspace>();
    for (const raw of lists) {
      if (!raw) continue; // a node gone (its entry expired)
      for (const w of JSON.parse(raw) as OccupiedWorkspace[]) byId.set(w.id, w);
    }
    for (const w of this.local()) byId.set(w.id, w);
    return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.redis.multi().srem(NODES, this.nodeId).del(KEY(this.nodeId)).exec().catch(() => {});
  }
}
