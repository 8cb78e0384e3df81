/**
 * One agent runner per workspace across every node: the agent lease of collab/agent-leases.ts kept
 * in Redis (`plexus:agent-lease:<ws>` = runner, with the lease's time to live; kernel processes'
 * leases are `plexus:kernel-lease:<ws>`), so a runner keeps
 * its lease when the workspace moves to another node, and two runners connected to different
 * nodes never both hold it. Same answers as the in-memory lease.
 * Effects: network (Redis).
 */
import type { Redis } from 'ioredis';
import type { AgentLeaseStore, LeaseAnswer } from '../collab/agent-leases.ts';


/** {granted, holder, ttl ms, fresh}: granted (or renewed) unless another runner holds it. */
const ACQUIRE = `
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return {0, cur, redis.call('PTTL', KEYS[1]), 0} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local fresh = 1
if cur == ARGV[1] then fresh = 0 end
return {1, ARGV[1], tonumber(ARGV[2]), fresh}`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export class RedisAgentLeases implements AgentLeaseStore {
  private readonly key: (ws: string) => string;

  constructor(
    private readonly redis: Redis,
    private readonly now: () => number = Date.now,
    /** Whose leases: the agent's, or kernel processes'. */
    kind: 'agent' | 'kernel' = 'agent',
  ) {
    this.key = (ws) => `plexus:${kind}-lease:${ws}`;
  }

  async acquire(ws: string, runner: string, ttlMs: number): Promise<LeaseAnswer> {
    const [granted, holder, ttl, fresh] = (await this.redis.eval(ACQUIRE, 1, this.key(ws), runner, String(Math.round(ttlMs)))) as [number, string, number, number];
    return { granted: granted === 1, holder, expiresAt: this.now() + Math.max(0, ttl), fresh: fresh === 1 };
  }

  async release(ws: string, runner: string): Promise<boolean> {
    return (await this.redis.eval(RELEASE, 1, this.key(ws), runner)) === 1;
  }

  async expire(ws: string): Promise<void> {
    await this.redis.del(this.key(ws));
  }

  async holder(ws: string): Promise<string | null> {
    return this.redis.get(this.key(ws));
  }
}
