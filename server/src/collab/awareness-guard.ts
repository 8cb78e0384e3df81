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

export class AwarenessGuard {
  private readonly owners = new Map<string, Map<number, string>>();

  private table(doc: string): Map<number, string> {
    let t = this.owners.get(doc);
    if (!t) this.owners.set(doc, (t = new Map()));
    return t;
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
    const table = this.table(doc);
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
    const mine = [...table.values()].filter((k) => k === who.ownerKey).length;
    const fresh = new Set(list.filter((e) => e.state !== null && table.get(e.clientId) === undefined).map((e) => e.clientId));
    if (mine + fresh.size > MAX_CLIENT_IDS_PER_CONNECTION)
      throw new ProtocolError(CloseCodes.PresenceSpoof, `a connection may hold at most ${MAX_CLIENT_IDS_PER_CONNECTION} presences`);
    for (const { clientId, state } of list) {
      if (state === null) table.delete(clientId);
      else table.set(clientId, who.ownerKey);
    }
    const { sub } = who;
    if (sub === undefined) return { entries: all, stamped: false };
    const own = new Set(list);
    let stamped = false;
    const out = all.map((e) => {
      if (!own.has(e) || !e.state || !e.state.user) return e;
      const user = stampPresenceUser(e.state.user as Record<string, unknown>, { sub, role: who.role, ...(who.name !== undefined ? { name: who.name } : {}) });
      if (JSON.stringify(user) === JSON.stringify(e.state.user)) return e;
      stamped = true;
      return { ...e, state: { ...e.state, user } };
    });
    return { entries: out, stamped };
  }

  /** Client ids owned by a connection. */
  owned(doc: string, ownerKey: string): number[] {
    const t = this.owners.get(doc);
    return t ? [...t].filter(([, k]) => k === ownerKey).map(([id]) => id) : [];
  }

  /** Forgets a closed connection's ids. */
  release(doc: string, ownerKey: string): void {
    const t = this.owners.get(doc);
    if (!t) return;
    for (const [id, k] of t) if (k === ownerKey) t.delete(id);
    if (t.size === 0) this.owners.delete(doc);
  }
}
