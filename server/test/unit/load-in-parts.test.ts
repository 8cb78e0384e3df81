/**
 * A snapshot stored in parts is loaded a part per turn of the event loop (persistence.ts
 * `applyStored`, store/split-state.mjs): the loop turns between parts, the document is whole at the
 * end, and a workspace deleted while it loads is refused, not served. What is stored applies as
 * stored, the same way for loads, forks and roster entries (parts.ts `applyStored`/`storedDoc`),
 * and a log entry corrupted on disk is skipped there as the store's merge skips it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import type { afterLoadDocumentPayload, afterUnloadDocumentPayload, onLoadDocumentPayload } from '@hocuspocus/server';
import { DurablePersistence } from '../../src/collab/persistence.ts';
import { createLogger } from '../../src/log.ts';
import { WorkspaceStore } from '../../src/store/workspace-store.ts';
import { splitDoc, storableState } from '../../src/store/split-state.mjs';
import { keystrokes } from '../fixtures/keystrokes.ts';
import { cellSource, createCell, getCell, insertCellText, listCells, roots, serverOrigin, userOrigin, type Writer } from '@plexus/shared';

function stored(): { store: WorkspaceStore; persistence: DurablePersistence; doc: Y.Doc; parts: number } {
  const store = new WorkspaceStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-load-parts-')), 'p.db'));
  const { doc } = keystrokes(600);
  store.create({ id: 'w', name: 'W', state: storableState(Y.encodeStateAsUpdate(doc), 40) });
  const persistence = new DurablePersistence(store, createLogger('silent'), { compactEvery: 1_000_000, compactIdleMs: 3_600_000 });
  persistence.markChecked('w');
  return { store, persistence, doc, parts: store.loadParts('w').snapshot!.length };
}
/**
 * A notebook of 40 cells stored in parts, and `logged` log entries on top, each from another
 * person typing one letter into a cell of their own (independent: losing one loses only it).
 */
function notebookStored(logged: number, opts: { precheck?: boolean } = {}): { store: WorkspaceStore; persistence: DurablePersistence; cells: string[]; parts: number } {
  const store = new WorkspaceStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-load-parts-')), 'p.db'));
  const base = new Y.Doc();
  const cells = Array.from({ length: 40 }, (_, i) => createCell(base, { kind: 'code', source: `const c${i} = ${i};`, author: 'alice' }, userOrigin('alice')));
  const state = Y.encodeStateAsUpdate(base);
  store.create({ id: 'w', name: 'W', state: storableState(state, 40) });
  for (let i = 0; i < logged; i++) {
    const person = new Y.Doc();
    Y.applyUpdate(person, state);
    const before = Y.encodeStateVector(person);
    insertCellText(person, cells[i]!, 0, 'x', userOrigin(`p${i}`));
    store.append('w', Y.encodeStateAsUpdate(person, before));
  }
  const persistence = new DurablePersistence(store, createLogger('silent'), { compactEvery: 1_000_000, compactIdleMs: 3_600_000, ...opts });
  return { store, persistence, cells, parts: store.loadParts('w').snapshot!.length };
}
const typed = (doc: Y.Doc, cells: string[]) => cells.filter((c) => cellSource(getCell(doc, c)!).startsWith('x')).length;

const load = (p: DurablePersistence, document: Y.Doc) => p.onLoadDocument({ documentName: 'w', document, requestHeaders: {} } as unknown as onLoadDocumentPayload);

describe('loading a snapshot stored in parts', () => {
  it('gives the event loop a turn between parts and ends with the whole document', async () => {
    const { store, persistence, doc, parts } = stored();
    expect(parts).toBeGreaterThan(5);
    const into = new Y.Doc();
    let turns = 0;
    let loaded = false;
    const loading = load(persistence, into).then(() => (loaded = true));
    // Something else waiting for the loop runs while the load goes on.
    while (!loaded) {
      await new Promise((resolve) => setImmediate(resolve));
      if (!loaded) turns++;
    }
    await loading;
    expect(turns).toBeGreaterThanOrEqual(parts - 1);
    expect(persistence.loadTurns).toBe(parts - 1);
    expect(into.getText('t').toString()).toBe(doc.getText('t').toString());
    store.close();
  });

  it('refuses a workspace deleted while it loads', async () => {
    const { store, persistence } = stored();
    const loading = load(persistence, new Y.Doc());
    await new Promise((resolve) => setImmediate(resolve)); // the first part is in
    persistence.forget('w');
    await expect(loading).rejects.toMatchObject({ code: 4404 });
    expect(persistence.loadTurns).toBeGreaterThan(0); // it was deleted between parts
    store.close();
  });
});

describe('the schema check of a stored state this process has not checked', () => {
  // The first load after a restart checks the whole document against the schema (10,000 cells:
  // ~0.1 s): a share of the cells per turn of the event loop, like the parts of the load.
  const whole = (opts: { checkStep?: number; bad?: boolean } = {}) => {
    const store = new WorkspaceStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-load-check-')), 'p.db'));
    const base = new Y.Doc();
    for (let i = 0; i < 40; i++) createCell(base, { kind: 'code', source: `const c${i} = ${i};`, author: 'alice' }, userOrigin('alice'));
    store.create({ id: 'w', name: 'W', state: storableState(Y.encodeStateAsUpdate(base), 0) });
    if (opts.bad) {
      const before = Y.encodeStateVector(base);
      base.getMap('not-a-root').set('x', 1);
      store.append('w', Y.encodeStateAsUpdate(base, before)); // stored unchecked: older data, a bug
    }
    const persistence = new DurablePersistence(store, createLogger('silent'), { compactEvery: 1_000_000, compactIdleMs: 3_600_000, ...(opts.checkStep === undefined ? {} : { checkStep: opts.checkStep }) });
    return { store, persistence };
  };

  it('is done a share of the cells per turn, and the document is whole and served after it', async () => {
    for (const [checkStep, turns] of [[5, 7], [0, 0]] as const) {
      const { store, persistence } = whole({ checkStep });
      const doc = new Y.Doc();
      await load(persistence, doc);
      expect(persistence.checkTurns).toBeGreaterThanOrEqual(turns);
      if (!turns) expect(persistence.checkTurns).toBe(0);
      expect(persistence.loads.checked).toBe(1);
      expect(listCells(doc)).toHaveLength(40);
      store.close();
    }
  });

  it('still refuses a state that breaks the schema (needs recovery), and a workspace deleted while it is checked', async () => {
    const broken = whole({ checkStep: 5, bad: true });
    await expect(load(broken.persistence, new Y.Doc())).rejects.toMatchObject({ code: 4424 });
    broken.store.close();
    const deleted = whole({ checkStep: 5 });
    const loading = load(deleted.persistence, new Y.Doc());
    await new Promise((resolve) => setImmediate(resolve));
    deleted.persistence.forget('w');
    await expect(loading).rejects.toMatchObject({ code: 4404 });
    deleted.store.close();
  });
});

describe('what is stored applies as stored, skipping what no longer decodes', () => {
  /** Overwrites the `n`th log entry (from 1) with bytes no Yjs update decodes, as disk corruption would. */
  const corrupt = (store: WorkspaceStore, n: number) =>
    store.db.prepare('UPDATE log SET data = ? WHERE seq = (SELECT seq FROM log ORDER BY seq LIMIT 1 OFFSET ?)').run(Buffer.from([1, 2, 3, 255, 255]), n - 1);

  it('a load skips a corrupt log entry in the middle instead of refusing the workspace', async () => {
    const { store, persistence, cells, parts } = notebookStored(5);
    expect(parts).toBeGreaterThan(5);
    corrupt(store, 3);
    const into = new Y.Doc();
    await load(persistence, into);
    expect(typed(into, cells)).toBe(4);
    expect(getCell(into, cells[2]!) && cellSource(getCell(into, cells[2]!)!)).toBe('const c2 = 2;');
    expect(persistence.loadTurns).toBe(parts - 1);
    expect(store.corruptEntriesSkipped).toBe(1);
    store.close();
  });

  it('a copy for a fork or a roster entry holds the parts and log in order, the corrupt entry skipped', async () => {
    const { store, cells } = notebookStored(4);
    const whole = (await store.storedDoc(store.loadParts('w')))!;
    expect(typed(whole, cells)).toBe(4);
    expect(listCells(whole).length).toBe(40);
    corrupt(store, 2);
    const origins: unknown[] = [];
    const copy = new Y.Doc();
    copy.on('afterTransaction', (t: Y.Transaction) => origins.push(t.origin));
    expect(await store.applyStored(copy, store.loadParts('w'), 'fork')).toBe(true);
    const during = [...origins];
    expect(typed(copy, cells)).toBe(3);
    const merged = new Y.Doc();
    Y.applyUpdate(merged, store.load('w').update!);
    expect(Y.encodeStateVector(copy)).toEqual(Y.encodeStateVector(merged));
    expect(during.length).toBeGreaterThan(0);
    expect(during.filter((o) => o !== 'fork')).toEqual([]);
    store.close();
  });

  it('nothing stored gives no document', async () => {
    const { store } = stored();
    expect(await store.storedDoc({ snapshot: null, storedSnapshot: null, entries: [], upto: 0, collected: false })).toBeNull();
    store.close();
  });
});

describe('the validation replica of a workspace loaded in parts', () => {
  // Where every update is checked on a replica (asynchronous appends — Postgres — or the pre-check
  // switched off, as here on SQLite), the replica is built from the stored parts, a part per turn
  // of the event loop, instead of one encode and apply of the whole document in one turn.
  const typing = (from: Y.Doc, cell: string, text: string) => {
    const before = Y.encodeStateVector(from);
    insertCellText(from, cell, 0, text, userOrigin('bob'));
    return Y.encodeStateAsUpdate(from, before);
  };

  it('is built a part per turn; updates sent meanwhile wait for it, in order, and are checked on it', async () => {
    const { store, persistence, cells, parts } = notebookStored(0, { precheck: false });
    expect(parts).toBeGreaterThan(5);
    const live = new Y.Doc();
    await load(persistence, live);
    await persistence.afterLoadDocument({ documentName: 'w', document: live } as unknown as afterLoadDocumentPayload);
    // Bob types twice (the second builds on the first), and the server writes into the live document, all while it is built.
    const bob = new Y.Doc();
    Y.applyUpdate(bob, Y.encodeStateAsUpdate(live));
    const first = typing(bob, cells[0]!, 'a');
    const second = typing(bob, cells[0]!, 'b');
    const checked = [persistence.appendIncoming('w', first, 'person'), persistence.appendIncoming('w', second, 'person')];
    expect(checked.every((c) => c instanceof Promise)).toBe(true);
    insertCellText(live, cells[1]!, 0, 'z', serverOrigin('test'));
    let turns = 0;
    let done = false;
    const all = Promise.all(checked).then(() => (done = true));
    while (!done) {
      await new Promise((resolve) => setImmediate(resolve));
      if (!done) turns++;
    }
    await all;
    expect(turns).toBeGreaterThanOrEqual(parts - 1);
    // Built once, from the parts, and kept: it held what the live document holds (the server's write mirrored in).
    expect(persistence.validation.shadowsBuilt).toBe(1);
    expect(persistence.hasShadow('w')).toBe(true);
    // Logged in the order they came (after what the server wrote itself as it loaded and meanwhile).
    const logged = store.loadParts('w').entries;
    const at = (u: Uint8Array) => logged.findIndex((e) => e.length === u.length && e.every((b, i) => b === u[i]));
    expect(at(first)).toBeGreaterThanOrEqual(0);
    expect(at(second)).toBe(at(first) + 1);
    // What breaks the document schema is refused there, as before.
    const mallory = new Y.Doc();
    Y.applyUpdate(mallory, Y.encodeStateAsUpdate(live));
    const before = Y.encodeStateVector(mallory);
    mallory.getMap('not-a-root').set('x', 1);
    expect(() => persistence.appendIncoming('w', Y.encodeStateAsUpdate(mallory, before), 'person')).toThrow(expect.objectContaining({ code: 4423 }));
    expect(store.loadParts('w').entries).toHaveLength(logged.length);
    store.close();
  });

  it('a workspace deleted while its replica is built refuses what waited for it', async () => {
    const { store, persistence, cells } = notebookStored(0, { precheck: false });
    const live = new Y.Doc();
    await load(persistence, live);
    await persistence.afterLoadDocument({ documentName: 'w', document: live } as unknown as afterLoadDocumentPayload);
    const bob = new Y.Doc();
    Y.applyUpdate(bob, Y.encodeStateAsUpdate(live));
    const logged = store.loadParts('w').entries.length;
    const waiting = persistence.appendIncoming('w', typing(bob, cells[0]!, 'a'), 'person');
    expect(waiting).toBeInstanceOf(Promise);
    persistence.forget('w');
    await expect(waiting).rejects.toMatchObject({ code: 4404 });
    expect(store.loadParts('w').entries).toHaveLength(logged);
    store.close();
  });

  it('an update waiting while the document unloads is refused, never logged unchecked (also when it is loaded again meanwhile)', async () => {
    for (const reload of [false, true]) {
      const { store, persistence } = notebookStored(0, { precheck: false });
      const live = new Y.Doc();
      await load(persistence, live);
      await persistence.afterLoadDocument({ documentName: 'w', document: live } as unknown as afterLoadDocumentPayload);
      const logged = store.loadParts('w').entries.length;
      // Something the replica would refuse: a root the document schema does not have.
      const mallory = new Y.Doc();
      Y.applyUpdate(mallory, Y.encodeStateAsUpdate(live));
      const before = Y.encodeStateVector(mallory);
      mallory.getMap('not-a-root').set('x', 1);
      const waiting = persistence.appendIncoming('w', Y.encodeStateAsUpdate(mallory, before), 'person');
      expect(waiting).toBeInstanceOf(Promise);
      const outcome = (waiting as Promise<void>).then(() => 'logged', (e: unknown) => e);
      // Its sender left: the document unloads before the replica is built (and, the second time, loads again).
      await persistence.afterUnloadDocument({ documentName: 'w' } as unknown as afterUnloadDocumentPayload);
      if (reload) {
        const again = new Y.Doc();
        await load(persistence, again);
        await persistence.afterLoadDocument({ documentName: 'w', document: again } as unknown as afterLoadDocumentPayload);
      }
      // Refused for the unload (load-failed), not checked against the document loaded since.
      expect(await outcome).toMatchObject({ code: 4500 });
      expect(store.loadParts('w').entries).toHaveLength(logged);
      store.close();
    }
  });
});

describe('a validation replica cut from the live document', () => {
  // Where the pre-check decides most updates (synchronous appends: SQLite), a replica is built only
  // for what it cannot decide and for refusals. For a document of more than one part it is cut
  // from the live document and built a part per turn — not one encode and apply of the whole
  // document in one turn, which held every workspace of the node (10,000 cells: 0.4–0.6 s, once
  // per refused update). The update that needs it waits; what the pre-check accepts goes on.
  const CONNECTION = { source: 'connection' }; // as Hocuspocus applies a connection's update (already logged)
  const loaded = async () => {
    const { store, cells } = notebookStored(0);
    const persistence = new DurablePersistence(store, createLogger('silent'), { compactEvery: 1_000_000, compactIdleMs: 3_600_000, replicaPartStructs: 40 });
    const live = new Y.Doc();
    await load(persistence, live);
    await persistence.afterLoadDocument({ documentName: 'w', document: live } as unknown as afterLoadDocumentPayload);
    await new Promise((resolve) => setImmediate(resolve)); // after the load's own turn (prepare: nothing to build here)
    return { store, persistence, cells, live, parts: splitDoc(live, 40)!.length };
  };
  /** Accepted and logged: applied to the live document as Hocuspocus then does. */
  const deliver = async (persistence: DurablePersistence, live: Y.Doc, update: Uint8Array, from: Writer = 'person') => {
    await persistence.appendIncoming('w', update, from);
    Y.applyUpdate(live, update, CONNECTION);
  };
  const copyOf = (doc: Y.Doc) => {
    const d = new Y.Doc();
    Y.applyUpdate(d, Y.encodeStateAsUpdate(doc));
    return d;
  };
  const change = (doc: Y.Doc, edit: (d: Y.Doc) => void) => {
    const before = Y.encodeStateVector(doc);
    edit(doc);
    return Y.encodeStateAsUpdate(doc, before);
  };
  const turnsUntil = async (p: Promise<unknown>) => {
    let done = false;
    let turns = 0;
    const settled = p.then(() => (done = true), () => (done = true));
    while (!done) {
      await new Promise((resolve) => setImmediate(resolve));
      if (!done) turns++;
    }
    await settled;
    return turns;
  };
  const rename = (cell: string, name: string) => (d: Y.Doc) => d.transact(() => roots(d).cells.get(cell)!.set('name', name), userOrigin('x'));

  it('two people renaming one cell at once: the second waits for a replica built a part per turn; the pre-check\'s updates go on meanwhile, and the replica holds them', async () => {
    const { store, persistence, cells, live, parts } = await loaded();
    expect(parts).toBeGreaterThan(5);
    const [bob, carol] = [copyOf(live), copyOf(live)];
    const first = change(bob, rename(cells[0]!, 'bob'));
    const second = change(carol, rename(cells[0]!, 'carol'));
    await deliver(persistence, live, first); // the pre-check's
    const waiting = persistence.appendIncoming('w', second, 'person');
    expect(waiting).toBeInstanceOf(Promise);
    // Dave types while the replica is built: the pre-check accepts it at once.
    const dave = copyOf(live);
    const typed = change(dave, (d) => insertCellText(d, cells[1]!, 0, 'd', userOrigin('dave')));
    expect(persistence.appendIncoming('w', typed, 'person')).toBeUndefined();
    Y.applyUpdate(live, typed, CONNECTION);
    const turns = await turnsUntil(waiting as Promise<void>);
    Y.applyUpdate(live, second, CONNECTION);
    expect(turns).toBeGreaterThanOrEqual(parts - 1);
    expect(persistence.validation.shadowsBuilt).toBe(1);
    expect(persistence.hasShadow('w')).toBe(true);
    // Logged in the order decided: bob's, dave's, then carol's after the build.
    const logged = store.loadParts('w').entries;
    const at = (u: Uint8Array) => logged.findIndex((e) => e.length === u.length && e.every((b, i) => b === u[i]));
    expect([at(first), at(typed), at(second)]).toEqual([at(first), at(first) + 1, at(first) + 2]);
    // The replica holds dave's typing: an update building on it and renaming a cell at the same
    // time as grace (so decided on the replica — at once now) is accepted; without dave's typing
    // it would be refused as depending on changes the server does not have.
    const [grace, frank] = [copyOf(live), copyOf(live)];
    await deliver(persistence, live, change(grace, rename(cells[2]!, 'grace')));
    const next = change(frank, (d) => {
      rename(cells[2]!, 'frank')(d);
      insertCellText(d, cells[1]!, 1, 'f', userOrigin('frank'));
    });
    const shadowBefore = persistence.validation.shadow;
    expect(persistence.appendIncoming('w', next, 'person')).toBeUndefined();
    expect(persistence.validation.shadow).toBe(shadowBefore + 1);
    expect(persistence.validation.shadowsBuilt).toBe(1);
    store.close();
  });

  it('an update that breaks the schema is refused after a replica built a part per turn, each time it is sent; nothing is logged', async () => {
    const { store, persistence, live, parts } = await loaded();
    const logged = store.loadParts('w').entries.length;
    for (let attempt = 1; attempt <= 2; attempt++) {
      const bad = change(copyOf(live), (d) => d.getMap('not-a-root').set('x', attempt));
      const refused = persistence.appendIncoming('w', bad, 'person');
      expect(refused).toBeInstanceOf(Promise);
      const outcome = (refused as Promise<void>).then(() => 'logged', (e: unknown) => e);
      expect(await turnsUntil(outcome)).toBeGreaterThanOrEqual(parts - 1);
      expect(await outcome).toMatchObject({ code: 4423 });
      expect(persistence.validation.shadowsBuilt).toBe(attempt);
      expect(persistence.hasShadow('w')).toBe(false); // dropped with what the refused update did to it
    }
    expect(store.loadParts('w').entries).toHaveLength(logged);
    store.close();
  });

  it('an update the pre-check accepted just before the build began, and applied only during it, reaches the replica', async () => {
    const { store, persistence, cells, live } = await loaded();
    // Accepted and logged, but not applied to the live document yet (Hocuspocus applies it a few
    // microtasks later) when the next update starts a build from the live document.
    const [bob, carol] = [copyOf(live), copyOf(live)];
    const typed = change(copyOf(live), (d) => insertCellText(d, cells[1]!, 0, 'a', userOrigin('alice')));
    expect(persistence.appendIncoming('w', typed, 'person')).toBeUndefined();
    await deliver(persistence, live, change(bob, rename(cells[0]!, 'bob')));
    const waiting = persistence.appendIncoming('w', change(carol, rename(cells[0]!, 'carol')), 'person');
    expect(waiting).toBeInstanceOf(Promise);
    await new Promise((resolve) => setImmediate(resolve)); // the build has noted the live document's structs
    Y.applyUpdate(live, typed, CONNECTION); // checked already: mirrored only because a build is on
    await waiting;
    // Built once: it held what the live document holds (else given up and built again at once).
    expect(persistence.validation.shadowsBuilt).toBe(1);
    expect(persistence.hasShadow('w')).toBe(true);
    store.close();
  });

  it('the same update sent twice while a build made both wait is logged once', async () => {
    const { store, persistence, cells, live } = await loaded();
    const [bob, carol] = [copyOf(live), copyOf(live)];
    await deliver(persistence, live, change(bob, rename(cells[0]!, 'bob')));
    const concurrent = change(carol, rename(cells[0]!, 'carol'));
    const logged = store.loadParts('w').entries.length;
    const twice = [persistence.appendIncoming('w', concurrent, 'person'), persistence.appendIncoming('w', concurrent, 'person')];
    expect(twice.every((c) => c instanceof Promise)).toBe(true);
    await Promise.all(twice);
    expect(store.loadParts('w').entries).toHaveLength(logged + 1);
    store.close();
  });

  it('a document of one part is still checked at once', async () => {
    const { store, cells } = notebookStored(0);
    const persistence = new DurablePersistence(store, createLogger('silent'), { compactEvery: 1_000_000, compactIdleMs: 3_600_000, replicaPartStructs: 100_000 });
    const live = new Y.Doc();
    await load(persistence, live);
    await persistence.afterLoadDocument({ documentName: 'w', document: live } as unknown as afterLoadDocumentPayload);
    const [bob, carol] = [copyOf(live), copyOf(live)];
    await deliver(persistence, live, change(bob, rename(cells[0]!, 'bob')));
    expect(persistence.appendIncoming('w', change(carol, rename(cells[0]!, 'carol')), 'person')).toBeUndefined();
    expect(() => persistence.appendIncoming('w', change(copyOf(live), (d) => d.getMap('not-a-root').set('x', 1)), 'person')).toThrow(expect.objectContaining({ code: 4423 }));
    store.close();
  });
});
