/**
 * Revoking share links: the owner resets a workspace's links; everyone connected through an older
 * editor, viewer or hand-out link is disconnected at once with 4401 token-revoked (both WebSocket
 * protocols), those links are refused everywhere after (WebSockets and HTTP, hand-out forks too),
 * new links work, and the owner's own token is untouched. (Across nodes: cluster.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlexusServer } from '../../src/app.ts';
import { api, hocuspocusClient, rawRequest, startTestServer, waitFor, ywsClient } from '@plexus/testkit';

let s: PlexusServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const share = async (ws: string, role: string, token = s.ownerToken) => (await api(s.url, token, 'POST', `/api/workspaces/${ws}/share`, { role })).json.token as string;

describe('resetting share links', () => {
  it('disconnects and refuses every older link; new links and the owner work', async () => {
    const ws = (await api(s.url, s.ownerToken, 'POST', '/api/workspaces', { name: 'Revocable' })).json.workspace.id as string;
    const [editor, viewer, handout] = [await share(ws, 'editor'), await share(ws, 'viewer'), await share(ws, 'handout')];
    const ed = hocuspocusClient(s.url, ws, editor);
    const vw = ywsClient(s.url, ws, viewer);
    const owner = hocuspocusClient(s.url, ws, s.ownerToken);
    await Promise.all([ed.synced, vw.synced, owner.synced]);
    // Only the owner may reset.
    expect((await api(s.url, editor, 'POST', `/api/workspaces/${ws}/share/reset`)).status).toBe(403);

    const reset = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/share/reset`);
    expect(reset.status).toBe(200);
    expect(reset.json).toEqual({ reset: true, generation: 1, disconnected: 2 });
    await waitFor(() => ed.closes.some((c) => c.reason === 'token-revoked'), { message: 'the editor disconnected with token-revoked' });
    await waitFor(() => vw.closes.some((c) => c.code === 4401 && c.reason === 'token-revoked'), { message: 'the y-websocket viewer disconnected with 4401 token-revoked' });
    expect(owner.closes).toEqual([]);

    // The old links are refused everywhere.
    const again = hocuspocusClient(s.url, ws, editor);
    await waitFor(() => again.authFailures.includes('token-revoked'), { message: 'the old editor link refused on /collab' });
    const http = await api(s.url, editor, 'GET', `/api/workspaces/${ws}`);
    expect(http.status).toBe(401);
    expect(http.json).toMatchObject({ error: 'token-revoked', message: expect.stringContaining('revoked') });
    expect((await api(s.url, handout, 'POST', `/api/workspaces/${ws}/fork`, { device: 'u_x', personName: 'X' })).json.error).toBe('token-revoked');
    const volumes = await rawRequest(s.url, '/volumes/', { headers: { authorization: `Bearer ${editor}` } });
    expect(volumes.status).toBe(401);
    expect(volumes.json()).toMatchObject({ error: 'token-revoked' });

    // A new link works; a second reset revokes it too.
    const fresh = hocuspocusClient(s.url, ws, await share(ws, 'editor'));
    await fresh.synced;
    expect((await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/share/reset`)).json).toMatchObject({ generation: 2, disconnected: 1 });
    await waitFor(() => fresh.closes.some((c) => c.reason === 'token-revoked'), { message: 'the second link revoked by the second reset' });
    for (const c of [ed, vw, owner, again, fresh]) c.destroy();
  });
});
