/**
 * Several Plexus nodes for tests and benchmarks, on real infrastructure: a throwaway Redis
 * (redis.ts) and Postgres (postgres.ts), one shared data directory (the "shared files" every node
 * reads), nodes in this process (`startNode`) or as child processes that can be SIGKILLed or
 * SIGSTOPped (`startChildNode`), and optionally HAProxy in front (haproxy.ts).
 * Effects: processes, files under the system's temporary directory.
 */
import type { PlexusServer } from '../../server/src/app.ts';
import type { ServerConfig } from '../../server/src/config.ts';
import { loadClusterConfig } from '../../server/src/cluster/cluster-config.ts';
import { loadOpsConfig } from '../../server/src/ops/ops-config.ts';
import { tmpDir } from './dirs.ts';
import { startTestServer, startChildServer, type ChildServer } from './plexus.ts';
import { startPostgres, type PostgresServer } from './postgres.ts';
import { startRedis, type RedisServer } from './redis.ts';
import { freePort } from './processes.ts';

export interface TestCluster {
  redis: RedisServer;
  pg: PostgresServer;
  databaseUrl: string;
  /** The data directory every node shares. */
  dataDir: string;
  leaseMs: number;
  /** Starts a node in this process. */
  startNode(id: string, overrides?: Partial<ServerConfig>): Promise<PlexusServer>;
  /** Starts a node as a child process (`server/src/main.ts`), on the same port each time for one id. */
  startChildNode(id: string, env?: Record<string, string>): Promise<ChildServer>;
  /** Stops every node started here, then Redis and Postgres. */
  destroy(): Promise<void>;
}

export async function startTestCluster(opts: { leaseMs?: number; pg?: PostgresServer } = {}): Promise<TestCluster> {
  const leaseMs = opts.leaseMs ?? 1500;
  const [redis, pg] = await Promise.all([startRedis(), opts.pg ? Promise.resolve(opts.pg) : startPostgres({ fsync: false })]);
  const databaseUrl = await pg.createDatabase();
  const dataDir = tmpDir();
  const inProcess: PlexusServer[] = [];
  const children: ChildServer[] = [];
  const ports = new Map<string, number>();
  const env = (id: string) => ({ PLEXUS_DATABASE_URL: databaseUrl, PLEXUS_REDIS_URL: redis.url, PLEXUS_NODE_ID: id, PLEXUS_LEASE_MS: String(leaseMs) });
  return {
    redis, pg, databaseUrl, dataDir, leaseMs,
    async startNode(id, overrides = {}) {
      const cluster = loadClusterConfig(env(id), databaseUrl);
      const node = await startTestServer({ dataDir, databaseUrl, cluster, ops: loadOpsConfig({ PLEXUS_NODE_ID: id }), ...overrides });
      inProcess.push(node);
      return node;
    },
    async startChildNode(id, extra = {}) {
      // Each node keeps its port across restarts: the load balancer's backends stay valid.
      let port = ports.get(id);
      if (port === undefined) ports.set(id, (port = await freePort()));
      const child = await startChildServer(dataDir, { ...env(id), PORT: String(port), ...extra });
      children.push(child);
      return child;
    },
    async destroy() {
      for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) await c.kill('SIGKILL');
      await Promise.all(inProcess.map((n) => n.close().catch(() => {})));
      await redis.destroy();
      if (!opts.pg) await pg.destroy();
    },
  };
}
