/**
 * What versions cost (issue: versions and teaching), in one run on a 1,000-cell workspace (20
 * lines and a small output per cell, ~1 MB document):
 * 1. attribution: applying 4,000 keystroke updates to a document with the history's change
 *    observer (`observeChanges`, what the server attaches to every live document) against the
 *    same document without it, alternating A/B per update;
 * 2. a checkpoint: time to take one through the API (state encoded, deflated, stored, recorded
 *    in the document) and its size on disk against the raw state;
 * 3. the history panel's load: `GET /history` (journal + checkpoints) and `GET /checkpoints/:id`
 *    (the state to preview, compare or restore), p50/p95;
 * 4. restore: `restoreCheckpoint` after 100 of the 1,000 cells changed (client-side work), and
 *    `compareDocs` (the compare view).
 * Real in-process server (testkit) with one client connected (the document is loaded) for 2–3. Run: npx tsx bench/history.ts. Prints figures; asserts nothing.
 */
import * as Y from 'yjs';
import {
  compareDocs, initWorkspace, listCells, observeChanges, restoreCheckpoint, serverOrigin, setCellSource, userOrigin,
} from '@plexus/shared';
import { api, hocuspocusClient, startTestServer, tmpDir } from '@plexus/testkit';
import { fillNotebook, keystrokeUpdates } from './fixtures.ts';
import { fmt, machine, printTable, summarize } from './lib.ts';

const CELLS = 1000;
const base = new Y.Doc();
initWorkspace(base, { title: 'history bench' }, serverOrigin('bench'));
fillNotebook(base, CELLS, 20);
const state = Y.encodeStateAsUpdate(base);
const copy = () => {
  const d = new Y.Doc();
  Y.applyUpdate(d, state);
  return d;
};

console.log(`# Versions: checkpoints, attribution, restore (${machine()})\n`);
console.log(`Workspace: ${CELLS} cells, document ${(state.length / 1024).toFixed(0)} KiB\n`);

// 1. Attribution overhead per incoming update.
{
  const updates = keystrokeUpdates(state, 4000);
  const plain = copy();
  const observed = copy();
  let summaries = 0;
  observeChanges(observed, () => summaries++);
  const a: number[] = [];
  const b: number[] = [];
  for (const u of updates) {
    let t = performance.now();
    Y.applyUpdate(plain, u);
    a.push(performance.now() - t);
    t = performance.now();
    Y.applyUpdate(observed, u);
    b.push(performance.now() - t);
  }
  const sa = summarize(a);
  const sb = summarize(b);
  console.log('## 1. Applying a keystroke update, with and without the history observer (µs)\n');
  printTable(['', 'p50', 'p99', 'mean'], [
    ['without', fmt(sa.p50 * 1000, 1), fmt(sa.p99 * 1000, 1), fmt(sa.mean * 1000, 1)],
    ['with observeChanges', fmt(sb.p50 * 1000, 1), fmt(sb.p99 * 1000, 1), fmt(sb.mean * 1000, 1)],
    // The mean carries the garbage collector's pauses (whichever side they land on): compare percentiles.
    ['ratio', fmt(sb.p50 / sa.p50, 2), fmt(sb.p99 / sa.p99, 2), fmt(sb.mean / sa.mean, 2)],
  ]);
  console.log(`\n(${summaries} summaries for ${updates.length} updates)\n`);
}

// 2–3. Through a real server.
{
  const server = await startTestServer({ dataDir: tmpDir('plexus-bench-history-'), checkpointActivityMs: 0 });
  try {
    const created = await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name: 'history bench' });
    const ws = created.json.workspace.id as string;
    await server.workspaces.change(ws, (doc) => fillNotebook(doc, CELLS, 20));
    // Someone has the workspace open (as when people take checkpoints): the document is loaded.
    const person = hocuspocusClient(server.url, ws, server.ownerToken);
    await person.synced;
    const make: number[] = [];
    let last: { id: string; bytes: number } | null = null;
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      const r = await api(server.url, server.ownerToken, 'POST', `/api/workspaces/${ws}/checkpoints`, { label: `bench ${i}` });
      make.push(performance.now() - t);
      last = r.json.checkpoint;
    }
    let raw = 0;
    const history: number[] = [];
    const fetchState: number[] = [];
    for (let i = 0; i < 20; i++) {
      let t = performance.now();
      await api(server.url, server.ownerToken, 'GET', `/api/workspaces/${ws}/history`);
      history.push(performance.now() - t);
      t = performance.now();
      const res = await fetch(`${server.url}/api/workspaces/${ws}/checkpoints/${last!.id}`, { headers: { authorization: `Bearer ${server.ownerToken}` } });
      const bytes = new Uint8Array(await res.arrayBuffer());
      raw = bytes.length;
      const doc = new Y.Doc();
      Y.applyUpdate(doc, bytes);
      fetchState.push(performance.now() - t);
    }
    const s = (xs: number[]) => summarize(xs);
    console.log('## 2–3. Through the API, in-process server (ms)\n');
    printTable(['', 'p50', 'p95', 'max'], [
      ['take a checkpoint (POST)', fmt(s(make).p50, 1), fmt(s(make).p95, 1), fmt(s(make).max, 1)],
      ['history panel (GET /history)', fmt(s(history).p50, 1), fmt(s(history).p95, 1), fmt(s(history).max, 1)],
      ['checkpoint state (GET + apply)', fmt(s(fetchState).p50, 1), fmt(s(fetchState).p95, 1), fmt(s(fetchState).max, 1)],
    ]);
    console.log(`\nStored size of one checkpoint: ${(last!.bytes / 1024).toFixed(0)} KiB (deflated) of a ${(raw / 1024).toFixed(0)} KiB state (${fmt(last!.bytes / raw, 2)}×)\n`);
    person.destroy();
  } finally {
    await server.close();
  }
}

// 4. Restore and compare (client-side work).
{
  const restoreMs: number[] = [];
  const compareMs: number[] = [];
  const me = userOrigin('u_bench', 'Bench');
  for (let round = 0; round < 10; round++) {
    const past = copy();
    const live = copy();
    const cells = listCells(live);
    for (let i = 0; i < 100; i++) setCellSource(live, cells[(i * 7 + round) % cells.length]!.id, `changed ${i} in round ${round}`, me);
    let t = performance.now();
    compareDocs(past, live);
    compareMs.push(performance.now() - t);
    t = performance.now();
    restoreCheckpoint(live, past, { what: 'all' }, me);
    restoreMs.push(performance.now() - t);
  }
  console.log('## 4. Client-side work on 1,000 cells, 100 changed (ms, 10 rounds)\n');
  printTable(['', 'p50', 'max'], [
    ['compare with now', fmt(summarize(compareMs).p50, 1), fmt(summarize(compareMs).max, 1)],
    ['restore everything', fmt(summarize(restoreMs).p50, 1), fmt(summarize(restoreMs).max, 1)],
  ]);
}
