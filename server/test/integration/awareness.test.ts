/**
 * Presence cannot be spoofed: a connection may not overwrite or remove another connection's
 * awareness entry, may not claim a role its token does not grant, only service connections
 * may appear as the agent, and the identity everyone sees (`user.sub`, `user.id`, and `user.name`
 * when the token names someone) is stamped from the token. Legitimate presence flows between both
 * protocols.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as encoding from 'lib0/encoding';
import { presenceId, type PresenceUser } from '@plexus/shared';
import type { PlexusServer } from '../../src/app.ts';
import { api, hocuspocusClient, startTestServer, waitFor, ywsClient, hpFrame, rawHocuspocus, rawYws } from '@plexus/testkit';

let s: PlexusServer;
let ws: string;
let viewerToken: string;
let editorToken: string;
beforeAll(async () => {
  s = await startTestServer();
  ws = (await api(s.url, s.ownerToken, 'POST', '/api/workspaces', { name: 'Presence' })).json.workspace.id;
  viewerToken = (await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/share`, { role: 'viewer' })).json.token;
  editorToken = (await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/share`, { role: 'editor' })).json.token;
});
afterAll(() => s.close());

function awarenessUpdate(entries: Array<{ clientId: number; clock: number; state: unknown }>): Uint8Array {
  const e = encoding.createEncoder();
  encoding.writeVarUint(e, entries.length);
  for (const x of entries) {
    encoding.writeVarUint(e, x.clientId);
    encoding.writeVarUint(e, x.clock);
    encoding.writeVarString(e, JSON.stringify(x.state));
  }
  return encoding.toUint8Array(e);
}
const ywsAwareness = (u: Uint8Array) => {
  const e = encoding.createEncoder();
  encoding.writeVarUint(e, 1);
  encoding.writeVarUint8Array(e, u);
  return encoding.toUint8Array(e);
};
const hpAwareness = (u: Uint8Array) => hpFrame(ws, 1, (e) => encoding.writeVarUint8Array(e, u));
const user = (name: string, role: string, kind = 'person') => ({ user: { id: name, name, color: '#123456', role, kind } });

describe('awareness checks', () => {
  it('presence flows between a Hocuspocus client and a y-websocket client', async () => {
    const a = hocuspocusClient(s.url, ws, s.ownerToken);
    const b = ywsClient(s.url, ws, s.ownerToken);
    await Promise.all([a.synced, b.synced]);
    a.provider.awareness!.setLocalState(user('alice', 'owner'));
    b.provider.awareness.setLocalState(user('bob', 'owner'));
    await waitFor(() => [...b.provider.awareness.getStates().values()].some((st) => st.user?.name === 'alice'), { message: 'bob sees alice' });
    await waitFor(() => [...a.provider.awareness!.getStates().values()].some((st) => st.user?.name === 'bob'), { message: 'alice sees bob' });
    a.destroy();
    b.destroy();
  });

  it('nobody can overwrite someone else’s presence (both protocols)', async () => {
    const victim = ywsClient(s.url, ws, s.ownerToken);
    await victim.synced;
    victim.provider.awareness.setLocalState(user('victim', 'owner'));
    const id = victim.doc.clientID;
    await waitFor(() => s.hocuspocus.documents.get(ws)?.awareness.getStates().get(id)?.user?.name === 'victim', { message: 'victim presence on server' });
    const spoof = awarenessUpdate([{ clientId: id, clock: 999, state: user('mallory-as-victim', 'owner') }]);
    const y = await rawYws(s.url, ws, s.ownerToken);
    y.send(ywsAwareness(spoof));
    expect((await y.closed).code).toBe(4422);
    const h = await rawHocuspocus(s.url, ws, s.ownerToken);
    h.send(hpAwareness(spoof));
    expect((await h.closed).code).toBe(4422);
    // A removal of someone else's entry at its current clock is a spoof too.
    const clock = s.hocuspocus.documents.get(ws)!.awareness.meta.get(id)!.clock;
    const r = await rawYws(s.url, ws, s.ownerToken);
    r.send(ywsAwareness(awarenessUpdate([{ clientId: id, clock, state: null }])));
    expect((await r.closed).code).toBe(4422);
    expect(s.hocuspocus.documents.get(ws)!.awareness.getStates().get(id)?.user?.name).toBe('victim');
    expect([...victim.provider.awareness.getStates().values()].map((st) => st.user?.name)).not.toContain('mallory-as-victim');
    victim.destroy();
  });

  it('a viewer cannot claim the owner role or appear as the agent', async () => {
    for (const [state, label] of [
      [user('v', 'owner'), 'role'],
      [user('agent', 'viewer', 'agent'), 'agent'],
    ] as const) {
      const y = await rawYws(s.url, ws, viewerToken);
      y.send(ywsAwareness(awarenessUpdate([{ clientId: 77000 + label.length, clock: 1, state }])));
      expect((await y.closed).code, label).toBe(4422);
    }
    // Its honest presence is accepted and visible.
    const v = ywsClient(s.url, ws, viewerToken);
    await v.synced;
    v.provider.awareness.setLocalState(user('honest viewer', 'viewer'));
    await waitFor(() => [...s.hocuspocus.documents.get(ws)!.awareness.getStates().values()].some((st) => st.user?.name === 'honest viewer'), { message: 'viewer presence' });
    v.destroy();
  });
});

type Proto = 'hocuspocus' | 'y-websocket';
/** A stock client of either protocol, with its awareness. */
function stockClient(proto: Proto, token: string) {
  if (proto === 'hocuspocus') {
    const c = hocuspocusClient(s.url, ws, token);
    return { synced: c.synced, awareness: c.provider.awareness!, clientId: c.doc.clientID, destroy: () => c.destroy() };
  }
  const c = ywsClient(s.url, ws, token);
  return { synced: c.synced, awareness: c.provider.awareness, clientId: c.doc.clientID, destroy: () => c.destroy() };
}
type StockClient = ReturnType<typeof stockClient>;
/** The presence `user` of `who` as `observer` sees it, once `until` holds for it. */
const seenUser = async (observer: StockClient, who: StockClient, until: (u: PresenceUser) => boolean): Promise<PresenceUser> =>
  (await waitFor(() => {
    const u = observer.awareness.getStates().get(who.clientId)?.user as PresenceUser | undefined;
    return u && until(u) ? u : undefined;
  }, { message: 'presence seen by the observer' }))!;

describe('presence identity is stamped from the token', () => {
  for (const [proto, observerProto] of [['hocuspocus', 'y-websocket'], ['y-websocket', 'hocuspocus']] as const) {
    it(`an editor-link holder cannot present the owner's id (${proto}): others see it under the link`, async () => {
      const olivia = stockClient('y-websocket', s.ownerToken);
      const mallory = stockClient(proto, editorToken);
      const observer = stockClient(observerProto, viewerToken);
      await Promise.all([olivia.synced, mallory.synced, observer.synced]);
      const oliviaUser = { id: presenceId('local-owner', 'u_olivia'), name: 'Olivia Owner', color: '#123456', role: 'owner', kind: 'person' };
      olivia.awareness.setLocalState({ user: oliviaUser });
      const seenOlivia = await seenUser(observer, olivia, (u) => u.name === 'Olivia Owner');
      expect(seenOlivia).toMatchObject({ id: 'local-owner/u_olivia', sub: 'local-owner', role: 'owner' });

      // Mallory copies Olivia's presence id and name, with the role her token grants.
      mallory.awareness.setLocalState({ user: { ...oliviaUser, role: 'editor' } });
      const seen = await seenUser(observer, mallory, (u) => u.name === 'Olivia Owner');
      expect(seen.sub).toBe('link:editor');
      expect(seen.id).toBe('link:editor/local-owner/u_olivia');
      expect(seen.id).not.toBe(seenOlivia.id);
      // The server's copy (what joiners get) is stamped too, and Olivia's own presence is intact.
      const server = s.hocuspocus.documents.get(ws)!.awareness.getStates();
      expect(server.get(mallory.clientId)?.user).toMatchObject({ id: 'link:editor/local-owner/u_olivia', sub: 'link:editor' });
      expect(server.get(olivia.clientId)?.user).toMatchObject({ id: 'local-owner/u_olivia', sub: 'local-owner' });

      // A bare device id (as a script would send) is put under the token's subject; a claimed
      // `sub` is overwritten.
      mallory.awareness.setLocalState({ user: { id: 'u_olivia', sub: 'local-owner', name: 'Olivia Owner', color: '#123456', role: 'editor', kind: 'person' } });
      const bare = await seenUser(observer, mallory, (u) => u.id !== seen.id);
      expect(bare).toMatchObject({ id: 'link:editor/u_olivia', sub: 'link:editor', name: 'Olivia Owner' });
      for (const c of [olivia, mallory, observer]) c.destroy();
    });

    it(`a token that names its holder fixes the name everyone sees (${proto})`, async () => {
      const named = s.signer.sign({ ws, role: 'service', sub: 'service:test', name: 'Test service', ttlSeconds: 600 });
      const svc = stockClient(proto, named);
      const observer = stockClient(observerProto, s.ownerToken);
      await Promise.all([svc.synced, observer.synced]);
      svc.awareness.setLocalState({ user: { id: 'bot', name: 'Olivia Owner', color: '#123456', role: 'service', kind: 'service' } });
      const seen = await seenUser(observer, svc, () => true);
      expect(seen).toMatchObject({ id: 'service:test/bot', sub: 'service:test', name: 'Test service', role: 'service', kind: 'service' });
      svc.destroy();
      observer.destroy();
    });
  }

  it('a client that builds its presence as the server stamps it is relayed unchanged (both protocols)', async () => {
    const a = stockClient('hocuspocus', editorToken);
    const b = stockClient('y-websocket', s.ownerToken);
    await Promise.all([a.synced, b.synced]);
    const aUser = { id: presenceId('link:editor', 'u_a'), sub: 'link:editor', name: 'Ada', color: '#123456', colorLight: '#12345633', role: 'editor', kind: 'person' };
    const bUser = { id: presenceId('local-owner', 'u_b'), sub: 'local-owner', name: 'Bo', color: '#654321', colorLight: '#65432133', role: 'owner', kind: 'person' };
    a.awareness.setLocalState({ user: aUser, focus: { panel: 'notebook', cellId: null } });
    b.awareness.setLocalState({ user: bUser });
    await waitFor(() => b.awareness.getStates().get(a.clientId)?.user?.name === 'Ada', { message: 'b sees a' });
    await waitFor(() => a.awareness.getStates().get(b.clientId)?.user?.name === 'Bo', { message: 'a sees b' });
    expect(b.awareness.getStates().get(a.clientId)).toEqual({ user: aUser, focus: { panel: 'notebook', cellId: null } });
    expect(a.awareness.getStates().get(b.clientId)).toEqual({ user: bUser });
    a.destroy();
    b.destroy();
  });
});
