/**
 * The document schema is enforced by the server, on both protocols: for every rule of the schema
 * (generated from it, see shared/test/schema-violations.ts) an update that breaks it, sent with the
 * token of the writer concerned, is refused with 4423 before anything is stored or relayed, and
 * the workspace still loads, unchanged and valid, after a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { checkDocument, serverOrigin, type Writer } from '@plexus/shared';
import type { PlexusServer } from '../../src/app.ts';
import { withDoc } from '../../src/http/doc-access.ts';
import { api, hocuspocusClient, startTestServer, storedDoc, waitFor, type HpClient } from '@plexus/testkit';
import { hpUpdate, rawHocuspocus, rawYws, ywsUpdate } from '@plexus/testkit';
import { buildFixture } from '../../../shared/test/schema-fixture.ts';
import { copyOf, originOf, violationCases, type ViolationCase } from '../../../shared/test/schema-violations.ts';

let server: PlexusServer;
let wsId: string;
let base: Y.Doc;
let keeper: HpClient;
const live = () => server.hocuspocus.documents.get(wsId)!;

function tokenFor(w: Writer): string {
  if (w === 'agent' || w === 'kernel') return server.signer.sign({ ws: wsId, role: 'service', sub: `service:${w}`, ttlSeconds: 600 });
  return server.ownerToken; // people (and shape rules, which hold for everyone)
}

/** The update a case makes, relative to the fixture the server holds. */
function updateOf(c: Pick<ViolationCase, 'writer' | 'mutate'>): Uint8Array {
  const d = copyOf(base, false);
  const sv = Y.encodeStateVector(d);
  d.transact(() => c.mutate(d), originOf(c.writer));
  return Y.encodeStateAsUpdate(d, sv);
}

beforeAll(async () => {
  server = await startTestServer();
  wsId = (await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name: 'Schema' })).json.workspace.id;
  // The fixture workspace (every record of the schema), written by the server into this one.
  base = buildFixture(undefined, storedDoc(server, wsId));
  const fixture = Y.encodeStateAsUpdate(base);
  await withDoc(server.hocuspocus, wsId, (doc) => Y.applyUpdate(doc, fixture, serverOrigin('test-fixture')));
  keeper = hocuspocusClient(server.url, wsId, server.ownerToken);
  await keeper.synced;
});

afterAll(async () => {
  keeper?.destroy();
  await server?.close();
});

describe('schema enforcement', () => {
  it('the fixture itself is accepted and valid', () => {
    expect(checkDocument(live())).toEqual([]);
  });

  it('refuses one violating update per rule, on both protocols, with 4423, storing and relaying nothing', async () => {
    const cases: Array<Pick<ViolationCase, 'rule' | 'writer' | 'mutate'>> = [
      ...violationCases(base),
      // The shapes that once locked a workspace, by hand.
      { rule: 'cells entry set to a string', writer: 'person', mutate: (d) => d.getMap('cells').set('c_code', 'oops') },
      { rule: 'a cell source that is a map', writer: 'person', mutate: (d) => (d.getMap('cells').get('c_code') as Y.Map<unknown>).set('source', new Y.Map()) },
      { rule: 'text under a map root', writer: 'person', mutate: (d) => d.getText('meta').insert(0, 'x') },
      { rule: 'an arbitrary key on a cell', writer: 'person', mutate: (d) => (d.getMap('cells').get('c_code') as Y.Map<unknown>).set('evil', { a: 1 }) },
      { rule: 'schema version 999', writer: 'person', mutate: (d) => d.getMap('meta').set('schemaVersion', 999) },
    ];
    const before = Buffer.from(Y.encodeStateAsUpdate(live()));
    const codes = new Map<number, number>();
    for (const [i, c] of cases.entries()) {
      const update = updateOf(c);
      const yws = i % 2 === 1;
      const client = yws ? await rawYws(server.url, wsId, tokenFor(c.writer)) : await rawHocuspocus(server.url, wsId, tokenFor(c.writer));
      client.send(yws ? ywsUpdate(update) : hpUpdate(wsId, update));
      const { code, reason } = await client.closed;
      codes.set(code, (codes.get(code) ?? 0) + 1);
      expect({ rule: c.rule, code, reason }).toEqual({ rule: c.rule, code: 4423, reason: 'schema-violation' });
    }
    expect(Buffer.from(Y.encodeStateAsUpdate(live())).equals(before)).toBe(true);
    expect(Y.encodeStateVector(storedDoc(server, wsId))).toEqual(Y.encodeStateVector(live()));
    // Relayed to nobody: the connected client has exactly the server's state.
    await waitFor(() => Buffer.from(Y.encodeStateVector(keeper.doc)).equals(Buffer.from(Y.encodeStateVector(live()))), { message: 'keeper in sync' });
    expect(checkDocument(keeper.doc)).toEqual([]);
    expect(cases.length).toBeGreaterThan(150);
  });

  it('the same changes by writers the rules allow are accepted', async () => {
    // A person types into a cell and changes a setting; the kernel writes a status; the agent a plan.
    const allowed: Array<Pick<ViolationCase, 'writer' | 'mutate'>> = [
      { writer: 'person', mutate: (d) => ((d.getMap('cells').get('c_code') as Y.Map<unknown>).get('source') as Y.Text).insert(0, '// hi\n') },
      { writer: 'person', mutate: (d) => (d.getMap('meta').get('settings') as Y.Map<unknown>).set('agentMode', 'propose') },
      { writer: 'kernel', mutate: (d) => d.getMap('kernel').set('status', { state: 'busy', generation: 2, count: 3, current: 'c_code', queue: [], handled: {}, updatedAt: 9 }) },
      { writer: 'agent', mutate: (d) => (d.getMap('runs').get('r_1') as Y.Map<unknown>).set('plan', [{ text: 'again', status: 'todo' }]) },
    ];
    for (const [i, c] of allowed.entries()) {
      const update = updateOf(c);
      const sv = Y.encodeStateVector(live());
      const client = i % 2 ? await rawYws(server.url, wsId, tokenFor(c.writer)) : await rawHocuspocus(server.url, wsId, tokenFor(c.writer));
      client.send(i % 2 ? ywsUpdate(update) : hpUpdate(wsId, update));
      await waitFor(() => !Buffer.from(Y.encodeStateVector(live())).equals(Buffer.from(sv)), { message: `allowed change ${i} applied` });
      client.ws.close();
    }
    expect(checkDocument(live())).toEqual([]);
  });

  it('after a restart the workspace loads, valid, with every accepted change and none of the refused ones', async () => {
    const expected = Y.encodeStateVector(live());
    const dataDir = server.config.dataDir;
    keeper.destroy();
    await server.close();
    server = await startTestServer({ dataDir });
    keeper = hocuspocusClient(server.url, wsId, server.ownerToken);
    await keeper.synced;
    expect(Y.encodeStateVector(keeper.doc)).toEqual(expected);
    expect(checkDocument(keeper.doc)).toEqual([]);
  });
});
