/**
 * Bad input never corrupts a live document: garbage, truncated and randomly mutated updates,
 * oversized frames and foreign tokens. The server stays up, the live document is byte-identical
 * afterwards (or, for a mutation that happens to be a valid update, changed exactly as applying
 * that update atomically would), and the offender gets a clear close code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { checkDocument, createCell, setCellSource, userOrigin, listCells, mulberry32, type CellId } from '@plexus/shared';
import type { PlexusServer } from '../../src/app.ts';
import { api, hocuspocusClient, startTestServer, waitFor, type HpClient, hpUpdate, rawHocuspocus, rawYws, ywsUpdate, type RawClient } from '@plexus/testkit';

const MAX = 64 * 1024;
let server: PlexusServer;
let wsId: string;
let keeper: HpClient;
let cell: CellId;

const rng = mulberry32;

const live = () => server.hocuspocus.documents.get(wsId)!;
const liveBytes = () => Buffer.from(Y.encodeStateAsUpdate(live()));

/** A real update from another replica, relative to the live state: insert + delete + new cell. */
function realUpdate(): Uint8Array {
  const other = new Y.Doc();
  Y.applyUpdate(other, Y.encodeStateAsUpdate(live()));
  const sv = Y.encodeStateVector(other);
  setCellSource(other, cell, 'let answer = 41 + 1; // edited', userOrigin('x'));
  createCell(other, { kind: 'code', source: 'new cell', author: 'x' }, userOrigin('x'));
  return Y.encodeStateAsUpdate(other, sv);
}

async function expectClosedWith(c: RawClient, code: number) {
  const { code: got } = await c.closed;
  expect(got).toBe(code);
}

beforeAll(async () => {
  server = await startTestServer({ maxMessageBytes: MAX });
  wsId = (await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name: 'Bad input' })).json.workspace.id;
  keeper = hocuspocusClient(server.url, wsId, server.ownerToken);
  await keeper.synced;
  cell = createCell(keeper.doc, { kind: 'code', source: 'let answer = 42;', author: 'k' }, userOrigin('k'));
  await waitFor(() => listCells(live()).length === 1, { message: 'cell on server' });
});
afterAll(async () => {
  keeper.destroy();
  await server.close();
});

describe('bad input', () => {
  it('a truncated update whose structs decode but whose delete set is cut would change the doc and throw: it is refused before it touches the doc', async () => {
    const u = realUpdate();
    // Find cuts where plain Y.applyUpdate would partially apply, to prove the danger is real.
    const dangerous: number[] = [];
    for (let cut = 1; cut < u.length; cut++) {
      const probe = new Y.Doc();
      Y.applyUpdate(probe, Y.encodeStateAsUpdate(live()));
      const before = Buffer.from(Y.encodeStateAsUpdate(probe));
      try {
        Y.applyUpdate(probe, u.slice(0, cut));
      } catch {
        if (Buffer.compare(before, Buffer.from(Y.encodeStateAsUpdate(probe))) !== 0) dangerous.push(cut);
      }
    }
    expect(dangerous.length).toBeGreaterThan(0);
    for (const [i, cut] of dangerous.slice(0, 6).entries()) {
      const before = liveBytes();
      const c = i % 2 ? await rawYws(server.url, wsId, server.ownerToken) : await rawHocuspocus(server.url, wsId, server.ownerToken);
      c.send(i % 2 ? ywsUpdate(u.slice(0, cut)) : hpUpdate(wsId, u.slice(0, cut)));
      await expectClosedWith(c, 4400);
      expect(liveBytes().equals(before)).toBe(true);
    }
  });

  it('garbage frames on both endpoints: closed with 4400, document unchanged, server up', async () => {
    const rand = rng(7);
    const before = liveBytes();
    for (let i = 0; i < 20; i++) {
      const bytes = new Uint8Array(1 + Math.floor(rand() * 200)).map(() => Math.floor(rand() * 256));
      const c = i % 2 ? await rawYws(server.url, wsId, server.ownerToken) : await rawHocuspocus(server.url, wsId, server.ownerToken);
      // For Hocuspocus keep the document address so the garbage reaches the document's handler.
      c.send(i % 2 ? bytes : new Uint8Array([...hpUpdate(wsId, new Uint8Array()).slice(0, wsId.length + 1), ...bytes]));
      const { code } = await c.closed;
      expect([4400, 4401, 4403]).toContain(code);
    }
    expect(liveBytes().equals(before)).toBe(true);
    expect((await api(server.url, null, 'GET', '/api/health')).status).toBe(200);
  });

  it('randomly mutated updates are either refused (doc unchanged) or applied atomically', async () => {
    const rand = rng(42);
    let refused = 0;
    let applied = 0;
    for (let round = 0; round < 60; round++) {
      const u = realUpdate();
      const m = u.slice();
      const flips = 1 + Math.floor(rand() * 3);
      for (let f = 0; f < flips; f++) m[Math.floor(rand() * m.length)] = Math.floor(rand() * 256);
      const before = liveBytes();
      // What atomic application of `m` to the current state would give (or null if it cannot).
      const reference = new Y.Doc();
      Y.applyUpdate(reference, before);
      let expected: Buffer | null;
      try {
        Y.decodeUpdate(m);
        Y.applyUpdate(reference, m);
        expected = Buffer.from(Y.encodeStateAsUpdate(reference));
      } catch {
        expected = null;
      }
      const c = round % 2 ? await rawYws(server.url, wsId, server.ownerToken) : await rawHocuspocus(server.url, wsId, server.ownerToken);
      c.send(round % 2 ? ywsUpdate(m) : hpUpdate(wsId, m));
      // A round trip after it: answered only once the server has processed the update (frames of
      // one connection are handled in order); a refused update closes the connection instead.
      const outcome = await Promise.race([c.closed, c.roundTrip().then(() => null)]);
      if (outcome) {
        expect([4400, 4423]).toContain(outcome.code); // malformed, or well-formed but breaking the document schema
        expect(liveBytes().equals(before)).toBe(true);
        refused++;
      } else {
        c.ws.close();
        expect(expected).not.toBeNull();
        expect(Y.encodeStateVector(live())).toEqual(Y.encodeStateVector(reference));
        expect(checkDocument(live())).toEqual([]);
        applied++;
      }
    }
    expect(refused).toBeGreaterThan(0);
    expect(refused + applied).toBe(60);
    // The keeper (a normal client) is still connected and in sync after all this.
    await waitFor(() => Buffer.from(Y.encodeStateVector(keeper.doc)).equals(Buffer.from(Y.encodeStateVector(live()))), { message: 'keeper in sync' });
  });

  it('an update that decodes but throws halfway through integration is refused, and the workspace still loads', async () => {
    // Search mutations of a real update for one that passes Y.decodeUpdate yet throws when applied
    // (plain Y.applyUpdate would leave a half-applied document, and a logged copy would break loading).
    const rand = rng(2026);
    let poison: Uint8Array | null = null;
    for (let i = 0; i < 5000 && !poison; i++) {
      const m = realUpdate().slice();
      for (let f = 1 + Math.floor(rand() * 3); f > 0; f--) m[Math.floor(rand() * m.length)] = Math.floor(rand() * 256);
      try {
        Y.decodeUpdate(m);
      } catch {
        continue;
      }
      const probe = new Y.Doc();
      Y.applyUpdate(probe, liveBytes());
      try {
        Y.applyUpdate(probe, m);
      } catch {
        poison = m;
      }
    }
    expect(poison, 'found a decodable update that throws on apply').not.toBeNull();
    const before = liveBytes();
    const logBefore = server.store.logLength(wsId);
    for (const c of [await rawHocuspocus(server.url, wsId, server.ownerToken), await rawYws(server.url, wsId, server.ownerToken)]) {
      c.send(c.ws.url.includes('/yjs/') ? ywsUpdate(poison!) : hpUpdate(wsId, poison!));
      await expectClosedWith(c, 4400);
    }
    expect(liveBytes().equals(before)).toBe(true);
    expect(server.store.logLength(wsId)).toBe(logBefore); // never logged
    // Normal editing continues on the same document afterwards.
    createCell(keeper.doc, { kind: 'code', source: 'after the poison', author: 'k' }, userOrigin('k'));
    await waitFor(() => listCells(live()).some((c) => c.map.get('source')?.toString() === 'after the poison'), { message: 'edit after poison' });
  });

  it('oversized messages are refused with 4413 message-too-large and change nothing (both endpoints)', async () => {
    const before = liveBytes();
    const other = new Y.Doc();
    Y.applyUpdate(other, before);
    const sv = Y.encodeStateVector(other);
    createCell(other, { kind: 'code', source: 'x'.repeat(MAX * 2), author: 'big' }, userOrigin('big'));
    const big = Y.encodeStateAsUpdate(other, sv);
    const frames = (c: RawClient) => (c.ws.url.includes('/yjs/') ? ywsUpdate(big) : hpUpdate(wsId, big));
    for (const c of [await rawHocuspocus(server.url, wsId, server.ownerToken), await rawYws(server.url, wsId, server.ownerToken)]) {
      c.send(frames(c));
      expect(await c.closed).toEqual({ code: 4413, reason: 'message-too-large' });
    }
    // One message in fragments, each under the limit, together over it: the same.
    for (const c of [await rawHocuspocus(server.url, wsId, server.ownerToken), await rawYws(server.url, wsId, server.ownerToken)]) {
      const bytes = frames(c);
      const step = MAX / 2;
      for (let at = 0; at < bytes.length; at += step) c.ws.send(bytes.subarray(at, at + step), { binary: true, fin: at + step >= bytes.length });
      expect(await c.closed).toEqual({ code: 4413, reason: 'message-too-large' });
    }
    expect(liveBytes().equals(before)).toBe(true);
    // A message at the limit is not refused for its size.
    const c = await rawYws(server.url, wsId, server.ownerToken);
    const atLimit = new Uint8Array(MAX);
    atLimit[0] = 3; // y-websocket "query awareness" (the rest is ignored): answered, not closed
    const answered = new Promise((resolve) => c.ws.once('message', resolve));
    c.send(atLimit);
    await answered;
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    c.ws.close();
  });

  it('a token for another workspace cannot touch this one', async () => {
    const other = (await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name: 'Other' })).json.workspace.id;
    const foreign = (await api(server.url, server.ownerToken, 'POST', `/api/workspaces/${other}/share`, { role: 'editor' })).json.token;
    const before = liveBytes();
    await expect(rawHocuspocus(server.url, wsId, foreign)).rejects.toThrow(/token-for-another-workspace/);
    const c = await rawYws(server.url, wsId, foreign);
    c.send(ywsUpdate(realUpdate()));
    await expectClosedWith(c, 4403);
    expect(liveBytes().equals(before)).toBe(true);
  });
});
