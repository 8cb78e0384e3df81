/**
 * A workspace whose stored state breaks the schema (data from before it was enforced, a bug, a
 * newer Plexus) never locks its owner out: connections get 4424 workspace-needs-recovery, the owner
 * sees the problem and the options over HTTP, and either restores the last good version or
 * repairs it; the stored bytes are quarantined first, nothing is lost.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { checkDocument, createCell, getTitle, listCells, schemaVersion, userOrigin } from '@plexus/shared';
import type { PlexusServer } from '../../src/app.ts';
import { api, hocuspocusClient, sqliteStore, startTestServer, storedDoc, waitFor, ywsClient } from '@plexus/testkit';

let server: PlexusServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** A workspace with one valid cell written by a real client, unloaded and compacted. */
async function workspaceWithCell(name: string): Promise<string> {
  const id = (await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name })).json.workspace.id as string;
  const c = hocuspocusClient(server.url, id, server.ownerToken);
  await c.synced;
  createCell(c.doc, { kind: 'code', source: 'kept = 1', author: 'o', id: 'c_kept' as never }, userOrigin('o'));
  await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'ack' });
  c.destroy();
  await waitFor(() => !server.hocuspocus.documents.has(id), { message: 'unloaded' });
  await waitFor(() => server.store.logLength(id) === 0, { message: 'compacted' });
  return id;
}

/** An update on top of what is stored, made with raw Yjs (as a bug or an older server would). */
function storedChange(id: string, change: (d: Y.Doc) => void): Uint8Array {
  const d = storedDoc(server, id);
  const sv = Y.encodeStateVector(d);
  change(d);
  return Y.encodeStateAsUpdate(d, sv);
}

const recovery = (id: string, token = server.ownerToken, action?: string) =>
  api(server.url, token, action ? 'POST' : 'GET', `/api/workspaces/${id}/recovery`, action ? { action } : undefined);

describe('recovery', () => {
  it('a newer schema version in the log: refused on both protocols, the owner restores the last good version', async () => {
    const id = await workspaceWithCell('Too new');
    server.store.append(id, storedChange(id, (d) => createCell(d, { kind: 'code', source: 'good = 2', author: 'o', id: 'c_good' as never }, userOrigin('o'))));
    server.store.append(id, storedChange(id, (d) => d.getMap('meta').set('schemaVersion', 999)));
    server.store.append(id, storedChange(id, (d) => createCell(d, { kind: 'code', source: 'after = 3', author: 'o', id: 'c_after' as never }, userOrigin('o'))));

    const hp = hocuspocusClient(server.url, id, server.ownerToken, { reconnect: false });
    await waitFor(() => hp.authFailures.some((r) => r.includes('workspace-needs-recovery')), { message: 'needs-recovery on /collab' });
    hp.destroy();
    const yws = ywsClient(server.url, id, server.ownerToken);
    const closed = await waitFor(() => yws.closes.find((c) => c.code === 4424), { message: '4424 on /yjs' });
    expect(closed?.reason).toBe('workspace-needs-recovery');
    yws.destroy();

    // Only the owner may look and act.
    const editor = server.signer.sign({ ws: id, role: 'editor', sub: 'u_ed', ttlSeconds: 600 });
    expect((await recovery(id, editor)).status).toBe(403);
    const info = await recovery(id);
    expect(info.status).toBe(200);
    expect(info.json).toMatchObject({ needsRecovery: true, lastGood: { kept: 1, dropped: 2 } });
    expect(info.json.problem).toContain('newer Plexus');

    const done = await recovery(id, server.ownerToken, 'last-good');
    expect(done.json).toMatchObject({ recovered: true, kept: 1, dropped: 2 });
    expect(fs.existsSync(path.join(server.config.dataDir, 'quarantine', done.json.quarantined))).toBe(true);

    const ok = hocuspocusClient(server.url, id, server.ownerToken);
    await ok.synced;
    expect(listCells(ok.doc).map((c) => c.id).sort()).toEqual(['c_good', 'c_kept']);
    expect(schemaVersion(ok.doc)).toBe(1);
    expect(getTitle(ok.doc)).toBe('Too new');
    expect(checkDocument(ok.doc)).toEqual([]);
    ok.destroy();
    expect((await recovery(id)).json).toEqual({ needsRecovery: false });
  });

  it('a snapshot that breaks the schema has no good version: the owner repairs it, keeping every valid part', async () => {
    const id = await workspaceWithCell('Broken snapshot');
    const bad = storedDoc(server, id);
    bad.getMap('cells').set('c_string', 'not a cell');
    (bad.getMap('cells').get('c_kept') as Y.Map<unknown>).set('zz_unknown', { x: 1 });
    bad.getText('zz_root').insert(0, 'stray');
    expect(server.store.compact(id, Y.encodeStateAsUpdate(bad), sqliteStore(server).loadParts(id).upto)).toBeGreaterThanOrEqual(0);
    expect(checkDocument(storedDoc(server, id)).length).toBe(3);

    const info = await recovery(id);
    expect(info.json).toMatchObject({ needsRecovery: true, lastGood: null, repair: { removed: 3 } });
    expect(info.json.details.join('\n')).toContain('cells/c_string');
    expect((await recovery(id, server.ownerToken, 'last-good')).status).toBe(409);

    expect((await recovery(id, server.ownerToken, 'repair')).json).toMatchObject({ recovered: true, removed: 3 });
    const ok = hocuspocusClient(server.url, id, server.ownerToken);
    await ok.synced;
    expect(listCells(ok.doc).map((c) => c.id)).toEqual(['c_kept']);
    expect(checkDocument(ok.doc)).toEqual([]);
    ok.destroy();
  });

  it('a workspace that loads normally has nothing to recover', async () => {
    const id = await workspaceWithCell('Fine');
    expect((await recovery(id)).json).toEqual({ needsRecovery: false });
    expect((await recovery(id, server.ownerToken, 'repair')).status).toBe(409);
  });
});
