/**
 * How a real server decides incoming updates (collab/shadow.ts): what a writer working alone sends
 * is accepted by the pre-check against the live document, with no shadow replica built (the
 * memory and the second apply the pre-check saves); what it leaves open — here two people writing
 * the same key at once — is decided on a shadow replica, which is dropped again after
 * KEEP_SHADOW more accepted updates; an update the document has all of already needs neither.
 * Refusals go through the shadow, and read as before
 * (schema-enforcement.test.ts, bad-input.test.ts cover them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { createCell, listCells, roots, userOrigin } from '@plexus/shared';
import type { PlexusServer } from '../../src/app.ts';
import { KEEP_SHADOW } from '../../src/collab/shadow.ts';
import { api, hocuspocusClient, hpUpdate, rawHocuspocus, startTestServer, waitFor, type HpClient } from '@plexus/testkit';

let server: PlexusServer;
let wsId: string;
let alice: HpClient;
const live = () => server.hocuspocus.documents.get(wsId)!;
const checks = () => ({ ...server.persistence.validation });

beforeAll(async () => {
  server = await startTestServer();
  wsId = (await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name: 'Validation' })).json.workspace.id;
  alice = hocuspocusClient(server.url, wsId, server.ownerToken);
  await alice.synced;
});

afterAll(async () => {
  alice?.destroy();
  await server?.close();
});

/** Types `n` characters, one update each, and waits until the server has them all. */
async function type(into: Y.Text, n: number): Promise<void> {
  const target = into.length + n;
  for (let i = 0; i < n; i++) alice.doc.transact(() => into.insert(into.length, 'x'), userOrigin('u_alice', 'Alice'));
  const id = listCells(alice.doc).find((c) => c.map.get('source') === into)!.id;
  await waitFor(() => (roots(live()).cells.get(id)?.get('source') as Y.Text | undefined)?.length === target, { message: 'typing reached the server' });
}

describe('validation of incoming updates', () => {
  it('a writer working alone is accepted by the pre-check, and no shadow replica is built', async () => {
    const before = checks();
    const id = createCell(alice.doc, { kind: 'code', source: '', author: 'u_alice' }, userOrigin('u_alice', 'Alice'));
    const text = listCells(alice.doc).find((c) => c.id === id)!.map.get('source') as Y.Text;
    await type(text, 40);
    const after = checks();
    expect(after.precheck - before.precheck).toBeGreaterThanOrEqual(41);
    expect(after.shadow - before.shadow).toBe(0);
    expect(after.shadowsBuilt - before.shadowsBuilt).toBe(0);
    expect(server.persistence.hasShadow(wsId)).toBe(false);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/plexus_update_checks_total\{way="precheck"[^}]*\} [1-9]/);
  });

  it('two people writing one key at once are decided on a shadow, dropped after KEEP_SHADOW more updates', async () => {
    const id = createCell(alice.doc, { kind: 'code', source: '', author: 'u_alice' }, userOrigin('u_alice', 'Alice'));
    await waitFor(() => roots(live()).cells.has(id), { message: 'cell stored' });
    // Two replicas of the same state each rename the cell; the second rename was made without
    // seeing the first, so it may lose to it — only applying it can tell.
    const state = Y.encodeStateAsUpdate(live());
    const [bob, carol] = [new Y.Doc(), new Y.Doc()];
    Y.applyUpdate(bob, state);
    Y.applyUpdate(carol, state);
    const rename = (d: Y.Doc, name: string) => {
      const sv = Y.encodeStateVector(d);
      d.transact(() => roots(d).cells.get(id)!.set('name', name), userOrigin('u_x', 'X'));
      return Y.encodeStateAsUpdate(d, sv);
    };
    const first = rename(bob, 'bob_name');
    const second = rename(carol, 'carol_name');
    const before = checks();
    const raw = await rawHocuspocus(server.url, wsId, server.ownerToken);
    raw.send(hpUpdate(wsId, first));
    raw.send(hpUpdate(wsId, second));
    await raw.roundTrip();
    raw.ws.close();
    const after = checks();
    expect(after.precheck - before.precheck).toBe(1); // the first rename
    expect(after.shadow - before.shadow).toBe(1); // the concurrent one
    expect(after.shadowsBuilt - before.shadowsBuilt).toBe(1);
    expect(['bob_name', 'carol_name']).toContain(roots(live()).cells.get(id)!.get('name'));
    expect(server.persistence.hasShadow(wsId)).toBe(true);
    // The shadow is kept in step while it may be needed again, then dropped.
    await waitFor(() => listCells(alice.doc).find((c) => c.id === id)?.map.get('name') !== undefined, { message: 'rename reached alice' });
    const text = listCells(alice.doc).find((c) => c.id === id)!.map.get('source') as Y.Text;
    await type(text, KEEP_SHADOW - 1);
    expect(server.persistence.hasShadow(wsId)).toBe(true);
    await type(text, 1);
    expect(server.persistence.hasShadow(wsId)).toBe(false);
    expect(checks().shadowsBuilt - before.shadowsBuilt).toBe(1);
  });

  it('an update the document has all of already (a sync reply that crossed the sender\'s own updates) is accepted without a shadow; one with something new is still decided', async () => {
    const id = createCell(alice.doc, { kind: 'code', source: '', author: 'u_alice' }, userOrigin('u_alice', 'Alice'));
    const text = listCells(alice.doc).find((c) => c.id === id)!.map.get('source') as Y.Text;
    await type(text, 3);
    const sv = Y.encodeStateVector(alice.doc);
    await type(text, 5);
    alice.doc.transact(() => text.delete(0, 2), userOrigin('u_alice', 'Alice'));
    await waitFor(() => (roots(live()).cells.get(id)?.get('source') as Y.Text).length === 6, { message: 'the deletion reached the server' });
    // What the server has had for a while, sent again: five insertions and a deletion.
    const again = Y.encodeStateAsUpdate(alice.doc, sv);
    expect(server.persistence.hasShadow(wsId)).toBe(false);
    const before = checks();
    const head = await server.store.logHead(wsId);
    const raw = await rawHocuspocus(server.url, wsId, server.ownerToken);
    raw.send(hpUpdate(wsId, again));
    await raw.roundTrip();
    expect(checks()).toMatchObject({ known: before.known + 1, shadow: before.shadow, shadowsBuilt: before.shadowsBuilt });
    expect(server.persistence.hasShadow(wsId)).toBe(false);
    expect(await server.store.logHead(wsId)).toBe(head); // nothing logged for it
    // The same with one more character: not all known, so the shadow decides it (and accepts it).
    const svNow = Y.encodeStateVector(alice.doc);
    const bob = new Y.Doc();
    Y.applyUpdate(bob, Y.encodeStateAsUpdate(alice.doc));
    (listCells(bob).find((c) => c.id === id)!.map.get('source') as Y.Text).insert(0, 'b');
    raw.send(hpUpdate(wsId, Y.mergeUpdates([again, Y.encodeStateAsUpdate(bob, svNow)])));
    await raw.roundTrip();
    raw.ws.close();
    expect(checks()).toMatchObject({ known: before.known + 1, shadow: before.shadow + 1, shadowsBuilt: before.shadowsBuilt + 1 });
    expect(await server.store.logHead(wsId)).toBe(head + 1);
    expect((roots(live()).cells.get(id)!.get('source') as Y.Text).toString()).toBe((listCells(bob).find((c) => c.id === id)!.map.get('source') as Y.Text).toString());
  });
});
