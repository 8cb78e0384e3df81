/**
 * A clean stop folds the log: a workspace whose last client left just before the stop is being
 * compacted (its unload started it, in the background); the stop must let that compaction finish
 * before it closes the store. Seen in a stressed run on Postgres (23 entries left after SIGTERM:
 * the store closed under the compaction). Here the compaction is held at a gate, so the
 * interleaving is the test's, not the machine's.
 */
import { describe, expect, it } from 'vitest';
import { createCell, userOrigin } from '@plexus/shared';
import { api, hocuspocusClient, startTestServer, waitFor } from '@plexus/testkit';

describe('a clean stop', () => {
  it('waits for the compaction a just-unloaded workspace started, then the log is folded', async () => {
    const server = await startTestServer({ compactIdleMs: 600_000 });
    try {
      const { store, persistence } = server;
      persistence.unloadCompactionWaitMs = 600_000; // no bound inside this test: only the gate decides
      const ws = (await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name: 'Clean stop' })).json.workspace.id as string;

      // Hold this workspace's compaction at a gate.
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      let held = 0;
      const compact = store.compactInBackground.bind(store);
      store.compactInBackground = async (id: string) => {
        if (id === ws) {
          held++;
          await gate;
        }
        return compact(id);
      };

      const c = hocuspocusClient(server.url, ws, server.ownerToken);
      await c.synced;
      for (let i = 0; i < 5; i++) createCell(c.doc, { kind: 'code', source: `cell ${i}`, author: 'alice' }, userOrigin('alice'));
      await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'edits acknowledged' });
      expect(await store.logLength(ws)).toBeGreaterThan(0);
      c.destroy();
      await waitFor(() => !server.hocuspocus.documents.has(ws), { message: 'the workspace unloaded' });
      expect(held).toBe(1); // its unload started a compaction, held at the gate

      // The stop's flush does not finish while that compaction runs…
      let flushed = false;
      const flushing = persistence.flushAll().then((failed) => ((flushed = true), failed));
      await new Promise((r) => setImmediate(r));
      expect(flushed).toBe(false);
      // …and once it has, the log is folded.
      open();
      expect(await flushing).toEqual([]);
      expect(await store.logLength(ws)).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('also waits for the compactions of workspaces that unload while it waits (their sockets close during the stop)', async () => {
    const server = await startTestServer({ compactIdleMs: 600_000 });
    // Each workspace's compaction held at a gate of its own; `ended` settles when one has run.
    const gates = new Map<string, { open: () => void; opened: Promise<void>; held: number; ended: Promise<void>; end: () => void }>();
    try {
      const { store, persistence } = server;
      persistence.unloadCompactionWaitMs = 600_000; // no bound inside this test: only the gates decide
      const create = async (name: string) => (await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name })).json.workspace.id as string;
      const first = await create('Unloaded before the stop');
      const second = await create('Unloaded during the stop');

      for (const ws of [first, second]) {
        let open!: () => void;
        let end!: () => void;
        gates.set(ws, { open: () => open(), opened: new Promise<void>((r) => (open = r)), held: 0, ended: new Promise<void>((r) => (end = r)), end: () => end() });
      }
      const compact = store.compactInBackground.bind(store);
      store.compactInBackground = async (id: string) => {
        const gate = gates.get(id);
        if (!gate) return compact(id);
        gate.held++;
        await gate.opened;
        try {
          return await compact(id);
        } finally {
          gate.end();
        }
      };

      const edit = async (ws: string) => {
        const c = hocuspocusClient(server.url, ws, server.ownerToken);
        await c.synced;
        for (let i = 0; i < 3; i++) createCell(c.doc, { kind: 'code', source: `cell ${i}`, author: 'alice' }, userOrigin('alice'));
        await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'edits acknowledged' });
        expect(await store.logLength(ws)).toBeGreaterThan(0);
        return c;
      };
      const a = await edit(first);
      const b = await edit(second);
      a.destroy();
      await waitFor(() => !server.hocuspocus.documents.has(first), { message: 'the first workspace unloaded' });
      expect(gates.get(first)!.held).toBe(1);

      // The stop's flush waits for the first workspace's compaction; meanwhile the second unloads.
      let flushed = false;
      const flushing = persistence.flushAll().then((failed) => ((flushed = true), failed));
      b.destroy();
      await waitFor(() => !server.hocuspocus.documents.has(second), { message: 'the second workspace unloaded' });
      expect(gates.get(second)!.held).toBe(1);

      // The first compaction ends; the flush does not, while the second one runs…
      gates.get(first)!.open();
      await gates.get(first)!.ended;
      await new Promise((r) => setImmediate(r));
      expect(flushed).toBe(false);
      // …and once it has, both logs are folded.
      gates.get(second)!.open();
      expect(await flushing).toEqual([]);
      expect(await store.logLength(first)).toBe(0);
      expect(await store.logLength(second)).toBe(0);
    } finally {
      for (const g of gates.values()) g.open();
      await server.close();
    }
  });
});
