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
  const order = new DependencyOrder(structs);
  order.step(Infinity);
  const parts = [];
  for (let from = 0; from < structs.length; from += partStructs) {
    const to = Math.min(structs.length, from + partStructs);
    const enc = new Y.UpdateEncoderV1();
    const runs = order.runs(from, to);
    enc.writeLen(runs.length);
    for (const { first, count } of runs) {
      const run = order.order.subarray(first, first + count);
      enc.writeLen(count);
      enc.writeClient(structs[run[0]].id.client);
      enc.writeLen(structs[run[0]].id.clock);
      for (const i of run) structs[i].write(enc, 0);
    }
    writeDeleteSet(enc, to === structs.length ? ds : null);
    parts.push(enc.toUint8Array());
  }
  return parts;
}

/**
 * The order in which `structs` apply part by part without anything left pending: each struct after
 * what it needs (its left and right origin, its parent, its own client's previous struct), found
 * depth-first. Resumable (`step`), so a live document can be ordered a share per turn of the event
 * loop (`cutDocInSteps`): it reads only the structs' ids and origins and the clocks and lengths
 * noted here at the start, which later edits of the document do not change (an item split
 * meanwhile keeps its id and origins and is still found by the clocks it had).
 */
class DependencyOrder {
  constructor(structs) {
    this.structs = structs;
    const n = structs.length;
    this.clocks = new Float64Array(n);
    this.lengths = new Float64Array(n);
    this.clientStart = new Map(); // client → index of its first struct in `structs`
    this.clientEnd = new Map();
    for (let i = 0; i < n; i++) {
      const s = structs[i];
      this.clocks[i] = s.id.clock;
      this.lengths[i] = s.length;
      const c = s.id.client;
      if (!this.clientStart.has(c)) this.clientStart.set(c, i);
      this.clientEnd.set(c, i + 1);
    }
    this.state = new Uint8Array(n); // 0 new, 1 on the stack, 2 placed
    this.order = new Int32Array(n);
    this.placed = 0;
    this.stack = [];
    this.root = 0;
  }

  get done() {
    return this.placed === this.structs.length;
  }

  /** Index of the struct holding (client, clock), or -1 when there is none. */
  find(id) {
    const lo0 = this.clientStart.get(id.client);
    if (lo0 === undefined) return -1;
    let lo = lo0;
    let hi = this.clientEnd.get(id.client) - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (id.clock < this.clocks[mid]) hi = mid - 1;
      else if (id.clock >= this.clocks[mid] + this.lengths[mid]) lo = mid + 1;
      else return mid;
    }
    return -1;
  }

  /** The first struct `i` needs that is not placed or on the stack yet, or -1. */
  unmetNeed(i) {
    const s = this.structs[i];
    const wanted = (d) => d >= 0 && this.state[d] === 0;
    if (i > this.clientStart.get(s.id.client) && wanted(i - 1)) return i - 1;
    if (s instanceof Y.Item) {
      let d;
      if (s.origin && wanted((d = this.find(s.origin)))) return d;
      if (s.rightOrigin && wanted((d = this.find(s.rightOrigin)))) return d;
      // Named only without origins (as an update writes it; an origin implies its parent).
      // Decoded: the parent's id, or a root type's name. In a document: the type, whose item (if
      // it is not a root type) is what its children need.
      const parent = s.parent;
      if (parent instanceof Y.ID && wanted((d = this.find(parent)))) return d;
      if (!s.origin && !s.rightOrigin && parent && !(parent instanceof Y.ID) && parent._item && wanted((d = this.find(parent._item.id)))) return d;
    }
    return -1;
  }

  /** Places at least `count` more structs (all that are left when fewer); true when all are placed. */
  step(count) {
    const { structs, state, order, stack } = this;
    const n = structs.length;
    const until = Math.min(n, this.placed + count);
    while (this.placed < until) {
      if (!stack.length) {
        while (this.root < n && state[this.root] !== 0) this.root++;
        if (this.root === n) break;
        stack.push(this.root);
        state[this.root] = 1;
      }
      const i = stack[stack.length - 1];
      const d = this.unmetNeed(i);
      if (d >= 0) {
        state[d] = 1;
        stack.push(d);
        continue;
      }
      stack.pop();
      state[i] = 2;
      order[this.placed++] = i;
    }
    return this.done;
  }

  /**
   * The structs placed at [from, to) of the order as runs of one client each, highest client
   * first, as Yjs writes them (its merge of updates — a browser's local copy folding its entries,
   * a load merged for a fork — relies on that order, and drops structs without it): a client's
   * structs are in clock order in the order (each needs the one before it), so within a part they
   * are one run per client. Each run: `first` index into `order`, `count`, and the clocks it spans.
   */
  runs(from, to) {
    const byClient = new Map();
    for (let k = from; k < to; k++) {
      const i = this.order[k];
      const c = this.structs[i].id.client;
      const run = byClient.get(c);
      if (!run) byClient.set(c, { client: c, first: k, count: 1, clock: this.clocks[i], end: this.clocks[i] + this.lengths[i] });
      else {
        run.count++;
        run.end = this.clocks[i] + this.lengths[i];
      }
    }
    // `first`..`first + count` must be this client's structs only: gather them when clients interleave.
    const runs = [...byClient.values()].sort((a, b) => b.client - a.client);
    if (runs.length > 1) {
      const regrouped = new Int32Array(to - from);
      let at = 0;
      for (const run of runs) {
        const start = at;
        for (let k = from; k < to; k++) if (this.structs[this.order[k]].id.client === run.client) regrouped[at++] = this.order[k];
        run.first = from + start;
      }
      this.order.set(regrouped, from);
    }
    return runs;
  }
}

/**
 * `doc`'s state cut into parts as `splitDoc` cuts it, a step at a time, while the document goes on
 * changing (a validation replica built from a live document a part per turn, collab/shadow.ts):
 * an iterator whose every `next()` does a bounded share of the work — noting the structs, their
 * clocks and lengths (first step), ordering `8 × partStructs` of them, or writing one part — and
 * yields the part it wrote, or null. Null instead of an iterator when the document is not larger
 * than one part or holds what it could not integrate yet.
 *
 * A part is written when it is asked for, from the document as it is then: each of its runs is
 * the range of clocks its structs had at the start, written from the structs that hold that range
 * now (an item split meanwhile is written as its pieces, items merged meanwhile whole), so every
 * clock the document had at the start is written once it is asked for; the deletions go with the
 * last part, as the document has them then. What the document gets after the start is not in the
 * parts: whoever applies them applies those changes too (the replica mirrors every update).
 */
export function cutDocInSteps(doc, partStructs = PART_STRUCTS) {
  partStructs = Math.floor(partStructs);
  if (partStructs < 1 || doc.store.pendingStructs || doc.store.pendingDs) return null;
  let count = 0;
  for (const list of doc.store.clients.values()) count += list.length;
  if (count <= partStructs) return null;
  return (function* steps() {
    // Noted in one step, clocks and lengths with the structs: an item split in a turn between the
    // two would be noted shorter, and its tail never written.
    const structs = [];
    const clients = [...doc.store.clients.entries()].sort((a, b) => b[0] - a[0]);
    for (const [, list] of clients) for (const s of list) structs.push(s);
    const order = new DependencyOrder(structs);
    yield null;
    while (!order.step(8 * partStructs)) yield null;
    for (let from = 0; from < structs.length; from += partStructs) {
      const to = Math.min(structs.length, from + partStructs);
      const enc = new Y.UpdateEncoderV1();
      const runs = order.runs(from, to);
      enc.writeLen(runs.length);
      for (const run of runs) writeClocks(enc, doc.store.clients.get(run.client), run.client, run.clock, run.end);
      writeDeleteSet(enc, to === structs.length ? Y.createDeleteSetFromStructStore(doc.store) : null);
      yield enc.toUint8Array();
    }
  })();
}

/** Writes `client`'s structs holding clocks [from, end) as one run (the last may reach past `end`: it is written whole). */
function writeClocks(enc, list, client, from, end) {
  const first = Y.findIndexSS(list, from);
  let last = first;
  while (last + 1 < list.length && list[last + 1].id.clock < end) last++;
  enc.writeLen(last - first + 1);
  enc.writeClient(client);
  enc.writeLen(from);
  list[first].write(enc, from - list[first].id.clock);
  for (let i = first + 1; i <= last; i++) list[i].write(enc, 0);
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
