/**
 * HTTP API: workspace lifecycle (create, list, rename, duplicate, delete), share links and roles,
 * clear JSON errors, health.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCell, listCells, cellSource, userOrigin, getTitle } from '@plexus/shared';
import type { PlexusServer } from '../../src/app.ts';
import { api, hocuspocusClient, startTestServer, waitFor, ywsClient } from '@plexus/testkit';

let s: PlexusServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

describe('HTTP API', () => {
  it('health needs no token', async () => {
    const r = await api(s.url, null, 'GET', '/api/health');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: true, version: expect.any(String) });
  });

  it('refuses missing and bad tokens with a clear JSON error', async () => {
    expect((await api(s.url, null, 'GET', '/api/workspaces')).json.error).toBe('unauthorized');
    const expired = s.signer.sign({ ws: '*', role: 'owner', sub: 'x', ttlSeconds: 1, now: Date.now() - 5000 });
    const r = await api(s.url, expired, 'GET', '/api/workspaces');
    expect(r.status).toBe(401);
    expect(r.json.error).toBe('token-expired');
    expect((await api(s.url, s.ownerToken, 'GET', '/api/nope')).status).toBe(404);
  });

  it('create, list, get, rename (document title follows), duplicate (content copied, new epoch), delete', async () => {
    const created = await api(s.url, s.ownerToken, 'POST', '/api/workspaces', { name: '  Two-photon  ' });
    expect(created.status).toBe(201);
    const w = created.json.workspace;
    expect(w.name).toBe('Two-photon');
    expect((await api(s.url, s.ownerToken, 'GET', '/api/workspaces')).json.workspaces.map((x: { id: string }) => x.id)).toContain(w.id);

    const c = hocuspocusClient(s.url, w.id, s.ownerToken);
    await c.synced;
    createCell(c.doc, { kind: 'code', source: 'const traces = 1;', author: 'a' }, userOrigin('a'));
    await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'ack' });

    const renamed = await api(s.url, s.ownerToken, 'PATCH', `/api/workspaces/${w.id}`, { name: 'Calcium imaging' });
    expect(renamed.json.workspace.name).toBe('Calcium imaging');
    await waitFor(() => getTitle(c.doc) === 'Calcium imaging', { message: 'connected client sees the new title' });

    const dup = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${w.id}/duplicate`, {});
    expect(dup.status).toBe(201);
    expect(dup.json.workspace.name).toBe('Calcium imaging (copy)');
    expect(dup.json.workspace.epoch).not.toBe(w.epoch);
    const d = hocuspocusClient(s.url, dup.json.workspace.id, s.ownerToken);
    await d.synced;
    expect(listCells(d.doc).map(cellSource)).toEqual(['const traces = 1;']);
    expect(getTitle(d.doc)).toBe('Calcium imaging (copy)');
    d.destroy();

    const del = await api(s.url, s.ownerToken, 'DELETE', `/api/workspaces/${w.id}`);
    expect(del.status).toBe(204);
    await waitFor(() => c.closes.some((x) => x.reason === 'workspace-not-found'), { message: 'connected client told' });
    c.destroy();
    expect((await api(s.url, s.ownerToken, 'GET', `/api/workspaces/${w.id}`)).status).toBe(404);
    expect(await s.store.logLength(w.id)).toBe(0);
    const late = ywsClient(s.url, w.id, s.ownerToken);
    await waitFor(() => late.closes.some((x) => x.code === 4404), { message: 'deleted workspace refused' });
    late.destroy();
  });

  it('validates input', async () => {
    expect((await api(s.url, s.ownerToken, 'POST', '/api/workspaces', { name: '' })).json.error).toBe('bad-name');
    expect((await api(s.url, s.ownerToken, 'POST', '/api/workspaces', { name: 'x'.repeat(201) })).status).toBe(400);
    const res = await fetch(s.url + '/api/workspaces', { method: 'POST', headers: { authorization: `Bearer ${s.ownerToken}` }, body: '{not json' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('bad-json');
  });

  it('share links grant exactly their workspace and role', async () => {
    const a = (await api(s.url, s.ownerToken, 'POST', '/api/workspaces', { name: 'A' })).json.workspace.id;
    const b = (await api(s.url, s.ownerToken, 'POST', '/api/workspaces', { name: 'B' })).json.workspace.id;
    const edit = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${a}/share`, { role: 'editor' });
    expect(edit.json.url).toMatch(new RegExp(`/w/${a}\\?token=`));
    const view = (await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${a}/share`, { role: 'viewer' })).json.token;
    expect((await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${a}/share`, { role: 'owner' })).json.error).toBe('bad-role');
    // Editor link: sees only its workspace, cannot manage it.
    const listed = (await api(s.url, edit.json.token, 'GET', '/api/workspaces')).json.workspaces;
    expect(listed.map((w: { id: string }) => w.id)).toEqual([a]);
    expect((await api(s.url, edit.json.token, 'GET', `/api/workspaces/${a}`)).json.role).toBe('editor');
    expect((await api(s.url, edit.json.token, 'GET', `/api/workspaces/${b}`)).status).toBe(403);
    expect((await api(s.url, edit.json.token, 'DELETE', `/api/workspaces/${a}`)).status).toBe(403);
    expect((await api(s.url, edit.json.token, 'POST', `/api/workspaces/${a}/share`, { role: 'editor' })).status).toBe(403);
    expect((await api(s.url, edit.json.token, 'POST', '/api/workspaces', { name: 'mine' })).status).toBe(403);
    expect((await api(s.url, view, 'PATCH', `/api/workspaces/${a}`, { name: 'hacked' })).status).toBe(403);
    expect((await api(s.url, view, 'GET', `/api/workspaces/${a}`)).json.role).toBe('viewer');
  });
});
