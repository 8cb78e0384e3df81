/**
 * The race conditions listed in seed 001 (a Python notebook that needed locks for each), as tests
 * with real clients and the real kernel. Each one has a defined outcome here, reached without locks:
 *
 * 1. Edit a cell while it runs: the run executes the source it snapshotted; its output says which
 *    source that was and shows stale; the edit is kept.
 * 2. Delete an upstream cell while dependents run: the deleted cell stays deleted (kernel writes
 *    cannot resurrect it), dependents that used its value finish and turn stale, dependents that had
 *    not run yet say the name is not defined.
 * 3. Two people press Run at once: one run.
 * 4. Run while someone re-orders cells: the graph, not positions, decides; every move is kept.
 * 5. Type into a cell while the kernel streams its output: no character and no output line is lost.
 * 6. Re-run the root while its dependents run: superseded runs are cancelled, never two in flight,
 *    and the final outputs are those of the last edit (dependents are not reported as failed).
 *
 * Every interleaving is controlled, never timed: a cell that must be "running" while something
 * happens awaits a gate (gates.ts) that the test opens once the other action has reached the
 * kernel's replica (checked on the in-process kernel itself). No sleeps, no sampling timers: a busy
 * machine changes how long a test takes, never what it sees.
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  cellSource, deleteCell, getCell, insertCellText, listCells, moveCell, readCellRun, requestRun, setCellSource,
  sourceHash, userOrigin,
} from '@plexus/shared';
import { hocuspocusClient, storedDoc, waitFor, gateCall, gateCallExpr, hasAllOf } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, bob, bobOrigin, client, finished, kernelIdle, kernelOf, newWorkspace, kernelSuite, shown, waitRun } from '@plexus/testkit/kernel';

const ctx = kernelSuite();
afterEach(() => ctx.gates.openAll());

/** Waits until the workspace's kernel has seen everything `doc` has (inserts and deletions). */
const kernelHasAllOf = (ws: string, doc: Y.Doc) => waitFor(() => hasAllOf(kernelOf(ctx.server, ws).doc, doc), { message: 'kernel caught up' });

describe('seed 001 races, without locks', () => {
  it('1. editing a cell while it runs: output of the snapshot, marked stale; the edit survives', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const b = await client(ctx.server, ws, ctx.clients);
    ctx.gates.hold('r1');
    const old = `${gateCall('r1')}\nconst v = 1;\nv`;
    const id = addCell(a.doc, 'code', old);
    requestRun(a.doc, id, alice, aliceOrigin);
    await ctx.gates.arrived('r1');
    await waitRun(b.doc, id, (r) => r.state === 'running');
    setCellSource(b.doc, id, old.replace('const v = 1', 'const v = 2'), bobOrigin);
    await kernelHasAllOf(ws, b.doc); // the kernel has the edit while the run is still in flight
    ctx.gates.open('r1');
    const v = await waitRun(a.doc, id, finished);
    expect(v.state).toBe('done');
    expect(shown(v)).toBe('1'); // the snapshot ran, not a mix
    expect(v.exec!.source).toBe(old);
    expect(v.exec!.sourceHash).toBe(sourceHash(old));
    expect(v.stale).toBe(true);
    expect(v.staleReason).toMatch(/source changed/);
    for (const doc of [a.doc, b.doc]) expect(cellSource(getCell(doc, id)!)).toContain('const v = 2');
    // Running again produces the edited source's output, not stale.
    requestRun(b.doc, id, bob, bobOrigin);
    const w = await waitRun(a.doc, id, (r) => r.state === 'done' && shown(r) === '2');
    expect(w.stale).toBe(false);
  });

  it('2a. deleting an upstream cell while a dependent runs: no resurrection, the dependent finishes and turns stale', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const b = await client(ctx.server, ws, ctx.clients);
    ctx.gates.hold('r2a');
    const up = addCell(a.doc, 'code', 'const x = 5;');
    const mid = addCell(a.doc, 'code', `${gateCall('r2a')}\nconst y = x + 1;\ny`);
    const down = addCell(a.doc, 'code', 'y * 10');
    requestRun(a.doc, up, alice, aliceOrigin);
    await ctx.gates.arrived('r2a');
    await waitRun(b.doc, mid, (r) => r.state === 'running');
    deleteCell(b.doc, up, bobOrigin);
    await kernelHasAllOf(ws, b.doc);
    ctx.gates.open('r2a');
    const m = await waitRun(a.doc, mid, (r) => r.state === 'done' && r.stale);
    expect(shown(m)).toBe('6');
    expect(m.staleReason).toMatch(/x is no longer defined: the cell defining it was deleted/);
    const d = await waitRun(a.doc, down, (r) => r.state === 'done');
    expect(shown(d)).toBe('60'); // y is still defined by a live cell
    await kernelIdle(ctx.server, ws);
    await waitFor(() => hasAllOf(a.doc, kernelOf(ctx.server, ws).doc), { message: 'a has the kernel writes' });
    for (const doc of [a.doc, b.doc, storedDoc(ctx.server, ws)]) {
      expect(getCell(doc, up)).toBeUndefined();
      expect(listCells(doc).map((c) => c.id)).toEqual([mid, down]);
    }
  });

  it('2b. deleting the running upstream cell: its values never become visible, queued dependents say "not defined"', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const b = await client(ctx.server, ws, ctx.clients);
    ctx.gates.hold('r2b');
    const up = addCell(a.doc, 'code', `${gateCall('r2b')}\nconst z = 7;`);
    const down = addCell(a.doc, 'code', 'z + 1');
    requestRun(a.doc, up, alice, aliceOrigin);
    await ctx.gates.arrived('r2b');
    await waitRun(b.doc, up, (r) => r.state === 'running');
    expect(readCellRun(b.doc, down)!.state).toBe('queued');
    deleteCell(b.doc, up, bobOrigin);
    await kernelHasAllOf(ws, b.doc); // the kernel knows the cell is gone before its run ends
    ctx.gates.open('r2b');
    const d = await waitRun(a.doc, down, finished);
    expect(d.state).toBe('error');
    expect(shown(d)).toMatch(/z is not defined/);
    for (const doc of [a.doc, b.doc, storedDoc(ctx.server, ws)]) expect(getCell(doc, up)).toBeUndefined();
  });

  it('3. two people press Run at once: one run; pressing again after seeing it runs again', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    ctx.gates.hold('r3');
    const id = addCell(a.doc, 'code', `globalThis.runs = (globalThis.runs ?? 0) + 1;\n${gateCall('r3')}\nglobalThis.runs`);
    await waitFor(() => getCell(storedDoc(ctx.server, ws), id), { message: 'cell stored' });
    // Bob's replica has Alice's press but not the run it starts: he presses without having seen it.
    const bobDoc = new Y.Doc();
    Y.applyUpdate(bobDoc, Y.encodeStateAsUpdate(a.doc));
    const qa = requestRun(a.doc, id, alice, aliceOrigin)!;
    Y.applyUpdate(bobDoc, Y.encodeStateAsUpdate(a.doc));
    await ctx.gates.arrived('r3');
    await waitRun(a.doc, id, (r) => r.state === 'running');
    const qb = requestRun(bobDoc, id, bob, bobOrigin)!;
    expect(qb).not.toBe(qa);
    const b = hocuspocusClient(ctx.server.url, ws, ctx.server.ownerToken, { doc: bobDoc });
    ctx.clients.push(b);
    await b.synced;
    // The kernel saw Bob's request (acknowledged it) while the run was in flight, and queued nothing:
    // the acknowledgement and any queueing happen in one kernel tick, so its replica tells.
    await waitFor(() => getCell(a.doc, id)?.map.get('ack') === qb, { message: "Bob's request acknowledged" });
    const kdoc = kernelOf(ctx.server, ws).doc;
    expect(getCell(kdoc, id)!.map.get('pending')).toBeUndefined();
    ctx.gates.open('r3');
    const v = await waitRun(a.doc, id, (r) => r.state === 'done');
    await kernelIdle(ctx.server, ws);
    const after = readCellRun(kdoc, id)!;
    expect(shown(after)).toBe('1');
    expect(after.exec!.runId).toBe(v.exec!.runId);
    expect(after.exec!.requestedBy).toEqual(alice);
    // Bob now sees the run; pressing again is a new run.
    await waitFor(() => readCellRun(bobDoc, id)!.state === 'done');
    requestRun(bobDoc, id, bob, bobOrigin);
    const again = await waitRun(a.doc, id, (r) => r.state === 'done' && r.exec!.runId !== v.exec!.runId);
    expect(shown(again)).toBe('2');
    expect(again.exec!.count).toBe(v.exec!.count + 1);
  });

  it('4. running while another person re-orders cells: right values, one run per cell, every move kept', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const b = await client(ctx.server, ws, ctx.clients);
    const ids = [addCell(a.doc, 'code', 'const v0 = 0;')];
    for (let i = 1; i < 8; i++) {
      ctx.gates.hold(`r4/${i}`);
      ids.push(addCell(a.doc, 'code', `${gateCall(`r4/${i}`)}\nconst v${i} = v${i - 1} + 1;\nv${i}`));
    }
    await waitFor(() => listCells(b.doc).length === 8);
    requestRun(a.doc, ids[0]!, alice, aliceOrigin);
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    // While each cell runs, Bob moves cells around; the kernel has his moves before the cell ends.
    for (let i = 1; i < 8; i++) {
      await ctx.gates.arrived(`r4/${i}`);
      for (let m = 0; m < 4; m++) moveCell(b.doc, ids[rnd(8)]!, { index: rnd(8) }, bobOrigin);
      await kernelHasAllOf(ws, b.doc);
      ctx.gates.open(`r4/${i}`);
    }
    const bobOrder = listCells(b.doc).map((c) => c.id);
    await waitRun(a.doc, ids[7]!, (r) => r.state === 'done');
    await kernelIdle(ctx.server, ws);
    const runs = ids.map((id) => readCellRun(a.doc, id)!);
    runs.forEach((r, i) => i > 0 && expect(shown(r)).toBe(String(i)));
    expect(new Set(runs.map((r) => r.exec!.runId)).size).toBe(8);
    for (let i = 1; i < 8; i++) expect(ctx.gates.count(`r4/${i}`), `runs of cell ${i}`).toBe(1);
    const counts = runs.map((r) => r.exec!.count);
    expect(counts).toEqual([...counts].sort((x, y) => x - y));
    await waitFor(() => JSON.stringify(listCells(a.doc).map((c) => c.id)) === JSON.stringify(bobOrder), { message: 'moves converged' });
    await waitFor(() => JSON.stringify(listCells(storedDoc(ctx.server, ws)).map((c) => c.id)) === JSON.stringify(bobOrder), { message: 'moves stored' });
  });

  it('5. typing into a cell while the kernel streams its output: no character, no line lost', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const b = await client(ctx.server, ws, ctx.clients);
    ctx.gates.hold('r5');
    // 20 lines, then the cell waits (still running, its first lines visible), then 20 more.
    const src = `for (let i = 0; i < 40; i++) { console.log("line", i); if (i === 19) ${gateCall('r5')} }\n// notes:`;
    const lines = (v: ReturnType<typeof readCellRun>) => {
      const out = v?.outputs.find((o) => o.type === 'stream');
      return out && out.type === 'stream' ? out.text.split('\n').filter(Boolean).length : 0;
    };
    const id = addCell(a.doc, 'code', src);
    await waitFor(() => getCell(b.doc, id));
    requestRun(a.doc, id, alice, aliceOrigin);
    await ctx.gates.arrived('r5');
    await waitRun(b.doc, id, (r) => r.state === 'running' && lines(r) === 20, 'first 20 lines streamed');
    const typed = 'typed while running';
    for (const ch of typed) {
      const t = cellSource(getCell(b.doc, id)!);
      insertCellText(b.doc, id, t.length, ch, userOrigin('bob')); // one transaction, one update per character
    }
    await kernelHasAllOf(ws, b.doc);
    ctx.gates.open('r5');
    const v = await waitRun(a.doc, id, (r) => r.state === 'done');
    expect(lines(v)).toBe(40);
    await waitFor(() => cellSource(getCell(a.doc, id)!) === src + typed, { message: 'a has the typing' });
    expect(cellSource(getCell(b.doc, id)!)).toBe(src + typed);
    await waitFor(() => cellSource(getCell(storedDoc(ctx.server, ws), id)!) === src + typed, { message: 'stored' });
  });

  it('6. re-running the root while dependents run: superseded runs cancelled, one in flight, final outputs of the last edit', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const b = await client(ctx.server, ws, ctx.clients);
    // Cell i waits at gate "<w0>/i": the test decides which cell of which round is in flight.
    const ids = [addCell(a.doc, 'code', 'const w0 = 0;')];
    for (let i = 1; i < 10; i++) ids.push(addCell(a.doc, 'code', `const w${i} = w${i - 1} + 1;\n${gateCallExpr(`w0 + '/${i}'`)}\nw${i}`));
    await waitFor(() => listCells(b.doc).length === 10);
    // Every state Bob's replica goes through (each received update is one transaction), not samples.
    let maxRunning = 0;
    const superseded = new Set<string>();
    const failed: string[] = [];
    const observe = () => {
      let running = 0;
      for (const id of ids) {
        const v = readCellRun(b.doc, id);
        if (v?.state === 'running') running++;
        if (v?.state === 'error') failed.push(`${id}: ${shown(v)}`);
        if (v?.exec?.reason === 'superseded by a newer run') superseded.add(v.exec.runId);
      }
      maxRunning = Math.max(maxRunning, running);
    };
    b.doc.on('afterTransaction', observe);
    const rounds = 12;
    for (let k = 0; k < rounds; k++) {
      // Round k holds dependent j in flight (running, visible as such) when round k + 1 re-runs the root.
      const j = 1 + (k % 9);
      const key = `${k * 100}/${j}`;
      const last = k === rounds - 1;
      if (!last) ctx.gates.hold(key);
      setCellSource(a.doc, ids[0]!, `const w0 = ${k * 100};`, aliceOrigin);
      requestRun(a.doc, ids[0]!, alice, aliceOrigin);
      if (last) break;
      await ctx.gates.arrived(key);
      await waitRun(b.doc, ids[j]!, (r) => r.state === 'running', `round ${k}: cell ${j} running`);
    }
    const final = (rounds - 1) * 100;
    await waitRun(b.doc, ids[9]!, (r) => r.state === 'done' && shown(r) === String(final + 9));
    await kernelIdle(ctx.server, ws);
    await waitFor(() => hasAllOf(b.doc, kernelOf(ctx.server, ws).doc), { message: 'b has the kernel writes' });
    b.doc.off('afterTransaction', observe);
    ids.forEach((id, i) => i > 0 && expect(shown(readCellRun(b.doc, id)!)).toBe(String(final + i)));
    expect(maxRunning).toBe(1);
    expect(superseded.size).toBe(rounds - 1); // each held run was superseded by the next round
    expect(failed).toEqual([]);
  });
});
