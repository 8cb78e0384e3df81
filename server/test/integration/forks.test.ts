/**
 * Forks and the teacher's roster, with a real server, its kernels and stock clients over
 * WebSockets: a fork is independent both ways, keeps outputs and viewer state, records its origin,
 * settles what was running, and its SQL cells read its copied uploads even once the original is
 * gone; a hand-out link gives each student one fork (the same again), which the teacher opens and
 * the source's roster follows — a student's cell error and raised hand are pushed into it by the
 * server, each a fixed short delay after the change (the delay is asserted, never a duration).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  cellSource, getCell, getRosterEntry, getTitle, readCellRun, readForkedFrom, readHand, readKernelStatus, readViewerState, replaceViewerState,
  requestRun, serverOrigin, setCellSource, setHand, setRosterEntry, userOrigin, type RosterEntry,
} from '@plexus/shared';
import type { PlexusServer } from '../../src/app.ts';
import { FORK_SETTLE_REASON } from '../../src/forks/forks.ts';
import { ROSTER_PUSH_MS } from '../../src/forks/roster.ts';
import { withDoc } from '../../src/http/doc-access.ts';
import { Gates, api, gateCall, hocuspocusClient, storedDocAsync, waitFor, type HpClient } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, finished, shown, startKernelServer, waitRun } from '@plexus/testkit/kernel';

let server: PlexusServer;
const gates = new Gates();
const clients: HpClient[] = [];
/** The delay of every roster push the server scheduled. */
const pushDelays: number[] = [];

beforeAll(async () => {
  server = await startKernelServer({}, {
    wrapSample: gates.wrapSample,
    rosterTimer: (run, ms) => {
      pushDelays.push(ms);
      setTimeout(run, ms);
    },
  });
});

afterAll(async () => {
  gates.openAll();
  clients.forEach((c) => c.destroy());
  await server.close();
});

const owner = () => server.ownerToken;
const call = (token: string | null, method: string, path: string, body?: unknown) => api(server.url, token, method, path, body);

async function newWorkspace(name: string): Promise<string> {
  const r = await call(owner(), 'POST', '/api/workspaces', { name });
  expect(r.status).toBe(201);
  return r.json.workspace.id as string;
}

/** A synced client of `ws`; with `kernel`, once the workspace's kernel is online. */
async function connect(ws: string, token: string, kernel = false): Promise<HpClient> {
  const c = hocuspocusClient(server.url, ws, token);
  clients.push(c);
  await c.synced;
  if (kernel) await waitFor(() => readKernelStatus(c.doc).state !== 'offline', { message: `kernel of ${ws} online`, timeout: 60_000 });
  return c;
}

const acked = (c: HpClient) => waitFor(() => c.provider.unsyncedChanges === 0, { message: 'changes acknowledged' });
const live = (ws: string) => server.hocuspocus.documents.get(ws)!;

async function share(ws: string, role: 'editor' | 'viewer' | 'handout', token = owner()): Promise<string> {
  const r = await call(token, 'POST', `/api/workspaces/${ws}/share`, { role });
  expect(r.status).toBe(200);
  return r.json.token as string;
}

async function upload(ws: string, name: string, body: string): Promise<void> {
  const res = await fetch(`${server.url}/api/workspaces/${ws}/uploads?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner()}`, 'content-type': 'application/octet-stream' },
    body,
  });
  expect(res.status).toBe(201);
}

/** The roster entry of `fork` as `c` sees it, once it satisfies `pred`. */
const rosterShows = (c: HpClient, fork: string, pred: (e: RosterEntry) => boolean, message: string): Promise<RosterEntry> =>
  waitFor(() => {
    const e = getRosterEntry(c.doc, fork);
    return e && pred(e) ? e : null;
  }, { message, timeout: 60_000 }) as Promise<RosterEntry>;

describe('forks', () => {
  it('a fork is independent both ways, keeps outputs and viewer state, records its origin, settles what ran, and runs without the original', async () => {
    const src = await newWorkspace('Lab notebook');
    const a = await connect(src, owner(), true);
    await upload(src, 'trials.csv', 'trial,rate\n1,0.5\n2,1.5\n3,2.5\n');
    const sql = addCell(a.doc, 'sql', 'SELECT sum(rate) AS total FROM trials', 'totals');
    const code = addCell(a.doc, 'code', 'const x = 41\nx + 1');
    requestRun(a.doc, sql, alice, aliceOrigin);
    requestRun(a.doc, code, alice, aliceOrigin);
    expect((await waitRun(a.doc, sql, finished)).outputs[0]).toMatchObject({ type: 'table', rows: [{ total: 4.5 }] });
    expect(shown(await waitRun(a.doc, code, finished))).toBe('42');
    replaceViewerState(a.doc, { position: [10, 20, 3], crossSectionScale: 2, layers: [{ type: 'image', source: 'precomputed://plexus://volumes/calcium-demo/movie', name: 'movie', opacity: 0.7 }] }, aliceOrigin);
    // A cell still running when the fork is made.
    gates.hold('fork-held');
    const held = addCell(a.doc, 'code', `${gateCall('fork-held')}\n'late'`);
    requestRun(a.doc, held, alice, aliceOrigin);
    await gates.arrived('fork-held');
    await waitRun(a.doc, held, (v) => v.state === 'running');
    await acked(a);

    const bobLink = await share(src, 'editor');
    const r = await call(bobLink, 'POST', `/api/workspaces/${src}/fork`, { device: 'u_bob', personName: 'Bob' });
    expect(r.status).toBe(201);
    const fork = r.json.workspace.id as string;
    expect(fork).not.toBe(src);
    expect(r.json.workspace.name).toBe('Lab notebook (fork by Bob)');
    expect(r.json.url).toContain(`/w/${fork}?token=`);
    expect(server.signer.verify(r.json.token)).toMatchObject({ ws: fork, role: 'owner', sub: 'person:u_bob' });
    gates.open('fork-held');

    // Stored before anyone opened it: nothing copied as running, outputs kept.
    const stored = await storedDocAsync(server, fork);
    expect(readCellRun(stored, held)).toMatchObject({ state: 'cancelled', pending: null, exec: { reason: FORK_SETTLE_REASON } });
    expect(readKernelStatus(stored)).toMatchObject({ state: 'offline', current: null, queue: [] });

    // Bob owns it (the source's editor link grants nothing there); the origin is recorded.
    expect((await call(r.json.token, 'GET', `/api/workspaces/${fork}`)).json.role).toBe('owner');
    expect((await call(bobLink, 'GET', `/api/workspaces/${fork}`)).status).toBe(403);
    const b = await connect(fork, r.json.token, true);
    expect(getTitle(b.doc)).toBe('Lab notebook (fork by Bob)');
    expect(readForkedFrom(b.doc)).toMatchObject({ workspace: src, name: 'Lab notebook', by: { id: 'link:editor/u_bob', name: 'Bob' } });
    expect(readForkedFrom(b.doc)?.handout).toBeUndefined();
    expect(readCellRun(b.doc, sql)!.outputs[0]).toMatchObject({ type: 'table', rows: [{ total: 4.5 }] });
    expect(shown(readCellRun(b.doc, code)!)).toBe('42');
    expect(readViewerState(b.doc)).toEqual(readViewerState(a.doc));

    // Edits do not cross, in either direction.
    setCellSource(b.doc, code, 'const x = 1\nx + 100', userOrigin('u_bob', 'Bob'));
    await acked(b);
    setCellSource(a.doc, sql, 'SELECT max(rate) AS total FROM trials', aliceOrigin);
    await acked(a);
    expect(cellSource(getCell(live(src), code)!)).toBe('const x = 41\nx + 1');
    expect(cellSource(getCell(live(fork), sql)!)).toBe('SELECT sum(rate) AS total FROM trials');
    expect(cellSource(getCell(live(fork), code)!)).toBe('const x = 1\nx + 100');

    // The original goes away entirely; the fork's SQL cell still reads its copy of the upload.
    a.destroy();
    expect((await call(owner(), 'DELETE', `/api/workspaces/${src}`)).status).toBe(204);
    const before = readCellRun(b.doc, sql)!.exec!.runId;
    requestRun(b.doc, sql, { id: 'u_bob', name: 'Bob' }, userOrigin('u_bob', 'Bob'));
    const again = await waitRun(b.doc, sql, (v) => finished(v) && v.exec!.runId !== before);
    expect(again.state).toBe('done');
    expect(again.outputs[0]).toMatchObject({ type: 'table', rows: [{ total: 4.5 }] });
  });

  it('who may fork: people with access (view-only too) and hand-out holders with a device; not services', async () => {
    const src = await newWorkspace('Open to all');
    const viewer = await share(src, 'viewer');
    const v = await call(viewer, 'POST', `/api/workspaces/${src}/fork`, { device: 'u_vi' });
    expect(v.status).toBe(201);
    expect(server.signer.verify(v.json.token)).toMatchObject({ ws: v.json.workspace.id, role: 'owner', sub: 'person:u_vi' });
    // The server's owner needs no new token: theirs opens every workspace.
    const o = await call(owner(), 'POST', `/api/workspaces/${src}/fork`, { name: 'My copy' });
    expect(o.status).toBe(201);
    expect(o.json).toMatchObject({ token: null, workspace: { name: 'My copy' }, forkedFrom: { workspace: src, by: { id: 'local-owner' } } });
    const service = server.signer.sign({ ws: src, role: 'service', sub: 'service:agent', ttlSeconds: 60 });
    expect((await call(service, 'POST', `/api/workspaces/${src}/fork`, {})).status).toBe(403);
    const other = server.signer.sign({ ws: 'someone-else', role: 'owner', sub: 'x', ttlSeconds: 60 });
    expect((await call(other, 'POST', `/api/workspaces/${src}/fork`, {})).status).toBe(403);
    const handout = await share(src, 'handout');
    expect((await call(handout, 'POST', `/api/workspaces/${src}/fork`, {})).json.error).toBe('device-required');
    expect((await call(viewer, 'POST', `/api/workspaces/${src}/share`, { role: 'handout' })).status).toBe(403);
    expect((await call(owner(), 'POST', `/api/workspaces/${src}/fork`, { checkpoint: 'cp_x' })).json.error).toBe('no-checkpoint');
  });
});

describe('hand-outs and the roster', () => {
  it('each student gets one fork; the teacher opens them; the roster shows a student\'s error and raised hand, pushed', async () => {
    const src = await newWorkspace('Exercise 1');
    const teacher = await connect(src, owner(), true);
    addCell(teacher.doc, 'code', 'data = [1, 2, 3]');
    await acked(teacher);
    const handout = await share(src, 'handout');
    // The link opens nothing but the holder's own fork.
    expect((await call(handout, 'GET', `/api/workspaces/${src}`)).json.error).toBe('handout-link');
    const peek = hocuspocusClient(server.url, src, handout);
    clients.push(peek);
    await waitFor(() => peek.authFailures.includes('token-for-another-workspace'), { message: 'hand-out link refused on /collab' });

    const first = await call(handout, 'POST', `/api/workspaces/${src}/fork`, { device: 'u_sam', personName: 'Sam' });
    expect(first.status).toBe(201);
    const samFork = first.json.workspace.id as string;
    expect(first.json.forkedFrom).toMatchObject({ workspace: src, handout: true, by: { id: 'link:handout/u_sam', name: 'Sam' } });
    // Opening the link again: the same fork, a fresh token for it.
    const again = await call(handout, 'POST', `/api/workspaces/${src}/fork`, { device: 'u_sam', personName: 'Sam' });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ existing: true, workspace: { id: samFork } });
    const kim = await call(handout, 'POST', `/api/workspaces/${src}/fork`, { device: 'u_kim', personName: 'Kim' });
    const kimFork = kim.json.workspace.id as string;
    expect(kimFork).not.toBe(samFork);

    // Both appear on the roster the teacher is looking at.
    await rosterShows(teacher, samFork, (e) => e.student.id === 'link:handout/u_sam' && e.student.name === 'Sam', 'Sam on the roster');
    await rosterShows(teacher, kimFork, (e) => e.student.name === 'Kim' && e.cells.total === 1, 'Kim on the roster');

    // The teacher (owner of the source, even with a token for it alone) opens the students' forks;
    // an editor of the source and the other student do not.
    const teacherOnly = server.signer.sign({ ws: src, role: 'owner', sub: 'teacher', ttlSeconds: 600 });
    expect((await call(teacherOnly, 'GET', `/api/workspaces/${samFork}`)).json.role).toBe('owner');
    const teacherInFork = await connect(samFork, teacherOnly);
    const ta = await share(src, 'editor');
    expect((await call(ta, 'GET', `/api/workspaces/${samFork}`)).status).toBe(403);
    const intruder = hocuspocusClient(server.url, samFork, kim.json.token);
    clients.push(intruder);
    await waitFor(() => intruder.authFailures.includes('token-for-another-workspace'), { message: 'Kim refused in Sam\'s fork' });

    // Sam's cell fails: the kernel's error reaches the teacher's roster.
    const sam = await connect(samFork, first.json.token, true);
    const samOrigin = userOrigin('u_sam', 'Sam');
    const bad = addCell(sam.doc, 'code', 'undefinedThing.length');
    requestRun(sam.doc, bad, { id: 'u_sam', name: 'Sam' }, samOrigin);
    expect((await waitRun(sam.doc, bad, finished)).state).toBe('error');
    const failed = await rosterShows(teacher, samFork, (e) => e.lastError !== null, 'Sam\'s error on the roster');
    expect(failed.lastError).toMatchObject({ cellId: bad, index: 2, message: expect.stringContaining('undefinedThing') });
    expect(failed.cells).toMatchObject({ total: 2, errors: 1 });
    // Pushed: every roster write waited the same short delay after a change, nothing polled.
    expect(ROSTER_PUSH_MS).toBeLessThan(1000);
    expect(pushDelays.length).toBeGreaterThan(0);
    expect(new Set(pushDelays)).toEqual(new Set([ROSTER_PUSH_MS]));

    // A raised hand, then lowered by the teacher in the student's fork.
    setHand(sam.doc, { by: 'u_sam', name: 'Sam', at: Date.now() }, samOrigin);
    await rosterShows(teacher, samFork, (e) => e.hand?.name === 'Sam', 'Sam\'s hand on the roster');
    await waitFor(() => readHand(teacherInFork.doc), { message: 'the hand in the teacher\'s copy of the fork' });
    setHand(teacherInFork.doc, null, userOrigin('teacher', 'Teacher'));
    await rosterShows(teacher, samFork, (e) => e.hand === null, 'hand lowered');

    // Sam fixes the cell: the roster has no error left.
    setCellSource(sam.doc, bad, '[1, 2].length', samOrigin);
    requestRun(sam.doc, bad, { id: 'u_sam', name: 'Sam' }, samOrigin);
    await rosterShows(teacher, samFork, (e) => e.lastError === null && e.cells.ok >= 1, 'error gone from the roster');

    // Kim's fork deleted: off the roster.
    expect((await call(owner(), 'DELETE', `/api/workspaces/${kimFork}`)).status).toBe(204);
    await waitFor(() => getRosterEntry(teacher.doc, kimFork) === null, { message: 'Kim off the roster' });
  });

  it('a roster nobody was looking at catches up when its source opens', async () => {
    const src = await newWorkspace('Exercise 3');
    const handout = await share(src, 'handout');
    const sam = await call(handout, 'POST', `/api/workspaces/${src}/fork`, { device: 'u_sam3', personName: 'Sam' });
    const kim = await call(handout, 'POST', `/api/workspaces/${src}/fork`, { device: 'u_kim3', personName: 'Kim' });
    const s = await connect(sam.json.workspace.id, sam.json.token, true);
    const bad = addCell(s.doc, 'code', 'nope()');
    requestRun(s.doc, bad, { id: 'u_sam3' }, userOrigin('u_sam3'));
    expect((await waitRun(s.doc, bad, finished)).state).toBe('error');
    // Nobody opened the source: the roster did not load it (it would start its kernel for nobody).
    expect(server.hocuspocus.documents.has(src)).toBe(false);
    // An entry of a fork that no longer exists, stored in the source meanwhile.
    const gone: RosterEntry = {
      fork: 'w_gone', student: { id: 'link:handout/u_x' }, created: 1, active: 1, updated: 1,
      cells: { total: 0, ran: 0, ok: 0, errors: 0, running: 0 }, lastError: null, hand: null,
    };
    await withDoc(server.hocuspocus, src, (doc) => setRosterEntry(doc, gone, serverOrigin('test')));
    const teacher = await connect(src, owner());
    await rosterShows(teacher, sam.json.workspace.id, (e) => e.lastError?.message.includes('nope') === true, 'Sam\'s error after the source opened');
    // Kim's fork was never loaded: summarised from its stored state.
    await rosterShows(teacher, kim.json.workspace.id, (e) => e.student.name === 'Kim' && e.cells.ran === 0, 'Kim from storage');
    await waitFor(() => getRosterEntry(teacher.doc, 'w_gone') === null, { message: 'the deleted fork off the roster' });
  });

  it('nobody but the server writes the roster; a viewer writes nothing', async () => {
    const src = await newWorkspace('Exercise 2');
    const keeper = await connect(src, owner());
    const entry: RosterEntry = {
      fork: 'w_fake', student: { id: 'link:handout/u_x' }, created: 1, active: 1, updated: 1,
      cells: { total: 1, ran: 1, ok: 1, errors: 0, running: 0 }, lastError: null, hand: null,
    };
    for (const role of ['editor', 'viewer'] as const) {
      const c = hocuspocusClient(server.url, src, await share(src, role));
      clients.push(c);
      await c.synced;
      setRosterEntry(c.doc, entry, userOrigin(`u_${role}`, role));
      await waitFor(() => c.closes.some((x) => x.reason === (role === 'editor' ? 'schema-violation' : 'read-only')), { message: `${role} refused` });
    }
    // The owner, a person, is refused as well: the roster is the server's.
    const o = hocuspocusClient(server.url, src, owner());
    clients.push(o);
    await o.synced;
    setRosterEntry(o.doc, entry, userOrigin('u_owner', 'Owner'));
    await waitFor(() => o.closes.some((x) => x.code === 4423), { message: 'owner refused' });
    expect(getRosterEntry(live(src), 'w_fake')).toBeNull();
    expect(getRosterEntry(keeper.doc, 'w_fake')).toBeNull();
    expect(Y.encodeStateVector(await storedDocAsync(server, src))).toEqual(Y.encodeStateVector(live(src)));
  });
});
