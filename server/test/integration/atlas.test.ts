/**
 * The atlas on a real server with its kernel: a person uploads a table and creates a map in the
 * shared document; the server computes its coordinates in a child process (everyone sees running,
 * then done), registers them as table `<table>_map`, serves them as points in the binary format
 * the panel reads (parsed here, with a colour), answers rows and columns; a rectangle and then a
 * lasso selection become table `<table>_map_selection` holding exactly the rows inside (computed
 * here independently), and an SQL cell over it re-runs with the new count. Further maps of the
 * same table get `_map_2`, `_map_3` (UMAP, TF-IDF); a re-uploaded table recomputes its map; bad
 * maps end in a clear error; removing a map removes its tables; viewers read points but cannot
 * create maps.
 */
import { describe, expect, it } from 'vitest';
import {
  createAtlasMap, getAtlasMap, getTable, inSelection, removeAtlasMap, requestRun, setAtlasSelection,
  type AtlasCoords, type AtlasSelection,
} from '@plexus/shared';
import { api, hocuspocusClient, waitFor, type HpClient } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, client, kernelSuite, newWorkspace, waitRun } from '@plexus/testkit/kernel';
import { gaussian, seededRandom } from '../../src/atlas/seeded-random.ts';

const ctx = kernelSuite({ jobNice: 0 });

const KINDS = ['pyramidal', 'basket', 'chandelier'];
const TOPICS = [
  ['spike', 'burst', 'firing', 'rate'],
  ['dendrite', 'spine', 'branch', 'arbor'],
  ['soma', 'nucleus', 'membrane', 'body'],
];

interface Row {
  id: number;
  snr: number | null;
  area_px: number;
  depth: number;
  kind: string | null;
  note: string;
}

/** `n` rows in three groups (high snr / large area / deep), a text category and a note; a few missing values. */
function cells(n: number, seed: number): Row[] {
  const rand = seededRandom(seed);
  return Array.from({ length: n }, (_, i) => {
    const g = i % 3;
    const words = Array.from({ length: 5 }, () => TOPICS[g]![Math.floor(rand() * 4)]!);
    return {
      id: i + 1,
      snr: i % 41 === 5 ? null : Math.round((5 + gaussian(rand) + (g === 0 ? 12 : 0)) * 1000) / 1000,
      area_px: Math.round(100 + 10 * gaussian(rand) + (g === 1 ? 120 : 0)),
      depth: Math.round((200 + 5 * gaussian(rand) + (g === 2 ? 60 : 0)) * 100) / 100,
      kind: i % 37 === 3 ? null : KINDS[g]!,
      note: `cell ${words.join(' ')}`,
    };
  });
}

const csvOf = (rows: Row[]) => 'id,snr,area_px,depth,kind,note\n' + rows.map((r) => [r.id, r.snr ?? '', r.area_px, r.depth, r.kind ?? '', r.note].join(',')).join('\n') + '\n';

async function upload(ws: string, name: string, body: string, token = ctx.server.ownerToken): Promise<{ status: number; json: any }> {
  const res = await fetch(`${ctx.server.url}/api/workspaces/${ws}/uploads?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
    body,
  });
  return { status: res.status, json: await res.json() };
}

const query = async (ws: string, sql: string) => {
  const r = await api(ctx.server.url, ctx.server.ownerToken, 'POST', `/api/workspaces/${ws}/data/query`, { sql, limit: 1000 });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json.rows as Array<Record<string, any>>;
};

const coordsOf = (c: HpClient, id: string): AtlasCoords | null => getAtlasMap(c.doc, id)?.coords ?? null;
const waitCoords = (c: HpClient, id: string, status: AtlasCoords['status'] | 'settled', extra: (co: AtlasCoords) => boolean = () => true) =>
  waitFor(() => {
    const co = coordsOf(c, id);
    return co && (status === 'settled' ? co.status === 'done' || co.status === 'error' : co.status === status) && extra(co) ? co : null;
  }, { timeout: 120_000, message: `map ${id} ${status}` }) as Promise<AtlasCoords>;

/** Parses the points endpoint's binary answer exactly as documented. */
function parsePoints(buf: ArrayBuffer) {
  const dv = new DataView(buf);
  const n = dv.getUint32(0, true);
  const metaLen = dv.getUint32(4, true);
  const meta = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 8, metaLen)));
  const start = 8 + metaLen + ((4 - ((8 + metaLen) % 4)) % 4);
  for (let i = 8 + metaLen; i < start; i++) expect(dv.getUint8(i)).toBe(0);
  const f32 = (k: number) => Array.from({ length: n }, (_, i) => dv.getFloat32(start + 4 * (k * n + i), true));
  const arrays = (buf.byteLength - start) / (4 * n);
  return {
    n, meta, arrays,
    x: f32(0), y: f32(1),
    row: Array.from({ length: n }, (_, i) => dv.getUint32(start + 4 * (2 * n + i), true)),
    color: arrays === 4 ? f32(3) : null,
  };
}

async function points(ws: string, map: string, color?: string, token = ctx.server.ownerToken) {
  const res = await fetch(`${ctx.server.url}/api/workspaces/${ws}/atlas/${map}/points${color ? `?color=${encodeURIComponent(color)}` : ''}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.arrayBuffer() };
}

const rowsOfSelection = async (ws: string, table: string) => (await query(ws, `SELECT "row" FROM ${table} ORDER BY "row"`)).map((r) => Number(r.row));

describe('the atlas', { timeout: 300_000 }, () => {
  let ws: string;
  let alicec: HpClient;
  let bob: HpClient;
  let mapId: string;
  const data = cells(300, 1);

  it('a person creates a map of an uploaded table: everyone sees it computed, its table is registered', async () => {
    ws = await newWorkspace(ctx.server, 'Atlas');
    alicec = await client(ctx.server, ws, ctx.clients);
    bob = await client(ctx.server, ws, ctx.clients);
    expect((await upload(ws, 'cells.csv', csvOf(data))).status).toBe(201);
    await waitFor(() => getTable(alicec.doc, 'cells'), { message: 'table registered' });
    const seen: string[] = [];
    bob.doc.on('update', () => {
      const s = getAtlasMap(bob.doc, mapId)?.coords?.status;
      if (s && seen.at(-1) !== s) seen.push(s);
    });
    mapId = createAtlasMap(alicec.doc, { table: 'cells', method: 'pca', columns: ['snr', 'area_px', 'depth'], title: 'Cells' }, alice, aliceOrigin);
    const done = await waitCoords(bob, mapId, 'settled');
    expect(done.error).toBeUndefined();
    expect(done.status).toBe('done');
    expect(seen).toContain('running');
    expect(seen.at(-1)).toBe('done');
    expect(done.table).toBe('cells_map');
    expect(done.points).toBe(300);
    expect(done.how).toMatch(/^PCA of 3 numeric columns \(standardised\).*; 8 missing values filled with the column mean; \d clusters by k-means/);
    expect(done.labels!.length).toBeGreaterThanOrEqual(2);
    expect(done.labels!.reduce((s, l) => s + l.size, 0)).toBe(300);
    expect(done.labels!.map((l) => l.text).join(' | ')).toMatch(/high (snr|area_px|depth)/);
    const table = (await waitFor(() => getTable(bob.doc, 'cells_map'), { message: 'coordinates table registered' }))!;
    expect(table.columns.map((c) => c.name)).toEqual(['row', 'x', 'y', 'cluster']);
    expect(table.rows).toBe(300);
    // The empty selection is a table too: the columns, no rows.
    const sel = (await waitFor(() => getTable(bob.doc, 'cells_map_selection'), { message: 'selection table registered' }))!;
    expect(sel.rows).toBe(0);
    expect(sel.columns.map((c) => c.name)).toEqual(['row', 'x', 'y', 'id', 'snr', 'area_px', 'depth', 'kind', 'note']);
    const rows = await query(ws, 'SELECT min("row") AS lo, max("row") AS hi, count(DISTINCT "row") AS n FROM cells_map');
    expect(rows[0]).toMatchObject({ lo: 0, hi: 299, n: 300 });
  });

  it('serves the points in the exact binary format, coloured by a numeric or a text column', async () => {
    const coords = await query(ws, 'SELECT "row", x, y, cluster FROM cells_map ORDER BY "row"');
    const plain = await points(ws, mapId);
    expect(plain.status).toBe(200);
    expect(plain.type).toBe('application/octet-stream');
    const p = parsePoints(plain.body);
    expect(p.n).toBe(300);
    expect(p.arrays).toBe(3);
    expect(p.meta).toEqual({ bounds: expect.any(Array), color: null, total: 300, sampled: false });
    expect(p.row).toEqual(coords.map((c) => Number(c.row)));
    expect(p.x).toEqual(coords.map((c) => Math.fround(c.x)));
    expect(p.y).toEqual(coords.map((c) => Math.fround(c.y)));
    expect(p.meta.bounds).toEqual([Math.min(...p.x), Math.min(...p.y), Math.max(...p.x), Math.max(...p.y)]);

    const bySnr = parsePoints((await points(ws, mapId, 'snr')).body);
    expect(bySnr.arrays).toBe(4);
    const snrs = data.map((r) => r.snr).filter((v): v is number => v !== null);
    expect(bySnr.meta.color).toEqual({ kind: 'numeric', column: 'snr', min: Math.fround(Math.min(...snrs)), max: Math.fround(Math.max(...snrs)) });
    bySnr.row.forEach((r, i) => {
      const v = data[r]!.snr;
      if (v === null) expect(bySnr.color![i]).toBeNaN();
      else expect(bySnr.color![i]).toBe(Math.fround(v));
    });

    const byKind = parsePoints((await points(ws, mapId, 'kind')).body);
    expect(byKind.meta.color).toEqual({ kind: 'categorical', column: 'kind', categories: ['basket', 'chandelier', 'pyramidal'] });
    byKind.row.forEach((r, i) => {
      const k = data[r]!.kind;
      if (k === null) expect(byKind.color![i]).toBeNaN();
      else expect(byKind.color![i]).toBe(byKind.meta.color.categories.indexOf(k));
    });
    const byCluster = parsePoints((await points(ws, mapId, 'cluster')).body);
    expect(byCluster.meta.color.kind).toBe('categorical');
    expect(byCluster.color).toEqual(coords.map((c) => Number(c.cluster)));

    const bad = await points(ws, mapId, 'nope');
    expect(bad.status).toBe(400);
    expect(JSON.parse(new TextDecoder().decode(bad.body)).message).toContain('no column "nope"');
    expect((await points(ws, mapId, 'note')).status).toBe(400); // 300 distinct texts: too many categories
    expect((await points(ws, 'm_nope')).status).toBe(404);
  });

  it('answers rows by number and the columns of the map\'s table', async () => {
    const r = await api(ctx.server.url, ctx.server.ownerToken, 'GET', `/api/workspaces/${ws}/atlas/${mapId}/rows?rows=3,17,42`);
    expect(r.status).toBe(200);
    expect(r.json.columns.map((c: { name: string }) => c.name)).toEqual(['id', 'snr', 'area_px', 'depth', 'kind', 'note']);
    expect(r.json.rows).toEqual([3, 17, 42].map((i) => ({ row: i, ...data[i]! })));
    expect((await api(ctx.server.url, ctx.server.ownerToken, 'GET', `/api/workspaces/${ws}/atlas/${mapId}/rows?rows=${Array.from({ length: 101 }, (_, i) => i).join(',')}`)).status).toBe(400);
    expect((await api(ctx.server.url, ctx.server.ownerToken, 'GET', `/api/workspaces/${ws}/atlas/${mapId}/rows?rows=a`)).status).toBe(400);
    const c = await api(ctx.server.url, ctx.server.ownerToken, 'GET', `/api/workspaces/${ws}/atlas/${mapId}/columns`);
    expect(c.status).toBe(200);
    expect(c.json).toEqual({
      table: 'cells',
      rows: 300,
      columns: [
        { name: 'id', type: 'BIGINT', numeric: true, color: 'numeric' },
        { name: 'snr', type: 'DOUBLE', numeric: true, color: 'numeric' },
        { name: 'area_px', type: 'BIGINT', numeric: true, color: 'numeric' },
        { name: 'depth', type: 'DOUBLE', numeric: true, color: 'numeric' },
        { name: 'kind', type: 'VARCHAR', numeric: false, distinct: 3, color: 'categorical' },
        { name: 'note', type: 'VARCHAR', numeric: false, distinct: expect.any(Number), color: null },
      ],
    });
  });

  it('a rectangle, then a lasso, become the selection table with exactly the rows inside; an SQL cell over it re-runs', async () => {
    const coords = (await query(ws, 'SELECT "row", x, y FROM cells_map ORDER BY "row"')).map((c) => ({ row: Number(c.row), x: c.x as number, y: c.y as number }));
    const inside = (sel: AtlasSelection) => coords.filter((c) => inSelection(sel, c.x, c.y)).map((c) => c.row);
    const cell = addCell(alicec.doc, 'sql', 'SELECT count(*) AS n FROM cells_map_selection', 'selected');
    requestRun(alicec.doc, cell, alice, aliceOrigin);
    const countIs = (n: number) => waitRun(alicec.doc, cell, (v) => v.state === 'done' && JSON.stringify(v.outputs).includes(`{"n":${n}}`), `the SQL cell to count ${n}`, 120_000);
    await countIs(0);

    const xs = coords.map((c) => c.x).sort((a, b) => a - b);
    const ys = coords.map((c) => c.y).sort((a, b) => a - b);
    const rect: AtlasSelection = { kind: 'rect', x0: xs[290]!, y0: ys[10]!, x1: xs[100]!, y1: ys[200]!, by: 'alice', at: Date.now() };
    const wantRect = inside(rect);
    expect(wantRect.length).toBeGreaterThan(10);
    setAtlasSelection(bob.doc, mapId, rect, aliceOrigin);
    await countIs(wantRect.length);
    expect(await rowsOfSelection(ws, 'cells_map_selection')).toEqual(wantRect);
    // Every source column, with the map's row, x, y.
    const first = (await query(ws, `SELECT * FROM cells_map_selection WHERE "row" = ${wantRect[0]}`))[0]!;
    expect(first).toEqual({ row: wantRect[0], x: coords[wantRect[0]!]!.x, y: coords[wantRect[0]!]!.y, ...data[wantRect[0]!]! });

    // A lasso: a triangle over the middle of the map, whose bounding box holds rows outside it.
    const [x0, x1, y0, y1] = [xs[0]!, xs[299]!, ys[0]!, ys[299]!];
    const lasso: AtlasSelection = { kind: 'lasso', points: [[x0, y0], [x1, (y0 + y1) / 2], [x0, y1]], by: 'alice', at: Date.now() };
    const wantLasso = inside(lasso);
    const box = inside({ kind: 'rect', x0, y0, x1, y1, by: 'alice', at: 0 });
    expect(wantLasso.length).toBeGreaterThan(10);
    expect(box.length).toBeGreaterThan(wantLasso.length);
    setAtlasSelection(alicec.doc, mapId, lasso, aliceOrigin);
    await countIs(wantLasso.length);
    expect(await rowsOfSelection(ws, 'cells_map_selection')).toEqual(wantLasso);

    setAtlasSelection(alicec.doc, mapId, null, aliceOrigin);
    await countIs(0);
  });

  it('further maps of one table get _map_2 and _map_3: UMAP of the numbers, TF-IDF of the notes', async () => {
    const umapId = createAtlasMap(alicec.doc, { table: 'cells', method: 'umap', columns: [] }, alice, aliceOrigin);
    const textId = createAtlasMap(alicec.doc, { table: 'cells', method: 'tfidf', columns: ['note'] }, alice, aliceOrigin);
    const u = await waitCoords(bob, umapId, 'settled');
    const t = await waitCoords(bob, textId, 'settled');
    expect([u.status, u.error]).toEqual(['done', undefined]);
    expect([t.status, t.error]).toEqual(['done', undefined]);
    expect(new Set([u.table, t.table])).toEqual(new Set(['cells_map_2', 'cells_map_3']));
    expect(u.how).toContain('UMAP of 4 numeric columns (standardised)');
    expect(t.how).toMatch(/^TF-IDF of the words of "note" \(\d+ terms\) \+ truncated SVD/);
    // The text map's clusters are named by their words.
    const words = new Set(TOPICS.flat());
    for (const l of t.labels!) for (const w of l.text.split(', ')) expect(words.has(w) || w === 'cell').toBe(true);
    await waitFor(() => getTable(bob.doc, `${t.table}_selection`) && getTable(bob.doc, `${u.table}_selection`), { message: 'selection tables' });
    expect(parsePoints((await points(ws, textId)).body).n).toBe(300);

    // Removing a map removes its tables; the others stay.
    removeAtlasMap(alicec.doc, umapId, aliceOrigin);
    await waitFor(() => !getTable(bob.doc, u.table!) && !getTable(bob.doc, `${u.table}_selection`), { message: 'tables of the removed map gone' });
    expect(getTable(bob.doc, 'cells_map')).not.toBeNull();
    expect(getTable(bob.doc, t.table!)).not.toBeNull();
  });

  it('bad maps end in a clear error; a re-uploaded table recomputes its map', async () => {
    const ws2 = await newWorkspace(ctx.server, 'Atlas errors');
    const c = await client(ctx.server, ws2, ctx.clients);
    expect((await upload(ws2, 'small.csv', csvOf(cells(30, 2)), ctx.server.ownerToken)).status).toBe(201);
    await waitFor(() => getTable(c.doc, 'small'), { message: 'small registered' });
    const cases: Array<[Parameters<typeof createAtlasMap>[1], RegExp]> = [
      [{ table: 'nope', method: 'pca', columns: [] }, /there is no table "nope" in this workspace/],
      [{ table: 'small', method: 'pca', columns: ['snr', 'kind'] }, /column "kind" is VARCHAR, not numeric: PCA uses numeric columns \(numeric columns here: "id", "snr", "area_px", "depth"\)/],
      [{ table: 'small', method: 'columns', columns: ['snr', 'missing'] }, /table "small" has no column "missing" \(its columns: "id", "snr", "area_px", "depth", "kind", "note"\)/],
      [{ table: 'small', method: 'columns', columns: ['snr'] }, /a "columns" map needs two columns, x and y \(got 1\)/],
      [{ table: 'small', method: 'tfidf', columns: ['depth'] }, /column "depth" is DOUBLE, not text: a TF-IDF map needs a text column/],
      // This server has no embedding service (PLEXUS_EMBEDDINGS_URL): no silent TF-IDF instead, an error that offers it.
      [{ table: 'small', method: 'embeddings', columns: ['note'] }, /^this server has no embedding service \(its administrator sets PLEXUS_EMBEDDINGS_URL\), so it cannot make an embeddings map: make a TF-IDF map of "note" instead \(computed locally\)$/],
    ];
    const ids = cases.map(([input]) => createAtlasMap(c.doc, input, alice, aliceOrigin));
    for (const [i, id] of ids.entries()) {
      const co = await waitCoords(c, id, 'settled');
      expect(co.status).toBe('error');
      expect(co.error).toMatch(cases[i]![1]);
      expect((await points(ws2, id)).status).toBe(409);
    }
    // A good "columns" map; then the table is uploaded again with other rows: the map follows.
    const ok = createAtlasMap(c.doc, { table: 'small', method: 'columns', columns: ['area_px', 'depth'] }, alice, aliceOrigin);
    const first = await waitCoords(c, ok, 'done');
    expect(first.points).toBe(30);
    expect(first.table).toBe('small_map');
    expect(first.how).toMatch(/^x = "area_px", y = "depth" as given/);
    const before = getTable(c.doc, 'small_map')!.created;
    // A UMAP map under way when the table changes: its job is superseded, its result is of the new rows.
    const late = createAtlasMap(c.doc, { table: 'small', method: 'umap', columns: ['snr', 'area_px', 'depth'] }, alice, aliceOrigin);
    await waitCoords(c, late, 'running');
    expect((await upload(ws2, 'small.csv', csvOf(cells(45, 3)))).status).toBe(201);
    const again = await waitCoords(c, ok, 'done', (co) => co.points === 45);
    const lateDone = await waitCoords(c, late, 'done', (co) => co.points === 45);
    expect(lateDone.table).toBe('small_map_2');
    expect(getTable(c.doc, 'small_map_2')!.rows).toBe(45);
    expect(again.table).toBe('small_map');
    await waitFor(() => getTable(c.doc, 'small_map')!.created > before && getTable(c.doc, 'small_map')!.rows === 45, { message: 'coordinates registered again' });
    const p = parsePoints((await points(ws2, ok)).body);
    expect(p.meta.total).toBe(45);
    const source = cells(45, 3);
    expect(p.x).toEqual(p.row.map((r) => Math.fround(source[r]!.area_px)));
    // The source table removed: the map says so.
    expect((await api(ctx.server.url, ctx.server.ownerToken, 'DELETE', `/api/workspaces/${ws2}/data/small`)).status).toBe(204);
    const gone = await waitCoords(c, ok, 'error');
    expect(gone.error).toContain('table "small" was removed');
  });

  it('viewers read points but cannot create maps (their connection is read-only)', async () => {
    const share = await api(ctx.server.url, ctx.server.ownerToken, 'POST', `/api/workspaces/${ws}/share`, { role: 'viewer' });
    const viewerToken: string = share.json.token;
    const read = await points(ws, mapId, 'snr', viewerToken);
    expect(read.status).toBe(200);
    expect(parsePoints(read.body).n).toBe(300);
    expect((await api(ctx.server.url, viewerToken, 'GET', `/api/workspaces/${ws}/atlas/${mapId}/columns`)).status).toBe(200);
    const viewer = hocuspocusClient(ctx.server.url, ws, viewerToken);
    ctx.clients.push(viewer);
    await viewer.synced;
    const id = createAtlasMap(viewer.doc, { table: 'cells', method: 'pca', columns: [] }, { id: 'link:viewer' }, aliceOrigin);
    await waitFor(() => viewer.closes.some((c) => c.reason === 'read-only'), { message: 'viewer closed read-only' });
    // A legitimate change after the attempt proves the pipeline flows; the viewer's map never arrived.
    const marker = createAtlasMap(alicec.doc, { table: 'cells', method: 'columns', columns: ['snr', 'depth'] }, alice, aliceOrigin);
    await waitCoords(bob, marker, 'done');
    expect(getAtlasMap(bob.doc, id)).toBeNull();
    expect(getAtlasMap(alicec.doc, id)).toBeNull();
  });
});
