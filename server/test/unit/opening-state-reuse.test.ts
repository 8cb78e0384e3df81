/**
 * The encoded state a browser fetches while it opens a workspace (http/opening-reads.ts) is kept for
 * the next people who open it: sent again as it is while the document is unchanged, and for a
 * short while after it changed (their socket's sync brings the rest); encoded anew after that, for
 * small documents always, never beyond the byte budget, and dropped with the document. On a real
 * Hocuspocus (no network), with a clock the test moves.
 */
import { afterEach, describe, expect, it } from 'vitest';
import zlib from 'node:zlib';
import * as Y from 'yjs';
import { Hocuspocus } from '@hocuspocus/server';
import { createLogger } from '../../src/log.ts';
import { OpeningReads, type StateReuse } from '../../src/http/opening-reads.ts';
import { waitFor } from '@plexus/testkit';
import { createCell, userOrigin } from '@plexus/shared';
import { isStateParts, unpackStateParts } from '@plexus/shared/state-parts';

let now = 0;
const opened: OpeningReads[] = [];
function setUp(over: Partial<StateReuse> = {}) {
  const hocuspocus = new Hocuspocus({ quiet: true, unloadImmediately: true } as never);
  const reads = new OpeningReads(() => hocuspocus, createLogger('error'), { lingerMs: 60_000, reuse: { reuseMs: 10_000, keepMs: 60_000, minBytes: 1024, maxBytes: 10 * 1024 * 1024, now: () => now, ...over } });
  opened.push(reads);
  // One direct connection per document holds it open (this Hocuspocus stores nothing).
  const conns = new Map<string, Awaited<ReturnType<Hocuspocus['openDirectConnection']>>>();
  const conn = async (id: string) => conns.get(id) ?? conns.set(id, await hocuspocus.openDirectConnection(id, {})).get(id)!;
  /** Writes `n` strings of 100 characters into document `id`. */
  const write = async (id: string, n: number, tag: string) => {
    await (await conn(id)).transact((doc) => {
      const a = doc.getArray<string>('lines');
      a.push(Array.from({ length: n }, (_, i) => `${tag}${i}`.padEnd(100, '.')));
    });
  };
  const leave = async (id: string) => {
    await conns.get(id)?.disconnect();
    conns.delete(id);
  };
  const lines = (u: Uint8Array) => {
    const d = new Y.Doc();
    Y.applyUpdate(d, u);
    return d.getArray<string>('lines').toArray();
  };
  return { hocuspocus, reads, write, lines, conn, leave };
}
afterEach(async () => {
  for (const r of opened.splice(0)) await r.close();
});

describe("the state sent to people opening a workspace", () => {
  it('is encoded once and sent again while the document is unchanged, however long', async () => {
    const { reads, write, lines } = setUp();
    await write('w', 100, 'a');
    const first = (await reads.state('w'))!;
    now += 50_000;
    const again = (await reads.state('w'))!;
    expect(again).toBe(first);
    expect(reads.stats).toEqual({ stateEncoded: 1, stateReused: 1, stateFromStorage: 0, stateStored: 0, screensRemembered: 0 });
    expect(lines(again)).toHaveLength(100);
  });

  it('after a change: the kept state for a short while (a moment old), then the document as it is now', async () => {
    const { reads, write, lines } = setUp();
    await write('w', 100, 'a');
    const first = (await reads.state('w'))!;
    now += 1000;
    await write('w', 1, 'late');
    now += 9000;
    expect(await reads.state('w')).toBe(first);
    now += 1001;
    const fresh = (await reads.state('w'))!;
    expect(fresh).not.toBe(first);
    expect(lines(fresh)).toHaveLength(101);
    expect(lines(fresh)[100]).toMatch(/^late0/);
    expect(reads.stats).toEqual({ stateEncoded: 2, stateReused: 1, stateFromStorage: 0, stateStored: 0, screensRemembered: 0 });
    // The fresh one is kept in turn.
    now += 1;
    expect(await reads.state('w')).toBe(fresh);
  });

  it('a large document is encoded in parts a step per turn, once for the people asking at the same time; a change meanwhile makes it a moment old', async () => {
    const { reads, conn } = setUp();
    // More structs than a part: strings put first one transaction each (appended ones would merge into one).
    for (let i = 0; i < 2_500; i++) await (await conn('w')).transact((doc) => doc.getArray<string>('lines').insert(0, [`line ${i}`]));
    let turns = 0;
    let done = false;
    const asked = [reads.state('w'), reads.state('w')];
    void Promise.all(asked).then(() => (done = true));
    // The document changes while it is encoded: what is sent is the parts as written, whole.
    await new Promise((resolve) => setImmediate(resolve));
    await (await conn('w')).transact((doc) => doc.getArray<string>('lines').push(['meanwhile']));
    while (!done) {
      await new Promise((resolve) => setImmediate(resolve));
      turns++;
    }
    const [a, b] = (await Promise.all(asked)) as [Uint8Array, Uint8Array];
    expect(b).toBe(a);
    expect(isStateParts(a)).toBe(true);
    expect(turns).toBeGreaterThan(2);
    expect(reads.stats.stateEncoded).toBe(1);
    const applied = new Y.Doc();
    applied.transact(() => unpackStateParts(a).forEach((u) => Y.applyUpdate(applied, u)));
    expect(applied.store.pendingStructs).toBeNull();
    const got = applied.getArray<string>('lines').toArray();
    expect(got.filter((l) => l !== 'meanwhile')).toEqual(Array.from({ length: 2_500 }, (_, i) => `line ${2_499 - i}`));
    // What it lacks comes with the socket's sync: the diff against its state vector makes it whole.
    const live = (await conn('w')).document!;
    Y.applyUpdate(applied, Y.encodeStateAsUpdate(live, Y.encodeStateVector(applied)));
    expect(applied.getArray('lines').toArray()).toEqual(live.getArray('lines').toArray());
    // Kept as changed since it was written: sent again only within reuseMs of that change.
    now += 10_001;
    expect(await reads.state('w')).not.toBe(a);
  });

  it('closing while a large state is encoded stops it and lets its document go before close resolves', async () => {
    const { reads, conn, hocuspocus } = setUp();
    for (let i = 0; i < 2_500; i++) await (await conn('w')).transact((doc) => doc.getArray<string>('lines').insert(0, [`line ${i}`]));
    const doc = hocuspocus.documents.get('w')!;
    const asked = reads.state('w');
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(doc.getConnectionsCount()).toBe(2); // the test's own and the read's
    await reads.close();
    expect(doc.getConnectionsCount()).toBe(1);
    expect(await asked).toBeNull();
    expect(reads.stats.stateEncoded).toBe(0);
  });

  it('a deletion counts as a change', async () => {
    const { reads, write, lines, conn } = setUp();
    await write('w', 100, 'a');
    const first = (await reads.state('w'))!;
    await (await conn('w')).transact((doc) => doc.getArray('lines').delete(0, 50));
    now += 10_001;
    const fresh = (await reads.state('w'))!;
    expect(fresh).not.toBe(first);
    expect(lines(fresh)).toHaveLength(50);
  });

  it('small documents are encoded for every request; kept states stay within the byte budget, the oldest dropped first', async () => {
    const { reads, write } = setUp({ maxBytes: 25_000 });
    await write('small', 2, 's');
    expect(await reads.state('small')).not.toBe(await reads.state('small'));
    await write('one', 100, 'a');
    await write('two', 100, 'b');
    await write('three', 100, 'c');
    const one = (await reads.state('one'))!;
    const two = (await reads.state('two'))!;
    expect(one.byteLength + two.byteLength).toBeLessThanOrEqual(25_000);
    expect(await reads.state('one')).toBe(one);
    await reads.state('three'); // no room for three states: "one" goes
    expect(await reads.state('two')).toBe(two);
    expect(await reads.state('one')).not.toBe(one);
  });

  it('a document unloaded and loaded again is encoded anew (the kept state goes with the old one)', async () => {
    const { hocuspocus, write, lines, leave } = setUp();
    // Held for no time after each read: the document unloads once its last connection leaves.
    const reads = new OpeningReads(() => hocuspocus, createLogger('error'), { lingerMs: 0, reuse: { reuseMs: 1e9, keepMs: 60_000, minBytes: 1024, maxBytes: 1e8, now: () => now } });
    opened.push(reads);
    await write('w', 100, 'a');
    const first = (await reads.state('w'))!;
    await leave('w');
    await waitFor(() => !hocuspocus.documents.has('w'), { message: 'unloaded' });
    // (Stored nowhere here, it comes back empty.)
    await write('w', 20, 'b');
    const second = (await reads.state('w'))!;
    expect(second).not.toBe(first);
    expect(lines(second)).toHaveLength(20);
    expect(reads.stats).toEqual({ stateEncoded: 2, stateReused: 0, stateFromStorage: 0, stateStored: 0, screensRemembered: 0 });
  });

  it('first screens are remembered at unload within a size budget (the oldest go first), sent while nothing is logged since, forgotten at load', async () => {
    // Notebook cells written with the shared helpers; this Hocuspocus stores nothing, so a document
    // that loads again comes back empty (which shows whether an answer came from memory).
    // The store's head per workspace (0: nothing logged).
    const heads = new Map<string, number>();
    const hocuspocus: Hocuspocus = new Hocuspocus({ quiet: true, unloadImmediately: true, extensions: [] } as never);
    const reads = new OpeningReads(() => hocuspocus, createLogger('error'), { lingerMs: 0, storedHead: (ws) => heads.get(ws) ?? 0, rememberedMaxChars: 2500 });
    opened.push(reads);
    hocuspocus.configuration.extensions.push(reads);
    const fill = async (id: string, source: string) => {
      const conn = await hocuspocus.openDirectConnection(id, {});
      await conn.transact((doc) => void createCell(doc, { kind: 'code', source, author: 'a' }, userOrigin('a')));
      await conn.disconnect();
      await waitFor(() => !hocuspocus.documents.has(id), { message: `${id} unloaded` });
    };
    const source = async (id: string) => (await reads.firstScreen(id, 1))?.cells[0]?.source;
    await fill('one', 'one'.padEnd(1000, '.'));
    await fill('two', 'two'.padEnd(1000, '.'));
    expect(await source('one')).toMatch(/^one/);
    expect(hocuspocus.documents.has('one')).toBe(false);
    await fill('three', 'three'.padEnd(1000, '.')); // no room for three: "one" goes
    expect(await source('two')).toMatch(/^two/);
    expect(await source('three')).toMatch(/^three/);
    expect(reads.stats.screensRemembered).toBe(3);
    expect(await source('one')).toBeUndefined(); // loaded (empty here): not from memory
    await waitFor(() => !hocuspocus.documents.has('one'), { message: 'one unloaded' });
    // An entry logged after the unload: the document answers (loaded, empty here).
    heads.set('two', 1);
    expect(await source('two')).toBeUndefined();
    await waitFor(() => !hocuspocus.documents.has('two'), { message: 'two unloaded' });
    // What is remembered now is the document as it unloaded this time, with change 1 in it.
    expect(await reads.firstScreen('two', 1)).toEqual({ total: 0, cells: [] });
    expect(hocuspocus.documents.has('two')).toBe(false);
    expect(reads.stats.screensRemembered).toBe(4);
    // "three" still comes from memory until it is forgotten (recovery does that).
    expect(await source('three')).toMatch(/^three/);
    expect(reads.stats.screensRemembered).toBe(5);
    reads.forget('three');
    expect(await source('three')).toBeUndefined();
    expect(reads.stats.screensRemembered).toBe(5);
  });

  it('an idle workspace\'s stored state: read and compressed once for the people asking at the same moment, then loaded; the loaded document answers after', async () => {
    const hocuspocus = new Hocuspocus({ quiet: true, unloadImmediately: true } as never);
    const doc = new Y.Doc();
    doc.getArray<string>('lines').push(Array.from({ length: 300 }, (_, i) => `s${i}`.padEnd(100, '.')));
    const snapshot = Y.encodeStateAsUpdate(doc);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reads = 0;
    const storedState = async (ws: string) => (reads++, await held, ws === 'w' ? snapshot : null);
    const opening = new OpeningReads(() => hocuspocus, createLogger('error'), { lingerMs: 60_000, storedState, reuse: { reuseMs: 10_000, keepMs: 60_000, minBytes: 1024, maxBytes: 10 * 1024 * 1024, now: () => now } });
    opened.push(opening);
    const br = new Set(['br']);
    const asked = [opening.stateFor('w', br), opening.stateFor('w', br), opening.stateFor('w', new Set(['gzip']))];
    release();
    const [a, b, gz] = await Promise.all(asked);
    expect(reads).toBe(2); // one per coding
    expect(a!.body).toBe(b!.body);
    expect(a!.coding).toBe('br');
    expect(gz!.coding).toBe('gzip');
    expect(zlib.brotliDecompressSync(a!.body)).toEqual(Buffer.from(snapshot));
    expect(hocuspocus.documents.has('w')).toBe(false); // nothing loaded to answer
    expect(opening.stats.stateStored).toBe(2);
    // Once sent, the document loads (empty: this Hocuspocus stores nothing) and answers from then on.
    a!.sent!();
    await waitFor(() => hocuspocus.documents.has('w'), { message: 'loaded after it was sent' });
    const after = (await opening.stateFor('w', br))!;
    expect(after.sent).toBeUndefined();
    expect(reads).toBe(2);
  });

  it('is compressed with the best coding the browser accepts, once per kept state; small ones and refusals go as they are', async () => {
    const { reads, write, lines } = setUp();
    await write('w', 300, 'a');
    const raw = (await reads.state('w'))!;
    const br = (await reads.stateFor('w', new Set(['gzip', 'deflate', 'br'])))!;
    expect(br.coding).toBe('br');
    expect(br.body.byteLength).toBeLessThan(raw.byteLength / 3);
    expect(lines(zlib.brotliDecompressSync(br.body))).toEqual(lines(raw));
    // The kept state keeps its compressed form: the same bytes again, not compressed again.
    expect((await reads.stateFor('w', new Set(['br'])))!.body).toBe(br.body);
    const gz = (await reads.stateFor('w', new Set(['gzip'])))!;
    expect(gz.coding).toBe('gzip');
    expect(Buffer.compare(zlib.gunzipSync(gz.body), Buffer.from(raw))).toBe(0);
    expect(await reads.stateFor('w', new Set(['deflate', 'identity']))).toEqual({ body: raw, coding: null });
    await write('tiny', 1, 't');
    const tiny = (await reads.stateFor('tiny', new Set(['br'])))!;
    expect(tiny.coding).toBeNull();
    expect(lines(tiny.body)).toHaveLength(1);
    // A server closing reads nothing more.
    await reads.close();
    expect(await reads.stateFor('w', new Set(['br']))).toBeNull();
  });
});
