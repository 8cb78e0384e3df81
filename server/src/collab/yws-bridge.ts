/**
 * The plain y-websocket protocol (`WebsocketProvider` of y-websocket, pycrdt-websocket,
 * ypy-websocket) on `/yjs/<workspace>?token=…`, bridged onto the same live documents Hocuspocus
 * serves. Each peer is a Hocuspocus direct connection (so documents stay loaded while it is
 * connected); its updates go through the same validation, write-ahead log and role checks, and
 * every document change reaches it whatever protocol it came from.
 * Effects: network I/O, document mutation.
 */
import { randomUUID } from 'node:crypto';
import type { Document, Hocuspocus } from '@hocuspocus/server';
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import type WebSocket from 'ws';
import * as Y from 'yjs';
import { applyAwarenessUpdate, encodeAwarenessUpdate, removeAwarenessStates } from 'y-protocols/awareness';
import { CloseCodes, canWrite, writerOfToken, type TokenClaims } from '@plexus/shared';
import { isGlobalServiceClaims } from '../auth/agent-token.ts';
import type { Logger } from '../log.ts';
import { encodeAwarenessEntries, type AwarenessGuard } from './awareness-guard.ts';
import { ProtocolError } from './errors.ts';
import type { DurablePersistence, YwsOrigin } from './persistence.ts';
import { documentHasUpdate } from './update-known.ts';
import { decodeAwarenessUpdate, readSyncPayload, SYNC } from './validate.ts';

const MSG = { Sync: 0, Awareness: 1, Auth: 2, QueryAwareness: 3 } as const;

function syncMessage(kind: number, payload: Uint8Array): Uint8Array {
  const e = encoding.createEncoder();
  encoding.writeVarUint(e, MSG.Sync);
  encoding.writeVarUint(e, kind);
  encoding.writeVarUint8Array(e, payload);
  return encoding.toUint8Array(e);
}

function awarenessMessage(update: Uint8Array): Uint8Array {
  const e = encoding.createEncoder();
  encoding.writeVarUint(e, MSG.Awareness);
  encoding.writeVarUint8Array(e, update);
  return encoding.toUint8Array(e);
}

export class YwsBridge {
  private readonly peers = new Map<string, Set<WebSocket>>();
  /** Peers authenticated with a service token (the kernel, the agent): not people. */
  private readonly services = new WeakSet<WebSocket>();
  /** Each peer's token claims (links revoked by a reset are closed). */
  private readonly claimsOf = new WeakMap<WebSocket, TokenClaims>();

  /** y-websocket peers of a workspace held by people (any role but service). */
  people(workspaceId: string): number {
    let n = 0;
    for (const ws of this.peers.get(workspaceId) ?? []) if (!this.services.has(ws)) n++;
    return n;
  }

  /** y-websocket peers of a workspace (people and services). */
  peerCount(workspaceId: string): number {
    return this.peers.get(workspaceId)?.size ?? 0;
  }

  /** y-websocket peers of all workspaces, by kind. */
  kinds(): { person: number; service: number } {
    let person = 0;
    let service = 0;
    for (const set of this.peers.values()) {
      for (const ws of set) {
        if (this.services.has(ws)) service++;
        else person++;
      }
    }
    return { person, service };
  }

  /** Closes the peers of a workspace whose token claims match `pred` (links revoked); returns how many. */
  closeWhere(workspaceId: string, pred: (claims: TokenClaims) => boolean, close: { code: number; reason: string }): number {
    let n = 0;
    for (const sock of this.peers.get(workspaceId) ?? []) {
      const claims = this.claimsOf.get(sock);
      if (claims && pred(claims)) {
        sock.close(close.code, close.reason);
        n++;
      }
    }
    return n;
  }

  /** Closes every y-websocket peer of a workspace (deleted, or server stopping). */
  closeAll(workspaceId: string | null, close: { code: number; reason: string }): void {
    for (const [ws, set] of this.peers) {
      if (workspaceId !== null && ws !== workspaceId) continue;
      for (const sock of set) sock.close(close.code, close.reason);
    }
  }

  constructor(
    private readonly hocuspocus: Hocuspocus,
    private readonly persistence: DurablePersistence,
    private readonly guard: AwarenessGuard,
    private readonly log: Logger,
  ) {}

  /** Serves one authorized y-websocket peer until it closes. */
  async serve(ws: WebSocket, workspaceId: string, claims: TokenClaims, early: Buffer[] = []): Promise<void> {
    const ownerKey = `yws:${randomUUID()}`;
    const origin: YwsOrigin = { source: 'yws', ownerKey, claims: { sub: claims.sub, role: claims.role, ...(claims.name !== undefined ? { name: claims.name } : {}) } };
    // The agent's and kernel processes' global tokens read only (their writes go through the lease fence).
    const writable = canWrite(claims.role) && !isGlobalServiceClaims(claims);
    const log = this.log.child({ ws: workspaceId, peer: ownerKey, role: claims.role });
    const queue: Buffer[] = [...early]; // `early`: what arrived while the peer was being authorised
    let handle: ((data: Buffer) => void) | null = null;
    let closed = false;
    ws.on('message', (data: Buffer) => (handle ? handle(data) : queue.push(data)));
    let peerSet = this.peers.get(workspaceId);
    if (!peerSet) this.peers.set(workspaceId, (peerSet = new Set()));
    peerSet.add(ws);
    this.claimsOf.set(ws, claims);
    if (claims.role === 'service') this.services.add(ws);
    const closeWith = (err: ProtocolError) => {
      log.warn('y-websocket peer closed', { code: err.code, reason: err.reason, detail: err.message });
      if (ws.readyState === ws.OPEN) ws.close(err.code, err.reason);
    };

    let direct;
    try {
      direct = await this.hocuspocus.openDirectConnection(workspaceId, { claims });
      // A document being unloaded can still be handed out while its unload finishes: make sure we
      // hold the live one, or this peer would edit a destroyed copy.
      for (let i = 0; i < 3 && this.hocuspocus.documents.get(workspaceId) !== direct.document; i++) {
        log.warn('opened a document that was being unloaded; reopening');
        await direct.disconnect();
        direct = await this.hocuspocus.openDirectConnection(workspaceId, { claims });
      }
    } catch (e) {
      closeWith(e instanceof ProtocolError ? e : new ProtocolError(CloseCodes.LoadFailed, (e as Error).message));
      return;
    }
    const doc = direct.document!;
    const send = (m: Uint8Array) => {
      if (ws.readyState === ws.OPEN) ws.send(m);
    };
    const onUpdate = (update: Uint8Array, o: unknown) => {
      if (o !== origin) send(syncMessage(SYNC.Update, update));
    };
    const onAwareness = ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }) => {
      const changed = added.concat(updated, removed);
      send(awarenessMessage(encodeAwarenessUpdate(doc.awareness, changed)));
    };
    doc.on('update', onUpdate);
    doc.awareness.on('update', onAwareness);

    const cleanup = async () => {
      if (closed) return;
      closed = true;
      clearInterval(ping);
      peerSet.delete(ws);
      if (peerSet.size === 0) this.peers.delete(workspaceId);
      doc.off('update', onUpdate);
      doc.awareness.off('update', onAwareness);
      const mine = this.guard.owned(workspaceId, ownerKey);
      if (mine.length) removeAwarenessStates(doc.awareness, mine, origin);
      this.guard.release(workspaceId, ownerKey);
      await direct.disconnect();
      log.info('y-websocket peer left');
    };
    ws.on('close', () => void cleanup());
    ws.on('error', () => void cleanup());
    let alive = true;
    ws.on('pong', () => (alive = true));
    const ping = setInterval(() => {
      if (!alive) return ws.terminate();
      alive = false;
      ws.ping();
    }, 30_000);
    ping.unref();

    // One message at a time, in order: with asynchronous storage an update waits for its
    // write-ahead append, and the peer's next messages wait behind it (as Hocuspocus does per
    // connection). With synchronous storage each message is handled as it arrives.
    const inbox: Buffer[] = [];
    let waiting = false;
    const fail = (e: unknown) => {
      inbox.length = 0;
      closeWith(e instanceof ProtocolError ? e : new ProtocolError(CloseCodes.MalformedMessage, (e as Error).message));
    };
    const run = (data: Buffer): void => {
      // Closing: nothing more is applied (the peer sends it again when it reconnects).
      if (closed || ws.readyState !== ws.OPEN) return void (inbox.length = 0);
      let pending: void | Promise<void>;
      try {
        pending = this.handleMessage(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), doc, origin, writable, claims, send);
      } catch (e) {
        return fail(e);
      }
      if (!pending) return;
      waiting = true;
      pending.then(
        () => {
          waiting = false;
          drain();
        },
        (e) => {
          waiting = false;
          fail(e);
        },
      );
    };
    const drain = () => {
      while (!waiting && inbox.length) run(inbox.shift()!);
    };
    handle = (data: Buffer) => {
      inbox.push(data);
      drain();
    };
    // Handshake as y-websocket's own server does: our state vector, then current presence.
    send(syncMessage(SYNC.Step1, Y.encodeStateVector(doc)));
    if (doc.awareness.getStates().size > 0) send(awarenessMessage(encodeAwarenessUpdate(doc.awareness, [...doc.awareness.getStates().keys()])));
    log.info('y-websocket peer joined');
    for (const m of queue.splice(0)) handle(m);
    if (ws.readyState !== ws.OPEN) await cleanup();
  }

  private handleMessage(
    msg: Uint8Array,
    doc: Document,
    origin: YwsOrigin,
    writable: boolean,
    claims: TokenClaims,
    send: (m: Uint8Array) => void,
  ): void | Promise<void> {
    const d = decoding.createDecoder(msg);
    let type: number;
    try {
      type = decoding.readVarUint(d);
    } catch {
      throw new ProtocolError(CloseCodes.MalformedMessage, 'empty message');
    }
    switch (type) {
      case MSG.Sync: {
        let p;
        try {
          p = readSyncPayload(d);
        } catch (e) {
          if (e instanceof ProtocolError) throw e;
          throw new ProtocolError(CloseCodes.MalformedMessage, (e as Error).message);
        }
        if (p.kind === 'step1') {
          send(syncMessage(SYNC.Step2, Y.encodeStateAsUpdate(doc, p.stateVector)));
          return;
        }
        if (!writable) {
          if (documentHasUpdate(doc, p.update)) return;
          throw new ProtocolError(CloseCodes.ReadOnly, 'viewer connections cannot change the document');
        }
        const writer = writerOfToken(claims);
        if (!writer) throw new ProtocolError(CloseCodes.ReadOnly, 'this connection cannot change the document');
        const appended = this.persistence.appendIncoming(doc.name, p.update, writer);
        if (!appended) return void Y.applyUpdate(doc, p.update, origin);
        return appended.then(() => Y.applyUpdate(doc, p.update, origin));
      }
      case MSG.Awareness: {
        const update = (() => {
          try {
            return decoding.readVarUint8Array(d);
          } catch {
            throw new ProtocolError(CloseCodes.MalformedMessage, 'truncated awareness message');
          }
        })();
        const entries = decodeAwarenessUpdate(update);
        const who = { ownerKey: origin.ownerKey, role: claims.role, sub: claims.sub, ...(claims.name !== undefined ? { name: claims.name } : {}) };
        const checked = this.guard.check(doc.name, who, entries, (id) => doc.awareness.meta.get(id)?.clock);
        // Identity stamped from the token: what everyone sees is what the token says.
        applyAwarenessUpdate(doc.awareness, checked.stamped ? encodeAwarenessEntries(checked.entries) : update, origin);
        return;
      }
      case MSG.QueryAwareness:
        send(awarenessMessage(encodeAwarenessUpdate(doc.awareness, [...doc.awareness.getStates().keys()])));
        return;
      case MSG.Auth:
        return; // y-websocket's auth message carries nothing the server needs
      default:
        throw new ProtocolError(CloseCodes.MalformedMessage, `unknown message type ${type}`);
    }
  }
}
