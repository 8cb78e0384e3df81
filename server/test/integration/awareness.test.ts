/**
 * Presence cannot be spoofed: a connection may not overwrite or remove another connection's
 * awareness entry, may not claim a role its token does not grant, and only service connections
 * may appear as the agent. Legitimate presence flows between both protocols.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as encoding from 'lib0/encoding';
import type { PlexusServer } from '../../src/app.ts';
import { api, hocuspocusClient, startTestServer, waitFor, ywsClient, hpFrame, rawHocuspocus, rawYws } from '@plexus/testkit';

let s: PlexusServer;
let ws: string;
let viewerToken: string;
beforeAll(async () => {
  s = await startTestServer();
  ws = (await api(s.url, s.ownerToken, 'POST', '/api/workspaces', { name: 'Presence' })).json.workspace.id;
  viewerToken = (await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/share`, { role: 'viewer' })).json.token;
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
