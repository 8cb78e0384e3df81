/**
 * Kernels as processes of their own (`npm run kernel` beside a server with PLEXUS_KERNEL=external):
 * the server starts no kernel; a kernel process holding the workspace's kernel lease runs the
 * cells — JavaScript, SQL over a table uploaded to the server (shared data directory), and calls
 * a cell makes of the server (analysis jobs, over HTTP). Killed mid-cell, another kernel process
 * takes the lease over, reports the run as stopped (never runs it again by itself) and runs the
 * next one; stopped cleanly, it hands the lease back and the standby takes over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readKernelStatus, requestRun, setCellSource } from '@plexus/shared';
import { api, startKernelProcess, waitFor, type HpClient, type KernelProcess } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, client, finished, newWorkspace, shown, startKernelServer, waitRun } from '@plexus/testkit/kernel';
import type { PlexusServer } from '../../src/app.ts';

let server: PlexusServer;
const clients: HpClient[] = [];
const processes: KernelProcess[] = [];
const FAST = { PLEXUS_KERNEL_LEASE_MS: '2000', PLEXUS_KERNEL_POLL_MS: '200' };
const kernelProcess = () => {
  const k = startKernelProcess(server.url, server.config.dataDir, FAST);
  processes.push(k);
  return k;
};

beforeAll(async () => {
  server = await startKernelServer({ externalKernels: true });
});
afterAll(async () => {
  clients.forEach((c) => c.destroy());
  await Promise.all(processes.map((p) => p.kill('SIGKILL')));
  await server?.close();
});

describe('kernels in processes of their own', () => {
  it('the server runs no kernel and refuses the kernel routes to other tokens', async () => {
    expect(server.kernelTokenFile).toBeTruthy();
    const ws = await newWorkspace(server, 'No kernel here');
    for (const [method, path] of [['GET', '/api/kernel/workspaces'], ['POST', `/api/kernel/workspaces/${ws}/lease`], ['POST', `/api/kernel/workspaces/${ws}/calls`]] as const) {
      const res = await api(server.url, server.ownerToken, method, path, method === 'GET' ? undefined : { runner: 'x', ttlMs: 1000, kind: 'job' });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    expect(server.kernels!.running).toBe(0);
  });

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
    const first = kernelProcess();
    const ws = await newWorkspace(server, 'Kernel takeover');
    const c = await client(server, ws, clients);
    await first.logged('kernel lease taken', ws);
    const second = kernelProcess();
    const cell = addCell(c.doc, 'code', 'for (;;) {}');
    requestRun(c.doc, cell, alice, aliceOrigin);
    await waitRun(c.doc, cell, (r) => r.state === 'running', 'the cell running in the first process');
    // The standby is up and asking (it logs nothing until it holds the lease).
    await waitFor(() => second.lines.some((l) => l.msg === 'kernel process started'), { message: 'the standby started' });
    expect(second.hasLogged('kernel lease taken', ws)).toBe(false);
    await first.kill('SIGKILL');
    const stopped = await waitRun(c.doc, cell, finished, 'the run reported', 120_000);
    expect(stopped.state).toBe('cancelled');
    expect(stopped.exec!.reason).toMatch(/kernel stopped during this run/);
    expect(second.hasLogged('kernel lease taken', ws)).toBe(true);
    await waitFor(() => readKernelStatus(c.doc).state === 'idle', { timeout: 60_000, message: 'the new kernel idle' });
    setCellSource(c.doc, cell, '6 * 7', aliceOrigin);
    requestRun(c.doc, cell, alice, aliceOrigin);
    expect(shown(await waitRun(c.doc, cell, (r) => r.state === 'done', 'the next run, in the second process', 120_000))).toBe('42');

    // A clean stop hands the lease back: a third process takes over without waiting for it to run out.
    const third = kernelProcess();
    await waitFor(() => third.lines.some((l) => l.msg === 'kernel process started'), { message: 'the third started' });
    await second.kill('SIGTERM');
    await third.logged('kernel lease taken', ws, 120_000);
    setCellSource(c.doc, cell, '6 * 8', aliceOrigin);
    requestRun(c.doc, cell, alice, aliceOrigin);
    expect(shown(await waitRun(c.doc, cell, (r) => r.state === 'done' && shown(r) === '48', 'a run in the third process', 120_000))).toBe('48');
  }, 300_000);
});
