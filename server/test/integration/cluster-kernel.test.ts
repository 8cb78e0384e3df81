/**
 * One kernel per workspace across nodes (child processes on real Redis and Postgres): the kernel
 * runs on the node holding the workspace's lease. Killing that node while a cell runs moves the
 * lease; the new node's kernel reports the run as cancelled (never runs it twice at once) and the
 * next run works. A holder paused past its lease (SIGSTOP) is fenced off: when it resumes, its
 * kernel's late result is refused by the store and never reaches the document. A kernel process
 * of its own (PLEXUS_KERNEL=external) connected to any node runs the workspace's cells.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { listCells, readKernelStatus, requestRun, setCellSource } from '@plexus/shared';
import { api, hocuspocusClient, startKernelProcess, startTestCluster, waitFor, type ChildServer, type HpClient, type TestCluster } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, finished, shown, waitRun } from '@plexus/testkit/kernel';
import * as Y from 'yjs';
import { connectRedis } from '../../src/cluster/redis.ts';
import { PgDatabase } from '../../src/store/postgres/database.ts';
import { PgWorkspaceStore } from '../../src/store/postgres/postgres-store.ts';
import { createLogger } from '../../src/log.ts';

let cluster: TestCluster;
let redis: Redis;
const KERNEL = { PLEXUS_KERNEL: '1', PLEXUS_KERNEL_IDLE_MS: '600000' };

beforeAll(async () => {
  cluster = await startTestCluster({ leaseMs: 2000 });
  redis = connectRedis(cluster.redis.url, createLogger('silent', {}));
}, 300_000);
afterAll(async () => {
  redis?.disconnect();
  await cluster?.destroy();
}, 120_000);

const holderOf = (ws: string) => redis.get(`plexus:lease:${ws}`);
/** Every cell with its run and outputs, as JSON (what a result written into the document would show up in). */
const cellsJson = (doc: Y.Doc) => JSON.stringify(listCells(doc).map((c) => c.map.toJSON()));

/** A workspace served by `first` (a client there loads it), and Alice on `second`, relayed to it, with the kernel online. */
async function servedBy(first: ChildServer, second: ChildServer, name: string): Promise<{ ws: string; pin: HpClient; alice: HpClient }> {
  const ws = (await api(first.url, first.ownerToken, 'POST', '/api/workspaces', { name })).json.workspace.id as string;
  const pin = hocuspocusClient(first.url, ws, first.ownerToken);
  await pin.synced;
  const a = hocuspocusClient(second.url, ws, second.ownerToken, { reconnect: true });
  await a.synced;
  await waitFor(() => readKernelStatus(a.doc).state !== 'offline', { timeout: 120_000, message: 'the kernel online' });
  return { ws, pin, alice: a };
}

describe('one kernel per workspace across nodes', () => {
  it("kill -9 of the node running a cell: the lease moves, the run is reported cancelled, the next run works", async () => {
    const a = await cluster.startChildNode('k-a', KERNEL);
    const b = await cluster.startChildNode('k-b', KERNEL);
    const { ws, pin, alice: al } = await servedBy(a, b, 'Kernel failover');
    expect(await holderOf(ws)).toBe('k-a');
    const cell = addCell(al.doc, 'code', 'for (;;) {}');
    requestRun(al.doc, cell, alice, aliceOrigin);
    await waitRun(al.doc, cell, (r) => r.state === 'running', 'the cell running on k-a');
    await a.kill('SIGKILL');
    pin.destroy();
    // Alice's client reconnects (to k-b), which takes the lease and starts the kernel there.
    const failed = await waitRun(al.doc, cell, finished, 'the run reported', 120_000);
    expect(failed.state).toBe('cancelled');
    expect(failed.exec!.reason).toMatch(/kernel stopped during this run/);
    expect(await holderOf(ws)).toBe('k-b');
    // Not run again by itself: the new kernel is idle.
    await waitFor(() => readKernelStatus(al.doc).state === 'idle', { timeout: 60_000, message: 'the new kernel idle' });
    setCellSource(al.doc, cell, '6 * 7', aliceOrigin);
    requestRun(al.doc, cell, alice, aliceOrigin);
    const again = await waitRun(al.doc, cell, (r) => r.state === 'done', 'the next run on k-b', 120_000);
    expect(shown(again)).toBe('42');
    al.destroy();
    await b.kill('SIGTERM');
  }, 600_000);

  it('a holder paused past its lease is fenced off: its late result never reaches the document', async () => {
    const a = await cluster.startChildNode('p-a', KERNEL);
    const b = await cluster.startChildNode('p-b', KERNEL);
    const { ws, pin, alice: al } = await servedBy(a, b, 'Paused holder');
    // A cell that finishes on its own a few seconds after it starts: it will finish while p-a is paused.
    const cell = addCell(al.doc, 'code', 'const t0 = Date.now(); while (Date.now() - t0 < 4000) {} "late result from the paused node"');
    requestRun(al.doc, cell, alice, aliceOrigin);
    await waitRun(al.doc, cell, (r) => r.state === 'running', 'the cell running on p-a');
    const fenceBefore = Number(await cluster.pg.psql(`SELECT fence FROM workspaces WHERE id = '${ws}'`, cluster.databaseUrl.split('/').pop()));
    a.proc.kill('SIGSTOP');
    try {
      // p-b takes the workspace once p-a's lease runs out: it claims a newer fence and its kernel fails the run.
      const failed = await waitRun(al.doc, cell, finished, 'the run reported by p-b', 120_000);
      expect(failed.state).toBe('cancelled');
      expect(failed.exec!.reason).toMatch(/kernel stopped during this run/);
      expect(await holderOf(ws)).toBe('p-b');
      expect(Number(await cluster.pg.psql(`SELECT fence FROM workspaces WHERE id = '${ws}'`, cluster.databaseUrl.split('/').pop()))).toBeGreaterThan(fenceBefore);
    } finally {
      a.proc.kill('SIGCONT');
    }
    // p-a resumes: its runner finished meanwhile and its kernel writes the result, which the store refuses.
    const pinGone = await waitFor(() => pin.closes.length > 0 || null, { timeout: 60_000, message: "p-a drops the workspace (its clients' sockets close)" });
    expect(pinGone).toBeTruthy();
    // Give p-a's kernel every chance to get its result through: a later run on p-b is our marker.
    setCellSource(al.doc, cell, '40 + 2', aliceOrigin);
    requestRun(al.doc, cell, alice, aliceOrigin);
    const after = await waitRun(al.doc, cell, (r) => r.state === 'done', 'a run on p-b', 120_000);
    expect(shown(after)).toBe('42');
    const reader = hocuspocusClient(b.url, ws, b.ownerToken);
    await reader.synced;
    expect(cellsJson(reader.doc)).toContain('40 + 2');
    expect(cellsJson(reader.doc)).not.toContain('late result from the paused node');
    reader.destroy();
    pin.destroy();
    al.destroy();
    await Promise.all([a.kill('SIGTERM'), b.kill('SIGTERM')]);
    // Nor was it stored: what Postgres holds (snapshot + log) has p-b's run and not p-a's.
    const db = await PgDatabase.open(cluster.databaseUrl);
    const store = new PgWorkspaceStore(db);
    try {
      const doc = new Y.Doc();
      Y.applyUpdate(doc, (await store.load(ws)).update!);
      const stored = cellsJson(doc);
      expect(stored).toContain('40 + 2');
      expect(stored).not.toContain('late result from the paused node');
    } finally {
      await store.close();
      await db.release();
    }
  }, 600_000);

  it('a kernel process of its own, connected to another node, runs the cells of a workspace served elsewhere', async () => {
    const external = { PLEXUS_KERNEL: 'external', PLEXUS_KERNEL_IDLE_MS: '600000' };
    const a = await cluster.startChildNode('x-a', external);
    const b = await cluster.startChildNode('x-b', external);
    // On its own machine it would share the data directory (uploaded tables, large results) and reach the servers.
    const kernel = startKernelProcess(b.url, cluster.dataDir, { PLEXUS_KERNEL_LEASE_MS: '2000', PLEXUS_KERNEL_POLL_MS: '200' });
    try {
      const { ws, pin, alice: al } = await servedBy(a, b, 'External kernel');
      expect(await holderOf(ws)).toBe('x-a');
      await kernel.logged('kernel lease taken', ws);
      // One kernel lease per workspace in Redis, held by the kernel process.
      expect(await redis.get(`plexus:kernel-lease:${ws}`)).toMatch(/:\d+:/);
      const cell = addCell(al.doc, 'code', '6 * 7');
      requestRun(al.doc, cell, alice, aliceOrigin);
      expect(shown(await waitRun(al.doc, cell, (r) => r.state === 'done', 'the cell run by the kernel process', 120_000))).toBe('42');
      // Its calls to the server reach the serving node (relayed by x-b), which knows the workspace's jobs.
      const call = addCell(al.doc, 'code', 'await calcium.status("nope")');
      requestRun(al.doc, call, alice, aliceOrigin);
      const run = await waitRun(al.doc, call, finished, 'the cell calling the server', 120_000);
      expect(JSON.stringify(run.outputs)).toContain('there is no job \\"nope\\" in this workspace');
      pin.destroy();
      al.destroy();
    } finally {
      await kernel.kill('SIGTERM');
      await Promise.all([a.kill('SIGTERM'), b.kill('SIGTERM')]);
    }
  }, 600_000);
});
