/**
 * WebSocket upgrades on the one port: `/collab` (Hocuspocus) and `/yjs/<workspace>` (plain
 * y-websocket, authorised here from the query string; refusals are accepted and closed with a
 * clear code so clients see the reason). A draining node accepts and closes every new socket with
 * 1012 `server-draining` (clients reconnect, through the load balancer to another node). Anything
 * else, or a server not started yet or stopping, gets an HTTP error.
 * Effects: network.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import { CloseCodes, HOCUSPOCUS_PATH, YWS_PATH_PREFIX } from '@plexus/shared';
import type { TokenSigner } from '../auth/tokens.ts';
import type { Logger } from '../log.ts';
import type { WorkspaceStorage } from '../store/storage.ts';
import { authorize } from '../collab/access.ts';
import type { ProtocolError } from '../collab/errors.ts';
import { serveHocuspocus, type HocuspocusEndpointDeps } from '../collab/hocuspocus-endpoint.ts';
import type { YwsBridge } from '../collab/yws-bridge.ts';
import type { PlexusSocket } from '../collab/socket.ts';
import { pipeSockets } from '../cluster/socket-relay.ts';
import { RELAY_HEADER, relayTarget } from '../cluster/router.ts';

export interface UpgradeDeps extends HocuspocusEndpointDeps {
  wss: WebSocketServer;
  store: WorkspaceStorage;
  bridge: YwsBridge;
  isReady: () => boolean;
  /** True while the node drains: new sockets are closed at once with `ServerDraining`. */
  isDraining: () => boolean;
  signer: TokenSigner;
  log: Logger;
}

function refuseUpgrade(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** The server's 'upgrade' listener. */
export function upgradeHandler(deps: UpgradeDeps): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const { wss, signer, store, bridge, log } = deps;
  return (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (!deps.isReady()) return refuseUpgrade(socket, 503, 'Service Unavailable');
    const hp = url.pathname === HOCUSPOCUS_PATH || url.pathname === HOCUSPOCUS_PATH + '/';
    if (deps.isDraining() && (hp || url.pathname.startsWith(YWS_PATH_PREFIX))) {
      wss.handleUpgrade(req, socket, head, (ws) => ws.close(CloseCodes.ServerDraining.code, CloseCodes.ServerDraining.reason));
      return;
    }
    if (hp) {
      wss.handleUpgrade(req, socket, head, (ws) => {
        (ws as PlexusSocket).endpoint = 'collab';
        serveHocuspocus(deps, ws, req);
      });
      return;
    }
    if (url.pathname.startsWith(YWS_PATH_PREFIX)) {
      let id: string;
      try {
        id = decodeURIComponent(url.pathname.slice(YWS_PATH_PREFIX.length));
      } catch {
        return refuseUpgrade(socket, 400, 'Bad Request'); // a malformed escape in the workspace id
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        (ws as PlexusSocket).endpoint = 'yjs';
        // Accept, then close with a clear code: clients see the reason, not a bare HTTP error.
        // What the peer sends while its token is checked (storage may be asked) is kept for it.
        const early: Buffer[] = [];
        const hold = (d: Buffer) => early.push(d);
        ws.on('message', hold);
        ws.on('error', () => {}); // a peer gone meanwhile: its close event ends it (serve listens to both)
        // Several nodes: a workspace served by another node is relayed there whole (one document per socket).
        const cluster = deps.cluster;
        if (cluster && !cluster.fromNode(req.headers[RELAY_HEADER])) {
          void cluster.route(id).then(
            (route) => {
              if (route.kind === 'local') return serveHere();
              ws.off('message', hold);
              const target = route.kind === 'remote' ? relayTarget(route.url, req.url) : null;
              if (!target) return ws.close(CloseCodes.WorkspaceMoved.code, CloseCodes.WorkspaceMoved.reason);
              pipeSockets(ws, early, target, id, cluster.relay);
            },
            (e) => {
              log.error('routing a y-websocket peer failed', { ws: id, err: e });
              ws.close(CloseCodes.WorkspaceMoved.code, CloseCodes.WorkspaceMoved.reason);
            },
          );
          return;
        }
        serveHere();
        function serveHere() {
        authorize(signer, store, url.searchParams.get('token'), id, url.searchParams.get('epoch')).then(
          (claims) => {
            // A kernel process's lease token is fenced on the Hocuspocus endpoint only.
            if (claims.runner !== undefined) {
              ws.close(CloseCodes.Forbidden.code, CloseCodes.Forbidden.reason);
              return;
            }
            ws.off('message', hold);
            log.info('connection authorized', { ws: id, role: claims.role, sub: claims.sub, protocol: 'y-websocket' });
            bridge.serve(ws, id, claims, early).catch((e) => {
              log.error('y-websocket peer failed', { ws: id, err: e });
              ws.close(CloseCodes.LoadFailed.code, CloseCodes.LoadFailed.reason);
            });
          },
          (e) => {
            ws.off('message', hold);
            const err = e as ProtocolError;
            log.warn('connection refused', { ws: id, reason: err.reason, detail: err.message, protocol: 'y-websocket' });
            ws.close(err.code, err.reason);
          },
        );
        }
      });
      return;
    }
    refuseUpgrade(socket, 404, 'Not Found');
  };
}
