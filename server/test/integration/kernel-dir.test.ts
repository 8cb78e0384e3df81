/**
 * A data directory inside a folder other users cannot enter (a clone in /root, mode 0700): the
 * sandboxed cells run as other users, so kernel files go to a reachable folder and SQL over an
 * uploaded table still works.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requestRun } from '@plexus/shared';
import type { PlexusServer } from '../../src/app.ts';
import { closedAncestor } from '../../src/kernel/manager.ts';
import * as sandboxModule from '../../src/kernel/sandbox.ts';
import { sandboxCaps } from '../../src/kernel/sandbox.ts';
import { tmpDir, type HpClient } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, client, finished, newWorkspace, shown, startKernelServer, waitRun } from '@plexus/testkit/kernel';

const clients: HpClient[] = [];
let server: PlexusServer | undefined;
afterAll(async () => {
  clients.forEach((c) => c.destroy());
  await server?.close();
});

describe('kernel files when the data directory sits in a closed folder', () => {
  it('SQL over an uploaded table works', async () => {
    const closed = tmpDir('plexus-closed-');
    fs.chmodSync(closed, 0o700);
    const dataDir = path.join(closed, 'repo', 'data');
    fs.mkdirSync(dataDir, { recursive: true });
    expect(closedAncestor(dataDir)).toBe(closed);
    server = await startKernelServer({ dataDir });
    const kernelDir = server.kernels!.kernelDir;
    // With a uid sandbox (root) the files move out; otherwise they stay and nothing changes.
    if (sandboxCaps().setpriv) expect(closedAncestor(kernelDir)).toBeNull();
    const ws = await newWorkspace(server);
    const res = await fetch(`${server.url}/api/workspaces/${ws}/uploads?name=counts.csv`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.ownerToken}`, 'content-type': 'application/octet-stream' },
      body: 'n\n1\n2\n3\n',
    });
    expect(res.status).toBe(201);
    const a = await client(server, ws, clients);
    const cell = addCell(a.doc, 'sql', 'SELECT sum(n) AS total FROM counts', 'totals');
    requestRun(a.doc, cell, alice, aliceOrigin);
    const v = await waitRun(a.doc, cell, finished);
    expect(shown(v)).not.toMatch(/exited/);
    expect(v.state).toBe('done');
    expect(v.outputs[0]).toMatchObject({ type: 'table', rows: [{ total: 6 }] });
  }, 60_000);
});

describe('the code itself in a closed folder', () => {
  it('a file in a folder closed to others is unreadable to the sandbox user; opening the folder makes it readable', () => {
    const closed = tmpDir('plexus-closed-code-');
    fs.chmodSync(closed, 0o700);
    const file = path.join(closed, 'runner.mjs');
    fs.writeFileSync(file, 'export {};\n', { mode: 0o644 });
    const { unprivilegedCanRead } = sandboxModule;
    // Without root and setpriv no probe can switch users: it reports unreadable, and the uid layer is off anyway.
    const canSwitch = sandboxCaps().setpriv || sandboxCaps().uidUnavailable !== undefined;
    expect(unprivilegedCanRead(file)).toBe(false);
    fs.chmodSync(closed, 0o755);
    expect(unprivilegedCanRead(file)).toBe(canSwitch);
    // This checkout: the uid layer is on exactly when cells could load their runner.
    if (sandboxCaps().setpriv) expect(sandboxCaps().uidUnavailable).toBeUndefined();
  });
});
