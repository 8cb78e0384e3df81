/**
 * Relaying WebSocket traffic to the node that serves a workspace (router.ts), so clients may
 * connect to any node behind an ordinary load balancer (no sticky sessions).
 *
 * - `CollabRouting` sits in each `/collab` socket: Hocuspocus multiplexes documents over one
 *   socket, so frames are routed per document (its name leads every frame). A document served
 *   here goes to the local Hocuspocus connection; one served elsewhere goes, frame for frame and
 *   in order, over one upstream socket per node, whose frames come straight back to the client.
 *   The serving node checks tokens, rights, awareness and the schema as for any client.
 * - `pipeSockets` relays a whole `/yjs/<workspace>` socket (one document per socket).
 *
 * While a workspace's node is gone but its lease has not expired yet, its frames wait here and
 * the route is asked again until the lease moves (at most `waitMs`). Anything else that breaks a
 * relay — the upstream closes, cannot connect, or the route keeps failing — closes the client's
 * socket with 1012 workspace-moved (or the upstream's own 4xxx code): stock clients reconnect,
 * are routed afresh and resend whatever was not acknowledged, so nothing is lost.
 * Effects: network.
 */
import { WebSocket } from 'ws';
import { CloseCodes } from '@plexus/shared';
import type { Logger } from '../log.ts';
import { RELAY_HEADER, type Route, type WorkspaceRouter } from './router.ts';

/** A relay the watch can ask which documents it sends where, and end when one moved. */
export interface WatchedRelay {
  remoteDocs(): Array<{ doc: string; url: string }>;
  moved(): void;
}

/**
 * Relays are checked every `intervalMs`: a relayed workspace whose lease moved, or expired (its
 * node paused or cut off, so its socket may never close by itself), ends the relay with 1012
 * workspace-moved; the client reconnects and is routed afresh.
 */
export class RelayWatch {
  private readonly relays = new Set<WatchedRelay>();
  private timer: NodeJS.Timeout | null = null;
  /** Relays ended because their workspace moved (metrics, tests). */
  moved = 0;

  constructor(private readonly router: Pick<WorkspaceRouter, 'route'>) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.check(), intervalMs);
    this.timer.unref();
  }

  add(r: WatchedRelay): void {
    this.relays.add(r);
  }

  delete(r: WatchedRelay): void {
    this.relays.delete(r);
  }

  /** One round: each relayed document's route asked once. */
  async check(): Promise<void> {
    const routes = new Map<string, Promise<Route>>();
    const ask = (doc: string) => {
      let r = routes.get(doc);
      if (!r) routes.set(doc, (r = this.router.route(doc)));
      return r;
    };
    await Promise.all(
      [...this.relays].map(async (relay) => {
        for (const { doc, url } of relay.remoteDocs()) {
          const now = await ask(doc);
          // Unavailable (Redis unreachable, or the holder gone): kept until the route says where it went.
          if (now.kind === 'local' || (now.kind === 'remote' && new URL(now.url).origin !== url)) {
            this.moved++;
            relay.moved();
            return;
          }
        }
      }),
    );
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

export interface RelayDeps {
  router: Pick<WorkspaceRouter, 'route'>;
  /** The relay header's value (signed: the receiving node knows a node sent it). */
  relayToken: () => string;
  log: Logger;
  /** Longest the frames of a workspace wait for its route to settle (its lease time plus a margin). */
  waitMs: number;
  /** Delay between two asks while waiting. */
  retryMs?: number;
  /** Counts relayed frames (metrics). */
  onRelayed?: (direction: 'up' | 'down') => void;
  /** Ends relays whose workspace moved. */
  watch?: RelayWatch;
  /** How often a relaying node pings its client (and cuts it when the last ping went unanswered). */
  pingMs?: number;
}

type DocState<M> = { kind: 'pending'; queue: Array<[Uint8Array, M]> } | { kind: 'local' } | { kind: 'remote'; up: Upstream; url: string };

/** A code a server may send in a close frame (1005/1006/1015 may not be sent). */
function sendableClose(code: number, reason: string): { code: number; reason: string } {
  if (code >= 4000 && code <= 4999) return { code, reason };
  return CloseCodes.WorkspaceMoved;
}

/** One socket to another node, carrying every relayed document of one client socket served there. */
class Upstream {
  readonly ws: WebSocket;
  private readonly queue: Uint8Array[] = [];

  /** `target`: the URL on the serving node (built by `relayTarget`: never chosen by the client). */
  constructor(target: URL, relayToken: string, onMessage: (d: Buffer) => void, onEnd: (code: number, reason: string) => void) {
    const url = new URL(target);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    this.ws = new WebSocket(url, { headers: { [RELAY_HEADER]: relayToken }, perMessageDeflate: false, maxPayload: 0 });
    this.ws.binaryType = 'nodebuffer';
    this.ws.on('open', () => {
      for (const f of this.queue.splice(0)) this.ws.send(f);
    });
    this.ws.on('message', (d: Buffer) => onMessage(d));
    this.ws.on('close', (code: number, reason: Buffer) => onEnd(code, reason.toString()));
    this.ws.on('error', () => {}); // its close event follows and ends the relay
  }

  send(frame: Uint8Array): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(frame);
    else if (this.ws.readyState === WebSocket.CONNECTING) this.queue.push(frame);
  }

  close(): void {
    if (this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
    else this.ws.close();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `M`: what the local side needs beside the frame (the endpoint's parsed frame). */
export class CollabRouting<M> implements WatchedRelay {
  private readonly docs = new Map<string, DocState<M>>();
  private readonly upstreams = new Map<string, Upstream>();
  private ended = false;
  private watched = false;
  private stopPinging: (() => void) | null = null;

  remoteDocs(): Array<{ doc: string; url: string }> {
    const out: Array<{ doc: string; url: string }> = [];
    for (const [doc, st] of this.docs) if (st.kind === 'remote') out.push({ doc, url: new URL(st.url).origin });
    return out;
  }

  moved(): void {
    this.end(CloseCodes.WorkspaceMoved);
  }

  constructor(
    private readonly client: WebSocket,
    private readonly deps: RelayDeps,
    /** Hands a frame to this node's Hocuspocus connection. */
    private readonly local: (frame: Uint8Array, meta: M) => void,
    /** Decides the route of a document (a relayed socket or the kernel's must be served here or not at all). */
    private readonly decide: (documentName: string) => Promise<Route>,
  ) {}

  /** Routes one validated frame of `documentName`. */
  frame(documentName: string, frame: Uint8Array, meta: M): void {
    if (this.ended) return;
    const state = this.docs.get(documentName);
    if (!state) {
      this.docs.set(documentName, { kind: 'pending', queue: [[frame, meta]] });
      void this.settle(documentName);
    } else if (state.kind === 'pending') state.queue.push([frame, meta]);
    else if (state.kind === 'local') this.local(frame, meta);
    else {
      state.up.send(frame);
      this.deps.onRelayed?.('up');
    }
  }

  private async settle(documentName: string): Promise<void> {
    const until = Date.now() + this.deps.waitMs;
    let route = await this.decide(documentName);
    while (route.kind === 'unavailable' && Date.now() < until && !this.ended) {
      await sleep(this.deps.retryMs ?? 250);
      route = await this.decide(documentName);
    }
    const state = this.docs.get(documentName);
    if (this.ended || !state || state.kind !== 'pending') return;
    if (route.kind === 'unavailable') {
      this.deps.log.warn('workspace has no node to serve it yet; client told to reconnect', { ws: documentName, why: route.why });
      return this.end(CloseCodes.WorkspaceMoved);
    }
    if (route.kind === 'local') {
      this.docs.set(documentName, { kind: 'local' });
      for (const [f, m] of state.queue) this.local(f, m);
      return;
    }
    const up = this.upstream(route.url);
    this.docs.set(documentName, { kind: 'remote', up, url: route.url });
    if (!this.watched) {
      this.watched = true;
      this.deps.watch?.add(this);
      this.keepAlive();
    }
    for (const [f] of state.queue) {
      up.send(f);
      this.deps.onRelayed?.('up');
    }
  }

  /**
   * A socket that only relays has no Hocuspocus connection here to ping its client, and the
   * serving node's pings are answered by this node: ping the client from here, and cut it when a
   * ping goes unanswered (a client gone without closing), as Hocuspocus does for its own.
   */
  private keepAlive(): void {
    if (this.stopPinging) return;
    this.stopPinging = pingClient(this.client, this.deps.pingMs);
  }

  private upstream(url: string): Upstream {
    let up = this.upstreams.get(url);
    if (up) return up;
    up = new Upstream(
      new URL('/collab', url),
      this.deps.relayToken(),
      (d) => {
        if (this.client.readyState !== WebSocket.OPEN) return;
        this.client.send(d);
        this.deps.onRelayed?.('down');
      },
      (code, reason) => {
        this.upstreams.delete(url);
        if (!this.ended) this.end(sendableClose(code, reason));
      },
    );
    this.upstreams.set(url, up);
    return up;
  }

  private end(close: { code: number; reason: string }): void {
    if (this.ended) return;
    this.ended = true;
    this.client.close(close.code, close.reason);
    this.closed();
  }

  /** The client's socket closed: its upstreams go too. */
  closed(): void {
    this.ended = true;
    this.stopPinging?.();
    this.deps.watch?.delete(this);
    for (const up of this.upstreams.values()) up.close();
    this.upstreams.clear();
  }
}

/**
 * Relays a whole socket to `url` + `path` (`/yjs/<workspace>?token=…`): frames both ways, the
 * client's early frames included, closes both ways.
 */
export function pipeSockets(client: WebSocket, early: Buffer[], target: URL, doc: string, deps: Pick<RelayDeps, 'relayToken' | 'onRelayed' | 'watch' | 'pingMs'>): void {
  // The client may have gone while its route was looked up: nothing to relay then.
  if (client.readyState !== WebSocket.OPEN) return;
  let clientGone = false;
  const watched: WatchedRelay = {
    remoteDocs: () => [{ doc, url: target.origin }],
    moved: () => client.close(CloseCodes.WorkspaceMoved.code, CloseCodes.WorkspaceMoved.reason),
  };
  deps.watch?.add(watched);
  const up = new Upstream(
    target,
    deps.relayToken(),
    (d) => {
      if (client.readyState === WebSocket.OPEN) client.send(d);
      deps.onRelayed?.('down');
    },
    (code, reason) => {
      if (!clientGone) {
        const c = sendableClose(code, reason);
        client.close(c.code, c.reason);
      }
    },
  );
  for (const f of early) up.send(f);
  const stopPinging = pingClient(client, deps.pingMs);
  client.on('message', (d: Buffer) => {
    up.send(d);
    deps.onRelayed?.('up');
  });
  client.on('close', () => {
    clientGone = true;
    stopPinging();
    deps.watch?.delete(watched);
    up.close();
  });
  client.on('error', () => {});
}

/**
 * Pings a client this node only relays (the serving node's pings are answered by this node) and
 * cuts it when a ping goes unanswered: a client gone without closing. Returns the stop function.
 */
function pingClient(client: WebSocket, everyMs: number | undefined): () => void {
  if (!everyMs) return () => {};
  let alive = true;
  client.on('pong', () => (alive = true));
  const timer = setInterval(() => {
    if (!alive) return void client.terminate();
    alive = false;
    client.ping();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
