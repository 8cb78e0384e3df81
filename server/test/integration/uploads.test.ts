/**
 * Data uploads over HTTP into a workspace's DuckDB, with the real server and kernel: CSV, TSV,
 * gzip'd CSV, JSON and Parquet become tables everyone sees in the `data` registry and SQL cells can
 * query; previews page through them. Broken, truncated, oversized, path-named and bomb files fail
 * cleanly and leave nothing behind; a cell cannot COPY over an uploaded table's file.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { getTable, listTables, requestRun } from '@plexus/shared';
import { api, gateCall, hasAllOf, tmpDir, waitFor } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, client, kernelOf, kernelSuite, newWorkspace, waitRun } from '@plexus/testkit/kernel';

const MAX = 2 * 1024 * 1024;
const ctx = kernelSuite({ uploadMaxBytes: MAX });

async function upload(ws: string, name: string, body: Buffer, token = ctx.server.ownerToken): Promise<{ status: number; json: any }> {
  const res = await fetch(`${ctx.server.url}/api/workspaces/${ws}/uploads?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(body),
  });
  return { status: res.status, json: await res.json() };
}

const tablesDir = (ws: string) => ctx.server.kernels!.tablesDir(ws);
const uploadsTmp = (ws: string) => path.join(ctx.server.kernels!.workspaceDir(ws), 'uploads-tmp');
const leftovers = (ws: string) => [...(fs.existsSync(tablesDir(ws)) ? fs.readdirSync(tablesDir(ws)) : []), ...(fs.existsSync(uploadsTmp(ws)) ? fs.readdirSync(uploadsTmp(ws)) : [])];

async function parquet(rows: number): Promise<Buffer> {
  const file = path.join(tmpDir('plexus-pq-'), 'x.parquet');
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  await c.run(`COPY (SELECT range AS id, range % 7 AS grp, random() AS val FROM range(${rows})) TO '${file}' (FORMAT parquet)`);
  c.closeSync();
  inst.closeSync();
  return fs.readFileSync(file);
}

describe('uploads', () => {
  it('CSV, TSV, CSV.gz, JSON and Parquet become tables everyone sees and SQL cells query', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const b = await client(ctx.server, ws, ctx.clients);
    const csv = 'trial,rate,label\n1,0.5,a\n2,1.5,b\n3,2.5,c\n';
    const r = await upload(ws, 'Trials 2024.csv', Buffer.from(csv));
    expect(r.status).toBe(201);
    expect(r.json.table).toMatchObject({ name: 'trials_2024', format: 'csv', rows: 3, bytes: csv.length, uploadedBy: { id: 'local-owner' } });
    expect(r.json.table.columns).toEqual([{ name: 'trial', type: 'BIGINT' }, { name: 'rate', type: 'DOUBLE' }, { name: 'label', type: 'VARCHAR' }]);
    await waitFor(() => getTable(b.doc, 'trials_2024'), { message: 'registry on the other client' });
    expect((await upload(ws, 'spikes.tsv', Buffer.from('unit\tcount\n1\t10\n2\t20\n'))).status).toBe(201);
    expect((await upload(ws, 'gz.csv.gz', gzipSync(Buffer.from('x\n1\n2\n3\n4\n')))).status).toBe(201);
    expect((await upload(ws, 'cells.json', Buffer.from('[{"id":1,"kind":"pyramidal"},{"id":2,"kind":"basket"}]'))).status).toBe(201);
    const pq = await upload(ws, 'big.parquet', await parquet(10_000));
    expect(pq.status).toBe(201);
    expect(pq.json.table.rows).toBe(10_000);
    await waitFor(() => listTables(b.doc).length === 5);
    expect(listTables(b.doc).map((t) => t.name)).toEqual(['big', 'cells', 'gz', 'spikes', 'trials_2024']);
    const cell = addCell(a.doc, 'sql', `SELECT (SELECT sum(rate) FROM trials_2024) AS rate, (SELECT sum(count) FROM spikes) AS spikes,
      (SELECT count(*) FROM gz) AS gz, (SELECT count(*) FROM cells WHERE kind = 'basket') AS basket, (SELECT count(*) FROM big WHERE grp = 3) AS grp3`, 'totals');
    requestRun(a.doc, cell, alice, aliceOrigin);
    const v = await waitRun(b.doc, cell, (x) => x.state === 'done' || x.state === 'error');
    expect(v.outputs[0]).toMatchObject({ type: 'table', rows: [{ rate: 4.5, spikes: 30, gz: 4, basket: 1, grp3: 1429 }] });
    // Preview for the data panel, paged.
    const p = await api(ctx.server.url, ctx.server.ownerToken, 'GET', `/api/workspaces/${ws}/data/big/preview?offset=100&limit=5`);
    expect(p.status).toBe(200);
    expect(p.json).toMatchObject({ name: 'big', offset: 100, totalRows: 10_000 });
    expect(p.json.rows.map((x: any) => x.id)).toEqual([100, 101, 102, 103, 104]);
    // Many people previewing one table at once: every one answered (DuckDB refuses a second
    // instance on a file this process has open, so opens take turns; fileTurn's own test checks the order).
    const many = await Promise.all(Array.from({ length: 12 }, () => api(ctx.server.url, ctx.server.ownerToken, 'GET', `/api/workspaces/${ws}/data/big/preview?offset=0&limit=3`)));
    expect(many.map((r) => r.status)).toEqual(many.map(() => 200));
    // Deleting a table removes it from the registry and the disk.
    expect((await api(ctx.server.url, ctx.server.ownerToken, 'DELETE', `/api/workspaces/${ws}/data/gz`)).status).toBe(204);
    await waitFor(() => !getTable(b.doc, 'gz'));
    expect(fs.existsSync(path.join(tablesDir(ws), 'gz.duckdb'))).toBe(false);
  });

  it('a table uploaded again re-runs the SQL cells over it, also when it lands while another cell runs', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    expect((await upload(ws, 'counts.csv', Buffer.from('v\n1\n2\n'))).status).toBe(201);
    await waitFor(() => getTable(a.doc, 'counts'), { message: 'table registered' });
    const reader = addCell(a.doc, 'sql', 'SELECT count(*) AS n FROM counts', 'n_counts');
    requestRun(a.doc, reader, alice, aliceOrigin);
    const shows = (n: number) => waitRun(a.doc, reader, (v) => v.state === 'done' && JSON.stringify(v.outputs).includes(`{"n":${n}}`), `the reader to count ${n}`);
    await shows(2);
    // Uploaded again while nothing runs: the reader runs again by itself.
    expect((await upload(ws, 'counts.csv', Buffer.from('v\n1\n2\n3\n'))).status).toBe(201);
    await shows(3);
    // Uploaded again while a JS cell is held mid-run (a gate): picked up when the queue drains.
    ctx.gates.hold('busy');
    const busy = addCell(a.doc, 'code', `${gateCall('busy')}\n'done'`);
    requestRun(a.doc, busy, alice, aliceOrigin);
    await ctx.gates.arrived('busy');
    expect((await upload(ws, 'counts.csv', Buffer.from('v\n1\n2\n3\n4\n'))).status).toBe(201);
    await waitFor(() => hasAllOf(kernelOf(ctx.server, ws).doc, a.doc), { message: 'the kernel has the new registration' });
    ctx.gates.open('busy');
    await waitRun(a.doc, busy, (v) => v.state === 'done');
    await shows(4);
  });

  it('a cell cannot COPY over an uploaded file, write next to it, or attach it writable', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    expect((await upload(ws, 'keep.csv', Buffer.from('v\n1\n2\n'))).status).toBe(201);
    const file = path.join(tablesDir(ws), 'keep.duckdb');
    const hash = () => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    const before = hash();
    await waitFor(() => getTable(a.doc, 'keep'));
    for (const sql of [
      `COPY (SELECT 1 AS z) TO '${file}' (FORMAT csv, USE_TMP_FILE false)`,
      `COPY (SELECT 1 AS z) TO '${file}' (FORMAT parquet)`,
      `COPY (SELECT 1 AS z) TO '${path.join(tablesDir(ws), 'new.csv')}'`,
      `ATTACH '${file}' AS w`,
      'DROP VIEW keep',
    ]) {
      const id = addCell(a.doc, 'sql', sql);
      requestRun(a.doc, id, alice, aliceOrigin);
      const v = await waitRun(a.doc, id, (x) => x.state === 'done' || x.state === 'error');
      if (sql.startsWith('DROP')) continue; // dropping the view only affects this kernel's session
      expect(v.state, sql).toBe('error');
    }
    expect(hash()).toBe(before);
    expect(fs.readdirSync(tablesDir(ws))).toEqual(['keep.duckdb']);
  });

  it('broken, truncated, path-named, oversized and bomb files fail clearly and leave nothing behind', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const good = await parquet(1000);
    const cases: Array<[string, Buffer, number, RegExp]> = [
      ['broken.csv', Buffer.from('a,b\n1,2\n3,4,5,6\n"unterminated\n'), 422, /could not be read as CSV/],
      ['garbage.csv', Buffer.from([0, 159, 146, 150, 255, 0, 1, 2]), 422, /could not be read/],
      ['truncated.parquet', good.subarray(0, Math.floor(good.length / 2)), 422, /could not be read as PARQUET/],
      ['bad.json', Buffer.from('{"a": 1, "b": [1, 2'), 422, /could not be read as JSON/],
      ['../../etc/evil.csv', Buffer.from('a\n1\n'), 400, /not a plain file name/],
      ['..%2fevil.csv', Buffer.from('a\n1\n'), 400, /not a plain file name/],
      ['notes.txt', Buffer.from('a\n1\n'), 415, /upload CSV, TSV, Parquet or JSON/],
      ['huge.csv', Buffer.alloc(MAX + 1, 'a'), 413, /larger than the 2 MiB limit/],
      ['bomb.csv.gz', gzipSync(Buffer.concat([Buffer.from('a\n'), Buffer.alloc(64 * 1024 * 1024, '0\n')])), 413, /decompressed file is larger/],
      ['fake.csv.gz', Buffer.from('not gzip at all'), 400, /not a valid gzip file/],
      ['empty.csv', Buffer.alloc(0), 400, /empty/],
    ];
    for (const [name, body, status, msg] of cases) {
      const r = await upload(ws, decodeURIComponent(name), body);
      expect(r.status, name).toBe(status);
      expect(r.json.message, name).toMatch(msg);
      expect(leftovers(ws), name).toEqual([]);
    }
    expect(listTables(a.doc)).toEqual([]);
    expect(fs.existsSync('/etc/evil.csv')).toBe(false);
  });

  it('error bodies never name a server path (temp dir, data dir, kernel dir), for every format', async () => {
    const ws = await newWorkspace(ctx.server);
    await client(ctx.server, ws, ctx.clients);
    const good = await parquet(1000);
    const secretDirs = [os.tmpdir(), ctx.server.config.dataDir, ctx.server.kernels!.workspaceDir(ws), tmpDir(ws), process.cwd()];
    const cases: Array<[string, Buffer]> = [
      ['broken.csv', Buffer.from('a,b\n1,2\n3,4,5,6\n"unterminated\n')],
      ['garbage.csv', Buffer.from([0, 159, 146, 150, 255, 0, 1, 2])],
      ['broken.tsv', Buffer.from('a\tb\n1\t2\n"unterminated\t3\n')],
      ['truncated.parquet', good.subarray(0, Math.floor(good.length / 2))],
      ['notparquet.parquet', Buffer.from('PAR1 this is not parquet at all')],
      ['bad.json', Buffer.from('{"a": 1, "b": [1, 2')],
      ['bad.ndjson', Buffer.from('{"a": 1}\n{"a": \n')],
      ['bad.json.gz', gzipSync(Buffer.from('[{"a": 1}, {"a": tru'))],
    ];
    for (const [name, body] of cases) {
      const res = await fetch(`${ctx.server.url}/api/workspaces/${ws}/uploads?name=${encodeURIComponent(name)}`, {
        method: 'POST', headers: { authorization: `Bearer ${ctx.server.ownerToken}` }, body: new Uint8Array(body),
      });
      const text = await res.text();
      expect(res.status, `${name}: ${text}`).toBe(422);
      expect(JSON.parse(text).message, name).toMatch(/could not be (read|imported)/);
      for (const dir of secretDirs) expect(text, `${name} names ${dir}`).not.toContain(dir);
      expect(text, name).not.toContain('/tmp');
      // No absolute path at all: a "/" starting a word of the message.
      expect(text, name).not.toMatch(/(^|[\s"'(=:,\[])\/[\w.-]+/);
    }
    expect(leftovers(ws)).toEqual([]);
  });

  it('an upload cut off half-way leaves nothing; viewers cannot upload', async () => {
    const ws = await newWorkspace(ctx.server);
    await client(ctx.server, ws, ctx.clients);
    const u = new URL(`${ctx.server.url}/api/workspaces/${ws}/uploads?name=half.csv`);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'POST', headers: { authorization: `Bearer ${ctx.server.ownerToken}`, 'content-length': 1_000_000 } });
    req.on('error', () => {});
    req.write('a,b\n' + '1,2\n'.repeat(10_000));
    // Cut it off once the server is storing it (its temporary file exists), not after a guessed delay.
    await waitFor(() => fs.existsSync(uploadsTmp(ws)) && fs.readdirSync(uploadsTmp(ws)).length > 0, { message: 'upload under way' });
    req.destroy();
    await waitFor(() => leftovers(ws).length === 0, { message: 'no leftovers' });
    const share = await api(ctx.server.url, ctx.server.ownerToken, 'POST', `/api/workspaces/${ws}/share`, { role: 'viewer' });
    const r = await upload(ws, 'v.csv', Buffer.from('a\n1\n'), share.json.token);
    expect(r.status).toBe(403);
  });
});
