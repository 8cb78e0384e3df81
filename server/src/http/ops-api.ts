/**
 * The operator's routes of one node: `GET /api/ready` (readiness for new clients: no token, like
 * `/api/health`) and `GET /metrics` (Prometheus text; loopback only, or with
 * `Authorization: Bearer <PLEXUS_METRICS_TOKEN>` when that is set). docs/api.md#operating-a-node.
 * Effects: runs the readiness checks; reads live state.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.ts';
import type { NodeMetrics } from '../ops/metrics.ts';
import type { Readiness } from '../ops/readiness.ts';
import { sendError, sendJson } from './respond.ts';

/** Where this node is in its life: only `accepting` takes new clients. */
export type NodeState = 'starting' | 'accepting' | 'draining' | 'stopping';

export interface OpsApiDeps {
  nodeId: string;
  state: () => NodeState;
  readiness: Readiness;
  metrics: NodeMetrics;
  /** `PLEXUS_METRICS_TOKEN`; null: `/metrics` answers loopback requests only. */
  metricsToken: string | null;
  log: Logger;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
/** Headers a reverse proxy adds: a request relayed by a proxy on this machine is not local. */
const PROXY_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'];

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Null when the request may read the metrics, else why not (status, code, message). */
function metricsRefusal(deps: OpsApiDeps, req: IncomingMessage): [number, string, string] | null {
  if (deps.metricsToken !== null) {
    const h = req.headers.authorization;
    if (h?.startsWith('Bearer ') && sameSecret(h.slice(7).trim(), deps.metricsToken)) return null;
    return [401, 'unauthorized', '/metrics needs Authorization: Bearer <PLEXUS_METRICS_TOKEN>'];
  }
  const local = LOOPBACK.test(req.socket.remoteAddress ?? '') && !PROXY_HEADERS.some((h) => req.headers[h] !== undefined);
  if (local) return null;
  return [403, 'metrics-local-only', '/metrics answers requests from this machine only; set PLEXUS_METRICS_TOKEN to scrape it from elsewhere'];
}

/** Handles `/api/ready` and `/metrics`; returns false for any other path. */
export async function handleOps(deps: OpsApiDeps, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/api/ready' && path !== '/metrics') return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendError(res, 405, 'method-not-allowed', `${path} answers GET`);
    return true;
  }
  if (path === '/metrics') {
    const refused = metricsRefusal(deps, req);
    if (refused) {
      if (refused[0] === 401) res.setHeader('www-authenticate', 'Bearer');
      sendError(res, ...refused);
      return true;
    }
    const body = await deps.metrics.render();
    res.writeHead(200, { 'content-type': deps.metrics.contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  }
  const state = deps.state();
  if (state !== 'accepting') {
    // Draining or stopping: a load balancer stops sending new clients here; the checks are moot.
    sendJson(res, 503, { ready: false, node: deps.nodeId, draining: state === 'draining', reason: state, checks: {} });
    return true;
  }
  const report = await deps.readiness.run();
  if (report.ready !== lastReady.get(deps.readiness)) {
    lastReady.set(deps.readiness, report.ready);
    if (report.ready) deps.log.info('ready', { checks: report.checks });
    else deps.log.warn('not ready: a readiness check failed', { failed: report.failed, checks: report.checks });
  }
  sendJson(res, report.ready ? 200 : 503, {
    ready: report.ready, node: deps.nodeId, draining: false,
    ...(report.ready ? {} : { reason: 'check-failed', failed: report.failed }),
    checks: report.checks,
  });
  return true;
}

/** The last answer of each node's checks: changes are logged, not every probe. */
const lastReady = new WeakMap<Readiness, boolean>();
