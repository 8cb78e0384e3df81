/**
 * Durability: every update the server acknowledged survives SIGKILL at a random moment, exactly
 * once. Several clients type unique markers; a marker counts as acknowledged once the client's
 * provider has no unsynced changes after typing it (the server's SyncStatus ack). The server is
 * killed with SIGKILL mid-stream, restarted, and a fresh client (no local state that could
 * re-send anything) must find every acknowledged marker exactly once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createCell, cellSource, userOrigin, listCells, mulberry32 } from '@plexus/shared';
import { api, checkMarkers, hocuspocusClient, newLedger, startChildServer, tmpDir, typeMarkers, waitFor, type ChildServer, type HpClient } from '@plexus/testkit';

const ROUNDS = Number(process.env.PLEXUS_DURABILITY_ROUNDS ?? 12);
const CLIENTS = 3;


let server: ChildServer | null = null;
afterAll(async () => {
  if (server) await server.kill('SIGKILL');
});

describe('durability under SIGKILL', () => {
  it(`finds every acknowledged edit exactly once after ${ROUNDS} random kills`, async () => {
    const dataDir = tmpDir('plexus-durability-');
    const rand = mulberry32(20261122);
    server = await startChildServer(dataDir, { PLEXUS_COMPACT_EVERY: '60', PLEXUS_COMPACT_IDLE_MS: '500' });
    const ws = (await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name: 'Durability' })).json.workspace.id as string;
    const ledger = newLedger();
    const { acked, sent } = ledger;
    let totalAcked = 0;

    for (let round = 0; round < ROUNDS; round++) {
      if (!server) server = await startChildServer(dataDir, { PLEXUS_COMPACT_EVERY: '60', PLEXUS_COMPACT_IDLE_MS: '500' });
      const url = server.url;
      const token = server.ownerToken;
      const clients: HpClient[] = [];
      for (let i = 0; i < CLIENTS; i++) clients.push(hocuspocusClient(url, ws, token));
      await Promise.all(clients.map((c) => c.synced));
      // Each client types bursts of 1-5 markers into its own cell, waits for the server's
      // acknowledgement, records the burst as acknowledged, and goes again — until the server dies under it.
      const typing = typeMarkers(clients, ledger, { round, rand });
      // Kill at a random moment while everyone is typing: after a random amount of acknowledged
      // traffic (not a random delay, which a slow machine could fill with nothing).
      const target = acked.size + 11 + Math.floor(rand() * 40);
      await waitFor(() => acked.size >= target, { timeout: 60_000, message: `${target} acknowledged markers` });
      await server.kill('SIGKILL');
      server = null;
      await typing.stop();
      clients.forEach((c) => c.destroy());

      // Restart and read with a fresh client.
      server = await startChildServer(dataDir, { PLEXUS_COMPACT_EVERY: '60', PLEXUS_COMPACT_IDLE_MS: '500' });
      const reader = hocuspocusClient(server.url, ws, server.ownerToken);
      await reader.synced;
      expect(checkMarkers(reader.doc, ledger)).toEqual([]);
      totalAcked = acked.size;
      reader.destroy();
      if (round % 3 === 2) {
        await server.kill('SIGKILL');
        server = null;
      }
    }
    // The test must have exercised real traffic.
    expect(totalAcked).toBeGreaterThan(ROUNDS * 10);
    expect(sent.size).toBeGreaterThanOrEqual(totalAcked);
  }, 900_000); // a hang guard: each round starts a server, tens of seconds apiece on a stressed machine

  it('SIGTERM flushes: the log is folded into a snapshot and everything is there after restart', async () => {
    const dataDir = tmpDir('plexus-sigterm-');
    let s = await startChildServer(dataDir, { PLEXUS_COMPACT_EVERY: '100000', PLEXUS_COMPACT_IDLE_MS: '600000' });
    const ws = (await api(s.url, s.ownerToken, 'POST', '/api/workspaces', { name: 'Flush' })).json.workspace.id as string;
    const c = hocuspocusClient(s.url, ws, s.ownerToken);
    await c.synced;
    for (let i = 0; i < 50; i++) createCell(c.doc, { kind: 'code', source: `cell ${i}`, author: 'c' }, userOrigin('c'));
    await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'acknowledged' });
    const code = await s.kill('SIGTERM');
    c.destroy();
    expect(code).toBe(0);
    // After a clean stop the log is empty: everything sits in the snapshot.
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(`${dataDir}/plexus.db`, { readonly: true });
    expect((db.prepare('SELECT COUNT(*) AS n FROM log WHERE ws = ?').get(ws) as { n: number }).n).toBe(0);
    db.close();
    s = await startChildServer(dataDir);
    const r = hocuspocusClient(s.url, ws, s.ownerToken);
    await r.synced;
    expect(listCells(r.doc).map(cellSource)).toEqual(Array.from({ length: 50 }, (_, i) => `cell ${i}`));
    r.destroy();
    await s.kill('SIGTERM');
  }, 300_000);
});
