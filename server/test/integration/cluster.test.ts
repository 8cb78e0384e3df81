/**
 * Several nodes on real Redis and Postgres (testkit/cluster.ts): each workspace is served by the
 * node holding its lease; clients of any node reach it through that node's relay. Co-editing and
 * presence across nodes, rights kept on relayed sockets, HTTP routes on every node, the lease
 * moving when its holder stops, and fencing of a holder that lost it.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import type { PlexusServer } from '../../src/app.ts';
import { AGENT_SUB } from '../../src/auth/agent-token.ts';
import { cellSource, createCell, getRosterEntry, listCells, userOrigin } from '@plexus/shared';
import { api, hocuspocusClient, startTestCluster, storedDocAsync, waitFor, ywsClient, type TestCluster } from '@plexus/testkit';

let cluster: TestCluster;
let a: PlexusServer;
let b: PlexusServer;
beforeAll(async () => {
  cluster = await startTestCluster();
  a = await cluster.startNode('node-a');
  b = await cluster.startNode('node-b');
}, 120_000);
afterAll(() => cluster?.destroy(), 60_000);

/** Every cell's source, sorted: what two converged replicas agree on. */
const text = (doc: Y.Doc) => listCells(doc).map(cellSource).sort().join('|');
const addCell = (doc: Y.Doc, who: string, source: string) => createCell(doc, { kind: 'code', source, author: who }, userOrigin(who));
async function newWorkspace(name: string): Promise<string> {
  return (await api(a.url, a.ownerToken, 'POST', '/api/workspaces', { name })).json.workspace.id;
}
/** The node serving `ws` now (its lease holder), as the router sees it. */
const holder = (ws: string) => cluster.redis && a.cluster!.leases.holder(ws);

describe('several nodes', () => {
  it('clients on two nodes co-edit one workspace and converge; presence crosses nodes; one node serves it', async () => {
    const ws = await newWorkspace('Across nodes');
    const alice = hocuspocusClient(a.url, ws, a.ownerToken);
    await alice.synced;
    const bob = hocuspocusClient(b.url, ws, b.ownerToken);
    await bob.synced;
    // Exactly one node loaded it; the other relays.
    expect([a.hocuspocus.documents.has(ws), b.hocuspocus.documents.has(ws)].filter(Boolean)).toHaveLength(1);
    expect(await holder(ws)).toBe(a.hocuspocus.documents.has(ws) ? 'node-a' : 'node-b');
    addCell(alice.doc, 'alice', 'by alice');
    addCell(bob.doc, 'bob', 'by bob');
    await waitFor(() => text(alice.doc) === 'by alice|by bob' && text(bob.doc) === text(alice.doc), { message: 'both converge' });
    alice.provider.awareness!.setLocalState({ user: { id: 'alice', name: 'Alice', color: '#123456', role: 'owner', kind: 'person' } });
    await waitFor(() => [...bob.provider.awareness!.getStates().values()].some((s) => s.user?.name === 'Alice'), { message: 'bob (node b) sees alice (node a)' });
    // A y-websocket client on the other node joins the same document.
    const carol = ywsClient(b.url, ws, b.ownerToken);
    await carol.synced;
    await waitFor(() => text(carol.doc) === text(alice.doc), { message: 'carol (y-websocket, node b) has the text' });
    addCell(carol.doc, 'carol', 'by carol');
    await waitFor(() => text(alice.doc).includes('by carol') && text(bob.doc).includes('by carol'), { message: "carol's edit reaches both" });
    // What an operator scrapes: the serving node holds the lease, the other relays frames.
    const metric = async (node: PlexusServer, line: RegExp) => Number(((await (await fetch(`${node.url}/metrics`)).text()).match(line) ?? [])[1]);
    const serving = a.hocuspocus.documents.has(ws) ? a : b;
    const relaying = serving === a ? b : a;
    expect(await metric(serving, /^plexus_leases_held\{[^}]*\} (\d+)/m)).toBeGreaterThanOrEqual(1);
    expect(await metric(relaying, /^plexus_relayed_frames_total\{direction="up"[^}]*\} (\d+)/m)).toBeGreaterThan(0);
    expect(await metric(relaying, /^plexus_relayed_frames_total\{direction="down"[^}]*\} (\d+)/m)).toBeGreaterThan(0);
    for (const c of [alice, bob, carol]) c.destroy();
  });

  it('a viewer relayed from the other node still cannot write; HTTP routes answer on every node', async () => {
    const ws = await newWorkspace('Viewer across nodes');
    const owner = hocuspocusClient(a.url, ws, a.ownerToken);
    await owner.synced;
    addCell(owner.doc, 'owner', 'kept');
    const served = a.hocuspocus.documents.has(ws) ? a : b;
    const other = served === a ? b : a;
    const viewerToken = (await api(other.url, other.ownerToken, 'POST', `/api/workspaces/${ws}/share`, { role: 'viewer' })).json.token as string;
    const viewer = hocuspocusClient(other.url, ws, viewerToken);
    await viewer.synced;
    await waitFor(() => text(viewer.doc) === 'kept', { message: 'the viewer sees the text' });
    addCell(viewer.doc, 'viewer', 'vandal');
    await waitFor(() => viewer.closes.some((c) => c.reason === 'read-only'), { message: "the viewer's write is refused (read-only)" });
    expect(text(served.hocuspocus.documents.get(ws)!)).toBe('kept');
    // A route about the workspace (its history) answers on the node that does not serve it.
    const hist = await api(other.url, other.ownerToken, 'GET', `/api/workspaces/${ws}/history`);
    expect(hist.status).toBe(200);
    // Resetting the links on the other node disconnects the relayed viewer and refuses the link everywhere.
    const second = hocuspocusClient(other.url, ws, viewerToken);
    await second.synced;
    expect((await api(other.url, other.ownerToken, 'POST', `/api/workspaces/${ws}/share/reset`)).json).toMatchObject({ reset: true, generation: 1, disconnected: 1 });
    await waitFor(() => second.closes.some((c) => c.reason === 'token-revoked'), { message: 'the relayed viewer disconnected with token-revoked' });
    for (const node of [a, b]) expect((await api(node.url, viewerToken, 'GET', `/api/workspaces/${ws}`)).json.error).toBe('token-revoked');
    second.destroy();
    owner.destroy();
    viewer.destroy();
  });

  it('a relayed client is not cut by the relaying node (it has no Hocuspocus connection there to time out)', async () => {
    // A short connection timeout: a relayed client that keeps sending (presence) must outlive it
    // many times over, on the relaying node as on the serving one.
    const c = await startTestCluster({ leaseMs: 1500, pg: cluster.pg });
    try {
      const x = await c.startNode('timeout-x', { connectionTimeoutMs: 3000 });
      const y = await c.startNode('timeout-y', { connectionTimeoutMs: 3000 });
      const ws = (await api(x.url, x.ownerToken, 'POST', '/api/workspaces', { name: 'Timeouts' })).json.workspace.id as string;
      const writer = hocuspocusClient(x.url, ws, x.ownerToken);
      await writer.synced;
      const reader = hocuspocusClient(y.url, ws, y.ownerToken);
      await reader.synced;
      expect(y.hocuspocus.documents.has(ws)).toBe(false); // relayed to x
      // Frames flow without a pause — each step waits for the last one to arrive — for more than
      // twice the timeout: a relaying node that timed out its own idle connection cuts the reader.
      const started = Date.now();
      for (let i = 0; Date.now() - started < 7000; i++) {
        reader.provider.awareness!.setLocalStateField('tick', i);
        addCell(writer.doc, 'writer', `line ${i}`);
        await waitFor(() => text(reader.doc).includes(`line ${i}`), { message: `line ${i} at the relayed reader` });
      }
      expect(reader.closes).toEqual([]);
      expect(writer.closes).toEqual([]);
      reader.destroy();
      writer.destroy();
    } finally {
      await c.destroy();
    }
  }, 120_000);

  it('a request target the client chooses never makes a node send elsewhere, and malformed ones do not stop it', async () => {
    const ws = await newWorkspace('Hostile targets');
    const pin = hocuspocusClient(a.url, ws, a.ownerToken);
    await pin.synced;
    const other = a.hocuspocus.documents.has(ws) ? b : a;
    const port = new URL(other.url).port;
    /** Sends raw HTTP to `other` and returns the status line (or the close). */
    const raw = (head: string) =>
      new Promise<string>((resolve) => {
        const sock = net.connect(Number(port), '127.0.0.1', () => sock.write(head));
        let got = '';
        sock.on('data', (d) => {
          got += d;
          if (got.includes('\r\n')) sock.end();
        });
        sock.on('close', () => resolve(got.split('\r\n')[0] ?? ''));
        sock.on('error', () => resolve('error'));
      });
    const auth = `Authorization: Bearer ${other.ownerToken}\r\n`;
    // Absolute-form and protocol-relative targets for a workspace served by the other node: refused, not forwarded.
    expect(await raw(`GET http://evil.invalid/api/workspaces/${ws}/history HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`)).toMatch(/ 400 /);
    expect(await raw(`GET //evil.invalid/api/workspaces/${ws}/history HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`)).toMatch(/ 400 /);
    const upgrade = (target: string) => `GET ${target} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`;
    await raw(upgrade(`http://evil.invalid/yjs/${ws}?token=${other.ownerToken}`));
    expect(await raw(upgrade('/yjs/%E0%A4?token=x'))).toMatch(/ 400 /);
    // The node is still there, and the workspace still reachable through it.
    expect((await api(other.url, null, 'GET', '/api/health')).status).toBe(200);
    expect((await api(other.url, other.ownerToken, 'GET', `/api/workspaces/${ws}/history`)).status).toBe(200);
    pin.destroy();
  });

  it("a node starting on the shared data directory leaves the other nodes' scratch files alone", async () => {
    fs.mkdirSync(a.recordings.uploadDir, { recursive: true });
    const inFlight = path.join(a.recordings.uploadDir, 'upload-in-flight.tif');
    fs.writeFileSync(inFlight, 'part of an upload');
    const c = await cluster.startNode('node-c');
    try {
      expect(c.recordings.uploadDir).not.toBe(a.recordings.uploadDir);
      expect(fs.existsSync(inFlight)).toBe(true);
    } finally {
      await c.close();
    }
  });

  it('one agent runner per workspace across nodes: a runner keeps its lease through any node; another runner waits', async () => {
    const ws = await newWorkspace('Agent lease across nodes');
    const token = a.signer.sign({ ws: '*', role: 'service', sub: AGENT_SUB, name: 'Agent', ttlSeconds: 600 });
    const lease = (node: PlexusServer, runner: string) => api(node.url, token, 'POST', `/api/agent/workspaces/${ws}/lease`, { runner, ttlMs: 60_000 });
    const first = await lease(a, 'runner-1');
    expect(first.json).toMatchObject({ granted: true, holder: 'runner-1', fresh: true });
    expect((await lease(b, 'runner-2')).json).toMatchObject({ granted: false, holder: 'runner-1' });
    // Renewed through the other node: still the same lease (not fresh: its runs are not failed).
    expect((await lease(b, 'runner-1')).json).toMatchObject({ granted: true, holder: 'runner-1', fresh: false });
    expect((await api(b.url, token, 'DELETE', `/api/agent/workspaces/${ws}/lease`, { runner: 'runner-1' })).json).toEqual({ released: true });
    // The agent's list of workspaces with people in them is the same from every node.
    const person = hocuspocusClient(b.url, ws, b.ownerToken);
    await person.synced;
    for (const node of [a, b]) {
      await node.cluster!.occupancy.publish();
    }
    for (const node of [a, b]) {
      const listed = (await api(node.url, token, 'GET', '/api/agent/workspaces')).json.workspaces as Array<{ id: string; people: number }>;
      expect(listed.find((w) => w.id === ws)).toMatchObject({ people: 1 });
    }
    person.destroy();
    expect((await lease(a, 'runner-2')).json).toMatchObject({ granted: true, holder: 'runner-2', fresh: true });
  });

  it("a hand-out's roster follows a student's fork served by another node than its source", async () => {
    const src = await newWorkspace('Hand-out across nodes');
    const teacher = hocuspocusClient(a.url, src, a.ownerToken);
    await teacher.synced;
    expect(a.hocuspocus.documents.has(src)).toBe(true);
    const handout = (await api(b.url, b.ownerToken, 'POST', `/api/workspaces/${src}/share`, { role: 'handout' })).json.token as string;
    const made = await api(b.url, handout, 'POST', `/api/workspaces/${src}/fork`, { device: 'u_sam', personName: 'Sam' });
    expect(made.status).toBe(201);
    const fork = made.json.workspace.id as string;
    await waitFor(() => getRosterEntry(teacher.doc, fork), { message: 'Sam on the roster' });
    // Sam works in his fork on node b (nobody serves it: b takes it).
    await waitFor(() => !a.hocuspocus.documents.has(fork), { message: 'the new fork unloaded where it was made' });
    const sam = hocuspocusClient(b.url, fork, made.json.token);
    await sam.synced;
    expect(b.hocuspocus.documents.has(fork)).toBe(true);
    const before = getRosterEntry(teacher.doc, fork)!.cells.total;
    addCell(sam.doc, 'sam', 'my answer');
    await waitFor(() => getRosterEntry(teacher.doc, fork)!.cells.total === before + 1, { message: "Sam's new cell on the teacher's roster (node a)" });
    teacher.destroy();
    sam.destroy();
  });

  it('a holder whose lease ran out is fenced off by the store: its next write is refused and it drops the workspace', async () => {
    const c = await startTestCluster({ leaseMs: 1000, pg: cluster.pg });
    try {
      const x = await c.startNode('fence-x');
      const y = await c.startNode('fence-y');
      const ws = (await api(x.url, x.ownerToken, 'POST', '/api/workspaces', { name: 'Fenced' })).json.workspace.id as string;
      const pin = hocuspocusClient(x.url, ws, x.ownerToken);
      await pin.synced;
      addCell(pin.doc, 'pin', 'before');
      await waitFor(() => pin.provider.unsyncedChanges === 0, { message: 'the first edit acknowledged' });
      // x stops renewing and sweeping (as if paused): its lease runs out, and a client of y makes y
      // take the workspace. (A sweep of x between y's claim and the next check would find the
      // claimed fence and drop the workspace itself — seen on a loaded machine — before the store
      // could refuse the stale write this test is about.)
      x.cluster!.leases.stopRenewing();
      x.cluster!.ownership.stop();
      await waitFor(async () => (await x.cluster!.leases.holder(ws)) === null, { timeout: 30_000, message: "x's lease to expire" });
      const other = hocuspocusClient(y.url, ws, y.ownerToken);
      await other.synced;
      expect(await y.cluster!.leases.holder(ws)).toBe('fence-y');
      expect(x.cluster!.leases.held(ws)).toBe(true); // x does not know yet
      // x still takes its client's edit, and the store refuses it: x drops the workspace.
      addCell(pin.doc, 'pin', 'written to the stale holder');
      await waitFor(() => pin.closes.some((e) => e.reason === 'workspace-moved'), { message: 'the stale holder closes its client with workspace-moved' });
      expect(x.cluster!.ownership.drops).toBe(1);
      expect(text(other.doc)).toBe('before');
      expect(text(await storedDocAsync(y, ws))).toBe('before');
      pin.destroy();
      other.destroy();
    } finally {
      await c.destroy();
    }
  }, 120_000);
});
