/**
 * Kernels as processes of their own (`npm run kernel` beside a server with PLEXUS_KERNEL=external):
 * the server starts no kernel; a kernel process holding the workspace's kernel lease runs the
 * cells — JavaScript, SQL over a table uploaded to the server (shared data directory), and calls
 * a cell makes of the server (analysis jobs, over HTTP). Killed mid-cell, another kernel process
 * takes the lease over, reports the run as stopped (never runs it again by itself) and runs the
 * next one; stopped cleanly, it hands the lease back and the standby takes over; paused past its
 * lease, it is replaced, and its writes are refused by the server once another process holds the
 * lease (the kernel fence).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { CloseCodes, KERNEL_ORIGIN, listCells, readKernelStatus, requestRun, setCellSource, writeKernelStatus } from '@plexus/shared';
import { api, hocuspocusClient, startKernelProcess, startTestServer, storedDoc, waitFor, ywsClient, type HpClient, type KernelProcess } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, client, finished, newWorkspace, shown, startKernelServer, waitRun } from '@plexus/testkit/kernel';
import type { PlexusServer } from '../../src/app.ts';

let server: PlexusServer;
const clients: HpClient[] = [];
const processes: KernelProcess[] = [];
const FAST = { PLEXUS_KERNEL_LEASE_MS: '2000', PLEXUS_KERNEL_POLL_MS: '200' };
const kernelProcess = (env: Record<string, string> = {}) => {
  const k = startKernelProcess(server.url, server.config.dataDir, { ...FAST, ...env });
  processes.push(k);
  return k;
};

beforeAll(async () => {
  server = await startKernelServer({ externalKernels: true });
});
// Each test's kernel processes go with it: a process left running would take the next test's workspaces.
afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.kill('SIGKILL')));
});
afterAll(async () => {
  clients.forEach((c) => c.destroy());
  await server?.close();
});

describe('kernels in processes of their own', () => {
  it('the server runs no kernel; the kernel routes take the kernel token only, and exist only with external kernels', async () => {
    expect(server.kernelTokenFile).toBeTruthy();
    const kernelToken = fs.readFileSync(server.kernelTokenFile!, 'utf8').trim();
    const agentToken = fs.readFileSync(server.agentTokenFile!, 'utf8').trim();
    const ws = await newWorkspace(server, 'No kernel here');
    // The token a kernel started inside a server would have: one workspace, not a kernel process's.
    const inServerKernel = server.signer.sign({ ws, role: 'service', sub: 'service:kernel', ttlSeconds: 60 });
    const routes = [['GET', '/api/kernel/workspaces'], ['POST', `/api/kernel/workspaces/${ws}/lease`], ['POST', `/api/kernel/workspaces/${ws}/calls`]] as const;
    for (const token of [server.ownerToken, agentToken, inServerKernel])
      for (const [method, path] of routes) {
        const res = await api(server.url, token, method, path, method === 'GET' ? undefined : { runner: 'x', ttlMs: 1000, kind: 'job' });
        expect(res.status, `${method} ${path}`).toBe(403);
      }
    // …and the kernel token is not the agent's.
    expect((await api(server.url, kernelToken, 'GET', '/api/agent/workspaces')).status).toBe(403);
    // Only the lease holder's calls are answered, and what a cell may ask is checked.
    const call = (body: Record<string, unknown>, w = ws) => api(server.url, kernelToken, 'POST', `/api/kernel/workspaces/${w}/calls`, body);
    expect((await call({ kind: 'job', op: 'calcium-status', runner: 'r-1' })).json.error).toBe('lease-lost');
    expect((await api(server.url, kernelToken, 'POST', `/api/kernel/workspaces/${ws}/lease`, { runner: 'r-1', ttlMs: 60_000 })).json.granted).toBe(true);
    expect((await call({ kind: 'job', op: 'calcium-status' })).json.error).toBe('lease-lost');
    expect((await call({ kind: 'shell', runner: 'r-1' })).json.error).toBe('bad-call');
    expect((await call({ kind: 'job', op: '', runner: 'r-1' })).json.error).toBe('bad-call');
    const failed = await call({ kind: 'job', op: 'calcium-status', args: { job: 'nope' }, runner: 'r-1' });
    expect([failed.status, failed.json.error]).toEqual([422, 'call-failed']);
    expect((await call({ kind: 'job', op: 'calcium-status', runner: 'r-1' }, 'w_missing')).status).toBe(404);
    // The global kernel token reads documents but cannot write them: kernels write with their lease's token.
    const global = hocuspocusClient(server.url, ws, kernelToken);
    clients.push(global);
    await global.synced;
    writeKernelStatus(global.doc, { ...readKernelStatus(global.doc), message: 'written without a lease' }, KERNEL_ORIGIN);
    expect((await waitFor(() => global.closes[0] ?? null, { message: 'the global token refused' })).reason).toBe(CloseCodes.ReadOnly.reason);
    expect(server.kernels!.running).toBe(0);

    // A server running its kernels itself has no kernel routes, and no kernel token is left behind.
    const inside = await startTestServer({ dataDir: server.config.dataDir.replace(/$/, '-inside'), kernel: true, kernelIdleMs: 600_000 });
    try {
      expect(inside.kernelTokenFile).toBeNull();
      const token = inside.signer.sign({ ws: '*', role: 'service', sub: 'service:kernel', ttlSeconds: 60 });
      expect((await api(inside.url, token, 'GET', '/api/kernel/workspaces')).status).toBe(404);
    } finally {
      await inside.close();
    }
  });

  it("a kernel process's writes are fenced by its lease: once another process holds it, they are refused", async () => {
    const kernelToken = fs.readFileSync(server.kernelTokenFile!, 'utf8').trim();
    const ws = await newWorkspace(server, 'Fenced');
    const lease = (runner: string) => api(server.url, kernelToken, 'POST', `/api/kernel/workspaces/${ws}/lease`, { runner, ttlMs: 60_000 });
    const first = await lease('runner-a');
    expect(first.json).toMatchObject({ granted: true, fresh: true });
    expect((await lease('runner-b')).json).toMatchObject({ granted: false, holder: 'runner-a' });
    expect(first.json.token).toBeTypeOf('string');
    // runner-a's lease runs out (it was paused, or cut off) and runner-b takes it.
    server.kernelLeases.expire(ws);
    const second = await lease('runner-b');
    expect(second.json).toMatchObject({ granted: true, fresh: true });
    const stale = hocuspocusClient(server.url, ws, first.json.token);
    clients.push(stale);
    await stale.synced;
    // What a kernel may write (its status; cells' runs): refused from the runner that lost the lease.
    writeKernelStatus(stale.doc, { ...readKernelStatus(stale.doc), message: 'late status from runner-a' }, KERNEL_ORIGIN);
    const closed = await waitFor(() => stale.closes.find((c) => c.code === CloseCodes.LeaseLost.code) ?? null, { message: 'the stale runner refused' });
    expect(closed!.reason).toBe(CloseCodes.LeaseLost.reason);
    stale.destroy();
    const fresh = hocuspocusClient(server.url, ws, second.json.token);
    clients.push(fresh);
    await fresh.synced;
    writeKernelStatus(fresh.doc, { ...readKernelStatus(fresh.doc), message: 'status from runner-b' }, KERNEL_ORIGIN);
    await waitFor(() => readKernelStatus(storedDoc(server, ws)).message === 'status from runner-b' || null, { message: "runner-b's write stored" });
    expect(fresh.closes).toEqual([]);
    // Nothing of runner-a's reached the document, nor anyone else.
    const reader = hocuspocusClient(server.url, ws, server.ownerToken);
    clients.push(reader);
    await reader.synced;
    expect(readKernelStatus(reader.doc).message).toBe('status from runner-b');
    expect(JSON.stringify(reader.doc.toJSON())).not.toContain('late status from runner-a');
    // Lease tokens are for the Hocuspocus endpoint, where the fence is: y-websocket refuses them.
    const yws = ywsClient(server.url, ws, second.json.token);
    try {
      const refused = await waitFor(() => yws.closes[0] ?? null, { message: 'y-websocket refuses a lease token' });
      expect(refused.code).toBe(CloseCodes.Forbidden.code);
    } finally {
      yws.destroy();
    }
  });

  it('a holder paused past its lease (SIGSTOP) is replaced; resumed, it stops, and its late result never reaches the document', async () => {
    const first = kernelProcess();
    const ws = await newWorkspace(server, 'Paused kernel process');
    const c = await client(server, ws, clients);
    await first.logged('kernel lease taken', ws);
    const second = kernelProcess();
    await waitFor(() => second.lines.some((l) => l.msg === 'kernel process started'), { message: 'the standby started' });
    // A cell that finishes by itself a few seconds after it starts: while its kernel process is paused.
    const cell = addCell(c.doc, 'code', 'const t0 = Date.now(); while (Date.now() - t0 < 4000) {} "late result from the paused process"');
    requestRun(c.doc, cell, alice, aliceOrigin);
    await waitRun(c.doc, cell, (r) => r.state === 'running', 'the cell running in the first process');
    first.proc.kill('SIGSTOP');
    try {
      const stopped = await waitRun(c.doc, cell, finished, 'the run reported by the second process', 120_000);
      expect(stopped.state).toBe('cancelled');
      expect(stopped.exec!.reason).toMatch(/kernel stopped during this run/);
      expect(second.hasLogged('kernel lease taken', ws)).toBe(true);
    } finally {
      first.proc.kill('SIGCONT');
    }
    await first.logged('kernel lease lost: stopping the kernel', ws, 120_000);
    // A later run in the second process is the marker that the first had every chance to write.
    setCellSource(c.doc, cell, '40 + 2', aliceOrigin);
    requestRun(c.doc, cell, alice, aliceOrigin);
    expect(shown(await waitRun(c.doc, cell, (r) => r.state === 'done', 'a run in the second process', 120_000))).toBe('42');
    const everything = JSON.stringify(listCells(storedDoc(server, ws)).map((x) => x.map.toJSON()));
    expect(everything).toContain('40 + 2');
    expect(everything).not.toContain('late result from the paused process');
    expect(JSON.stringify(listCells(c.doc).map((x) => x.map.toJSON()))).not.toContain('late result from the paused process');
  }, 300_000);

  it('a kernel process runs JavaScript, SQL over an upload, and calls to the server', async () => {
    const k = kernelProcess();
    const ws = await newWorkspace(server, 'Remote kernel');
    const c = await client(server, ws, clients);
    await k.logged('kernel lease taken', ws);
    expect(server.kernels!.running).toBe(0);

    const js = addCell(c.doc, 'code', '6 * 7');
    requestRun(c.doc, js, alice, aliceOrigin);
    expect(shown(await waitRun(c.doc, js, (r) => r.state === 'done', 'the JS cell'))).toBe('42');

    const up = await fetch(`${server.url}/api/workspaces/${ws}/uploads?name=people.csv`, {
      method: 'POST', headers: { authorization: `Bearer ${server.ownerToken}`, 'content-type': 'application/octet-stream' }, body: 'name,age\nAda,36\nAlan,41\n',
    });
    expect(up.status).toBe(201);
    const sql = addCell(c.doc, 'sql', 'select sum(age) as total from people');
    requestRun(c.doc, sql, alice, aliceOrigin);
    const sqlRun = await waitRun(c.doc, sql, finished, 'the SQL cell');
    expect(sqlRun.state, JSON.stringify(sqlRun.outputs)).toBe('done');
    expect(JSON.stringify(sqlRun.outputs)).toContain('77');

    // A call the server answers (over HTTP, for this workspace): its error reaches the cell as is.
    const call = addCell(c.doc, 'code', 'await calcium.status("nope")');
    requestRun(c.doc, call, alice, aliceOrigin);
    const callRun = await waitRun(c.doc, call, finished, 'the cell calling the server');
    expect(callRun.state).toBe('error');
    expect(JSON.stringify(callRun.outputs)).toContain('there is no job \\"nope\\" in this workspace');
    await k.kill('SIGTERM');
  }, 180_000);

  it('killed mid-cell, the standby process takes over: the run is reported stopped and the next run works', async () => {
    // The spinning cell must end by the kill, never by its own time limit first: starting the
    // standby took longer than the tests' 3 s limit on a loaded machine (the run ended in a timeout).
    const first = kernelProcess({ PLEXUS_CELL_TIMEOUT_MS: '600000' });
    const ws = await newWorkspace(server, 'Kernel takeover');
    const c = await client(server, ws, clients);
    await first.logged('kernel lease taken', ws);
    const second = kernelProcess();
    const cell = addCell(c.doc, 'code', 'for (;;) {}');
    requestRun(c.doc, cell, alice, aliceOrigin);
    await waitRun(c.doc, cell, (r) => r.state === 'running', 'the cell running in the first process');
    // The standby is up and asking (it logs nothing until it holds the lease).
    await waitFor(() => second.lines.some((l) => l.msg === 'kernel process started'), { message: 'the standby started' });
    await first.kill('SIGKILL');
    const stopped = await waitRun(c.doc, cell, finished, 'the run reported', 120_000);
    expect(stopped.state).toBe('cancelled');
    expect(stopped.exec!.reason).toMatch(/kernel stopped during this run/);
    expect(second.hasLogged('kernel lease taken', ws)).toBe(true);
    await waitFor(() => readKernelStatus(c.doc).state === 'idle', { timeout: 60_000, message: 'the new kernel idle' });
    setCellSource(c.doc, cell, '6 * 7', aliceOrigin);
    requestRun(c.doc, cell, alice, aliceOrigin);
    expect(shown(await waitRun(c.doc, cell, (r) => r.state === 'done', 'the next run, in the second process', 120_000))).toBe('42');

    expect(first.hasLogged('kernel lease taken', ws) && second.hasLogged('kernel lease taken', ws)).toBe(true);
  }, 300_000);

  it('stopped cleanly, a kernel process hands its lease back: the standby takes over long before the lease would run out', async () => {
    const LONG = { PLEXUS_KERNEL_LEASE_MS: '600000' };
    const holder = kernelProcess(LONG);
    const ws = await newWorkspace(server, 'Clean handover');
    const c = await client(server, ws, clients);
    await holder.logged('kernel lease taken', ws);
    const cell = addCell(c.doc, 'code', '6 * 7');
    requestRun(c.doc, cell, alice, aliceOrigin);
    await waitRun(c.doc, cell, (r) => r.state === 'done', 'a run in the first process');
    const third = kernelProcess(LONG);
    await waitFor(() => third.lines.some((l) => l.msg === 'kernel process started'), { message: 'the standby started' });
    await holder.kill('SIGTERM');
    // Were the lease not handed back, the standby would wait 10 minutes for it.
    await third.logged('kernel lease taken', ws, 120_000);
    setCellSource(c.doc, cell, '6 * 8', aliceOrigin);
    requestRun(c.doc, cell, alice, aliceOrigin);
    expect(shown(await waitRun(c.doc, cell, (r) => r.state === 'done' && shown(r) === '48', 'a run in the third process', 120_000))).toBe('48');
  }, 300_000);
});
