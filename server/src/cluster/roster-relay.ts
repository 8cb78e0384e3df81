/**
 * A hand-out's roster across nodes. The roster is pushed by the node where a student's fork
 * changes into the source's document — when that node also serves the source. When another node
 * serves it, the change is announced on Redis pub/sub (`plexus:roster`: source, fork, the student's
 * last activity) and the source's node writes the entry from the fork's stored state (durable before
 * it was acknowledged). Pub/sub may drop a message: the roster is advisory, the next change of that
 * fork or the source's next load (its catch-up) brings the entry up to date.
 * Effects: network (a second Redis connection, in subscriber mode).
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../log.ts';
import type { RosterRelay } from '../forks/roster.ts';

const CHANNEL = 'plexus:roster';

export function redisRosterRelay(redis: Redis, log: Logger): RosterRelay & { close(): void } {
  // Its own connection (a subscriber can do nothing else), queueing the subscription until it is
  // connected; ioredis subscribes again by itself after a reconnect.
  const sub = redis.duplicate({ enableOfflineQueue: true });
  sub.on('error', () => {}); // the main connection logs Redis being unreachable
  const handlers: Array<Parameters<RosterRelay['subscribe']>[0]> = [];
  void sub.subscribe(CHANNEL).catch((e: Error) => log.warn('roster relay: could not subscribe', { err: e.message }));
  sub.on('message', (_channel: string, raw: string) => {
    let m: { source?: unknown; fork?: unknown; active?: unknown };
    try {
      m = JSON.parse(raw);
    } catch {
      return;
    }
    if (typeof m.source !== 'string' || typeof m.fork !== 'string') return;
    const active = typeof m.active === 'number' ? m.active : undefined;
    for (const h of handlers) h(m.source, m.fork, active);
  });
  return {
    publish(source, fork, active) {
      redis.publish(CHANNEL, JSON.stringify({ source, fork, active })).catch((e: Error) => log.warn('roster relay: could not publish', { err: e.message }));
    },
    subscribe(handler) {
      handlers.push(handler);
    },
    close() {
      sub.disconnect();
    },
  };
}
