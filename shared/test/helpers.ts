/**
 * Test helpers for shared/: a seeded PRNG, an in-memory network of Y.Doc replicas (in the style of
 * Yjs' own TestConnector) and a plain-JSON view of a workspace document for convergence checks.
 * Not a test file itself (vitest only collects *.test.ts).
 */
import { vi } from 'vitest';
import * as Y from 'yjs';
import {
  cellSource, getSettings, getTitle, listCells, listMessages, listNamedViews, listRuns, listTables, readCellRun, readKernelStatus, readProposal,
  readSuggestions, readViewerState,
} from '../src/index.ts';

import { mulberry32 } from '../src/random.ts';

export { mulberry32 };

export class Rng {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  bool(p = 0.5): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('pick from empty list');
    return xs[this.int(xs.length)]!;
  }
  /** `len` characters of `alphabet`, by code point (emoji stay whole surrogate pairs). */
  string(len: number, alphabet = 'abcdefghij \n'): string {
    const chars = Array.from(alphabet);
    let s = '';
    for (let i = 0; i < len; i++) s += chars[this.int(chars.length)];
    return s;
  }
}

/**
 * Routes Web Crypto randomness (cell-order jitter, ids, Yjs internals) through a seeded PRNG so a
 * failing fuzz seed replays exactly. Returns the spy; call `mockRestore()` when done.
 */
export function seedWebCrypto(rng: Pick<Rng, 'int'>) {
  return vi.spyOn(globalThis.crypto, 'getRandomValues').mockImplementation(<T extends ArrayBufferView | null>(arr: T): T => {
    if (arr) {
      const bytes = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
      for (let i = 0; i < bytes.length; i++) bytes[i] = rng.int(256);
    }
    return arr;
  });
}

/** Origin of updates applied from the network, so they are not re-broadcast. */
export const REMOTE = Symbol('remote');

/** Brings a and b up to date with each other using state-vector diffs (what a provider's sync step does). */
export function syncPair(a: Y.Doc, b: Y.Doc): void {
  Y.applyUpdate(b, Y.encodeStateAsUpdate(a, Y.encodeStateVector(b)), REMOTE);
  Y.applyUpdate(a, Y.encodeStateAsUpdate(b, Y.encodeStateVector(a)), REMOTE);
}

/** Fully syncs every pair of docs. */
export function syncAll(docs: Y.Doc[]): void {
  for (let i = 0; i < docs.length; i++) for (let j = i + 1; j < docs.length; j++) syncPair(docs[i]!, docs[j]!);
}

/**
 * N replicas on a full mesh. Every local update goes into one queue per link; `deliverSome` applies
 * a random subset of one link's queue, possibly out of order or merged into one update. A replica
 * that is `disconnect`ed loses its in-flight messages in both directions and sends/receives nothing
 * until `reconnect`, which resyncs it with every online peer via state-vector diffs.
 */
export class Network {
  readonly docs: Y.Doc[] = [];
  readonly online: boolean[] = [];
  private readonly queues: Uint8Array[][][] = [];

  constructor(
    n: number,
    private readonly rng: Rng,
  ) {
    for (let i = 0; i < n; i++) {
      const doc = new Y.Doc();
      doc.clientID = i + 1; // deterministic conflict resolution, so seeds replay
      this.docs.push(doc);
      this.online.push(true);
      this.queues.push(Array.from({ length: n }, () => []));
      doc.on('update', (update: Uint8Array, origin: unknown) => {
        if (origin === REMOTE || !this.online[i]) return;
        for (let j = 0; j < n; j++) if (j !== i && this.online[j]) this.queues[i]![j]!.push(update);
      });
    }
  }

  disconnect(i: number): void {
    this.online[i] = false;
    for (let j = 0; j < this.docs.length; j++) {
      this.queues[i]![j] = [];
      this.queues[j]![i] = [];
    }
  }

  reconnect(i: number): void {
    this.online[i] = true;
    for (let j = 0; j < this.docs.length; j++) if (j !== i && this.online[j]) syncPair(this.docs[i]!, this.docs[j]!);
  }

  /** Delivers a random batch on a random non-empty link. Returns false when nothing was queued. */
  deliverSome(): boolean {
    const links: Array<[number, number]> = [];
    this.queues.forEach((row, from) => row.forEach((q, to) => q.length > 0 && links.push([from, to])));
    if (links.length === 0) return false;
    const [from, to] = this.rng.pick(links);
    const q = this.queues[from]![to]!;
    const batch: Uint8Array[] = [];
    for (let k = 1 + this.rng.int(Math.min(q.length, 4)); k > 0; k--) batch.push(q.splice(this.rng.int(q.length), 1)[0]!);
    const target = this.docs[to]!;
    if (this.rng.bool(0.3)) Y.applyUpdate(target, Y.mergeUpdates(batch), REMOTE);
    else for (const u of batch) Y.applyUpdate(target, u, REMOTE);
    return true;
  }

  /** Everyone back online, every queue drained, then a final pairwise resync. */
  settle(): void {
    this.online.forEach((up, i) => up || this.reconnect(i));
    while (this.deliverSome());
    syncAll(this.docs);
  }
}

/** What a user sees of a workspace: everything the helpers read, as plain JSON. */
export function docView(doc: Y.Doc) {
  return {
    title: getTitle(doc),
    cells: listCells(doc).map((c) => ({ id: c.id, kind: c.kind, order: c.order, name: c.name ?? null, source: cellSource(c) })),
    chat: listMessages(doc).map((m) => ({ id: m.id, author: m.author.id, text: m.text, status: m.status, proposal: readProposal(doc, m.id)?.status ?? null, suggestions: readSuggestions(m.map) })),
    runs: listRuns(doc).map(({ map: _map, ...r }) => r),
    cellRuns: listCells(doc).map((c) => {
      const r = readCellRun(doc, c);
      return r && { state: r.state, stale: r.stale, exec: r.exec?.runId ?? null, outputs: r.outputs };
    }),
    kernel: readKernelStatus(doc),
    viewer: readViewerState(doc),
    views: listNamedViews(doc),
    tables: listTables(doc),
    settings: getSettings(doc),
  };
}

/** JSON with object keys sorted (Y.Map iteration follows local insertion order, which replicas need not share). */
export const canonicalJson = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x));

/** The view of a replica as rebuilt from its encoded state (what a fresh client loading it would see). */
export function encodedView(doc: Y.Doc): string {
  const fresh = new Y.Doc();
  Y.applyUpdate(fresh, Y.encodeStateAsUpdate(doc));
  return canonicalJson(docView(fresh));
}

/** True when a transaction changed the document (Yjs also opens empty ones, e.g. the first getArray of a root). */
export const wrote = (tr: Y.Transaction) =>
  tr.deleteSet.clients.size > 0 || [...tr.afterState].some(([client, clock]) => tr.beforeState.get(client) !== clock);

/** Ids of the cells in notebook order. */
export const cellIds = (doc: Y.Doc): string[] => listCells(doc).map((c) => c.id);
