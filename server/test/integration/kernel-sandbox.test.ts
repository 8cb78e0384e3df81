/**
 * What cell code can and cannot do, with the real server, kernel and sandbox. The cells first
 * escape the `vm` realm (which is no boundary: any function from the outer realm leads to the
 * runner's `process`), so each refusal below comes from the OS-level sandbox or DuckDB's settings,
 * not from missing globals: files (database, .env, /etc/passwd) through JS and DuckDB, sockets to
 * the sync server, spawning processes, killing the parent, environment secrets. Also: an infinite
 * loop times out while another workspace keeps running, unbounded allocation is stopped; cells run
 * at a lower scheduling priority than the server.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCellRun, readKernelStatus, requestRun, type CellRunView } from '@plexus/shared';
import { api, waitFor } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, client, kernelSuite, newWorkspace, shown, waitRun } from '@plexus/testkit/kernel';

process.env.PLEXUS_TEST_SENTINEL = 'sentinel-secret-value';
const ctx = kernelSuite();

/** Cell code that escapes the vm realm and tries things, returning `{ name: 'refused:…' | 'ALLOWED:…' }`. */
const ESCAPE = `const proc = console.log.constructor('return process')();
const mod = (n) => proc.getBuiltinModule(n);
const attempt = async (f) => { try { const r = await f(); return 'ALLOWED:' + String(r).slice(0, 60); } catch (e) { return 'refused:' + (e.code ?? e.message); } };
`;

async function runToEnd(doc: import('yjs').Doc, source: string, kind: 'code' | 'sql' = 'code', name?: string, timeout = 30_000): Promise<CellRunView> {
  const id = addCell(doc, kind, source, name);
  requestRun(doc, id, alice, aliceOrigin);
  return waitRun(doc, id, (r) => r.state === 'done' || r.state === 'error' || r.state === 'cancelled', 'cell finished', timeout);
}

function attempts(v: CellRunView): Record<string, string> {
  const o = v.outputs.find((x) => x.type === 'json');
  if (!o || o.type !== 'json') throw new Error(`no JSON output: ${shown(v)}`);
  return o.value as Record<string, string>;
}

describe('sandbox', () => {
  it('runs with every layer this machine offers', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    await waitFor(() => readKernelStatus(a.doc).sandbox.length > 0);
    // This machine (and CI) run as root with unshare, setpriv and prlimit available.
    expect(readKernelStatus(a.doc).sandbox).toEqual(['netns', 'nice', 'pdeathsig', 'permission-model', 'rlimits', 'uid']);
  });

  it('cells run below the sync server’s priority (nice 10), and cannot raise it', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const run = await runToEnd(a.doc, `${ESCAPE}const os = mod('os');
({ nice: os.getPriority(), raise: await attempt(() => os.setPriority(0)) })`);
    const o = attempts(run) as unknown as { nice: number; raise: string };
    expect(o.nice).toBe(10);
    expect(o.raise).toMatch(/^refused:/);
  });

  it('cannot read the database, .env or /etc/passwd through JavaScript', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const dataDir = ctx.server.config.dataDir;
    fs.writeFileSync(path.join(dataDir, '.env'), 'PLEXUS_SECRET=leaked\n');
    const v = await runToEnd(a.doc, `${ESCAPE}({
      db: await attempt(() => mod('fs').readFileSync(${JSON.stringify(path.join(dataDir, 'plexus.db'))}, 'latin1')),
      env: await attempt(() => mod('fs').readFileSync(${JSON.stringify(path.join(dataDir, '.env'))}, 'utf8')),
      secret: await attempt(() => mod('fs').readFileSync(${JSON.stringify(path.join(dataDir, 'secret.key'))}, 'utf8')),
      passwd: await attempt(() => mod('fs').readFileSync('/etc/passwd', 'utf8')),
      list: await attempt(() => mod('fs').readdirSync(${JSON.stringify(dataDir)}).join(',')),
      write: await attempt(() => mod('fs').writeFileSync('/tmp/plexus-escape', 'x')),
      vars: Object.keys(proc.env).join(','),
    })`);
    const r = attempts(v);
    for (const k of ['db', 'env', 'secret', 'passwd', 'list', 'write']) expect(r[k], k).toMatch(/^refused:/);
    expect(r.vars).not.toMatch(/PLEXUS|SENTINEL/);
    expect(fs.existsSync('/tmp/plexus-escape')).toBe(false);
  });

  it('cannot read those files through DuckDB either', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const dataDir = ctx.server.config.dataDir;
    for (const sql of [
      "SELECT * FROM read_csv('/etc/passwd')",
      `SELECT * FROM read_text('${path.join(dataDir, 'plexus.db')}')`,
      `SELECT * FROM read_text('${path.join(dataDir, '.env')}')`,
      `SELECT * FROM read_blob('${path.join(dataDir, 'secret.key')}')`,
      `ATTACH '${path.join(dataDir, 'plexus.db')}' AS x (TYPE sqlite)`,
      "INSTALL httpfs",
      "SET enable_external_access = true",
      // DuckDB's threads are the worker's to change (small queries on one), never a cell's.
      'SET threads = 64',
      "SELECT * FROM glob('/*')",
      // DuckDB's memory limit (256 MB in these tests): a clear error, not a dead process. Few large
      // strings reach it in milliseconds of CPU, so a busy machine cannot turn it into the 3 s time limit.
      "SELECT list(repeat('x', 1000000) || range) FROM range(2000)",
    ]) {
      const v = await runToEnd(a.doc, sql, 'sql');
      expect(v.state, sql).toBe('error');
      expect(shown(v), sql).toMatch(/Permission Error|disabled by configuration|locked|Cannot|Out of Memory|set by Plexus/);
    }
  });

  it('cannot open a socket to the sync server (or anywhere), spawn processes, start workers or kill its parent', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const port = ctx.server.port;
    const v = await runToEnd(a.doc, `${ESCAPE}const connect = (host) => new Promise((ok, fail) => {
      const s = mod('net').connect(${port}, host);
      s.on('connect', () => { s.destroy(); ok('connected to ' + host); });
      s.on('error', fail);
      setTimeout(() => fail(new Error('timeout')), 2000);
    });
    ({
      fetchGlobal: typeof fetch,
      loopback: await attempt(() => connect('127.0.0.1')),
      ipv6: await attempt(() => connect('::1')),
      http: await attempt(() => new Promise((ok, fail) => mod('http').get('http://127.0.0.1:${port}/api/health', (r) => ok(r.statusCode)).on('error', fail))),
      spawn: await attempt(() => mod('child_process').spawnSync('/bin/sh', ['-c', 'echo hi']).stdout),
      exec: await attempt(() => mod('child_process').execSync('id')),
      worker: await attempt(() => new (mod('worker_threads').Worker)('1', { eval: true })),
      addon: await attempt(() => proc.dlopen({ exports: {} }, '/nonexistent.node')),
      killParent: await attempt(() => proc.kill(proc.ppid, 'SIGKILL')),
      killInit: await attempt(() => proc.kill(1, 'SIGTERM')),
      uid: proc.getuid(),
    })`);
    const r = attempts(v);
    expect(r.fetchGlobal).toBe('undefined');
    for (const k of ['loopback', 'ipv6', 'http', 'spawn', 'exec', 'worker', 'addon', 'killParent', 'killInit']) expect(r[k], k).toMatch(/^refused:/);
    expect(Number(r.uid)).toBeGreaterThanOrEqual(200_000);
    // The server is alive and serving.
    expect((await api(ctx.server.url, null, 'GET', '/api/health')).status).toBe(200);
  });

  it('an infinite loop times out with a clear error while another workspace keeps running', async () => {
    const ws1 = await newWorkspace(ctx.server);
    const ws2 = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws1, ctx.clients);
    const b = await client(ctx.server, ws2, ctx.clients);
    // After an await, the vm timeout no longer applies: the supervisor's deadline kills the process.
    const loop = addCell(a.doc, 'code', 'await null;\nfor (;;) {}');
    requestRun(a.doc, loop, alice, aliceOrigin);
    await waitRun(a.doc, loop, (r) => r.state === 'running');
    // The other workspace runs cell after cell meanwhile (a count of runs, not a time window).
    let runs = 0;
    const cell = addCell(b.doc, 'code', 'const n = Array.from({ length: 1000 }, (_, i) => i).reduce((s, x) => s + x, 0);\nn');
    for (let i = 0; i < 3; i++) {
      requestRun(b.doc, cell, alice, aliceOrigin);
      await waitRun(b.doc, cell, (r) => r.state === 'done' && !r.requested && r.exec!.count > runs);
      runs = readCellRun(b.doc, cell)!.exec!.count;
    }
    expect(readCellRun(a.doc, loop)!.state).toBe('running');
    const v = await waitRun(a.doc, loop, (r) => r.state === 'error');
    expect(shown(v)).toMatch(/timed out after 3 s/);
    // Synchronous loops are stopped by the vm timeout without losing the kernel's values.
    const before = readKernelStatus(a.doc).generation;
    const sync = await runToEnd(a.doc, 'while (true) {}');
    expect(shown(sync)).toMatch(/timed out after 3000ms/);
    expect(readKernelStatus(a.doc).generation).toBe(before);
  });

});

// The memory limits, with a time limit far beyond them: on a busy machine filling 256 MB takes
// longer than the 3 s the timeout tests above use, and the time limit must never win this race.
describe('sandbox memory limits', () => {
  const big = kernelSuite({ cellTimeoutMs: 180_000 });
  it('unbounded allocation is stopped: objects (heap limit) and ArrayBuffers (address-space limit)', { timeout: 240_000 }, async () => {
    const ws = await newWorkspace(big.server);
    const a = await client(big.server, ws, big.clients);
    const gen = readKernelStatus(a.doc).generation;
    const objects = await runToEnd(a.doc, 'const keep = [];\nfor (;;) keep.push({ rows: new Array(4e6).fill(Math.random()) });', 'code', undefined, 200_000);
    expect(objects.state).toBe('error');
    expect(shown(objects)).toMatch(/ran out of memory/);
    await waitFor(() => readKernelStatus(a.doc).generation > gen, { message: 'kernel restarted', timeout: 60_000 });
    const buffers = await runToEnd(a.doc, 'const bufs = [];\nfor (;;) bufs.push(new Uint8Array(64 * 1024 * 1024).fill(1));', 'code', undefined, 200_000);
    expect(buffers.state).toBe('error');
    expect(shown(buffers)).toMatch(/Array buffer allocation failed|ran out of memory/);
    const after = await runToEnd(a.doc, '6 * 7');
    expect(shown(after)).toBe('42');
  });
});
