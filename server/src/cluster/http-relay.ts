/**
 * HTTP requests about one workspace (`/api/workspaces/<id>/…`, the agent's lease of it) are served
 * by the node that serves the workspace — its loaded document, kernel and tables live there — so
 * another node forwards them (streaming both bodies) and every route works on every node.
 * A request that reaches a node already relayed is never relayed again.
 * Effects: network.
 */
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from '../log.ts';
import { sendError } from '../http/respond.ts';
import { RELAY_HEADER, type WorkspaceRouter } from './router.ts';

/** The workspace a request path is about, when it must be served by that workspace's node. */
export function workspaceOfPath(pathname: string): string | null {
  const parts = pathname.split('/').filter(Boolean);
  if (parts[0] !== 'api') return null;
  if (parts[1] === 'workspaces' && parts.length >= 3) return decodeURIComponent(parts[2]!);
  if (parts[1] === 'agent' && parts[2] === 'workspaces' && parts.length >= 4) return decodeURIComponent(parts[3]!);
  return null;
}

/** Hop-by-hop headers (RFC 9110 §7.6.1) are not forwarded. */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

export interface HttpRelayDeps {
  router: Pick<WorkspaceRouter, 'route'>;
  nodeId: string;
  log: Logger;
}

/**
 * Forwards the request when its workspace is served by another node; resolves to true when it did
 * (or answered 503 because nobody serves it right now), false when this node should answer.
 */
export async function relayHttp(deps: HttpRelayDeps, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  if (req.headers[RELAY_HEADER]) return false;
  const url = new URL(req.url ?? '/', 'http://x');
  const ws = workspaceOfPath(url.pathname);
  if (!ws) return false;
  const route = await deps.router.route(ws);
  if (route.kind === 'local') return false;
  if (route.kind === 'unavailable') {
    res.setHeader('Retry-After', '1');
    sendError(res, 503, 'workspace-moving', `the workspace is moving to another node; try again in a moment (${route.why})`);
    return true;
  }
  const target = new URL(req.url ?? '/', route.url);
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
  headers[RELAY_HEADER] = deps.nodeId;
  await new Promise<void>((resolve) => {
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const up = send(target, { method: req.method, headers }, (answer) => {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
      answer.on('end', resolve);
      answer.on('error', () => {
        res.destroy();
        resolve();
      });
    });
    up.on('error', (e) => {
      deps.log.warn('relaying a request to the workspace\'s node failed', { ws, node: route.node, err: e.message });
      if (!res.headersSent) {
        res.setHeader('Retry-After', '1');
        sendError(res, 503, 'workspace-moving', 'the node serving this workspace did not answer; try again in a moment');
      } else res.destroy();
      resolve();
    });
    req.pipe(up);
  });
  return true;
}
