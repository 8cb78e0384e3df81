/**
 * What an operator sets to run this process as one node among others: its id (in every log line,
 * `/api/health`, `/api/ready` and every metric), how long a SIGTERM drain may wait, and the token
 * that guards `/metrics`. Read from the environment, like config.ts. Effects: none (reads env).
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';

export interface OpsConfig {
  /** `PLEXUS_NODE_ID`, or `<hostname>-<pid>` (a short random id when the hostname is unusable). */
  nodeId: string;
  /** `PLEXUS_DRAIN_MS`: the longest a drain waits for in-flight HTTP requests before it stops anyway. */
  drainMs: number;
  /** `PLEXUS_METRICS_TOKEN`: when set, `/metrics` needs `Authorization: Bearer <token>`; else it answers loopback only. */
  metricsToken: string | null;
}

const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;

/** `<hostname>-<pid>`: unique among the processes of one machine and among pods (a pod's hostname is its name). */
export function defaultNodeId(): string {
  const host = os.hostname().split('.')[0] ?? '';
  const id = `${host}-${process.pid}`;
  return NODE_ID.test(id) ? id : `node-${randomBytes(4).toString('hex')}`;
}

/** Reads the node's options from `env`; throws a clear error on a bad value. */
export function loadOpsConfig(env: NodeJS.ProcessEnv = process.env): OpsConfig {
  const nodeId = env.PLEXUS_NODE_ID?.trim() || defaultNodeId();
  if (!NODE_ID.test(nodeId)) throw new Error(`PLEXUS_NODE_ID must be 1-100 letters, digits, '.', '_', ':' or '-' (starting with a letter or digit), got "${nodeId}"`);
  const rawDrain = env.PLEXUS_DRAIN_MS;
  const drainMs = rawDrain === undefined || rawDrain === '' ? 10_000 : Number(rawDrain);
  if (!Number.isFinite(drainMs) || drainMs < 0) throw new Error(`PLEXUS_DRAIN_MS must be a non-negative number of milliseconds, got "${rawDrain}"`);
  const metricsToken = env.PLEXUS_METRICS_TOKEN || null;
  if (metricsToken !== null && metricsToken.length < 16) throw new Error('PLEXUS_METRICS_TOKEN must be at least 16 characters (it guards /metrics)');
  return { nodeId, drainMs, metricsToken };
}
