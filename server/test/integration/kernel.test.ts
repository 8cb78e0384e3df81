/**
 * The kernel as a peer of the document, with a real server, real clients over WebSockets and the
 * real sandboxed runtimes: runs requested by one client are seen by another (status, count,
 * duration, who asked, outputs); dependents re-run in topological order; JS values reach SQL only as
 * bound parameters and SQL results come back as values; errors carry the cell's line; duplicate
 * definitions, cycles and deleted definitions show clearly; run all, run stale, interrupt, restart.
 */
import { describe, expect, it } from 'vitest';
import {
  deleteCell, getCell, readCellRun, readKernelStatus, requestInterrupt, requestRestart, requestRun, requestRunAll, requestRunStale,
  setCellSource, moveCell, listCells,
} from '@plexus/shared';
import { api, storedDoc, waitFor } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, bob, bobOrigin, client, finished, newWorkspace, kernelSuite, shown, startKernelServer, waitRun } from '@plexus/testkit/kernel';

const ctx = kernelSuite();

describe('kernel peer', () => {
  it('a run requested by Alice re-runs dependents in order; Bob sees status, count, duration, requester and outputs', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const b = await client(ctx.server, ws, ctx.clients);
    // Notebook order is the reverse of the dependency order: the graph decides.
    const last = addCell(a.doc, 'code', 'const total = rows[0].v + y;\ntotal');
    const sql = addCell(a.doc, 'sql', 'SELECT $y * 2 AS v', 'rows');
    const mid = addCell(a.doc, 'code', 'const y = x * 21;\nconsole.log("y is", y);\ny');
    const root = addCell(a.doc, 'code', 'const x = 2;');
    await waitFor(() => getCell(b.doc, root));
    const req = requestRun(a.doc, root, alice, aliceOrigin)!;
    const v = await waitRun(b.doc, last, (r) => r.state === 'done' && r.exec?.requestId === req, 'last cell done');
    expect(shown(v)).toBe(String(42 * 2 + 42));
    const vMid = readCellRun(b.doc, mid)!;
    expect(vMid.outputs).toEqual([{ type: 'stream', name: 'stdout', text: 'y is 42\n' }, { type: 'text', text: '42' }]);
    const vSql = readCellRun(b.doc, sql)!;
    expect(vSql.outputs[0]).toMatchObject({ type: 'table', columns: [{ name: 'v', type: 'INTEGER' }], rows: [{ v: 84 }], totalRows: 1 });
    const execs = [root, mid, sql, last].map((id) => readCellRun(b.doc, id)!.exec!);
    expect(execs.map((e) => e.count)).toEqual([...execs.map((e) => e.count)].sort((x, y) => x - y)); // topological order
    expect(execs.map((e) => e.trigger)).toEqual(['request', 'upstream', 'upstream', 'upstream']);
    for (const e of execs) {
      expect(e.requestedBy).toEqual(alice);
      expect(e.durationMs).toBeGreaterThanOrEqual(0);
      expect(e.state).toBe('done');
    }
    expect(readCellRun(b.doc, root)!.exec!.defines).toEqual(['x']);
    expect(readKernelStatus(b.doc).sandbox.length).toBeGreaterThan(0);
  });

  it('errors point at the line of the cell; dependents of a failed cell are not run', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const bad = addCell(a.doc, 'code', 'const n = 1;\nconst m = n.nope.deeper;');
    const dep = addCell(a.doc, 'code', 'm + 1');
    const syntax = addCell(a.doc, 'code', 'const ok = 1;\nconst = ;');
    requestRun(a.doc, bad, alice, aliceOrigin);
    const v = await waitRun(a.doc, bad, (r) => r.state === 'error');
    expect(v.outputs[0]).toMatchObject({ type: 'error', name: 'TypeError', line: 2 });
    const d = await waitRun(a.doc, dep, finished);
    expect(d.state).toBe('cancelled');
    expect(shown(d)).toMatch(/cell 1, whose values this cell reads, failed/);
    requestRun(a.doc, syntax, alice, aliceOrigin);
    const s = await waitRun(a.doc, syntax, (r) => r.state === 'error');
    expect(s.outputs[0]).toMatchObject({ type: 'error', name: 'SyntaxError', line: 2 });
  });

  it('a name defined by two cells is an error on both; a cycle is an error on every cell in it', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const d1 = addCell(a.doc, 'code', 'const dup = 1;');
    const d2 = addCell(a.doc, 'code', 'let dup = 2;');
    const c1 = addCell(a.doc, 'code', 'const p = q + 1;');
    const c2 = addCell(a.doc, 'code', 'const q = p + 1;');
    requestRunAll(a.doc, alice, aliceOrigin);
    for (const id of [d1, d2]) {
      const v = await waitRun(a.doc, id, (r) => r.state === 'error');
      expect(shown(v)).toMatch(/"dup" is also defined by cell [12]/);
    }
    for (const id of [c1, c2]) {
      const v = await waitRun(a.doc, id, (r) => r.state === 'error');
      expect(shown(v)).toMatch(/cycle: cell 3 → cell 4 → cell 3/);
    }
  });

  it('deleting a cell or a definition makes readers stale with a clear reason; running them says "not defined"', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const b = await client(ctx.server, ws, ctx.clients);
    const def = addCell(a.doc, 'code', 'const k = 5;\nconst j = 6;');
    const reader = addCell(a.doc, 'code', 'k * 2');
    const readerJ = addCell(a.doc, 'code', 'j * 2');
    requestRun(a.doc, def, alice, aliceOrigin);
    await waitRun(b.doc, reader, (r) => r.state === 'done' && shown(r) === '10');
    await waitRun(b.doc, readerJ, (r) => r.state === 'done' && shown(r) === '12');
    // Remove the definition of j and re-run: readers of j go stale, readers of k re-run fine.
    setCellSource(a.doc, def, 'const k = 7;', aliceOrigin);
    requestRun(a.doc, def, alice, aliceOrigin);
    await waitRun(b.doc, reader, (r) => r.state === 'done' && shown(r) === '14');
    const j = await waitRun(b.doc, readerJ, (r) => r.stale);
    expect(j.staleReason).toMatch(/j is no longer defined: cell 1 does not define it any more/);
    // Delete the defining cell: readers of k go stale; running one says k is not defined.
    deleteCell(b.doc, def, bobOrigin);
    const k = await waitRun(a.doc, reader, (r) => r.stale);
    expect(k.staleReason).toMatch(/k is no longer defined: the cell defining it was deleted/);
    requestRun(a.doc, reader, alice, aliceOrigin);
    const e = await waitRun(a.doc, reader, (r) => r.state === 'error');
    expect(shown(e)).toMatch(/ReferenceError: k is not defined/);
  });

  it('running a cell whose inputs have no value yet runs those inputs first', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const up = addCell(a.doc, 'code', 'const base = 40;');
    const down = addCell(a.doc, 'code', 'base + 2');
    requestRun(a.doc, down, alice, aliceOrigin);
    const v = await waitRun(a.doc, down, (r) => r.state === 'done');
    expect(shown(v)).toBe('42');
    expect(readCellRun(a.doc, up)!.exec!.trigger).toBe('inputs');
  });

  it('an SQL result kept only as a value becomes a table when an SQL cell starts reading it', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const q = addCell(a.doc, 'sql', 'SELECT 20 AS n', 'q');
    const js = addCell(a.doc, 'code', 'q[0].n + 1');
    requestRun(a.doc, q, alice, aliceOrigin);
    await waitRun(a.doc, js, (r) => r.state === 'done' && shown(r) === '21');
    const count = readCellRun(a.doc, q)!.exec!.count;
    const reader = addCell(a.doc, 'sql', 'SELECT n * 2 AS m FROM q', 'r');
    requestRun(a.doc, reader, alice, aliceOrigin);
    const v = await waitRun(a.doc, reader, (r) => r.state === 'done' || r.state === 'error');
    expect(v.outputs[0]).toMatchObject({ type: 'table', rows: [{ m: 40 }] });
    expect(readCellRun(a.doc, q)!.exec!.count).toBeGreaterThan(count); // re-run to materialise it
  });

  it('an SQL result kept only as a table becomes a value when a cell starts reading it as one (a JavaScript cell, an SQL $param)', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const q = addCell(a.doc, 'sql', 'SELECT 20 AS n', 'q');
    const t = addCell(a.doc, 'sql', 'SELECT n + 1 AS n FROM q', 't');
    requestRun(a.doc, q, alice, aliceOrigin);
    await waitRun(a.doc, t, (r) => r.state === 'done');
    // Nothing read t as a value: it was not copied to the JavaScript runner, so a reader runs it again.
    const tRun = readCellRun(a.doc, t)!.exec!.runId;
    const js = addCell(a.doc, 'code', 't[0].n * 2');
    requestRun(a.doc, js, alice, aliceOrigin);
    expect(shown(await waitRun(a.doc, js, (r) => r.state === 'done' || r.state === 'error'))).toBe('42');
    expect(readCellRun(a.doc, t)!.exec).toMatchObject({ trigger: 'inputs' }); // run again to give its value
    expect(readCellRun(a.doc, t)!.exec!.runId).not.toBe(tRun);
    // An SQL cell reading q's rows as a parameter: q runs again to give them.
    const qRun = readCellRun(a.doc, q)!.exec!.runId;
    const param = addCell(a.doc, 'sql', 'SELECT len($q) AS k', 'p');
    requestRun(a.doc, param, alice, aliceOrigin);
    const p = await waitRun(a.doc, param, (r) => r.state === 'done' || r.state === 'error');
    expect(readCellRun(a.doc, q)!.exec).toMatchObject({ trigger: 'inputs' });
    expect(readCellRun(a.doc, q)!.exec!.runId).not.toBe(qRun);
    expect(shown(p)).toMatch(/\$q must be a number, string, boolean, date or an array of these/); // its rows arrived
  });

  it('run all, run stale, interrupt and restart', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const one = addCell(a.doc, 'code', 'const one = 1;');
    const two = addCell(a.doc, 'code', 'const two = one + 1; two');
    const slow = addCell(a.doc, 'code', 'while (true) {}');
    const after = addCell(a.doc, 'code', 'const three = two + 1; three');
    requestRunAll(a.doc, bob, bobOrigin);
    await waitRun(a.doc, slow, (r) => r.state === 'running', 'slow running');
    requestInterrupt(a.doc, alice, aliceOrigin);
    const s = await waitRun(a.doc, slow, finished, 'slow interrupted');
    expect(s.state).toBe('cancelled');
    expect(s.exec!.reason).toBe('interrupted');
    expect(readCellRun(a.doc, two)!.state).toBe('done');
    await waitFor(() => readKernelStatus(a.doc).state === 'idle', { message: 'idle after interrupt' });
    // Values survived the interrupt (synchronous code is stopped softly).
    setCellSource(a.doc, slow, '"fixed"', aliceOrigin);
    requestRunStale(a.doc, alice, aliceOrigin);
    await waitRun(a.doc, after, (r) => r.state === 'done' && shown(r) === '3');
    expect(readCellRun(a.doc, one)!.exec!.trigger).toBe('run-all'); // not stale: not re-run
    const gen = readKernelStatus(a.doc).generation;
    requestRestart(a.doc, alice, aliceOrigin);
    await waitFor(() => readKernelStatus(a.doc).generation === gen + 1, { message: 'restarted' });
    const st = await waitRun(a.doc, two, (r) => r.stale);
    expect(st.staleReason).toMatch(/restarted/);
    moveCell(a.doc, after, { index: 0 }, aliceOrigin);
    requestRun(a.doc, after, alice, aliceOrigin);
    await waitRun(a.doc, after, (r) => r.state === 'done' && !r.stale && shown(r) === '3');
  });
});


describe('outputs on the server, import and export', () => {
  it('large results keep a preview in the document and page from the server by id', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const big = addCell(a.doc, 'code', 'Array.from({ length: 500 }, (_, i) => ({ i, sq: i * i }))');
    const sql = addCell(a.doc, 'sql', 'SELECT range AS n FROM range(300)', 'many');
    const tree = addCell(a.doc, 'code', '({ deep: Array.from({ length: 3000 }, (_, i) => ({ i, s: "x".repeat(20) })) })');
    requestRunAll(a.doc, alice, aliceOrigin);
    for (const [id, total] of [[big, 500], [sql, 300]] as const) {
      const v = await waitRun(a.doc, id, (r) => r.state === 'done');
      const out = v.outputs[0]!;
      if (out.type !== 'table') throw new Error('not a table');
      expect(out.rows.length).toBe(50);
      expect(out.totalRows).toBe(total);
      const page = await api(ctx.server.url, ctx.server.ownerToken, 'GET', `/api/workspaces/${ws}/results/${out.ref}?offset=200&limit=3`);
      expect(page.status).toBe(200);
      expect(page.json).toMatchObject({ kind: 'table', totalRows: total, offset: 200 });
      expect(page.json.rows.map((r: any) => r.i ?? r.n)).toEqual([200, 201, 202]);
    }
    const t = await waitRun(a.doc, tree, (r) => r.state === 'done');
    const out = t.outputs[0]!;
    expect(out).toMatchObject({ type: 'json', truncated: true });
    const whole = await api(ctx.server.url, ctx.server.ownerToken, 'GET', `/api/workspaces/${ws}/results/${(out as { ref: string }).ref}`);
    expect(whole.json.value.deep.length).toBe(1000); // JSON trees are capped at 1,000 items per level
    expect((await api(ctx.server.url, ctx.server.ownerToken, 'GET', `/api/workspaces/${ws}/results/res_0000000000000000`)).status).toBe(404);
    expect((await api(ctx.server.url, ctx.server.ownerToken, 'GET', `/api/workspaces/${ws}/results/..%2f..%2fplexus.db`)).status).toBe(404);
  });

  it('exports .ipynb and an HTML report with outputs; imports .ipynb into another workspace', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const c1 = addCell(a.doc, 'code', 'const greeting = "hello";\ngreeting');
    addCell(a.doc, 'sql', 'SELECT $greeting AS g', 'greet');
    // An image too large for the document (kept on the server by reference): exports carry it all the same.
    addCell(a.doc, 'code', "image('image/svg+xml', '<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><desc>' + 'x'.repeat(60000) + '</desc><rect id=\"big-one\" width=\"10\" height=\"10\"/></svg>')");
    requestRunAll(a.doc, alice, aliceOrigin);
    // A first SQL cell starts DuckDB's process: seconds on a loaded machine.
    await waitFor(() => readKernelStatus(a.doc).state === 'idle' && readCellRun(a.doc, c1)!.state === 'done', { timeout: 30_000, message: 'run all finished' });
    const res = await fetch(`${ctx.server.url}/api/workspaces/${ws}/export?format=ipynb`, { headers: { authorization: `Bearer ${ctx.server.ownerToken}` } });
    expect(res.headers.get('content-disposition')).toMatch(/attachment; filename="Kernel test.ipynb"/);
    const nb = await res.json();
    expect(nb.cells.map((c: any) => c.cell_type)).toEqual(['code', 'code', 'code']);
    expect(nb.cells[1].outputs[0].data['text/html'].join('')).toContain('<td>hello</td>');
    expect(readCellRun(a.doc, listCells(a.doc)[2]!.id)!.outputs[0]).toMatchObject({ type: 'image', ref: expect.any(String) });
    expect(nb.cells[2].outputs[0].data['image/svg+xml']).toContain('id="big-one"');
    const html = await (await fetch(`${ctx.server.url}/api/workspaces/${ws}/export?format=html`, { headers: { authorization: `Bearer ${ctx.server.ownerToken}` } })).text();
    expect(html).toContain('<td>hello</td>');
    expect(html).toContain(encodeURIComponent('<rect id="big-one"'));
    expect(html).not.toMatch(/<script/i);
    const ws2 = await newWorkspace(ctx.server, 'Imported');
    const imp = await api(ctx.server.url, ctx.server.ownerToken, 'POST', `/api/workspaces/${ws2}/import`, nb);
    expect(imp.status).toBe(201);
    expect(imp.json.imported).toBe(3);
    const b = await client(ctx.server, ws2, ctx.clients);
    expect(listCells(b.doc).map((c) => [c.kind, c.name ?? null])).toEqual([['code', null], ['sql', 'greet'], ['code', null]]);
    requestRunAll(b.doc, alice, aliceOrigin);
    const v = await waitRun(b.doc, listCells(b.doc)[1]!.id, (r) => r.state === 'done');
    expect(v.outputs[0]).toMatchObject({ rows: [{ g: 'hello' }] });
    expect((await api(ctx.server.url, ctx.server.ownerToken, 'POST', `/api/workspaces/${ws2}/import`, { cells: 'nope' })).status).toBe(400);
  });
});

describe('demo workspace', () => {
  it('its JavaScript and SQL cells run', async () => {
    // A short recording: the demo's ROI-trace cell reads it once it is generated.
    const server = await startKernelServer({ seedDemo: true, demoData: { params: { frames: 60 } } });
    try {
      const c = await client(server, 'demo', ctx.clients);
      await waitFor(async () => (await fetch(`${server.url}/volumes/calcium-demo/`, { headers: { authorization: `Bearer ${server.ownerToken}` } })).status === 200, { timeout: 60_000, message: 'demo dataset' });
      requestRunAll(c.doc, alice, aliceOrigin);
      const [js, sql, trace] = listCells(c.doc).filter((x) => x.kind !== 'markdown');
      const v = await waitRun(c.doc, sql!.id, (r) => r.state === 'done' || r.state === 'error');
      expect(v.outputs[0]).toMatchObject({ type: 'table', rows: [{ answer: 42, unit: 'neurons' }] });
      expect(readCellRun(c.doc, js!.id)!.exec!.defines).toEqual(['frameRate', 'frames', 'durationSeconds']);
      // The viewer's movie, sampled from a cell and charted: one point per frame.
      const t = await waitRun(c.doc, trace!.id, (r) => r.state === 'done' || r.state === 'error');
      expect(t.state).toBe('done');
      const chart = t.outputs.find((o) => o.type === 'chart') as { spec: { data: { values: unknown[] } } } | undefined;
      expect(chart?.spec.data.values).toHaveLength(60);
    } finally {
      await server.close();
    }
  });
});

describe('kernel lifecycle', () => {
  it('starts with the first client, stops when only the kernel is left and idle, comes back with the next client', async () => {
    const server = await startKernelServer({ kernelIdleMs: 300 });
    try {
      const ws = await newWorkspace(server);
      const c = await client(server, ws, ctx.clients);
      expect(server.kernels!.get(ws)).toBeDefined();
      const id = addCell(c.doc, 'code', 'const kept = 1;\nkept');
      requestRun(c.doc, id, alice, aliceOrigin);
      await waitRun(c.doc, id, (r) => r.state === 'done');
      c.destroy();
      await waitFor(() => server.kernels!.get(ws) === undefined, { message: 'kernel stopped', timeout: 60_000 });
      await waitFor(() => server.hocuspocus.documents.get(ws) === undefined, { message: 'document unloaded', timeout: 60_000 });
      expect(readKernelStatus(storedDoc(server, ws)).state).toBe('offline');
      const again = await client(server, ws, ctx.clients);
      expect(readCellRun(again.doc, id)!.outputs).toEqual([{ type: 'text', text: '1' }]); // outputs stay
      const gen = readKernelStatus(again.doc).generation;
      requestRun(again.doc, id, alice, aliceOrigin);
      await waitRun(again.doc, id, (r) => r.state === 'done' && r.exec!.generation === gen);
    } finally {
      await server.close();
    }
  });
});
