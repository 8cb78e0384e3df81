/**
 * Running as one of several nodes (`PLEXUS_REDIS_URL`): where Redis is, how this node is reached
 * by the others, and how long a workspace lease lasts. Several nodes need a database they share,
 * so `PLEXUS_REDIS_URL` without `PLEXUS_DATABASE_URL` is refused with a clear error.
 * Effects: none (reads env).
 */
import os from 'node:os';

export interface ClusterConfig {
  /** `PLEXUS_REDIS_URL`: leases and the node directory (redis:// or rediss://). */
  redisUrl: string;
  /**
   * `PLEXUS_NODE_URL`: the base URL other nodes reach this one at (they relay clients of the
   * workspaces it serves there). Null: `http://<host>:<port>` once listening (127.0.0.1 for a
   * loopback or wildcard bind on one machine; set it when nodes run on separate machines).
   */
  nodeUrl: string | null;
  /** `PLEXUS_LEASE_MS`: a workspace's lease lasts this long unless renewed (renewed every third of it). */
  leaseMs: number;
}

export function loadClusterConfig(env: NodeJS.ProcessEnv, databaseUrl: string | null): ClusterConfig | null {
  const raw = env.PLEXUS_REDIS_URL?.trim();
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('PLEXUS_REDIS_URL must be a Redis URL (redis://host:6379)');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new Error(`PLEXUS_REDIS_URL must be a redis:// URL, got "${url.protocol}"`);
  if (!databaseUrl) throw new Error('PLEXUS_REDIS_URL (several nodes) needs PLEXUS_DATABASE_URL: the nodes must share one Postgres database');
  const nodeUrl = env.PLEXUS_NODE_URL?.trim() || null;
  if (nodeUrl !== null && !/^https?:\/\/[^/]+\/?$/.test(nodeUrl)) throw new Error(`PLEXUS_NODE_URL must be a base URL like http://10.0.0.5:4455, got "${nodeUrl}"`);
  const rawLease = env.PLEXUS_LEASE_MS;
  const leaseMs = rawLease === undefined || rawLease === '' ? 5000 : Number(rawLease);
  if (!Number.isFinite(leaseMs) || leaseMs < 500 || leaseMs > 120_000) throw new Error(`PLEXUS_LEASE_MS must be between 500 and 120000, got "${rawLease}"`);
  return { redisUrl: raw, nodeUrl: nodeUrl?.replace(/\/$/, '') ?? null, leaseMs };
}

/** The URL the other nodes use when `PLEXUS_NODE_URL` is not set. */
export function defaultNodeUrl(host: string, port: number): string {
  const loopback = host === '127.0.0.1' || host === 'localhost' || host === '::1';
  const name = loopback || host === '0.0.0.0' || host === '::' ? (loopback ? '127.0.0.1' : os.hostname()) : host;
  return `http://${name}:${port}`;
}
