/**
 * Versions with a real server and stock clients over WebSockets: named and automatic checkpoints
 * (before an agent run; every few minutes of activity, thinned by retention), restore as a change
 * while another person types (their typing kept; one undo by the restorer takes the restore back),
 * the history's attribution from the server's own record of who sent each update, what viewers
 * may do, and a fork made from a checkpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  cellSource, compareDocs, createUserUndoManager, deleteCell, getCheckpoint, insertCellText, listCells, listCheckpoints, postMessage, readCamera,
  readForkedFrom, requestAgentRun, restoreCheckpoint, setCamera, setCellSource, userOrigin, type CheckpointRecord,
} from '@plexus/shared';
import { api, hocuspocusClient, hasAllOf, waitFor, type HpClient } from '@plexus/testkit';
import type { PlexusServer } from '../../src/app.ts';
import { addCell, startKernelServer } from '@plexus/testkit/kernel';

let server: PlexusServer;
const clients: HpClient[] = [];

beforeAll(async () => {
  // An automatic checkpoint at most every 1 ms of activity: every change makes one, so retention shows.
  server = await startKernelServer({ checkpointActivityMs: 1 });
});
afterAll(async () => {
  clients.forEach((c) => c.destroy());
  await server.close();
});

const call = (token: string | null, method: string, p: string, body?: unknown) => api(server.url, token, method, p, body);

async function share(ws: string, role: 'editor' | 'viewer'): Promise<string> {
  const r = await call(server.ownerToken, 'POST', `/api/workspaces/${ws}/share`, { role });
  expect(r.status).toBe(200);
  return r.json.token as string;
}

/** A client that announces itself (the server stamps `<token subject>/<device>` on its presence). */
async function person(ws: string, token: string, device: string, name: string, role: 'owner' | 'editor' = 'owner'): Promise<HpClient> {
  const c = hocuspocusClient(server.url, ws, token);
  clients.push(c);
  await c.synced;
  c.provider.setAwarenessField('user', { id: device, name, color: '#123456', role, kind: 'person' });
  await waitFor(() => [...(server.hocuspocus.documents.get(ws)?.awareness.getStates().values() ?? [])].some((s) => (s as { user?: { name?: string } }).user?.name === name), { message: `${name}'s presence on the server` });
  return c;
}

async function stateOf(ws: string, id: string, token = server.ownerToken): Promise<Y.Doc> {
  const res = await fetch(`${server.url}/api/workspaces/${ws}/checkpoints/${id}`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  const doc = new Y.Doc();
  Y.applyUpdate(doc, new Uint8Array(await res.arrayBuffer()));
  return doc;
}

const sources = (doc: Y.Doc) => Object.fromEntries(listCells(doc).map((c) => [c.id, cellSource(c)]));

async function newWorkspace(name: string): Promise<string> {
  const r = await call(server.ownerToken, 'POST', '/api/workspaces', { name });
  expect(r.status).toBe(201);
  return r.json.workspace.id as string;
}

describe('checkpoints, restore and history', () => {
  it('restores a named checkpoint while Bob types in a cell it changes: Bob’s typing is kept, one undo takes the restore back', async () => {
    const ws = await newWorkspace('Restore');
    const a = await person(ws, server.ownerToken, 'alice-laptop', 'Alice');
    const b = await person(ws, await share(ws, 'editor'), 'bob-laptop', 'Bob', 'editor');
    const aliceO = userOrigin('alice', 'Alice');
    const bobO = userOrigin('bob', 'Bob');
    const code = addCell(a.doc, 'code', 'const x = 1;\nconst y = 2;\n');
    const note = addCell(a.doc, 'markdown', '# Notes\n\nFirst.');
    setCamera(a.doc, { position: [1, 1, 1] }, aliceO);
    await waitFor(() => hasAllOf(b.doc, a.doc) && hasAllOf(storedDocOf(ws), a.doc), { message: 'everyone has the first version' });

    const made = await call(server.ownerToken, 'POST', `/api/workspaces/${ws}/checkpoints`, { label: 'before the class', name: 'Alice' });
    expect(made.status).toBe(201);
    const cp = made.json.checkpoint as CheckpointRecord;
    expect(cp).toMatchObject({ label: 'before the class', kind: 'named', by: { id: 'local-owner', name: 'Alice', kind: 'person' }, cells: 2 });
    await waitFor(() => getCheckpoint(b.doc, cp.id), { message: 'the checkpoint record reaches Bob' });

    // The class breaks things: a line changed, the note deleted, a cell added, the camera moved.
    setCellSource(a.doc, code, 'const x = 100;\nconst y = 2;\n', aliceO);
    deleteCell(a.doc, note, aliceO);
    const added = addCell(a.doc, 'code', 'broken(');
    setCamera(a.doc, { position: [9, 9, 9] }, aliceO);
    await waitFor(() => hasAllOf(b.doc, a.doc), { message: 'Bob has the broken version' });

    // Alice restores while Bob types: neither change has reached the other when both are made.
    const past = await stateOf(ws, cp.id);
    const undo = createUserUndoManager(a.doc, aliceO);
    insertCellText(b.doc, code, cellSource(listCells(b.doc).find((c) => c.id === code)!).length, '// Bob\n', bobO);
    undo.stopCapturing();
    const r = restoreCheckpoint(a.doc, past, { what: 'all' }, aliceO);
    expect(r).toEqual({ cellsAdded: [note], cellsRemoved: [added], cellsChanged: [code], viewer: true });
    await waitFor(() => hasAllOf(a.doc, b.doc) && hasAllOf(b.doc, a.doc), { message: 'both have both changes' });
    for (const d of [a.doc, b.doc]) {
      expect(sources(d)).toEqual({ ...sources(past), [code]: 'const x = 1;\nconst y = 2;\n// Bob\n' });
      expect(readCamera(d).position).toEqual([1, 1, 1]);
    }
    // The server took Alice's restore as an ordinary person's change (no connection was refused).
    expect(a.closes.filter((c) => c.code && c.code >= 4000)).toEqual([]);

    undo.undo();
    await waitFor(() => hasAllOf(b.doc, a.doc) && readCamera(b.doc).position?.toString() === '9,9,9', { message: 'the undo reaches Bob' });
    expect(sources(b.doc)).toEqual({ [code]: 'const x = 100;\nconst y = 2;\n// Bob\n', [added]: 'broken(' });

    // The history names who did what, from the connections: Alice (owner token) and Bob (editor link).
    const h = await call(server.ownerToken, 'GET', `/api/workspaces/${ws}/history`);
    expect(h.status).toBe(200);
    const people = h.json.entries.filter((e: any) => e.actor.kind === 'person');
    const byName = (n: string) => people.filter((e: any) => e.actor.name === n);
    expect(byName('Alice').every((e: any) => e.actor.id === 'local-owner/alice-laptop')).toBe(true);
    expect(byName('Bob').every((e: any) => e.actor.id === 'link:editor/bob-laptop')).toBe(true);
    expect(byName('Bob').flatMap((e: any) => e.summary.cellsEdited)).toContain(code);
    expect(byName('Alice').flatMap((e: any) => e.summary.cellsAdded)).toContain(added);
    expect(byName('Alice').flatMap((e: any) => e.summary.viewer)).toContain('camera');
    expect(h.json.checkpoints.map((c: CheckpointRecord) => c.id)).toContain(cp.id);
  });

  it('takes a checkpoint before each agent run: after later human edits anyone can return to the state the run started from', async () => {
    const ws = await newWorkspace('Agent run');
    const a = await person(ws, server.ownerToken, 'alice-desk', 'Alice');
    const aliceO = userOrigin('alice', 'Alice');
    const cell = addCell(a.doc, 'code', 'const data = [1, 2, 3];');
    const msg = postMessage(a.doc, { author: { id: 'alice', name: 'Alice', kind: 'person' }, text: '@agent clean the data' }, aliceO);
    const run = requestAgentRun(a.doc, { by: { id: 'alice', name: 'Alice' }, messageId: msg, text: '@agent clean the data' }, aliceO);
    const before = (await waitFor(() => listCheckpoints(a.doc).find((c) => c.kind === 'agent-run' && c.run === run), { message: 'the checkpoint before the run' }))!;
    expect(before.label).toBe('Before the agent: “@agent clean the data”');
    expect(before.by).toMatchObject({ id: 'local-owner/alice-desk', kind: 'person' });
    // What the agent would have done, then people's later edits.
    setCellSource(a.doc, cell, 'const data = [1, 2, 3].filter((x) => x > 1); // the agent', aliceO);
    addCell(a.doc, 'markdown', 'A later note');
    const past = await stateOf(ws, before.id);
    expect(sources(past)).toEqual({ [cell]: 'const data = [1, 2, 3];' });
    expect(compareDocs(past, a.doc).counts).toMatchObject({ added: 1, changed: 1 });
    restoreCheckpoint(a.doc, past, { what: 'notebook' }, aliceO);
    expect(sources(a.doc)).toEqual({ [cell]: 'const data = [1, 2, 3];' });
  });

  it('automatic checkpoints follow activity and retention keeps them bounded; named ones stay', async () => {
    const ws = await newWorkspace('Busy');
    const a = await person(ws, server.ownerToken, 'alice-tablet', 'Alice');
    const named = (await call(server.ownerToken, 'POST', `/api/workspaces/${ws}/checkpoints`, { label: 'keep me' })).json.checkpoint as CheckpointRecord;
    const cell = addCell(a.doc, 'code', '');
    // Changes one at a time, each stored before the next, until 25 automatic checkpoints were made.
    const seen = new Set<string>();
    for (let i = 0; seen.size < 25 && i < 2000; i++) {
      insertCellText(a.doc, cell, i, 'x', userOrigin('alice', 'Alice'));
      await waitFor(() => hasAllOf(storedDocOf(ws), a.doc), { message: `change ${i} stored` });
      for (const c of listCheckpoints(storedDocOf(ws))) if (c.kind === 'activity') seen.add(c.id);
    }
    // Records land after their state is stored: one more may have arrived with the last change.
    expect(seen.size).toBeGreaterThanOrEqual(25);
    // Retention: the newest 20 automatic ones, and the newest of each older day (today's 21st).
    const list = (await waitFor(async () => {
      const l = listCheckpoints(a.doc);
      return l.filter((c) => c.kind === 'activity').length === 21 && (await server.history.store.usage(ws)).checkpoints === 22 ? l : null;
    }, { message: 'retention' }))!;
    expect(list.find((c) => c.id === named.id)).toBeTruthy();
    const usage = (await call(server.ownerToken, 'GET', `/api/workspaces/${ws}/checkpoints`)).json.usage;
    expect(usage.checkpoints).toBe(22);
    expect(usage.bytes).toBeGreaterThan(0);
  });

  it('viewers see the history and checkpoints but cannot make one; a bad request is refused clearly', async () => {
    const ws = await newWorkspace('Viewers');
    const cp = (await call(server.ownerToken, 'POST', `/api/workspaces/${ws}/checkpoints`, { label: 'v1' })).json.checkpoint as CheckpointRecord;
    const viewer = await share(ws, 'viewer');
    expect((await call(viewer, 'POST', `/api/workspaces/${ws}/checkpoints`, { label: 'nope' })).status).toBe(403);
    expect((await call(viewer, 'GET', `/api/workspaces/${ws}/history`)).status).toBe(200);
    await stateOf(ws, cp.id, viewer);
    expect((await call(server.ownerToken, 'POST', `/api/workspaces/${ws}/checkpoints`, { kind: 'agent-run' })).json.error).toBe('bad-kind');
    expect((await call(server.ownerToken, 'GET', `/api/workspaces/${ws}/checkpoints/cp_none`)).status).toBe(404);
    // An import takes a checkpoint first.
    const nb = { nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [{ cell_type: 'markdown', id: 'm1', metadata: {}, source: '# Imported' }] };
    expect((await call(server.ownerToken, 'POST', `/api/workspaces/${ws}/import?name=lesson.ipynb`, nb)).status).toBe(201);
    const h = await call(viewer, 'GET', `/api/workspaces/${ws}/history`);
    expect(h.json.checkpoints.find((c: CheckpointRecord) => c.kind === 'import')).toMatchObject({ label: 'Before importing lesson.ipynb', cells: 0 });
  });

  it('forks a workspace at a checkpoint: the fork holds that state, records it, and starts its own history', async () => {
    const ws = await newWorkspace('Fork me');
    const a = await person(ws, server.ownerToken, 'alice-pc', 'Alice');
    const cell = addCell(a.doc, 'code', 'const v = 1;');
    await waitFor(() => hasAllOf(storedDocOf(ws), a.doc));
    const cp = (await call(server.ownerToken, 'POST', `/api/workspaces/${ws}/checkpoints`, { label: 'lesson start' })).json.checkpoint as CheckpointRecord;
    setCellSource(a.doc, cell, 'const v = 2;', userOrigin('alice', 'Alice'));
    const f = await call(server.ownerToken, 'POST', `/api/workspaces/${ws}/fork`, { checkpoint: cp.id, name: 'From the start' });
    expect(f.status).toBe(201);
    const fork = hocuspocusClient(server.url, f.json.workspace.id, server.ownerToken);
    clients.push(fork);
    await fork.synced;
    expect(sources(fork.doc)).toEqual({ [cell]: 'const v = 1;' });
    expect(readForkedFrom(fork.doc)).toMatchObject({ workspace: ws, checkpoint: cp.id });
    expect(listCheckpoints(fork.doc).filter((c) => c.id === cp.id)).toEqual([]);
  });
});

/** The server's live document of a workspace (what it stored and relays). */
function storedDocOf(ws: string): Y.Doc {
  const d = server.hocuspocus.documents.get(ws);
  if (!d) throw new Error(`workspace ${ws} is not loaded`);
  return d;
}
