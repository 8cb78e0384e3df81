import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { mulberry32 } from '@plexus/shared';
import { isStateParts, packStateParts, unpackStateParts } from '@plexus/shared/state-parts';
import { cutDocInSteps, splitDoc, splitUpdate, storableState } from '../../src/store/split-state.mjs';
import { foldToStorable, foldUpdates } from '../../src/store/log-compaction.mjs';

/** One random edit of `d` (step `s`): typing, cutting, cells inserted, deleted, outputs and title changed. */
function randomEdit(d: Y.Doc, rnd: () => number, s: number): void {
  const pick = (n: number) => Math.floor(rnd() * n);
  const cells = d.getArray<Y.Map<unknown>>('cells');
  const r = rnd();
  if (r < 0.2 || cells.length === 0) {
    const cell = new Y.Map<unknown>();
    const src = new Y.Text();
    src.insert(0, `cell ${s} `.repeat(1 + pick(3)));
    cell.set('source', src);
    cell.set('kind', pick(2) ? 'code' : 'markdown');
    cells.insert(pick(cells.length + 1), [cell]);
  } else if (r < 0.6) {
    const src = cells.get(pick(cells.length))!.get('source') as Y.Text;
    if (pick(4) === 0 && src.length > 2) src.delete(pick(src.length - 1), 1 + pick(Math.min(5, src.length - 1)));
    else src.insert(pick(src.length + 1), String.fromCharCode(97 + pick(26)).repeat(1 + pick(4)));
  } else if (r < 0.7 && cells.length > 1) {
    cells.delete(pick(cells.length), 1);
  } else if (r < 0.85) {
    cells.get(pick(cells.length))!.set('output', { n: s, text: `out ${s}` });
  } else {
    d.getText('title').insert(pick(d.getText('title').length + 1), `${s}`);
  }
}

/**
 * A document edited by `peers` people at once (their copies synced now and then, in random order):
 * texts typed into and cut, a list of cells (maps with a nested text) inserted, moved around and
 * deleted, map keys overwritten — the cross-client origins a lived-in workspace's state is made of.
 */
function livedIn(seed: number, peers: number, steps: number): Y.Doc {
  const rnd = mulberry32(seed);
  const pick = (n: number) => Math.floor(rnd() * n);
  const docs = Array.from({ length: peers }, (_, i) => {
    const d = new Y.Doc();
    d.clientID = 1000 + seed * 10 + i;
    return d;
  });
  const sync = (a: Y.Doc, b: Y.Doc) => Y.applyUpdate(b, Y.encodeStateAsUpdate(a, Y.encodeStateVector(b)));
  for (let s = 0; s < steps; s++) {
    const d = docs[pick(peers)]!;
    randomEdit(d, rnd, s);
    if (pick(5) === 0) sync(d, docs[pick(peers)]!);
  }
  for (const a of docs) for (const b of docs) if (a !== b) sync(a, b);
  return docs[0]!;
}

/** Applies `parts` in order to a fresh document: nothing may wait for a later part. */
function applyInOrder(parts: Uint8Array[]): Y.Doc {
  const doc = new Y.Doc();
  parts.forEach((p, i) => {
    Y.applyUpdate(doc, p);
    expect({ part: i, pending: doc.store.pendingStructs !== null }).toEqual({ part: i, pending: false });
  });
  expect(doc.store.pendingDs).toBeNull();
  return doc;
}

/**
 * The same document: the same structs and deletions (state vector and delete set: Yjs' snapshot;
 * adjacent collected structs may be merged differently, so not the same bytes) and content.
 */
function expectSame(rebuilt: Y.Doc, live: Y.Doc): void {
  expect(Y.equalSnapshots(Y.snapshot(rebuilt), Y.snapshot(live))).toBe(true);
  expect(rebuilt.getArray('cells').toJSON()).toEqual(live.getArray('cells').toJSON());
  expect(rebuilt.getText('title').toString()).toBe(live.getText('title').toString());
}

describe('a large state cut into parts that apply one after another', () => {
  it('each part applies completely and together they make the same document (lived-in documents, several seeds and sizes)', () => {
    let cuts = 0;
    for (const [seed, peers, steps, per] of [
      [1, 3, 600, 40],
      [2, 5, 1500, 100],
      [3, 8, 3000, 25],
      [4, 2, 800, 7],
    ] as const) {
      const live = livedIn(seed, peers, steps);
      const state = Y.encodeStateAsUpdate(live);
      const parts = splitUpdate(state, per);
      const structs = Y.decodeUpdate(state).structs.length;
      expect(parts.length).toBe(Math.ceil(structs / per));
      for (const p of parts) expect(Y.decodeUpdate(p).structs.length).toBeLessThanOrEqual(per);
      const rebuilt = applyInOrder(parts);
      // Merged by Yjs (a browser's local copy folds its entries so; a load merged for a fork):
      // the same document too.
      const merged = new Y.Doc();
      Y.applyUpdate(merged, Y.mergeUpdates(parts));
      expect(merged.store.pendingStructs).toBeNull();
      expectSame(merged, live);
      expectSame(rebuilt, live);
      cuts += parts.length;
    }
    expect(cuts).toBeGreaterThan(100);
  });

  it('a document cut from its own structs gives the parts its encoded state would (lived-in documents)', () => {
    for (const [seed, peers, steps, per] of [
      [11, 3, 900, 40],
      [12, 6, 2000, 90],
    ] as const) {
      const live = livedIn(seed, peers, steps);
      const fromDoc = splitDoc(live, per)!;
      // The same structs in the same parts (the bytes may differ: a decoded item with an origin
      // has no parentSub, a document's own keeps it and writes its flag, which readers ignore).
      const shape = (parts: Uint8Array[]) =>
        parts.map((p) => {
          const { structs, ds } = Y.decodeUpdate(p);
          return { structs: structs.map((x) => [x.id.client, x.id.clock, x.length]), ds: [...ds.clients] };
        });
      expect(shape(fromDoc)).toEqual(shape(splitUpdate(Y.encodeStateAsUpdate(live), per)));
      expectSame(applyInOrder(fromDoc), live);
      // As the fold stores it: packed, or whole when small.
      const state = Y.encodeStateAsUpdate(live);
      const again = new Y.Doc();
      Y.applyUpdate(again, state);
      expect(unpackStateParts(foldToStorable([state], per))).toEqual(splitDoc(again, per));
      expect(foldToStorable([state], 1_000_000)).toEqual(foldUpdates([state]));
    }
    expect(splitDoc(livedIn(13, 2, 50), 1_000_000)).toBeNull();
    // What the document could not integrate yet: whole (the encoding carries it along).
    const pending = new Y.Doc();
    const src = new Y.Doc();
    const updates: Uint8Array[] = [];
    src.on('update', (u: Uint8Array) => updates.push(u));
    for (let i = 0; i < 30; i++) src.getText('t').insert(0, `${i}`);
    Y.applyUpdate(pending, updates[20]!);
    expect(pending.store.pendingStructs).not.toBeNull();
    expect(splitDoc(pending, 1)).toBeNull();
  });

  it('a document cut a step at a time while it is edited: the parts and every update made meanwhile make the same document (several seeds and sizes)', () => {
    // As a validation replica is built from a live document (collab/shadow.ts): the steps run a
    // turn apart, people type into the document meanwhile — splitting items the cut has noted,
    // deleting (collected) content, adding cells — and every update of the document goes to the
    // replica too, before the parts it builds on have arrived.
    let splitsMeanwhile = 0;
    for (const [seed, peers, steps, per, editsPerStep] of [
      [21, 3, 900, 40, 2],
      [22, 6, 2000, 60, 1],
      [23, 4, 1500, 15, 3],
      [24, 2, 600, 200, 20],
    ] as const) {
      const live = livedIn(seed, peers, steps);
      const other = new Y.Doc(); // someone editing elsewhere, synced into the live document
      Y.applyUpdate(other, Y.encodeStateAsUpdate(live));
      const rnd = mulberry32(seed * 7);
      const replica = new Y.Doc();
      live.on('update', (u: Uint8Array) => Y.applyUpdate(replica, u));
      const structsBefore = () => [...live.store.clients.values()].reduce((n, l) => n + l.length, 0);
      const cut = cutDocInSteps(live, per)!;
      let parts = 0;
      for (let step = cut.next(), k = 0; !step.done; step = cut.next(), k++) {
        if (step.value) {
          Y.applyUpdate(replica, step.value);
          parts++;
        }
        for (let e = 0; e < editsPerStep; e++) {
          const n = structsBefore();
          if (rnd() < 0.5) randomEdit(live, rnd, 10_000 + k);
          else {
            const sv = Y.encodeStateVector(other);
            Y.applyUpdate(other, Y.encodeStateAsUpdate(live, sv));
            randomEdit(other, rnd, 20_000 + k);
            Y.applyUpdate(live, Y.encodeStateAsUpdate(other, Y.encodeStateVector(live)));
          }
          if (structsBefore() > n + 1) splitsMeanwhile++;
        }
      }
      expect(parts).toBeGreaterThan(1);
      expect(replica.store.pendingStructs).toBeNull();
      expect(replica.store.pendingDs).toBeNull();
      expectSame(replica, live);
    }
    expect(splitsMeanwhile).toBeGreaterThan(20);
    expect(cutDocInSteps(livedIn(13, 2, 50), 1_000_000)).toBeNull();
  });

  it('an item split right after the first step is written whole: its tail too', () => {
    // The last struct of a client ends a run: typing inside it right after the structs were noted
    // splits it. Its clocks and lengths are noted with it, so the split-off tail is written too.
    const live = new Y.Doc();
    const text = live.getText('t');
    for (let i = 0; i < 100; i++) text.insert(0, String.fromCharCode(97 + (i % 26))); // one struct each (prepended: not merged)
    text.insert(text.length, 'hello');
    const replica = new Y.Doc();
    live.on('update', (u: Uint8Array) => Y.applyUpdate(replica, u));
    const cut = cutDocInSteps(live, 40)!;
    const first = cut.next();
    if (first.value) Y.applyUpdate(replica, first.value);
    text.insert(text.length - 2, 'X');
    for (let step = cut.next(); !step.done; step = cut.next()) if (step.value) Y.applyUpdate(replica, step.value);
    expect(replica.store.pendingStructs).toBeNull();
    expectSame(replica, live);
    expect(replica.getText('t').toString()).toBe(text.toString());
  });

  it('the deletions go with the last part', () => {
    const live = livedIn(7, 3, 800);
    const state = Y.encodeStateAsUpdate(live);
    const parts = splitUpdate(state, 50);
    for (const p of parts.slice(0, -1)) expect(Y.decodeUpdate(p).ds.clients.size).toBe(0);
    expect(Y.decodeUpdate(parts.at(-1)!).ds.clients.size).toBe(Y.decodeUpdate(state).ds.clients.size);
  });

  it('leaves a small state, an update with gaps, and a state when parts are off as they are', () => {
    const live = livedIn(5, 2, 100);
    const state = Y.encodeStateAsUpdate(live);
    expect(splitUpdate(state, 1_000_000)).toEqual([state]);
    expect(storableState(state, 0)).toBe(state);
    // Two updates of one client with a gap between them, merged: a Skip struct in between.
    const doc = new Y.Doc();
    const updates: Uint8Array[] = [];
    doc.on('update', (u: Uint8Array) => updates.push(u));
    for (let i = 0; i < 40; i++) doc.getText('t').insert(0, `${i}`);
    const gapped = Y.mergeUpdates([updates[0]!, updates[39]!]);
    expect(Y.decodeUpdate(gapped).structs.some((s) => s instanceof Y.Skip)).toBe(true);
    expect(splitUpdate(gapped, 1)).toEqual([gapped]);
  });

  it('packs parts into one byte string that no Yjs update is taken for, and back', () => {
    const live = livedIn(6, 4, 1200);
    const state = Y.encodeStateAsUpdate(live);
    const stored = storableState(state, 60);
    expect(isStateParts(stored)).toBe(true);
    expect(isStateParts(state)).toBe(false);
    const parts = unpackStateParts(stored);
    expect(parts).toEqual(splitUpdate(state, 60));
    expectSame(applyInOrder(parts), live);
    // A plain update is one part; so is the empty one.
    expect(unpackStateParts(state)).toEqual([state]);
    const empty = Y.encodeStateAsUpdate(new Y.Doc());
    expect(unpackStateParts(empty)).toEqual([empty]);
    // Yjs refuses the packed bytes rather than reading something else out of them.
    expect(() => Y.applyUpdate(new Y.Doc(), stored)).toThrow();
  });

  it('refuses a truncated or padded byte string, also inside a larger buffer', () => {
    const stored = packStateParts([new Uint8Array([1, 2, 3]), new Uint8Array([4, 5])]);
    expect(unpackStateParts(stored).map((p) => [...p])).toEqual([[1, 2, 3], [4, 5]]);
    const inLarger = new Uint8Array(stored.byteLength + 64);
    inLarger.set(stored);
    const truncated = inLarger.subarray(0, stored.byteLength - 1);
    expect(() => unpackStateParts(truncated)).toThrow(/truncated/);
    expect(() => unpackStateParts(inLarger.subarray(0, stored.byteLength + 3))).toThrow(/after the last part/);
    expect(() => unpackStateParts(stored.subarray(0, 9))).toThrow();
  });
});
