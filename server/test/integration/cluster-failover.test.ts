/**
 * Nodes dying under load (child processes behind Debian's HAProxy, on real Redis and Postgres):
 * `kill -9` of the node serving a workspace while clients on every node type, round after round —
 * clients reconnect through the load balancer, the lease moves, and every acknowledged edit is
 * there exactly once. The same with a graceful drain (SIGTERM), Postgres unavailable for a while,
 * and Redis restarted mid-session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cellSource, createCell, listCells, mulberry32, userOrigin } from '@plexus/shared';
import type { Redis } from 'ioredis';
import {
  api, checkMarkers, hocuspocusClient, newLedger, startHaproxy, startTestCluster, typeMarkers, waitFor, within,
  type ChildServer, type Haproxy, type HpClient, type TestCluster,
} from '@plexus/testkit';
import { connectRedis } from '../../src/cluster/redis.ts';
import { createLogger } from '../../src/log.ts';

let cluster: TestCluster;
let lb: Haproxy;
let redis: Redis;
const nodes = new Map<string, ChildServer>();
const IDS = ['node-a', 'node-b', 'node-c'];

beforeAll(async () => {
  cluster = await startTestCluster({ leaseMs: 2000 });
  const started = await Promise.all(IDS.map((id) => cluster.startChildNode(id)));
  IDS.forEach((id, i) => nodes.set(id, started[i]!));
  lb = await startHaproxy(IDS.map((id) => ({ name: id, url: nodes.get(id)!.url })));
  redis = connectRedis(cluster.redis.url, createLogger('silent', {}));
}, 600_000);
afterAll(async () => {
  redis?.disconnect();
  await lb?.destroy();
  await cluster?.destroy();
}, 120_000);

const holderOf = (ws: string) => redis.get(`plexus:lease:${ws}`);

describe('nodes dying', () => {
  it('kill -9 of the serving node under continuous typing from clients on all nodes, round after round: every acknowledged edit exactly once', async () => {
    const owner = nodes.get('node-a')!.ownerToken;
    const ws = (await api(lb.url, owner, 'POST', '/api/workspaces', { name: 'Failover' })).json.workspace.id as string;
    const rand = mulberry32(20261126);
    const ledger = newLedger();
    // Six clients through the load balancer: round robin spreads them over the three nodes.
    const clients: HpClient[] = Array.from({ length: 6 }, () => hocuspocusClient(lb.url, ws, owner, { reconnect: true }));
    await Promise.all(clients.map((c) => c.synced));
    const rounds = Number(process.env.PLEXUS_CLUSTER_KILL_ROUNDS ?? 3);
    const moves: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const typing = typeMarkers(clients, ledger, { round, rand });
      let target = ledger.acked.size + 10 + Math.floor(rand() * 20);
      await waitFor(() => ledger.acked.size >= target, { timeout: 120_000, message: `${target} acknowledged markers before the kill` });
      const victim = await holderOf(ws);
      expect(IDS).toContain(victim);
      await nodes.get(victim!)!.kill('SIGKILL');
      // Typing goes on: the clients of the dead node reconnect elsewhere, the lease moves.
      target = ledger.acked.size + 10;
      await waitFor(() => ledger.acked.size >= target, { timeout: 120_000, message: `${target} acknowledged markers after killing ${victim}` });
      const next = await holderOf(ws);
      expect(next).not.toBe(victim);
      moves.push(`${victim}→${next}`);
      await typing.stop();
      // The dead node comes back on its port (the load balancer's health check takes it in again).
      nodes.set(victim!, await cluster.startChildNode(victim!));
      const reader = hocuspocusClient(lb.url, ws, owner);
      await reader.synced;
      expect(checkMarkers(reader.doc, ledger)).toEqual([]);
      reader.destroy();
    }
    expect(moves).toHaveLength(rounds);
    expect(ledger.acked.size).toBeGreaterThan(rounds * 20);
    clients.forEach((c) => c.destroy());
  }, 900_000);

  it('SIGTERM of the serving node under typing: it drains, its clients move to the others, every acknowledged edit exactly once', async () => {
    const owner = nodes.get('node-a')!.ownerToken;
    const ws = (await api(lb.url, owner, 'POST', '/api/workspaces', { name: 'Drain' })).json.workspace.id as string;
    const ledger = newLedger();
    const clients = Array.from({ length: 4 }, () => hocuspocusClient(lb.url, ws, owner, { reconnect: true }));
    await Promise.all(clients.map((c) => c.synced));
    const typing = typeMarkers(clients, ledger, { round: 0, rand: mulberry32(3) });
    await waitFor(() => ledger.acked.size >= 15, { timeout: 120_000, message: '15 acknowledged markers before the drain' });
    const victim = (await holderOf(ws))!;
    expect(await nodes.get(victim)!.kill('SIGTERM')).toBe(0);
    const target = ledger.acked.size + 15;
    await waitFor(() => ledger.acked.size >= target, { timeout: 120_000, message: `${target} acknowledged markers after the drain of ${victim}` });
    expect(await holderOf(ws)).not.toBe(victim);
    await typing.stop();
    nodes.set(victim, await cluster.startChildNode(victim));
    const reader = hocuspocusClient(lb.url, ws, owner);
    await reader.synced;
    expect(checkMarkers(reader.doc, ledger)).toEqual([]);
    reader.destroy();
    clients.forEach((c) => c.destroy());
  }, 600_000);

  it('Postgres unavailable: writes on every node are refused with a clear error, nothing acknowledged is lost, service resumes', async () => {
    const owner = nodes.get('node-a')!.ownerToken;
    const ws = (await api(lb.url, owner, 'POST', '/api/workspaces', { name: 'Postgres outage' })).json.workspace.id as string;
    // One client on each node (directly): two of them are relayed to the serving node.
    const clients = IDS.map((id) => hocuspocusClient(nodes.get(id)!.url, ws, owner, { reconnect: true }));
    await within(Promise.all(clients.map((c) => c.synced)), 'the three clients synced');
    const ledger = newLedger();
    const typing = typeMarkers(clients, ledger, { round: 0, rand: mulberry32(11) });
    await waitFor(() => ledger.acked.size >= 15, { timeout: 120_000, message: 'acknowledged markers before the outage' });
    await within(typing.stop(), 'the typists stopped');
    await waitFor(() => clients.every((c) => c.provider.unsyncedChanges === 0), { message: 'all acknowledged' });
    await within(cluster.pg.stop('fast'), 'Postgres stopped', 200_000);
    try {
      const before = clients.map((c) => c.closes.length);
      clients.forEach((c, i) => createCell(c.doc, { kind: 'code', source: `typed during the outage ${i}`, author: `c${i}` }, userOrigin(`c${i}`)));
      // Each is told why (relayed clients too): 4503 storage-unavailable, nothing acknowledged.
      await waitFor(() => clients.every((c, i) => c.closes.slice(before[i]).some((e) => e.code === 4503 && e.reason === 'storage-unavailable')), { timeout: 60_000, message: 'every client refused with 4503' });
      expect(clients.every((c) => c.provider.unsyncedChanges > 0)).toBe(true);
    } finally {
      await within(cluster.pg.start(), 'Postgres started again', 200_000);
    }
    // The providers reconnect, re-send and are acknowledged; everything is there exactly once.
    await waitFor(() => clients.every((c) => c.provider.unsyncedChanges === 0), { timeout: 120_000, message: 'acknowledged after the outage' });
    const reader = hocuspocusClient(lb.url, ws, owner);
    await within(reader.synced, 'a reader synced through the load balancer');
    expect(checkMarkers(reader.doc, ledger)).toEqual([]);
    for (let i = 0; i < clients.length; i++) expect(listCells(reader.doc).filter((c) => cellSource(c) === `typed during the outage ${i}`)).toHaveLength(1);
    reader.destroy();
    clients.forEach((c) => c.destroy());
  }, 600_000);

  it('Redis restarted mid-session: nodes recover, no edit lost, the lease is taken again', async () => {
    const owner = nodes.get('node-a')!.ownerToken;
    const ws = (await api(lb.url, owner, 'POST', '/api/workspaces', { name: 'Redis restart' })).json.workspace.id as string;
    const ledger = newLedger();
    const clients = Array.from({ length: 3 }, () => hocuspocusClient(lb.url, ws, owner, { reconnect: true }));
    await Promise.all(clients.map((c) => c.synced));
    const typing = typeMarkers(clients, ledger, { round: 0, rand: mulberry32(5) });
    await waitFor(() => ledger.acked.size >= 10, { timeout: 120_000, message: '10 acknowledged markers' });
    await cluster.redis.stop();
    const during = ledger.acked.size;
    // The serving node keeps serving (it is fenced by Postgres, not by Redis).
    await waitFor(() => ledger.acked.size >= during + 10, { timeout: 120_000, message: 'edits acknowledged while Redis is down' });
    await cluster.redis.start();
    await waitFor(async () => IDS.includes((await holderOf(ws).catch(() => null)) ?? ''), { timeout: 60_000, message: 'the lease taken again after the restart' });
    const after = ledger.acked.size;
    await waitFor(() => ledger.acked.size >= after + 10, { timeout: 120_000, message: 'edits acknowledged after Redis is back' });
    await typing.stop();
    const reader = hocuspocusClient(lb.url, ws, owner);
    await reader.synced;
    expect(checkMarkers(reader.doc, ledger)).toEqual([]);
    reader.destroy();
    clients.forEach((c) => c.destroy());
    const ready = await Promise.all(IDS.map((id) => fetch(`${nodes.get(id)!.url}/api/ready`).then((r) => r.status)));
    expect(ready).toEqual([200, 200, 200]);
  }, 600_000);
});
