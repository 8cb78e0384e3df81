/**
 * What a browser reads while it opens a workspace (speed issue, gap 3; http/opening-reads.ts):
 * `GET /api/workspaces/:id/first-screen`, the notebook's first cells to show while the document
 * syncs, and `GET /api/workspaces/:id/state`, the whole document to apply before the socket has
 * synced. Checked like every workspace route, read from the live document, null / 409 for a
 * document that cannot load, and the document stays loaded for the socket that follows (the same
 * document object, not a second load), then unloads; shutting down with a document held still
 * flushes and stops.
 */
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { cellSource, createCell, listCells, setCellSource, userOrigin } from '@plexus/shared';
import type { PlexusServer } from '../../src/app.ts';
import { snapshotFileOf } from '../../src/store/workspace-store.ts';
import { api, hocuspocusClient, startTestServer, storedDoc, tmpDir, waitFor } from '@plexus/testkit';
import { isStateParts, unpackStateParts } from '@plexus/shared/state-parts';

let s: PlexusServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

/** A workspace with `n` code cells written by a real client, which then leaves (the document unloads). */
async function workspace(server: PlexusServer, name: string, n: number): Promise<string> {
  const id = (await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name })).json.workspace.id as string;
  const c = hocuspocusClient(server.url, id, server.ownerToken);
  await c.synced;
  for (let i = 0; i < n; i++) createCell(c.doc, { kind: 'code', source: `cell${i} = ${i}`, author: 'a' }, userOrigin('a'));
  await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'ack' });
  c.destroy();
  await waitFor(() => !server.hocuspocus.documents.has(id), { message: 'unloaded' });
  return id;
}

/** A workspace of 40 cells of ~8 KB (over the size worth keeping) written by a server on `dataDir`, which then stops. */
async function storedBig(dataDir: string, name: string): Promise<{ id: string; expected: string[] }> {
  const first = await startTestServer({ dataDir });
  const id = (await api(first.url, first.ownerToken, 'POST', '/api/workspaces', { name })).json.workspace.id as string;
  const c = hocuspocusClient(first.url, id, first.ownerToken);
  await c.synced;
  for (let i = 0; i < 40; i++) createCell(c.doc, { kind: 'code', source: `x${i} = ${i};\n`.repeat(800), author: 'a' }, userOrigin('a'));
  await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'ack' });
  const expected = listCells(c.doc).map(cellSource);
  c.destroy();
  await first.close();
  return { id, expected };
}

const firstScreen = (id: string, token: string | null, query = '') => api(s.url, token, 'GET', `/api/workspaces/${id}/first-screen${query}`);
const state = (id: string, token: string | null) =>
  fetch(`${s.url}/api/workspaces/${id}/state`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

describe('first screen', () => {
  it('needs a token for this workspace, like every workspace route', async () => {
    const id = await workspace(s, 'Guarded', 1);
    const other = await workspace(s, 'Other', 1);
    expect((await firstScreen(id, null)).status).toBe(401);
    const elsewhere = s.signer.sign({ ws: other, role: 'editor', sub: 'u_x', ttlSeconds: 600 });
    expect((await firstScreen(id, elsewhere)).status).toBe(403);
    expect((await firstScreen('w_missing', s.ownerToken)).status).toBe(404);
    const viewer = s.signer.sign({ ws: id, role: 'viewer', sub: 'u_v', ttlSeconds: 600 });
    expect((await firstScreen(id, viewer)).json.firstScreen.cells.map((c: { source: string }) => c.source)).toEqual(['cell0 = 0']);
    expect((await state(id, null)).status).toBe(401);
    expect((await state(id, elsewhere)).status).toBe(403);
    expect((await state(id, viewer)).status).toBe(200);
    const handout = s.signer.sign({ ws: id, role: 'viewer', sub: 'link:handout', handout: true, ttlSeconds: 600 });
    expect((await firstScreen(id, handout)).status).toBe(403);
    expect((await state(id, handout)).status).toBe(403);
  });

  it('the state is the whole live document: a fresh doc that applies it holds what a synced client holds', async () => {
    const id = await workspace(s, 'Whole', 25);
    const c = hocuspocusClient(s.url, id, s.ownerToken);
    await c.synced;
    setCellSource(c.doc, listCells(c.doc)[3]!.id, 'changed = 3', userOrigin('a'));
    await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'ack' });
    const r = await state(id, s.ownerToken);
    expect(r.headers.get('content-type')).toBe('application/octet-stream');
    const fresh = new Y.Doc();
    Y.applyUpdate(fresh, new Uint8Array(await r.arrayBuffer()));
    expect(listCells(fresh).map(cellSource)).toEqual(listCells(c.doc).map(cellSource));
    expect(listCells(fresh)[3] && cellSource(listCells(fresh)[3]!)).toBe('changed = 3');
    // Nothing is missing: the same state vector as the synced client's.
    expect(Y.decodeStateVector(Y.encodeStateVector(fresh))).toEqual(Y.decodeStateVector(Y.encodeStateVector(c.doc)));
    // As a browser asks for it (it accepts Brotli): compressed, the same document once decoded.
    const raw = await new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      http.get(`${s.url}/api/workspaces/${id}/state`, { headers: { authorization: `Bearer ${s.ownerToken}`, 'accept-encoding': 'gzip, deflate, br, zstd' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (x: Buffer) => chunks.push(x));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    expect(raw.headers['content-encoding']).toBe('br');
    expect(raw.headers.vary).toBe('accept-encoding');
    const decoded = new Y.Doc();
    Y.applyUpdate(decoded, zlib.brotliDecompressSync(raw.body));
    expect(listCells(decoded).map(cellSource)).toEqual(listCells(c.doc).map(cellSource));
    c.destroy();
  });

  it('a big idle workspace is sent as its stored snapshot without waiting for its load, which follows; with a log on top it is loaded and encoded', async () => {
    // Over the size worth keeping (256 KiB): 40 cells of ~8 KB.
    const id = (await api(s.url, s.ownerToken, 'POST', '/api/workspaces', { name: 'Big idle' })).json.workspace.id as string;
    const c = hocuspocusClient(s.url, id, s.ownerToken);
    await c.synced;
    for (let i = 0; i < 40; i++) createCell(c.doc, { kind: 'code', source: `// cell ${i}\n` + `x${i} = ${i};\n`.repeat(800), author: 'a' }, userOrigin('a'));
    await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'ack' });
    const expected = listCells(c.doc).map(cellSource);
    const sv = Y.decodeStateVector(Y.encodeStateVector(c.doc));
    c.destroy();
    const folded = async () => !s.hocuspocus.documents.has(id) && (await s.store.loadParts(id)).entries.length === 0;
    await waitFor(folded, { message: 'unloaded, its log folded into the snapshot', timeout: 30_000 });
    const before = { ...s.openingReads.stats };
    // Loads of this workspace are held until released: the state must not need one.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let loads = 0;
    const hold = { extensionName: 'test-hold-load', onLoadDocument: async ({ documentName }: { documentName: string }) => void (documentName === id && (loads++, await gate)) };
    s.hocuspocus.configuration.extensions.push(hold);
    try {
      const pending = state(id, s.ownerToken).then(async (r) => ({ status: r.status, bytes: new Uint8Array(await r.arrayBuffer()) }));
      // The load starts once the state has been sent (the way it was before: at once, to read it).
      await waitFor(() => loads === 1, { message: 'the load started' });
      expect(s.openingReads.stats).toMatchObject({ stateStored: before.stateStored + 1, stateEncoded: before.stateEncoded });
      // Answered while the load is held.
      const r = await pending;
      expect(r.status).toBe(200);
      const fresh = new Y.Doc();
      Y.applyUpdate(fresh, r.bytes);
      expect(listCells(fresh).map(cellSource)).toEqual(expected);
      expect(Y.decodeStateVector(Y.encodeStateVector(fresh))).toEqual(sv);
    } finally {
      release();
      s.hocuspocus.configuration.extensions.splice(s.hocuspocus.configuration.extensions.indexOf(hold), 1);
    }
    await waitFor(() => s.hocuspocus.documents.has(id), { message: 'loaded' });
    const held = s.hocuspocus.documents.get(id);
    // The socket joins that document; a change made after the snapshot would come with its sync.
    const d = hocuspocusClient(s.url, id, s.ownerToken);
    await d.synced;
    expect(s.hocuspocus.documents.get(id)).toBe(held);
    expect(listCells(d.doc).map(cellSource)).toEqual(expected);
    // Loaded from that snapshot alone, the document keeps it as its encoded state (a second opener).
    expect(s.openingReads.stats.stateFromStorage).toBe(before.stateFromStorage + 1);
    const second = new Y.Doc();
    Y.applyUpdate(second, new Uint8Array(await (await state(id, s.ownerToken)).arrayBuffer()));
    expect(listCells(second).map(cellSource)).toEqual(expected);
    expect(s.openingReads.stats).toMatchObject({ stateStored: before.stateStored + 1, stateReused: before.stateReused + 1, stateEncoded: before.stateEncoded });
    d.destroy();
    await waitFor(folded, { message: 'unloaded again', timeout: 30_000 });
    // A log on top of the snapshot: the loaded document is encoded as before.
    const stored = storedDoc(s, id);
    const vector = Y.encodeStateVector(stored);
    setCellSource(stored, listCells(stored)[0]!.id, 'logged = 1', userOrigin('a'));
    s.store.append(id, Y.encodeStateAsUpdate(stored, vector));
    const mid = { ...s.openingReads.stats };
    const logged = new Y.Doc();
    Y.applyUpdate(logged, new Uint8Array(await (await state(id, s.ownerToken)).arrayBuffer()));
    expect(cellSource(listCells(logged)[0]!)).toBe('logged = 1');
    expect(s.openingReads.stats).toMatchObject({ stateStored: mid.stateStored, stateFromStorage: mid.stateFromStorage, stateEncoded: mid.stateEncoded + 1 });
  });

  it('health counts the folds of unloaded documents still running (an idle node has none)', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const original = s.store.compactInBackground;
    s.store.compactInBackground = async (ws: string) => (await gate, original.call(s.store, ws));
    const health = async () => (await api(s.url, null, 'GET', '/api/health')).json as { openDocuments: number; foldsRunning: number };
    try {
      const id = await workspace(s, 'Folding', 3);
      expect(await health()).toMatchObject({ foldsRunning: 1 });
      expect((await s.store.loadParts(id)).entries.length).toBeGreaterThan(0);
      release();
      await waitFor(async () => (await health()).foldsRunning === 0, { message: 'fold done' });
      expect((await s.store.loadParts(id)).entries).toHaveLength(0);
    } finally {
      release();
      s.store.compactInBackground = original;
    }
  });

  it('after a restart a stored snapshot is checked by one load (not encoded again), then sent without one; one of unknown origin is encoded', async () => {
    const dataDir = tmpDir('plexus-first-screen-restart-');
    const { id, expected } = await storedBig(dataDir, 'Restarted');
    const read = async (server: PlexusServer) => {
      await waitFor(() => !server.hocuspocus.documents.has(id), { message: 'unloaded', timeout: 30_000 });
      const r = await fetch(`${server.url}/api/workspaces/${id}/state`, { headers: { authorization: `Bearer ${server.ownerToken}` } });
      const doc = new Y.Doc();
      Y.applyUpdate(doc, new Uint8Array(await r.arrayBuffer()));
      expect(listCells(doc).map(cellSource)).toEqual(expected);
    };
    const again = await startTestServer({ dataDir });
    try {
      expect(await again.store.loadParts(id)).toMatchObject({ entries: [], collected: true });
      await read(again); // not checked by this process yet: loaded first
      expect(again.openingReads.stats).toMatchObject({ stateStored: 0, stateFromStorage: 1, stateEncoded: 0 });
      expect(again.persistence.loads).toEqual({ checked: 1, trusted: 0 });
      await read(again);
      expect(again.openingReads.stats).toMatchObject({ stateStored: 1, stateEncoded: 0 });
      // The load that follows keeps the same snapshot, and does not check it again.
      await waitFor(() => again.openingReads.stats.stateFromStorage === 2, { message: 'loaded after it was sent' });
      expect(again.persistence.loads).toEqual({ checked: 1, trusted: 1 });
    } finally {
      await again.close();
    }
    // A snapshot stored by an earlier Plexus (merged: maybe full of deleted content) is encoded from the loaded document.
    const raw = new Database(snapshotFileOf(path.join(dataDir, 'plexus.db')));
    raw.exec('UPDATE snapshots SET collected = 0');
    raw.close();
    const third = await startTestServer({ dataDir });
    try {
      await read(third);
      await read(third);
      expect(third.openingReads.stats).toMatchObject({ stateStored: 0, stateFromStorage: 0, stateEncoded: 2 });
      expect(third.persistence.loads).toEqual({ checked: 2, trusted: 0 });
    } finally {
      await third.close();
    }
  });

  it('a collected snapshot this process has not checked is checked at load: one that breaks the schema is refused, not sent', async () => {
    const dataDir = tmpDir('plexus-first-screen-unchecked-');
    const { id } = await storedBig(dataDir, 'Tampered');
    // Stored as a collected snapshot, but written by something else: a schema version from the future.
    const raw = new Database(snapshotFileOf(path.join(dataDir, 'plexus.db')));
    const row = raw.prepare('SELECT data FROM snapshots WHERE ws = ?').get(id) as { data: Buffer };
    const doc = new Y.Doc();
    Y.applyUpdate(doc, new Uint8Array(row.data));
    doc.getMap('meta').set('schemaVersion', 999); // raw key on purpose: a document no Plexus wrote
    raw.prepare('UPDATE snapshots SET data = ?, collected = 1 WHERE ws = ?').run(Buffer.from(Y.encodeStateAsUpdate(doc)), id);
    raw.close();
    const again = await startTestServer({ dataDir });
    try {
      for (let i = 0; i < 2; i++) {
        const r = await fetch(`${again.url}/api/workspaces/${id}/state`, { headers: { authorization: `Bearer ${again.ownerToken}` } });
        expect(r.status).toBe(409);
      }
      expect(again.openingReads.stats).toMatchObject({ stateStored: 0, stateFromStorage: 0 });
      expect(again.persistence.loads).toEqual({ checked: 2, trusted: 0 });
    } finally {
      await again.close();
    }
  });

  it('the first cells of the live document, in order, as many as asked (bounded)', async () => {
    const id = await workspace(s, 'Forty', 40);
    const r = await firstScreen(id, s.ownerToken, '?cells=3');
    expect(r.status).toBe(200);
    expect(r.json.firstScreen.total).toBe(40);
    expect(r.json.firstScreen.cells.map((c: { source: string }) => c.source)).toEqual(['cell0 = 0', 'cell1 = 1', 'cell2 = 2']);
    // Defaults to 30; nonsense counts fall back to the default.
    expect((await firstScreen(id, s.ownerToken)).json.firstScreen.cells).toHaveLength(30);
    expect((await firstScreen(id, s.ownerToken, '?cells=abc')).json.firstScreen.cells).toHaveLength(30);
    // What a client has just written is what the next first screen shows (read from the live document).
    const c = hocuspocusClient(s.url, id, s.ownerToken);
    await c.synced;
    setCellSource(c.doc, listCells(c.doc)[0]!.id, 'edited = 1', userOrigin('a'));
    await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'ack' });
    expect((await firstScreen(id, s.ownerToken, '?cells=1')).json.firstScreen.cells[0].source).toBe('edited = 1');
    c.destroy();
  });

  it('an unloaded workspace\'s first screen comes from memory without a load; once something is stored since, from the live document', async () => {
    const id = await workspace(s, 'Remembered', 40);
    const before = s.openingReads.stats.screensRemembered;
    const r = await firstScreen(id, s.ownerToken, '?cells=3');
    expect(r.json.firstScreen.total).toBe(40);
    expect(r.json.firstScreen.cells.map((c: { source: string }) => c.source)).toEqual(['cell0 = 0', 'cell1 = 1', 'cell2 = 2']);
    expect(s.openingReads.stats.screensRemembered).toBe(before + 1);
    expect(s.hocuspocus.documents.has(id)).toBe(false); // nothing was loaded
    // The same as the live document would say, for as many cells as asked.
    expect((await firstScreen(id, s.ownerToken)).json.firstScreen.cells).toHaveLength(30);
    // A change stored since the unload (here: straight into the log): the live document answers.
    const stored = storedDoc(s, id);
    const vector = Y.encodeStateVector(stored);
    setCellSource(stored, listCells(stored)[0]!.id, 'stored since = 1', userOrigin('a'));
    s.store.append(id, Y.encodeStateAsUpdate(stored, vector));
    const live = await firstScreen(id, s.ownerToken, '?cells=1');
    expect(live.json.firstScreen.cells[0].source).toBe('stored since = 1');
    expect(s.openingReads.stats.screensRemembered).toBe(before + 2);
    expect(s.hocuspocus.documents.has(id)).toBe(true);
    // Unloaded again: the screen remembered then is the new one.
    await waitFor(() => !s.hocuspocus.documents.has(id), { message: 'unloaded again', timeout: 30_000 });
    expect((await firstScreen(id, s.ownerToken, '?cells=1')).json.firstScreen.cells[0].source).toBe('stored since = 1');
    expect(s.openingReads.stats.screensRemembered).toBe(before + 3);
    expect(s.hocuspocus.documents.has(id)).toBe(false);
  });

  it('keeps the document loaded for the socket that follows, then lets it unload', async () => {
    const id = await workspace(s, 'Held', 2);
    expect(s.hocuspocus.documents.has(id)).toBe(false);
    // (The state: a first screen may come from memory, without a load.)
    expect((await state(id, s.ownerToken)).status).toBe(200);
    const held = s.hocuspocus.documents.get(id);
    expect(held).toBeDefined();
    // The socket joins the document the first screen loaded: no second load from storage.
    const c = hocuspocusClient(s.url, id, s.ownerToken);
    await c.synced;
    expect(s.hocuspocus.documents.get(id)).toBe(held);
    c.destroy();
    // Nobody else came: it unloads once the hold ends (seconds, not forever).
    await waitFor(() => !s.hocuspocus.documents.has(id), { message: 'unloaded after the hold', timeout: 30_000 });
  });

  it('a document that cannot load has no first screen (the socket says why)', async () => {
    const id = await workspace(s, 'Too new', 1);
    const d = storedDoc(s, id);
    const sv = Y.encodeStateVector(d);
    d.getMap('meta').set('schemaVersion', 999);
    s.store.append(id, Y.encodeStateAsUpdate(d, sv));
    const r = await firstScreen(id, s.ownerToken);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ firstScreen: null });
    const st = await state(id, s.ownerToken);
    expect(st.status).toBe(409);
    expect(((await st.json()) as { error: string }).error).toBe('document-unavailable');
  });

  it('a large workspace is stored in parts: sent as them from storage and from the loaded document, and loaded a part per turn of the event loop', async () => {
    const server = await startTestServer({ dataDir: tmpDir('plexus-first-screen-parts-'), snapshotPartStructs: 100 });
    try {
      const id = (await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name: 'Parts' })).json.workspace.id as string;
      const c = hocuspocusClient(server.url, id, server.ownerToken);
      await c.synced;
      // Over the size worth keeping (256 KiB), and thousands of structs: each cell typed in pieces.
      for (let i = 0; i < 60; i++) {
        const cell = createCell(c.doc, { kind: 'code', source: `// cell ${i}\n`, author: 'a' }, userOrigin('a'));
        for (let k = 0; k < 40; k++) setCellSource(c.doc, cell, `// cell ${i}\n` + `x${i}_${k} = ${k};\n`.repeat(k + 10), userOrigin('a'));
      }
      await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'ack' });
      const expected = listCells(c.doc).map(cellSource);
      c.destroy();
      const folded = async () => !server.hocuspocus.documents.has(id) && (await server.store.loadParts(id)).entries.length === 0;
      await waitFor(folded, { message: 'unloaded, its log folded into the snapshot', timeout: 30_000 });
      const stored = (await server.store.loadParts(id)).snapshot!;
      expect(stored.length).toBeGreaterThan(10);
      const read = async () => {
        const r = await fetch(`${server.url}/api/workspaces/${id}/state`, { headers: { authorization: `Bearer ${server.ownerToken}` } });
        expect(r.status).toBe(200);
        const body = new Uint8Array(await r.arrayBuffer());
        expect(isStateParts(body)).toBe(true);
        const doc = new Y.Doc();
        for (const part of unpackStateParts(body)) Y.applyUpdate(doc, part);
        expect(listCells(doc).map(cellSource)).toEqual(expected);
      };
      // Sent from storage without a load; the load follows, giving the event loop a turn per part.
      const turns = server.persistence.loadTurns;
      await read();
      expect(server.openingReads.stats.stateStored).toBe(1);
      await waitFor(() => server.hocuspocus.documents.has(id) && server.openingReads.stats.stateFromStorage === 1, { message: 'loaded after it was sent' });
      expect(server.persistence.loadTurns - turns).toBe(stored.length - 1);
      // The loaded document keeps its stored parts as its state.
      await read();
      expect(server.openingReads.stats).toMatchObject({ stateReused: 1, stateEncoded: 0 });
      const d = hocuspocusClient(server.url, id, server.ownerToken);
      await d.synced;
      expect(listCells(d.doc).map(cellSource)).toEqual(expected);
      d.destroy();
      // Idle again: a fork of it, made from the stored parts without loading it, holds the same cells.
      await waitFor(folded, { message: 'unloaded again', timeout: 30_000 });
      expect((await server.store.loadParts(id)).snapshot!.length).toBe(stored.length);
      const fork = await api(server.url, server.ownerToken, 'POST', `/api/workspaces/${id}/fork`, { name: 'Fork of parts' });
      expect(fork.status).toBe(201);
      expect(server.hocuspocus.documents.has(id)).toBe(false);
      const f = hocuspocusClient(server.url, fork.json.workspace.id as string, server.ownerToken);
      await f.synced;
      expect(listCells(f.doc).map(cellSource)).toEqual(expected);
      f.destroy();
    } finally {
      await server.close();
    }
  });

  it('a server shutting down lets a held document go and stops', async () => {
    const server = await startTestServer({ dataDir: tmpDir('plexus-first-screen-') });
    const id = await workspace(server, 'Shutdown', 1);
    const r = await fetch(`${server.url}/api/workspaces/${id}/state`, { headers: { authorization: `Bearer ${server.ownerToken}` } });
    expect(r.status).toBe(200);
    expect(server.hocuspocus.documents.has(id)).toBe(true);
    await server.close();
    expect(server.hocuspocus.documents.has(id)).toBe(false);
  });
});
