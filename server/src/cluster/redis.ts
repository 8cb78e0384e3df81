/**
 * The Redis connection of a node (ioredis: maintained, MIT, Lua scripts via defineCommand,
 * reconnects by itself). Commands fail at once while Redis is disconnected (no offline queue), and
 * after 2 s on a connection that hangs: a lease renewal or a route lookup must not wait silently
 * behind a dead connection.
 * Effects: network.
 */
import { Redis } from 'ioredis';
import type { Logger } from '../log.ts';

export function connectRedis(url: string, log: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    // A connection that hangs (Redis paused, a black-holed network) fails each command after 2 s
    // instead of stalling renewals, routes and loads behind it.
    commandTimeout: 2000,
    // Reconnect forever, quickly at first, then every second.
    retryStrategy: (times) => Math.min(100 * times, 1000),
  });
  let down = false;
  redis.on('error', (e: Error) => {
    if (!down) log.warn('redis unreachable; retrying', { err: e.message });
    down = true;
  });
  redis.on('ready', () => {
    if (down) log.info('redis reachable again');
    down = false;
  });
  return redis;
}

/** Resolves once the connection is ready (the first start waits for Redis, bounded). */
export async function redisReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => {
      redis.off('ready', ok);
      reject(new Error(`Redis did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const ok = () => {
      clearTimeout(t);
      resolve();
    };
    redis.once('ready', ok);
  });
}
