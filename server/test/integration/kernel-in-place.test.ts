/**
 * The in-server kernel serves the live document itself (kernel/manager.ts): no replica of its own,
 * no socket, no second apply of every keystroke. What that must keep: the document stays loaded
 * while its kernel works (even when everyone has left), unloads once the kernel stops, every
 * kernel write is stored and relayed like a peer's, and the kernel's writes keep the document
 * schema's rules for the kernel.
 */
import { afterAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { KERNEL_ORIGIN, readCellRun, readKernelStatus, requestRun, roots } from '@plexus/shared';
import { Gates, gateCall, startPostgres, storedDoc, waitFor, type HpClient } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, client, kernelOf, newWorkspace, startKernelServer, waitRun } from '@plexus/testkit/kernel';

const clients: HpClient[] = [];
afterAll(() => clients.forEach((c) => c.destroy()));

describe('the in-server kernel on the live document', () => {
  it('serves the live document with no socket of its own; its results are relayed, stored and keep the schema', async () => {
    const server = await startKernelServer();
    try {
      const ws = await newWorkspace(server);
      const a = await client(server, ws, clients);
      const b = await client(server, ws, clients);
      const live = server.hocuspocus.documents.get(ws)!;
      expect(kernelOf(server, ws).doc).toBe(live);
      // The two people's sockets, and the kernel's hold on the document — no kernel socket.
      expect(live.getConnections()).toHaveLength(2);
      expect(live.directConnectionsCount).toBe(1);

      const id = addCell(a.doc, 'code', 'const answer = 6 * 7;\nanswer');
      requestRun(a.doc, id, alice, aliceOrigin);
      const done = await waitRun(b.doc, id, (r) => r.state === 'done');
      expect(done.outputs).toEqual([{ type: 'text', text: '42' }]);
      // Written on the live document, so in storage as soon as it is visible to anyone.
      expect(readCellRun(storedDoc(server, ws), id)!.outputs).toEqual([{ type: 'text', text: '42' }]);
      expect(server.kernels!.schemaViolations).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('holds the document loaded while a cell runs after everyone left, then stops, and the document unloads with the result stored', async () => {
    const gates = new Gates();
    const server = await startKernelServer({ kernelIdleMs: 200 }, { wrapSample: gates.wrapSample });
    try {
      const ws = await newWorkspace(server);
      const a = await client(server, ws, clients);
      gates.hold('left');
      const id = addCell(a.doc, 'code', `${gateCall('left')}\nconst late = 6 * 7;\nlate`);
      requestRun(a.doc, id, alice, aliceOrigin);
      await gates.arrived('left');
      a.destroy();
      // The person is gone and the cell waits at its gate: the server has seen the disconnect (and
      // would have unloaded a document nobody holds), and idle checks find the kernel busy.
      const live = server.hocuspocus.documents.get(ws)!;
      await waitFor(() => live.getConnections().length === 0, { message: 'the person disconnected' });
      const kept = server.kernels!.keptBusy;
      await waitFor(() => server.kernels!.keptBusy >= kept + 2, { message: 'two idle checks found the kernel busy' });
      expect(server.hocuspocus.documents.get(ws)).toBe(live);
      expect(kernelOf(server, ws).busy).toBe(true);

      gates.open('left');
      await waitFor(() => server.kernels!.get(ws) === undefined, { message: 'the idle kernel stopped' });
      await waitFor(() => server.hocuspocus.documents.get(ws) === undefined, { message: 'the document unloaded' });
      const stored = storedDoc(server, ws);
      expect(readCellRun(stored, id)).toMatchObject({ state: 'done', outputs: [{ type: 'text', text: '42' }] });
      expect(readKernelStatus(stored).state).toBe('offline');
      expect(server.kernels!.schemaViolations).toBe(0);
    } finally {
      gates.openAll();
      await server.close();
    }
  });

  it('reports a kernel write that breaks the schema', async () => {
    const server = await startKernelServer();
    try {
      const ws = await newWorkspace(server);
      await client(server, ws, clients);
      const live = server.hocuspocus.documents.get(ws)!;
      expect(server.kernels!.schemaViolations).toBe(0);
      // The kernel may not write the workspace's metadata (server-only), nor a record that is not one.
      live.transact(() => roots(live).meta.set('schemaVersion', 999), KERNEL_ORIGIN);
      expect(server.kernels!.schemaViolations).toBeGreaterThan(0);
      const before = server.kernels!.schemaViolations;
      live.transact(() => (roots(live).cells as unknown as Y.Map<unknown>).set('not-a-cell', 'text'), KERNEL_ORIGIN);
      expect(server.kernels!.schemaViolations).toBeGreaterThan(before);
    } finally {
      await server.close();
    }
  });

  it('PLEXUS_KERNEL_IN_PLACE=0 keeps the kernel a socket peer with a replica (the baseline benchmarks compare with)', async () => {
    const server = await startKernelServer({ kernelInPlace: false });
    try {
      const ws = await newWorkspace(server);
      const a = await client(server, ws, clients);
      const live = server.hocuspocus.documents.get(ws)!;
      expect(kernelOf(server, ws).doc).not.toBe(live);
      expect(live.getConnections()).toHaveLength(2); // the person and the kernel's socket
      expect(live.directConnectionsCount).toBe(0);
      const id = addCell(a.doc, 'code', '6 * 7');
      requestRun(a.doc, id, alice, aliceOrigin);
      expect((await waitRun(a.doc, id, (r) => r.state === 'done')).outputs).toEqual([{ type: 'text', text: '42' }]);
    } finally {
      await server.close();
    }
  });

  it('with Postgres (appends complete later) the kernel stays a socket peer, its writes stored before anyone is sent them', async () => {
    const pg = await startPostgres({ fsync: false });
    try {
      const server = await startKernelServer({ databaseUrl: await pg.createDatabase() });
      try {
        expect(server.store.syncAppends).toBe(false);
        const ws = await newWorkspace(server);
        const a = await client(server, ws, clients);
        const live = server.hocuspocus.documents.get(ws)!;
        expect(kernelOf(server, ws).doc).not.toBe(live);
        expect(live.getConnections()).toHaveLength(2);
        const id = addCell(a.doc, 'code', '6 * 7');
        requestRun(a.doc, id, alice, aliceOrigin);
        expect((await waitRun(a.doc, id, (r) => r.state === 'done')).outputs).toEqual([{ type: 'text', text: '42' }]);
      } finally {
        await server.close();
      }
    } finally {
      await pg.destroy();
    }
  });
});
