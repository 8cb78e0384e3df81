/**
 * HTTP requests about one workspace (`/api/workspaces/<id>/…`, the agent's lease of it, a kernel process's calls for it) are served
 * by the node that serves the workspace — its loaded document, kernel and tables live there — so
 * another node forwards them (streaming both bodies) and every route works on every node.
 * A request that reaches a node already relayed is never relayed again.
 * Effects: network.
 */
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { pipeline } from 'node:stream';
import type { Logger } from '../log.ts';
import { sendError } from '../http/respond.ts';
import { RELAY_HEADER, relayTarget, type WorkspaceRouter } from './router.ts';

/** Longest a relayed request waits for the serving node (socket inactivity, as Node measures it). */
const RELAY_TIMEOUT_MS = 60_000;

/** The workspace a request path is about, when it must be served by that workspace's node. */
export function workspaceOfPath(pathname: string): string | null {
  const parts = pathname.split('/').filter(Boolean);
  if (parts[0] !== 'api') return null;
  if (parts[1] === 'workspaces' && parts.length >= 3) return decodeURIComponent(parts[2]!);
  if (parts[1] === 'agent' && parts[2] === 'workspaces' && parts.length >= 4) return decodeURIComponent(parts[3]!);
  // A kernel process's calls need the workspace's node (its jobs, its document); its leases are in Redis.
  if (parts[1] === 'kernel' && parts[2] === 'workspaces' && parts[4] === 'calls') return decodeURIComponent(parts[3]!);
  // (decodeURIComponent throws on a malformed escape: the caller treats that as no workspace)
  return null;
}

/** Hop-by-hop headers (RFC 9110 §7.6.1) are not forwarded. */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

export interface HttpRelayDeps {
  router: Pick<WorkspaceRouter, 'route'>;
  nodeId: string;
  log: Logger;
  /** The value of the relay header: proof, signed with the shared secret, that a node sent it. */
  relayToken: () => string;
  /** True when a request's relay header was signed by a node of this cluster. */
  fromNode: (header: string | string[] | undefined) => boolean;
}

/**
 * Forwards the request when its workspace is served by another node; resolves to true when it did
 * (or answered 503 because nobody serves it right now), false when this node should answer.
 */
export async function relayHttp(deps: HttpRelayDeps, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  if (deps.fromNode(req.headers[RELAY_HEADER])) return false;
  let ws: string | null;
  try {
    ws = workspaceOfPath(new URL(req.url ?? '/', 'http://x').pathname);
  } catch {
    return false; // a malformed path: the API answers it (404/400), here or anywhere
  }
  if (!ws) return false;
  const route = await deps.router.route(ws);
  if (route.kind === 'local') return false;
  if (route.kind === 'unavailable') {
    res.setHeader('Retry-After', '1');
    sendError(res, 503, 'workspace-moving', `the workspace is moving to another node; try again in a moment (${route.why})`);
    return true;
  }
  const target = relayTarget(route.url, req.url);
  if (!target) {
    sendError(res, 400, 'bad-request', 'the request target must be a path');
    return true;
  }
  const headers: Record<string, string | string[]> = {};
  const named = String(req.headers.connection ?? '').toLowerCase().split(',').map((h) => h.trim());
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k) && !named.includes(k)) headers[k] = v;
  headers[RELAY_HEADER] = deps.relayToken();
  await new Promise<void>((resolve) => {
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const up = send(target, { method: req.method, headers, timeout: RELAY_TIMEOUT_MS }, (answer) => {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
      res.writeHead(answer.statusCode ?? 502, out);
      // Either side going away ends both (a client that aborts must not leave the upstream paused).
      pipeline(answer, res, () => resolve());
    });
    up.on('timeout', () => up.destroy(new Error(`no answer within ${RELAY_TIMEOUT_MS} ms`)));
    up.on('error', (e) => {
      deps.log.warn('relaying a request to the workspace\'s node failed', { ws, node: route.node, err: e.message });
      if (!res.headersSent) {
        res.setHeader('Retry-After', '1');
        sendError(res, 503, 'workspace-moving', 'the node serving this workspace did not answer; try again in a moment');
      } else res.destroy();
      resolve();
    });
    res.on('close', () => up.destroy());
    pipeline(req, up, () => {});
  });
  return true;
}
