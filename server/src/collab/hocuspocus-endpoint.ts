/**
 * The Hocuspocus endpoint (`/collab`): every frame is validated before Hocuspocus sees it (a
 * malformed one closes the socket with a clear code), and awareness is checked and stamped with
 * the identity of the token each document was authenticated with (awareness-guard.ts).
 * Effects: network.
 */
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Hocuspocus } from '@hocuspocus/server';
import type { WebSocket } from 'ws';
import { CloseCodes, type TokenClaims } from '@plexus/shared';
import type { TokenSigner } from '../auth/tokens.ts';
import { isNodeKernelClaims } from '../auth/agent-token.ts';
import type { Logger } from '../log.ts';
import { type AwarenessGuard, encodeAwarenessEntries, reframeAwareness } from './awareness-guard.ts';
import { ProtocolError, rememberSocket } from './errors.ts';
import { validateHocuspocusFrame } from './validate.ts';
import { CollabRouting, type RelayDeps } from '../cluster/socket-relay.ts';
import { RELAY_HEADER, type Route } from '../cluster/router.ts';

export interface HocuspocusEndpointDeps {
  hocuspocus: Hocuspocus;
  signer: TokenSigner;
  guard: AwarenessGuard;
  log: Logger;
  /** Several nodes: documents served by another node are relayed there (cluster/socket-relay.ts). */
  cluster?: CollabCluster | null;
}

export interface CollabCluster {
  relay: RelayDeps;
  /** Route for clients. */
  route(ws: string): Promise<Route>;
  /** Route for a socket another node relayed, or the kernel's: served here or not at all (never relayed on). */
  localOnly(ws: string): Promise<Route>;
  /** True when a relay header was signed by a node of this cluster (anyone else's is ignored). */
  fromNode(header: string | string[] | undefined): boolean;
}

/** What Hocuspocus closes a silent connection with (@hocuspocus/common ConnectionTimeout). */
const CONNECTION_TIMEOUT = { code: 4408, reason: 'Connection Timeout' };

type Frame = ReturnType<typeof validateHocuspocusFrame>;

function toRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
    else if (v !== undefined) headers.set(k, v);
  }
  const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { headers });
  // Hocuspocus reads the query parameters from `url` on every message (three times per update,
  // `getParameters`): an absolute URL is parsed with `new URL` through undici's getters each time,
  // a path with its query only split and read with URLSearchParams — the same parameters.
  // (A query holding `://` keeps the absolute URL: Hocuspocus would parse the path as one.) Its
  // headers likewise, read per message: the same headers, without undici's getter.
  const url = req.url ?? '/';
  if (!url.includes('://')) Object.defineProperty(request, 'url', { value: url, enumerable: true });
  Object.defineProperty(request, 'headers', { value: headers, enumerable: true });
  return request;
}

/** Serves one upgraded `/collab` socket. */
export function serveHocuspocus({ hocuspocus, signer, guard, log, cluster }: HocuspocusEndpointDeps, ws: WebSocket, req: IncomingMessage): void {
  const request = toRequest(req);
  rememberSocket(request.headers, ws); // storage refusals close it (errors.ts closeIfTransient)
  // This node's Hocuspocus connection. With several nodes it is made at the first frame served
  // here: a socket that only relays to other nodes must not have one (Hocuspocus closes a
  // connection that receives nothing for its timeout, 30 s, with 4408 — under a relayed client).
  type Conn = ReturnType<Hocuspocus['handleConnection']>;
  let conn: Conn | null = null;
  const local = (): Conn => (conn ??= hocuspocus.handleConnection(ws as unknown as import('@hocuspocus/server').WebSocketLike, request));
  if (!cluster) local();
  // Without a connection yet, a socket that never sends anything is cut as Hocuspocus would.
  let silent: NodeJS.Timeout | null = cluster ? setTimeout(() => ws.close(CONNECTION_TIMEOUT.code, CONNECTION_TIMEOUT.reason), hocuspocus.configuration.timeout) : null;
  silent?.unref();
  // Identity per socket for the awareness checks: one owner key, and the claims of the token each
  // document was authenticated with (role checked, sub and name stamped; Hocuspocus itself
  // refuses bad tokens).
  const ownerKey = `hp:${randomUUID()}`;
  const roles = new Map<string, TokenClaims>();
  const refuse = (e: unknown) => {
    const err = e as ProtocolError;
    log.warn('frame refused; connection closed', { code: err.code, reason: err.reason, detail: err.message, protocol: 'hocuspocus' });
    ws.close(err.code, err.reason);
  };
  // This node's side of a frame: identity per document, awareness checked and stamped, then Hocuspocus.
  const deliver = (frame: Uint8Array, f: Frame) => {
    if (ws.readyState !== ws.OPEN) return;
    try {
      if (f.token !== undefined) {
        try {
          roles.set(f.documentName, signer.verify(f.token));
        } catch {
          roles.delete(f.documentName);
        }
      }
      if (f.awareness) {
        const claims = roles.get(f.documentName);
        // Not (or not validly) authenticated for this document: Hocuspocus would queue the frame
        // and apply it unchecked after authentication, or refuse the document; drop it instead.
        if (!claims) return;
        const live = hocuspocus.documents.get(f.documentName);
        const who = { ownerKey, role: claims.role, sub: claims.sub, ...(claims.name !== undefined ? { name: claims.name } : {}) };
        const checked = guard.check(f.documentName, who, f.awareness, (id) => live?.awareness.meta.get(id)?.clock);
        // Identity stamped from the token: Hocuspocus applies and relays the stamped states.
        if (checked.stamped) frame = reframeAwareness(frame, encodeAwarenessEntries(checked.entries));
      }
    } catch (e) {
      return refuse(e);
    }
    local().handleMessage(frame);
  };
  // Several nodes: each document's frames go to the node serving it. A socket relayed by another
  // node, and the kernel's, are served here or not at all.
  const relayed = !!cluster?.fromNode(req.headers[RELAY_HEADER]);
  const localOnly = new Set<string>();
  const routing = cluster
    ? new CollabRouting<Frame>(ws, cluster.relay, deliver, (doc) => (relayed || localOnly.has(doc) ? cluster.localOnly(doc) : cluster.route(doc)))
    : null;
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    // Closing (refused, or the node stops): nothing more is applied or acknowledged; the client
    // still holds what it sent and sends it again when it reconnects.
    if (ws.readyState !== ws.OPEN) return;
    if (silent) clearTimeout(silent);
    silent = null;
    const frame = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    let f: Frame;
    try {
      if (!isBinary) throw new ProtocolError(CloseCodes.MalformedMessage, 'text frames are not part of the protocol');
      f = validateHocuspocusFrame(frame);
    } catch (e) {
      return refuse(e);
    }
    if (!routing) return deliver(frame, f);
    if (f.token !== undefined && !localOnly.has(f.documentName)) {
      try {
        // A kernel this node started serves this node's copy only: its socket is never relayed.
        if (isNodeKernelClaims(signer.verify(f.token))) localOnly.add(f.documentName);
      } catch {
        // an invalid token: the serving node refuses it
      }
    }
    routing.frame(f.documentName, frame, f);
  });
  ws.on('close', (code: number, reason: Buffer) => {
    routing?.closed();
    if (silent) clearTimeout(silent);
    for (const doc of roles.keys()) guard.release(doc, ownerKey);
    conn?.handleClose({ code, reason: reason.toString() });
  });
  ws.on('error', (e) => log.warn('websocket error', { err: e }));
}
