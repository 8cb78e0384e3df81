/**
 * Several nodes (`PLEXUS_REDIS_URL`, with `PLEXUS_DATABASE_URL`): the pieces wired together —
 * Redis, workspace leases, the node directory, ownership of loaded workspaces with the store's
 * fencing, the router, and the relays of sockets and requests to the serving node.
 * Why leases and routing rather than relaying every update between nodes over Redis pub/sub
 * (@hocuspocus/extension-redis) is written down in docs/architecture.md ("Several nodes").
 * Effects: network (Redis), timers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { Hocuspocus } from '@hocuspocus/server';
import type { Logger } from '../log.ts';
import type { TokenSigner } from '../auth/tokens.ts';
import type { StorageFencing } from '../store/storage.ts';
import type { ClusterStats } from '../ops/metrics.ts';
import type { ClusterConfig } from './cluster-config.ts';
import { connectRedis, redisReady } from './redis.ts';

/** How often a relaying node pings the clients it relays (Hocuspocus' own interval for its clients). */
const RELAY_PING_MS = 30_000;
/** The workspace id in relay tokens: one that never exists, so the token opens nothing. */
const RELAY_WS = '_plexus_relay';

/** How long a starting node waits for Redis before it goes on (not ready until Redis answers). */
const REDIS_START_WAIT_MS = 10_000;
import { WorkspaceLeases } from './workspace-leases.ts';
import { NodeDirectory } from './node-directory.ts';
import { Ownership } from './ownership.ts';
import { WorkspaceRouter, type Route } from './router.ts';
import { relayHttp } from './http-relay.ts';
import { Occupancy } from './occupancy.ts';
import { redisRosterRelay } from './roster-relay.ts';
import type { RosterRelay } from '../forks/roster.ts';
import type { OccupiedWorkspace } from '../collab/people.ts';
import { RelayWatch, type RelayDeps } from './socket-relay.ts';

export interface Cluster {
  redis: Redis;
  leases: WorkspaceLeases;
  ownership: Ownership;
  router: WorkspaceRouter;
  relay: RelayDeps;
  /** Ends relays whose workspace moved to another node. */
  watch: RelayWatch;
  /** What `/metrics` reports of this node's part in the cluster. */
  stats(): ClusterStats;
  /** Workspaces with people in them, on every node (the agent's list). */
  occupancy: Occupancy;
  /** Hand-out rosters whose forks and source are served by different nodes. */
  roster: RosterRelay;
  /** Route of a document for a socket that must be served here or not at all (relayed from another node, or the kernel's). */
  localOnly(ws: string): Promise<Route>;
  /** The relay header's value for what this node relays (signed, short-lived). */
  relayToken(): string;
  /** True when a relay header was signed by a node of this cluster. */
  fromNode(header: string | string[] | undefined): boolean;
  /** Forwards a request about a workspace served elsewhere; false when this node answers it. */
  relayHttp(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** Joins the node directory at `url` and starts renewing leases (once listening). */
  listening(url: string): Promise<void>;
  /** Gives back every lease, leaves the directory, disconnects. */
  close(): Promise<void>;
}

export interface ClusterDeps {
  config: ClusterConfig;
  /** Signs and checks the relay header (the secret every node shares). */
  signer: TokenSigner;
  nodeId: string;
  fencing: StorageFencing | undefined;
  hocuspocus: () => Hocuspocus;
  log: Logger;
  stopServing: (ws: string) => void;
  /** This node's workspaces with people in them. */
  occupied: () => OccupiedWorkspace[];
}

export function clusterWiring(deps: ClusterDeps): Cluster {
  const { config, nodeId, log } = deps;
  if (!deps.fencing) throw new Error('several nodes need a store with fencing (Postgres: PLEXUS_DATABASE_URL)');
  deps.fencing.require();
  const redis = connectRedis(config.redisUrl, log);
  const leases = new WorkspaceLeases(redis, nodeId, config.leaseMs, log);
  const ownership = new Ownership({ leases, fencing: deps.fencing, hocuspocus: deps.hocuspocus, log, stopServing: deps.stopServing });
  const nodes = new NodeDirectory(redis, nodeId, config.leaseMs * 2, log);
  const occupancy = new Occupancy(redis, nodeId, deps.occupied, config.leaseMs * 2, log);
  const roster = redisRosterRelay(redis, log);
  const router = new WorkspaceRouter(leases, nodes, nodeId, (ws) => ownership.unloading(ws));
  const watch = new RelayWatch(router);
  const relayed = { up: 0, down: 0 };
  // The relay header: a token for no workspace (it grants nothing if it leaked), signed with the
  // secret every node shares, renewed well before it expires; a client cannot forge it.
  let token = { value: '', until: 0 };
  const relayToken = () => {
    if (Date.now() > token.until) token = { value: deps.signer.sign({ ws: RELAY_WS, role: 'viewer', sub: `relay:${nodeId}`, ttlSeconds: 600 }), until: Date.now() + 300_000 };
    return token.value;
  };
  const fromNode = (header: string | string[] | undefined) => {
    if (typeof header !== 'string') return false;
    try {
      const c = deps.signer.verify(header);
      return c.ws === RELAY_WS && c.sub.startsWith('relay:');
    } catch {
      return false;
    }
  };
  const relay: RelayDeps = { router, relayToken, log, waitMs: config.leaseMs + 2000, onRelayed: (d) => void relayed[d]++, watch, pingMs: RELAY_PING_MS };
  return {
    redis,
    leases,
    ownership,
    router,
    relay,
    watch,
    occupancy,
    roster,
    stats: () => ({ leasesHeld: leases.count, relayedUp: relayed.up, relayedDown: relayed.down, relaysMoved: watch.moved, dropped: ownership.drops }),
    async localOnly(ws) {
      const r = await router.route(ws);
      return r.kind === 'remote' ? { kind: 'unavailable', why: `served by node ${r.node}` } : r;
    },
    relayToken,
    fromNode,
    relayHttp: (req, res) => relayHttp({ router, nodeId, log, relayToken, fromNode }, req, res),
    async listening(url) {
      // A node starting beside Redis waits for it a little; without it the node still starts, not ready.
      await redisReady(redis, REDIS_START_WAIT_MS).catch((e) => log.warn('Redis not reachable at start; retrying in the background', { err: (e as Error).message }));
      await nodes.start(url).catch((e) => log.warn('could not join the node directory yet (Redis unreachable?)', { err: (e as Error).message }));
      leases.start();
      ownership.start(config.leaseMs);
      occupancy.start();
      watch.start(Math.max(100, Math.floor(config.leaseMs / 2)));
      log.info('serving as one of several nodes', { url, redis: redactUrl(config.redisUrl), leaseMs: config.leaseMs });
    },
    async close() {
      watch.close();
      ownership.stop();
      await occupancy.close();
      roster.close();
      await leases.close();
      await nodes.close();
      redis.disconnect();
    },
  };
}

/** A Redis URL without its password, for logs. */
function redactUrl(raw: string): string {
  const u = new URL(raw);
  if (u.password) u.password = '***';
  return u.toString();
}
