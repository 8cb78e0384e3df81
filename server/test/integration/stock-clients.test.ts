/**
 * Stock Yjs clients (the Hocuspocus provider and y-websocket's WebsocketProvider) join a workspace
 * created through the HTTP API, edit it and see each other's edits; viewer tokens cannot change
 * anything anywhere; bad tokens are refused with a clear reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { createCell, listCells, cellSource, userOrigin, getTitle } from '@plexus/shared';
import type { PlexusServer } from '../../src/app.ts';
import { rawYws, api, hocuspocusClient, startTestServer, storedDocAsync, waitFor, ywsClient, type HpClient, type YwsClient } from '@plexus/testkit';

let server: PlexusServer;
let wsId: string;
const clients: Array<HpClient | YwsClient> = [];
const track = <T extends HpClient | YwsClient>(c: T): T => (clients.push(c), c);

beforeAll(async () => {
  server = await startTestServer();
  const res = await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name: 'Stock clients' });
  expect(res.status).toBe(201);
  wsId = res.json.workspace.id;
});
afterAll(async () => {
  clients.forEach((c) => c.destroy());
  await server.close();
});


describe('stock clients', () => {
  it('a Hocuspocus client and a y-websocket client read, edit and see each other', async () => {
    const hp = track(hocuspocusClient(server.url, wsId, server.ownerToken));
    const yw = track(ywsClient(server.url, wsId, server.ownerToken));
    await hp.synced;
    await yw.synced;
    // Both read the workspace created through the API.
    expect(getTitle(hp.doc)).toBe('Stock clients');
    expect(getTitle(yw.doc)).toBe('Stock clients');
    const a = createCell(hp.doc, { kind: 'code', source: 'from hocuspocus', author: 'hp' }, userOrigin('hp'));
    const b = createCell(yw.doc, { kind: 'sql', source: 'from y-websocket', author: 'yw' }, userOrigin('yw'));
    await waitFor(() => listCells(hp.doc).length === 2 && listCells(yw.doc).length === 2, { message: 'both cells on both clients' });
    for (const doc of [hp.doc, yw.doc]) {
      expect(listCells(doc).map((c) => cellSource(c)).sort()).toEqual(['from hocuspocus', 'from y-websocket']);
    }
    // And the server stored both.
    await waitFor(async () => listCells(await storedDocAsync(server, wsId)).length === 2, { message: 'stored' });
    expect(new Set(listCells(await storedDocAsync(server, wsId)).map((c) => c.id))).toEqual(new Set([a, b]));
  });

  it('viewer tokens: edits never reach other clients or storage (both protocols)', async () => {
    const share = await api(server.url, server.ownerToken, 'POST', `/api/workspaces/${wsId}/share`, { role: 'viewer' });
    expect(share.status).toBe(200);
    const viewerToken: string = share.json.token;
    const editor = track(hocuspocusClient(server.url, wsId, server.ownerToken));
    const hpViewer = track(hocuspocusClient(server.url, wsId, viewerToken));
    const ywViewer = track(ywsClient(server.url, wsId, viewerToken));
    await Promise.all([editor.synced, hpViewer.synced, ywViewer.synced]);
    const before = listCells(editor.doc).length;
    const storedBefore = Y.encodeStateVector(await storedDocAsync(server, wsId));

    createCell(hpViewer.doc, { kind: 'code', source: 'viewer via hocuspocus', author: 'v' }, userOrigin('v1'));
    createCell(ywViewer.doc, { kind: 'code', source: 'viewer via y-websocket', author: 'v' }, userOrigin('v2'));
    // The server refuses with a clear reason.
    await waitFor(() => hpViewer.closes.some((c) => c.reason === 'read-only'), { message: 'hocuspocus viewer closed read-only' });
    await waitFor(() => ywViewer.closes.some((c) => c.code === 4403 && c.reason === 'read-only'), { message: 'y-websocket viewer closed read-only' });
    // A legitimate edit after the attempts proves the pipeline is flowing, then check nothing leaked.
    createCell(editor.doc, { kind: 'markdown', source: 'marker', author: 'e' }, userOrigin('e'));
    await waitFor(async () => listCells(await storedDocAsync(server, wsId)).some((c) => cellSource(c) === 'marker'), { message: 'marker stored' });
    const sources = listCells(await storedDocAsync(server, wsId)).map(cellSource);
    expect(sources).not.toContain('viewer via hocuspocus');
    expect(sources).not.toContain('viewer via y-websocket');
    expect(listCells(editor.doc).map(cellSource)).not.toContain('viewer via hocuspocus');
    expect(listCells(editor.doc).map(cellSource)).not.toContain('viewer via y-websocket');
    expect(listCells(editor.doc).length).toBe(before + 1);
    expect(storedBefore.byteLength).toBeGreaterThan(0);
  });

  it('viewers still receive live changes', async () => {
    const share = await api(server.url, server.ownerToken, 'POST', `/api/workspaces/${wsId}/share`, { role: 'viewer' });
    const viewer = track(ywsClient(server.url, wsId, share.json.token));
    const hpViewer = track(hocuspocusClient(server.url, wsId, share.json.token));
    const editor = track(hocuspocusClient(server.url, wsId, server.ownerToken));
    await Promise.all([viewer.synced, editor.synced, hpViewer.synced]);
    createCell(editor.doc, { kind: 'code', source: 'live for viewers', author: 'e' }, userOrigin('e'));
    await waitFor(() => listCells(viewer.doc).some((c) => cellSource(c) === 'live for viewers'), { message: 'y-websocket viewer sees edit' });
    await waitFor(() => listCells(hpViewer.doc).some((c) => cellSource(c) === 'live for viewers'), { message: 'hocuspocus viewer sees edit' });
  });

  it('a peer that joins while the previous one is leaving gets the live document, and its edits are stored', async () => {
    // Regression: Hocuspocus could run a late second unload of a document that a leaving direct
    // connection had already unloaded, dropping the newly loaded copy from its map.
    const id = (await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name: 'Churn' })).json.workspace.id;
    for (let i = 0; i < 15; i++) {
      // The server closes the leaving peer (a malformed frame) while the next one is connecting.
      const leaving = await rawYws(server.url, id, server.ownerToken);
      leaving.send(new Uint8Array([0, 9, 9]));
      await leaving.closed;
      const joining = track(ywsClient(server.url, id, server.ownerToken));
      await joining.synced;
      createCell(joining.doc, { kind: 'code', source: `churn ${i}`, author: 'c' }, userOrigin('c'));
      await waitFor(async () => listCells(await storedDocAsync(server, id)).some((c) => cellSource(c) === `churn ${i}`), { message: `churn ${i} stored` });
      expect(server.hocuspocus.documents.get(id)).toBeDefined();
      joining.destroy();
    }
  });

  it('bad, expired and wrong-workspace tokens are refused with a clear reason', async () => {
    const other = await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name: 'Other' });
    const otherShare = await api(server.url, server.ownerToken, 'POST', `/api/workspaces/${other.json.workspace.id}/share`, { role: 'editor' });
    const expired = server.signer.sign({ ws: wsId, role: 'editor', sub: 't', ttlSeconds: 1, now: Date.now() - 10_000 });
    const cases: Array<[string, string, number]> = [
      ['garbage', 'unauthorized', 4401],
      [server.ownerToken.slice(0, -3) + 'abc', 'unauthorized', 4401],
      [expired, 'token-expired', 4401],
      [otherShare.json.token, 'token-for-another-workspace', 4403],
    ];
    for (const [token, reason, code] of cases) {
      const hp = track(hocuspocusClient(server.url, wsId, token));
      await waitFor(() => hp.authFailures.includes(reason), { message: `hocuspocus refusal ${reason}` });
      expect(hp.doc.share.size === 0 || listCells(hp.doc).length === 0).toBe(true);
      const yw = track(ywsClient(server.url, wsId, token));
      await waitFor(() => yw.closes.some((c) => c.code === code && c.reason === reason), { message: `y-websocket refusal ${reason}` });
      yw.destroy();
      expect(listCells(yw.doc)).toHaveLength(0);
    }
    // A workspace that does not exist.
    const ghost = track(ywsClient(server.url, 'w_doesnotexist', server.ownerToken));
    await waitFor(() => ghost.closes.some((c) => c.code === 4404), { message: 'not found' });
    ghost.destroy();
  });
});
