/**
 * One node serves each workspace at a time: a lease in Redis (`plexus:lease:<ws>` = node id, with
 * a time to live). The node that loads a workspace takes its lease, renews every lease it holds
 * every third of the lease time, and gives it back when it unloads the workspace; other nodes read
 * it to route the workspace's clients there (router.ts).
 *
 * Safety does not rest on Redis: a lease only decides who *should* serve. Whoever takes it then
 * claims the workspace's fencing token in Postgres (store's `fencing`), and the store refuses
 * writes carrying an older token. So a Redis restart (leases gone), a partition, or a holder
 * paused past its lease can make two nodes believe they serve a workspace for a moment, but only
 * the newest one can store anything; the other learns it at its next renewal or write, and drops
 * the workspace (ownership.ts).
 *
 * A renewal that finds the key gone (Redis restarted empty) takes it again: safe for the reason
 * above. While Redis is unreachable nothing is renewed and nothing is dropped: nobody else can take
 * a lease meanwhile either.
 * Effects: network (Redis), timers.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../log.ts';

const KEY = (ws: string) => `plexus:lease:${ws}`;

/** Takes the lease when free (or renews it when ours); returns the holder. */
const ACQUIRE = `
local cur = redis.call('GET', KEYS[1])
if not cur then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return ARGV[1]
end
if cur == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return cur`;

/** Renews each key held by ARGV[1] (taking back a vanished one); 1 per key still ours, 0 per key lost. */
const RENEW = `
local out = {}
for i, k in ipairs(KEYS) do
  local cur = redis.call('GET', k)
  if cur == ARGV[1] then
    redis.call('PEXPIRE', k, ARGV[2])
    out[i] = 1
  elseif not cur then
    redis.call('SET', k, ARGV[1], 'PX', ARGV[2])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export type AcquireResult = { held: true } | { held: false; holder: string };

export class WorkspaceLeases {
  private readonly heldSet = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private renewing = false;
  /** Called once for each workspace whose lease another node took. */
  onLost: (ws: string) => void = () => {};
  /** Renewal rounds done (tests wait on this instead of sleeping). */
  rounds = 0;

  constructor(
    private readonly redis: Redis,
    private readonly nodeId: string,
    readonly leaseMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.renewAll(), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  /** True while this node holds `ws`'s lease (as far as it knows: the store's fence has the last word). */
  held(ws: string): boolean {
    return this.heldSet.has(ws);
  }

  get count(): number {
    return this.heldSet.size;
  }

  /** The workspaces whose lease this node holds. */
  heldList(): string[] {
    return [...this.heldSet];
  }

  async acquire(ws: string): Promise<AcquireResult> {
    const holder = (await this.redis.eval(ACQUIRE, 1, KEY(ws), this.nodeId, String(this.leaseMs))) as string;
    if (holder !== this.nodeId) return { held: false, holder };
    this.heldSet.add(ws);
    return { held: true };
  }

  /** The node holding `ws`'s lease now, or null. */
  async holder(ws: string): Promise<string | null> {
    return this.redis.get(KEY(ws));
  }

  /** Gives the lease back (the workspace was unloaded here). Never throws: an unreleased lease just expires. */
  async release(ws: string): Promise<void> {
    if (!this.heldSet.delete(ws)) return;
    try {
      await this.redis.eval(RELEASE, 1, KEY(ws), this.nodeId);
    } catch (e) {
      this.log.warn('could not release a workspace lease; it expires by itself', { ws, err: (e as Error).message });
    }
  }

  /** One renewal round over every lease held (exposed for tests; the timer calls it). */
  async renewAll(): Promise<void> {
    if (this.renewing || this.heldSet.size === 0) return;
    this.renewing = true;
    const list = [...this.heldSet];
    try {
      const kept = (await this.redis.eval(RENEW, list.length, ...list.map(KEY), this.nodeId, String(this.leaseMs))) as number[];
      list.forEach((ws, i) => {
        if (kept[i] === 1 || !this.heldSet.has(ws)) return;
        this.heldSet.delete(ws);
        this.log.warn('workspace lease lost: another node serves it now', { ws });
        this.onLost(ws);
      });
    } catch (e) {
      this.log.warn('lease renewal failed (Redis unreachable?); still serving, fenced by the store', { err: (e as Error).message, leases: list.length });
    } finally {
      this.renewing = false;
      this.rounds++;
    }
  }

  /**
   * Stops renewing, keeping the leases until they expire: what a holder that is paused or cut off
   * from Redis looks like to the others (tests of fencing use it in-process).
   */
  stopRenewing(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Stops renewing and gives every lease back (a clean stop: the next node takes them at once). */
  async close(): Promise<void> {
    this.stopRenewing();
    await Promise.all([...this.heldSet].map((ws) => this.release(ws)));
  }
}
