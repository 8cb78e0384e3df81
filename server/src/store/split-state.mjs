// Cutting one large Yjs update (a workspace's stored state) into several smaller ones that apply
// one after another, each completely: so a load can apply them with turns of the event loop in
// between instead of holding it for the whole document (10,000 cells: 1–2 s on one Yjs call).
// Plain JavaScript so a worker thread can load it without a TypeScript loader; types are in
// split-state.d.mts. Effects: none (pure).
//
// Why it is safe: Yjs gives the same document whatever order and grouping its updates arrive in
// (what cannot be integrated yet waits as pending and is integrated when what it needs arrives).
// The order here is only about speed: every struct comes after the structs it needs (its left and
// right origin, its parent, its own client's previous struct), so no part leaves anything pending
// and each costs its share of the whole.
import * as Y from 'yjs';
import { packStateParts } from '@plexus/shared/state-parts';

/**
 * Structs per part by default: a few ms of applying each on a 2 GHz core (a 10,000-cell notebook:
 * ~360 parts; the same bytes and the same total apply as fewer, larger parts). Small, because a
 * part's apply is one turn of the event loop, and a connection whose updates each wait for a
 * storage round trip (Postgres) gets one update through per turn: with 10,000 a 10,000-cell open
 * held a typist elsewhere at 0.8 s p50 on Postgres, with 1,000 at 20 ms (performance.md §42).
 */
export const PART_STRUCTS = 1_000;

/**
 * `state` as it is best stored: several parts in one byte string (`packStateParts`) when it is
 * larger than one part, else `state` itself. `partStructs` 0: never cut.
 */
export function storableState(state, partStructs = PART_STRUCTS) {
  if (!partStructs) return state;
  const parts = splitUpdate(state, partStructs);
  return parts.length > 1 ? packStateParts(parts) : state;
}

/**
 * The parts of `update` (Yjs v1, a complete state such as `encodeStateAsUpdate` writes), each at
 * most about `partStructs` structs, in an order that applies completely part by part; the delete
 * set goes with the last part. `[update]` when it is small or is not a plain state (it holds gaps,
 * as a merge of unrelated updates can).
 */
export function splitUpdate(update, partStructs = PART_STRUCTS) {
  partStructs = Math.floor(partStructs);
  if (partStructs < 1) return [update];
  // Every struct takes at least two bytes: a smaller update cannot hold more than one part.
  if (update.byteLength < 2 * partStructs) return [update];
  const { structs, ds } = Y.decodeUpdate(update);
  if (structs.length <= partStructs) return [update];
  for (const s of structs) if (s instanceof Y.Skip) return [update];
  return cutStructs(structs, ds, partStructs);
}

/**
 * `doc`'s state as `Y.encodeStateAsUpdate(doc)` would write it, in parts as `splitUpdate` cuts
 * them — from the document's own structs, without encoding the whole state and decoding it again
 * (the fold on the storage worker has the document in hand: a 10,000-cell one costs it one encode
 * instead of an encode, a decode and an encode). Null when it is not larger than one part, or when
 * it holds what it could not integrate yet (the whole encoding carries that along; store it whole).
 */
export function splitDoc(doc, partStructs = PART_STRUCTS) {
  partStructs = Math.floor(partStructs);
  if (partStructs < 1 || doc.store.pendingStructs || doc.store.pendingDs) return null;
  const structs = [];
  // In the order an encoded state lists them (clients by descending id), so both cut alike.
  const clients = [...doc.store.clients.entries()].sort((a, b) => b[0] - a[0]);
  for (const [, list] of clients) for (const s of list) structs.push(s);
  if (structs.length <= partStructs) return null;
  return cutStructs(structs, Y.createDeleteSetFromStructStore(doc.store), partStructs);
}

/**
 * The core of both: `structs` (grouped by client, each client's in clock order: decoded, or a
 * document's own) and the delete set `ds`, cut into parts of `partStructs`.
 */
function cutStructs(structs, ds, partStructs) {
  // Structs are grouped by client, each client's in clock order: index them by client.
  const clientStart = new Map(); // client → index of its first struct in `structs`
  const clientEnd = new Map();
  for (let i = 0; i < structs.length; i++) {
    const c = structs[i].id.client;
    if (!clientStart.has(c)) clientStart.set(c, i);
    clientEnd.set(c, i + 1);
  }
  /** Index of the struct holding (client, clock), or -1 when the update does not hold it. */
  const find = (id) => {
    const lo0 = clientStart.get(id.client);
    if (lo0 === undefined) return -1;
    let lo = lo0;
    let hi = clientEnd.get(id.client) - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const s = structs[mid];
      if (id.clock < s.id.clock) hi = mid - 1;
      else if (id.clock >= s.id.clock + s.length) lo = mid + 1;
      else return mid;
    }
    return -1;
  };

  // Depth-first, each struct after what it needs (iterative: chains of origins are long).
  const n = structs.length;
  const state = new Uint8Array(n); // 0 new, 1 on the stack, 2 placed
  const order = new Int32Array(n);
  let placed = 0;
  const stack = [];
  const needs = (i) => {
    const s = structs[i];
    const out = [];
    if (i > clientStart.get(s.id.client)) out.push(i - 1);
    if (s instanceof Y.Item) {
      if (s.origin) out.push(find(s.origin));
      if (s.rightOrigin) out.push(find(s.rightOrigin));
      // Named only without origins (as an update writes it; an origin implies its parent).
      // Decoded: the parent's id, or a root type's name. In a document: the type, whose item (if
      // it is not a root type) is what its children need.
      const parent = s.parent;
      if (parent instanceof Y.ID) out.push(find(parent));
      else if (!s.origin && !s.rightOrigin && parent && parent._item) out.push(find(parent._item.id));
    }
    return out;
  };
  for (let root = 0; root < n; root++) {
    if (state[root] !== 0) continue;
    stack.push(root, 0);
    state[root] = 1;
    while (stack.length) {
      const i = stack[stack.length - 2];
      const deps = needs(i);
      let pushed = false;
      for (const d of deps) {
        if (d >= 0 && state[d] === 0) {
          state[d] = 1;
          stack.push(d, 0);
          pushed = true;
          break;
        }
      }
      if (pushed) continue;
      stack.length -= 2;
      state[i] = 2;
      order[placed++] = i;
    }
  }

  const parts = [];
  for (let from = 0; from < n; from += partStructs) {
    const to = Math.min(n, from + partStructs);
    // A client's structs are in clock order in `order` (each needs the one before it), so within a
    // part they are one run per client.
    const runs = new Map(); // client → indices
    for (let k = from; k < to; k++) {
      const i = order[k];
      const c = structs[i].id.client;
      let run = runs.get(c);
      if (!run) runs.set(c, (run = []));
      run.push(i);
    }
    const enc = new Y.UpdateEncoderV1();
    enc.writeLen(runs.size);
    // Clients highest first, as Yjs writes them: its merge of updates (Y.mergeUpdates: a browser's
    // local copy folding its entries, a load merged for a fork) relies on that order, and drops
    // structs without it.
    for (const [client, run] of [...runs].sort((a, b) => b[0] - a[0])) {
      enc.writeLen(run.length);
      enc.writeClient(client);
      enc.writeLen(structs[run[0]].id.clock);
      for (const i of run) structs[i].write(enc, 0);
    }
    writeDeleteSet(enc, to === n ? ds : null);
    parts.push(enc.toUint8Array());
  }
  return parts;
}

/** A delete set as Yjs v1 writes it (none: an empty one). */
function writeDeleteSet(enc, ds) {
  const clients = ds ? [...ds.clients.entries()].sort((a, b) => b[0] - a[0]) : [];
  enc.writeLen(clients.length);
  for (const [client, items] of clients) {
    enc.resetDsCurVal();
    enc.writeLen(client);
    enc.writeLen(items.length);
    for (const item of items) {
      enc.writeDsClock(item.clock);
      enc.writeDsLen(item.len);
    }
  }
}
