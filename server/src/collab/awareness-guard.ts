/**
 * Presence checks shared by both protocols: a connection may only set awareness entries for
 * client ids it introduced (no one can overwrite or remove someone else's presence), its
 * `user.role` must be the role of its token, and only service connections may present themselves
 * as an agent or service. The identity of every accepted `user` is then stamped from the token
 * (`stampPresenceUser`: `sub`, `role`, `id` under the token's subject, `name` when the token has
 * one), so nobody can present someone else's id or a name a token fixes. Stock clients (y-websocket's provider, Hocuspocus' provider) relay every
 * awareness change they receive back to the server, so an entry of someone else's id that is not
 * newer than what the server holds is an echo, ignored; a newer one (or a removal at the current
 * clock) is a spoof. Effects: keeps an in-memory ownership table per document.
 */
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import { CloseCodes, stampPresenceUser, type Role } from '@plexus/shared';
import { ProtocolError } from './errors.ts';
import type { AwarenessEntry } from './validate.ts';

export interface PeerIdentity {
  /** Unique per connection (Hocuspocus socket id, or a y-websocket connection id). */
  ownerKey: string;
  role: Role;
  /** The token's subject: accepted presences are stamped with it (omitted only by benchmarks of the checks). */
  sub?: string;
  /** The token's `name` claim, stamped over the client's name when present. */
  name?: string;
}

/** Longest `user.id` accepted (before the subject prefix). */
export const MAX_PRESENCE_ID_LENGTH = 200;

/** A Hocuspocus awareness frame (address, type, update) with its update replaced. */
export function reframeAwareness(frame: Uint8Array, update: Uint8Array): Uint8Array {
  const d = decoding.createDecoder(frame);
  const address = decoding.readVarString(d);
  const type = decoding.readVarUint(d);
  const e = encoding.createEncoder();
  encoding.writeVarString(e, address);
  encoding.writeVarUint(e, type);
  encoding.writeVarUint8Array(e, update);
  return encoding.toUint8Array(e);
}

/** Encodes awareness entries as a y-protocols awareness update. */
export function encodeAwarenessEntries(entries: readonly AwarenessEntry[]): Uint8Array {
  const e = encoding.createEncoder();
  encoding.writeVarUint(e, entries.length);
  for (const x of entries) {
    encoding.writeVarUint(e, x.clientId);
    encoding.writeVarUint(e, x.clock);
    encoding.writeVarString(e, JSON.stringify(x.state));
  }
  return encoding.toUint8Array(e);
}

/** Most awareness client ids one connection may hold at once (a browser tab uses one). */
export const MAX_CLIENT_IDS_PER_CONNECTION = 4;

/** Per document: the owner of each client id, and how many ids each owner holds (O(1) per frame, whatever the connection count). */
interface Ownership {
  owners: Map<number, string>;
  counts: Map<string, number>;
}

export class AwarenessGuard {
  private readonly docs = new Map<string, Ownership>();

  private table(doc: string): Ownership {
    let t = this.docs.get(doc);
    if (!t) this.docs.set(doc, (t = { owners: new Map(), counts: new Map() }));
    return t;
  }

  private static set(t: Ownership, clientId: number, owner: string): void {
    const prev = t.owners.get(clientId);
    if (prev === owner) return;
    if (prev !== undefined) AwarenessGuard.remove(t, clientId);
    t.owners.set(clientId, owner);
    t.counts.set(owner, (t.counts.get(owner) ?? 0) + 1);
  }

  private static remove(t: Ownership, clientId: number): void {
    const owner = t.owners.get(clientId);
    if (owner === undefined) return;
    t.owners.delete(clientId);
    const n = (t.counts.get(owner) ?? 1) - 1;
    if (n > 0) t.counts.set(owner, n);
    else t.counts.delete(owner);
  }

  /**
   * Checks a batch of awareness entries from one connection and records ownership of accepted ids.
   * Throws ProtocolError(PresenceSpoof) for any violation; nothing is recorded then.
   * Returns the batch to apply: the same entries, those of this connection with their `user`
   * stamped from the token (when `who.sub` is given); `stamped` says whether anything changed.
   */
  check(
    doc: string,
    who: PeerIdentity,
    entries: Iterable<AwarenessEntry>,
    currentClock: (clientId: number) => number | undefined,
  ): { entries: AwarenessEntry[]; stamped: boolean } {
    const own = this.table(doc);
    const table = own.owners;
    const all = [...entries];
    const list: AwarenessEntry[] = [];
    for (const e of all) {
      const owner = table.get(e.clientId);
      if (owner !== undefined && owner !== who.ownerKey) {
        const current = currentClock(e.clientId);
        if (current !== undefined && (e.clock < current || (e.clock === current && e.state !== null))) continue; // an echo
        throw new ProtocolError(CloseCodes.PresenceSpoof, `client id ${e.clientId} belongs to another connection`);
      }
      list.push(e);
    }
    for (const { state } of list) {
      if (state && 'user' in state && state.user !== undefined) {
        const user = state.user as Record<string, unknown> | null;
        if (!user || typeof user !== 'object') throw new ProtocolError(CloseCodes.PresenceSpoof, 'user must be an object');
        if (user.role !== undefined && user.role !== who.role)
          throw new ProtocolError(CloseCodes.PresenceSpoof, `presence claims role "${String(user.role)}" but the token grants "${who.role}"`);
        if ((user.kind === 'agent' || user.kind === 'service') && who.role !== 'service')
          throw new ProtocolError(CloseCodes.PresenceSpoof, `only service connections may present as ${String(user.kind)}`);
        if (typeof user.name === 'string' && user.name.length > 100) throw new ProtocolError(CloseCodes.PresenceSpoof, 'name is too long');
        if (user.id !== undefined && (typeof user.id !== 'string' || user.id.length > MAX_PRESENCE_ID_LENGTH))
          throw new ProtocolError(CloseCodes.PresenceSpoof, `user.id must be a string of at most ${MAX_PRESENCE_ID_LENGTH} characters`);
      }
    }
    const mine = own.counts.get(who.ownerKey) ?? 0;
    const fresh = new Set(list.filter((e) => e.state !== null && table.get(e.clientId) === undefined).map((e) => e.clientId));
    if (mine + fresh.size > MAX_CLIENT_IDS_PER_CONNECTION)
      throw new ProtocolError(CloseCodes.PresenceSpoof, `a connection may hold at most ${MAX_CLIENT_IDS_PER_CONNECTION} presences`);
    for (const { clientId, state } of list) {
      if (state === null) AwarenessGuard.remove(own, clientId);
      else AwarenessGuard.set(own, clientId, who.ownerKey);
    }
    const { sub } = who;
    if (sub === undefined) return { entries: all, stamped: false };
    const accepted = new Set(list);
    let stamped = false;
    const out = all.map((e) => {
      if (!accepted.has(e) || !e.state || !e.state.user) return e;
      const user = stampPresenceUser(e.state.user as Record<string, unknown>, { sub, role: who.role, ...(who.name !== undefined ? { name: who.name } : {}) });
      if (JSON.stringify(user) === JSON.stringify(e.state.user)) return e;
      stamped = true;
      return { ...e, state: { ...e.state, user } };
    });
    return { entries: out, stamped };
  }

  /** Client ids owned by a connection. */
  owned(doc: string, ownerKey: string): number[] {
    const t = this.docs.get(doc);
    return t ? [...t.owners].filter(([, k]) => k === ownerKey).map(([id]) => id) : [];
  }

  /** Forgets a closed connection's ids. */
  release(doc: string, ownerKey: string): void {
    const t = this.docs.get(doc);
    if (!t) return;
    for (const [id, k] of t.owners) if (k === ownerKey) AwarenessGuard.remove(t, id);
    if (t.owners.size === 0) this.docs.delete(doc);
  }
}
