/**
 * Server support for the LLM agent, with a real server, real uploads and real DuckDB files:
 * read-only SQL over the uploaded tables (row caps, refusals of everything that is not one SELECT,
 * no file or URL access, time limit), table descriptions and histograms equal to values computed
 * here, the agent's token file, the list of workspaces people are in, and kernels that an agent
 * alone does not keep alive.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { getTitle } from '@plexus/shared';
import { api, hocuspocusClient, tmpDir, waitFor, type HpClient } from '@plexus/testkit';
import { client, kernelSuite, newWorkspace, startKernelServer } from '@plexus/testkit/kernel';

const ctx = kernelSuite({ dataQueryTimeoutMs: 1500 });

/** The uploaded table, as rows here: id 1..400, grp = id % 7, val with a null every 13th row, label. */
const ROWS = Array.from({ length: 400 }, (_, k) => {
  const id = k + 1;
  return { id, grp: id % 7, val: id % 13 === 0 ? null : ((id * 37) % 101) / 4, label: `L${id % 5}` };
});
const CSV = 'id,grp,val,label\n' + ROWS.map((r) => `${r.id},${r.grp},${r.val ?? ''},${r.label}`).join('\n') + '\n';

let ws = '';
let viewerToken = '';
let tableFile = '';
const sha = (f: string) => createHash('sha256').update(fs.readFileSync(f)).digest('hex');
const query = (body: unknown, token = ctx.server.ownerToken) => api(ctx.server.url, token, 'POST', `/api/workspaces/${ws}/data/query`, body);
const get = (p: string, token = ctx.server.ownerToken) => api(ctx.server.url, token, 'GET', `/api/workspaces/${ws}/data/${p}`);

beforeAll(async () => {
  ws = await newWorkspace(ctx.server, 'Agent support');
  const res = await fetch(`${ctx.server.url}/api/workspaces/${ws}/uploads?name=trials.csv`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ctx.server.ownerToken}`, 'content-type': 'application/octet-stream' },
    body: CSV,
  });
  expect(res.status).toBe(201);
  tableFile = path.join(ctx.server.kernels!.tablesDir(ws), 'trials.duckdb');
  viewerToken = (await api(ctx.server.url, ctx.server.ownerToken, 'POST', `/api/workspaces/${ws}/share`, { role: 'viewer' })).json.token;
});

describe('read-only data queries', () => {
  it('answers a SELECT with column types, at most `limit` rows and a truncated flag, for viewers too', async () => {
    const r = await query({ sql: 'SELECT id, val, label FROM trials ORDER BY id', limit: 10 }, viewerToken);
    expect(r.status).toBe(200);
    expect(r.json.columns).toEqual([{ name: 'id', type: 'BIGINT' }, { name: 'val', type: 'DOUBLE' }, { name: 'label', type: 'VARCHAR' }]);
    expect(r.json.rows).toEqual(ROWS.slice(0, 10).map(({ id, val, label }) => ({ id, val, label })));
    expect(r.json).toMatchObject({ rowCount: 10, truncated: true });
    expect(typeof r.json.elapsedMs).toBe('number');

    const all = await query({ sql: 'SELECT count(*) AS n, sum(val) AS total FROM trials' });
    expect(all.json).toMatchObject({ rowCount: 1, truncated: false });
    expect(all.json.rows[0].n).toBe(400);
    expect(all.json.rows[0].total).toBeCloseTo(ROWS.reduce((a, x) => a + (x.val ?? 0), 0), 9);

    // Default 100 rows, at most 1000 whatever is asked; exactly `limit` rows is not truncated.
    expect((await query({ sql: 'SELECT * FROM range(3000)' })).json).toMatchObject({ rowCount: 100, truncated: true });
    expect((await query({ sql: 'SELECT * FROM range(3000)', limit: 5000 })).json).toMatchObject({ rowCount: 1000, truncated: true });
    expect((await query({ sql: 'FROM trials WHERE grp = 3', limit: 57 })).json).toMatchObject({ rowCount: 57, truncated: false });
    // DESCRIBE and SUMMARIZE are SELECTs too.
    expect((await query({ sql: 'DESCRIBE trials' })).json.rows.map((c: any) => c.column_name)).toEqual(['id', 'grp', 'val', 'label']);
    expect((await query({ sql: 'SUMMARIZE trials' })).json.rowCount).toBe(4);
    // JSON-safe values: big integers as strings, dates as ISO text.
    const v = await query({ sql: "SELECT 9007199254740993::BIGINT AS big, DATE '2024-03-01' AS d, TIMESTAMP '2024-03-01 10:00:00' AS ts" });
    expect(v.json.rows[0]).toEqual({ big: '9007199254740993', d: '2024-03-01T00:00:00.000Z', ts: '2024-03-01T10:00:00.000Z' });
  });

  it('refuses every statement but one SELECT, and file or URL access; the table file is untouched and nothing is written', async () => {
    const before = sha(tableFile);
    const out = tmpDir('plexus-query-out-');
    let hits = 0;
    const web = http.createServer((_req, res) => {
      hits++;
      res.end('id\n1\n');
    });
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    const webUrl = `http://127.0.0.1:${(web.address() as { port: number }).port}`;
    try {
      const refused: Array<[string, string]> = [
        [`COPY trials TO '${out}/copy.csv'`, 'not-read-only'],
        [`COPY (SELECT * FROM trials) TO '${out}/copy.parquet' (FORMAT parquet)`, 'not-read-only'],
        [`COPY upload_0.data TO '${tableFile}'`, 'not-read-only'],
        ['INSERT INTO trials VALUES (1000, 1, 1.0, \'x\')', 'not-read-only'],
        ['INSERT INTO upload_0.data SELECT * FROM trials', 'not-read-only'],
        ['UPDATE upload_0.data SET val = 0', 'not-read-only'],
        ['DELETE FROM upload_0.data', 'not-read-only'],
        ['CREATE TABLE copy AS SELECT * FROM trials', 'not-read-only'],
        ['DROP VIEW trials', 'not-read-only'],
        [`ATTACH '${out}/new.duckdb' AS n`, 'not-read-only'],
        [`ATTACH '${tableFile}' AS w`, 'not-read-only'],
        ['DETACH upload_0', 'not-read-only'],
        ['INSTALL httpfs', 'not-read-only'],
        ['LOAD httpfs', 'not-read-only'],
        ['PRAGMA database_list', 'not-read-only'],
        ["PRAGMA memory_limit = '4GB'", 'not-read-only'],
        ['SET enable_external_access = true', 'not-read-only'],
        ['RESET lock_configuration', 'not-read-only'],
        [`EXPORT DATABASE '${out}/export'`, 'not-read-only'],
        ['CHECKPOINT', 'not-read-only'],
        ['EXPLAIN ANALYZE SELECT * FROM trials', 'not-read-only'],
        ['SELECT 1; SELECT 2', 'not-read-only'],
        [`SELECT 1; COPY trials TO '${out}/second.csv'`, 'not-read-only'],
        ["SELECT * FROM read_csv('/etc/passwd')", 'external-access'],
        ["SELECT * FROM read_text('/etc/hostname')", 'external-access'],
        ["SELECT * FROM glob('/etc/*')", 'external-access'],
        [`SELECT * FROM read_parquet('${webUrl}/x.parquet')`, 'external-access'],
        [`SELECT * FROM read_csv('${webUrl}/x.csv')`, 'external-access'],
        [`SELECT * FROM query('SELECT * FROM read_csv(''/etc/passwd'')')`, 'external-access'],
        ['SELEC 1', 'sql-error'],
        ['SELECT nope FROM trials', 'sql-error'],
        ['SELECT $1', 'sql-error'],
      ];
      for (const [sql, code] of refused) {
        const r = await query({ sql }, viewerToken);
        expect({ sql, status: r.status, code: r.json.error }).toEqual({ sql, status: 400, code });
        expect(typeof r.json.message).toBe('string');
      }
      expect((await query({ sql: 'SELECT 1; SELECT 2' })).json.message).toMatch(/only one read-only SELECT query is allowed/);
      expect(sha(tableFile)).toBe(before);
      expect(fs.readdirSync(out)).toEqual([]);
      expect(hits).toBe(0);
      // The table still answers as before.
      expect((await query({ sql: 'SELECT count(*) AS n FROM trials' })).json.rows).toEqual([{ n: 400 }]);
    } finally {
      web.close();
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  it('checks the request: SQL text and its length, limit, access', async () => {
    expect((await query({})).json.error).toBe('bad-request');
    expect((await query({ sql: '  ' })).json.error).toBe('bad-request');
    expect((await query({ sql: 'SELECT 1', limit: 0 })).json.error).toBe('bad-request');
    expect((await query({ sql: 'SELECT 1', limit: 'ten' })).json.error).toBe('bad-request');
    const long = await query({ sql: `SELECT 1 -- ${'x'.repeat(20_000)}` });
    expect([long.status, long.json.error]).toEqual([400, 'sql-too-long']);
    expect((await query({ sql: 'SELECT 1' }, 'not-a-token')).status).toBe(401);
    const other = ctx.server.signer.sign({ ws: 'someone-else', role: 'owner', sub: 'x', ttlSeconds: 60 });
    expect((await query({ sql: 'SELECT 1' }, other)).status).toBe(403);
  });

  it('stops a query at the time limit', async () => {
    const r = await query({ sql: 'SELECT count(*) FROM trials a, trials b, trials c, range(1000) d WHERE a.val + b.val + c.val > d.range' });
    expect([r.status, r.json.error]).toEqual([400, 'timeout']);
    expect(r.json.message).toMatch(/1\.5 s/);
    // The server answers the next query normally.
    expect((await query({ sql: 'SELECT 42 AS x' })).json.rows).toEqual([{ x: 42 }]);
  });
});

const finite = ROWS.map((r) => r.val).filter((v): v is number => v !== null);
const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
const sampleStd = (xs: number[]) => Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1));
/** DuckDB's approx_count_distinct of `xs`, in a DuckDB of the test's own. */
async function approxDistinct(xs: number[]): Promise<number> {
  const inst = await DuckDBInstance.create(':memory:');
  const conn = await inst.connect();
  try {
    const r = await conn.runAndReadAll(`SELECT approx_count_distinct(v) AS n FROM (VALUES ${xs.map((x) => `(${x}::DOUBLE)`).join(', ')}) t(v)`);
    return Number(r.getRowObjectsJS()[0]!.n);
  } finally {
    conn.closeSync();
    inst.closeSync();
  }
}
const exactQuantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]!;

describe('table description and histograms', () => {
  it('describes every column like SUMMARIZE, with exact counts and numbers as numbers', async () => {
    const r = await get('trials/describe', viewerToken);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ name: 'trials', rows: 400 });
    const byName = Object.fromEntries(r.json.columns.map((c: any) => [c.name, c]));
    expect(Object.keys(byName)).toEqual(['id', 'grp', 'val', 'label']);
    expect(byName.id).toMatchObject({ type: 'BIGINT', count: 400, nulls: 0, min: 1, max: 400, mean: 200.5 });
    expect(byName.id.std).toBeCloseTo(sampleStd(ROWS.map((x) => x.id)), 6);
    expect(byName.grp).toMatchObject({ count: 400, nulls: 0, min: 0, max: 6, distinct: 7 });
    const val = byName.val;
    expect(val).toMatchObject({ type: 'DOUBLE', count: finite.length, nulls: 400 - finite.length, min: Math.min(...finite), max: Math.max(...finite) });
    expect(val.mean).toBeCloseTo(mean(finite), 9);
    expect(val.std).toBeCloseTo(sampleStd(finite), 6);
    const range = val.max - val.min;
    for (const [k, q] of [['q25', 0.25], ['q50', 0.5], ['q75', 0.75]] as const) {
      expect(typeof val[k]).toBe('number');
      expect(Math.abs(val[k] - exactQuantile(finite, q))).toBeLessThan(0.05 * range); // approximate quantiles
    }
    // approx_unique: DuckDB's HyperLogLog estimate, the same for the same values wherever computed.
    expect(val.distinct).toBe(await approxDistinct(finite));
    // Non-numeric: min/max as text, no mean/std/quartiles.
    expect(byName.label).toMatchObject({ type: 'VARCHAR', count: 400, nulls: 0, min: 'L0', max: 'L4', distinct: 5, mean: null, std: null, q25: null, q50: null, q75: null });
    expect((await get('nope/describe')).status).toBe(404);
  });

  it('bins a numeric column into equal-width bins from min to max', async () => {
    const bins = 12;
    const r = await get(`trials/histogram?column=val&bins=${bins}`, viewerToken);
    expect(r.status).toBe(200);
    const min = Math.min(...finite);
    const max = Math.max(...finite);
    const width = (max - min) / bins;
    const counts = new Array(bins).fill(0);
    for (const v of finite) counts[Math.min(Math.floor((v - min) / width), bins - 1)]++;
    expect(r.json).toMatchObject({ column: 'val', min, max, nulls: 400 - finite.length, counts });
    expect(r.json.edges).toHaveLength(bins + 1);
    r.json.edges.forEach((e: number, i: number) => expect(e).toBeCloseTo(min + i * width, 9));
    expect(r.json.edges[bins]).toBe(max);

    const d = await get('trials/histogram?column=grp');
    expect(d.json.counts).toHaveLength(20);
    expect(d.json.counts.reduce((a: number, x: number) => a + x, 0)).toBe(400);
    expect(d.json).toMatchObject({ min: 0, max: 6, nulls: 0 });

    expect([(await get('trials/histogram?column=label')).json.error]).toEqual(['not-numeric']);
    expect([(await get('trials/histogram?column=missing')).json.error]).toEqual(['unknown-column']);
    expect([(await get('trials/histogram')).json.error]).toEqual(['bad-request']);
    expect([(await get('trials/histogram?column=val&bins=201')).json.error]).toEqual(['bad-bins']);
    expect([(await get('trials/histogram?column=val&bins=0')).json.error]).toEqual(['bad-bins']);
    expect((await get('nope/histogram?column=val')).status).toBe(404);
  });
});

describe('the agent credential', () => {
  it('writes <dataDir>/agent.token, 0600, holding the agent service token', () => {
    const file = ctx.server.agentTokenFile!;
    expect(file).toBe(path.join(ctx.server.config.dataDir, 'agent.token'));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const claims = ctx.server.signer.verify(fs.readFileSync(file, 'utf8').trim());
    expect(claims).toMatchObject({ ws: '*', role: 'service', sub: 'service:agent', name: 'Plexus agent' });
    expect(claims.exp - claims.iat).toBe(30 * 86400);
    expect(fs.readdirSync(ctx.server.config.dataDir).filter((f) => f.startsWith('agent.token'))).toEqual(['agent.token']);
  });

  it('lists the loaded workspaces people are in, not counting services; only for the agent', async () => {
    const agentToken = fs.readFileSync(ctx.server.agentTokenFile!, 'utf8').trim();
    const list = async () => (await api(ctx.server.url, agentToken, 'GET', '/api/agent/workspaces')).json.workspaces as Array<{ id: string; title: string; people: number }>;
    const mine = async () => (await list()).find((w) => w.id === ws);
    expect(await mine()).toBeUndefined(); // loaded, kernel connected, nobody else
    const person = await client(ctx.server, ws, ctx.clients);
    await waitFor(async () => (await mine())?.people === 1, { message: 'one person listed' });
    expect(await mine()).toEqual({ id: ws, title: getTitle(person.doc), people: 1 });
    const service = hocuspocusClient(ctx.server.url, ws, ctx.server.signer.sign({ ws, role: 'service', sub: 'service:test', ttlSeconds: 600 }));
    ctx.clients.push(service);
    await service.synced;
    expect((await mine())?.people).toBe(1);
    const second = hocuspocusClient(ctx.server.url, ws, viewerToken);
    ctx.clients.push(second);
    await second.synced;
    await waitFor(async () => (await mine())?.people === 2, { message: 'two people listed' });
    person.destroy();
    second.destroy();
    await waitFor(async () => (await mine()) === undefined, { message: 'only services left' });

    for (const token of [ctx.server.ownerToken, viewerToken, ctx.server.signer.sign({ ws: '*', role: 'service', sub: 'service:kernel', ttlSeconds: 60 })]) {
      const r = await api(ctx.server.url, token, 'GET', '/api/agent/workspaces');
      expect([r.status, r.json.error]).toEqual([403, 'forbidden']);
    }
  });

  it('is not written with PLEXUS_AGENT=0', async () => {
    const server = await startKernelServer({ agent: false, kernel: false });
    try {
      expect(server.agentTokenFile).toBeNull();
      expect(fs.existsSync(path.join(server.config.dataDir, 'agent.token'))).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe('kernel lifetime with an agent connected', () => {
  it('stops the kernel when only services (kernel, agent) are left', async () => {
    const server = await startKernelServer({ kernelIdleMs: 300 });
    const clients: HpClient[] = [];
    try {
      const id = await newWorkspace(server);
      const person = await client(server, id, clients);
      const agent = hocuspocusClient(server.url, id, fs.readFileSync(server.agentTokenFile!, 'utf8').trim());
      clients.push(agent);
      await agent.synced;
      expect(server.kernels!.get(id)).toBeDefined();
      person.destroy();
      await waitFor(() => server.kernels!.get(id) === undefined, { message: 'kernel stopped with the agent still connected' });
      // The kernel's connection goes; the agent's stays.
      await waitFor(() => server.hocuspocus.documents.get(id)?.getConnections().length === 1, { message: 'the kernel disconnected' });
      expect(agent.closes).toEqual([]);
    } finally {
      clients.forEach((c) => c.destroy());
      await server.close();
    }
  });
});
