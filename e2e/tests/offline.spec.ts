/**
 * Offline editing. Alice's collaboration socket goes through a Playwright WebSocket route from
 * the first page load on, so the test decides when the sync server is reachable: going offline
 * closes both sides of her open socket (what a real network loss ends in) and refuses every new
 * one until she is back. (Chromium's `context.setOffline` is not used: it leaves open sockets
 * alone and, in CI, let a reconnect through.) The provider retries on its own and fails while
 * offline; when she is back it reconnects by itself (no test-side `connect()`).
 *
 * While alice is offline both edit; her edits are kept in IndexedDB and survive a reload made
 * while the sync server is still unreachable; once she is back both sides converge and the server
 * holds the merge.
 */
import type { Page, WebSocketRoute } from '@playwright/test';
import {
  ALICE,
  BOB,
  caretToEnd,
  cellTexts,
  codeContent,
  expect,
  markdownContent,
  notebookState,
  openWorkspace,
  renderedCellIds,
  test,
} from '../support/plexus.ts';

/**
 * A cell's text as this browser's IndexedDB copy holds it, read through a second y-indexeddb
 * instance on the same database (the classes are taken from the live session objects).
 */
function idbCellText(page: Page, cellId: string): Promise<string | null> {
  return page.evaluate(async (id) => {
    const session = (globalThis as any).__plexus.session;
    const doc = new session.doc.constructor();
    const idb = new session.idb.constructor(session.idb.name, doc);
    try {
      await idb.whenSynced;
      const src = doc.getMap('cells').get(id)?.get('source');
      if (!src) return null;
      if (typeof src.toDelta === 'function') return src.toString();
      const inner = (n: any): string =>
        typeof n.toDelta === 'function' ? n.toDelta().map((d: any) => (typeof d.insert === 'string' ? d.insert : '')).join('') : n.toArray().map(inner).join('');
      return src.toArray().map(inner).join('\n');
    } finally {
      await idb.destroy();
      doc.destroy();
    }
  }, cellId);
}

test('offline edits are kept locally (also across a reload) and merge when alice is back', async ({ plexus, actor }) => {
  const { workspace, cellIds } = await plexus.createWorkspace('offline', [
    { kind: 'code', source: 'base line' },
    { kind: 'markdown', source: 'Shared notes' },
  ]);
  const [codeId, mdId] = cellIds as [string, string];
  const bobLink = await plexus.share(workspace.id, 'editor');
  const alice = await actor(ALICE);
  const bob = await actor(BOB);
  let offline = false;
  const open: { page: WebSocketRoute; server: WebSocketRoute }[] = [];
  await alice.page.routeWebSocket(/\/collab/, (ws: WebSocketRoute) => {
    if (offline) {
      void ws.close();
      return;
    }
    open.push({ page: ws, server: ws.connectToServer() });
  });
  await openWorkspace(alice.page, plexus, workspace.id);
  await openWorkspace(bob.page, plexus, workspace.id, bobLink.token);
  await expect(bob.page.getByTestId('avatar')).toHaveCount(2);

  // --- Alice loses the network.
  offline = true;
  for (const ws of open.splice(0)) {
    await ws.server.close();
    await ws.page.close();
  }
  await expect(alice.page.getByTestId('connection-status')).toHaveText('offline');
  // The server noticed: bob no longer sees her.
  await expect(bob.page.getByTestId('avatar')).toHaveCount(1);
  // Her kernel bar says why nothing runs — the connection, not a server setting.
  await expect(alice.page.getByTestId('kernel-offline-reason')).toHaveText('Not connected to the server: cells run once it is back (run requests made now are kept).');

  // --- Both edit. Alice: end of the code cell, and a new markdown cell. Bob: start of the code
  // cell, and the end of the markdown cell.
  await caretToEnd(alice.page, codeContent(alice.page, codeId));
  await alice.page.keyboard.type(' + alice offline');
  await alice.page.getByTestId('add-markdown').click();
  await expect(alice.page.getByTestId('cell')).toHaveCount(3);
  const newCell = (await renderedCellIds(alice.page)).find((id) => id !== codeId && id !== mdId)!;
  await markdownContent(alice.page, newCell).click();
  await alice.page.keyboard.type('Written offline');

  await codeContent(bob.page, codeId).click();
  await bob.page.keyboard.press('Control+Home');
  await bob.page.keyboard.type('bob online + ');
  await markdownContent(bob.page, mdId).locator('p').click();
  await bob.page.keyboard.press('End');
  await bob.page.keyboard.type(' (bob)');

  // The server has bob's edits and none of alice's; alice has hers and none of bob's.
  await expect
    .poll(async () => (await plexus.snapshot(workspace.id)).cells.map((c) => c.text))
    .toEqual(['bob online + base line', 'Shared notes (bob)']);
  expect(await cellTexts(alice.page, codeId)).toEqual({ dom: 'base line + alice offline', y: 'base line + alice offline' });
  expect(await cellTexts(alice.page, mdId)).toEqual({ dom: 'Shared notes', y: 'Shared notes' });
  await expect(bob.page.getByTestId('cell')).toHaveCount(2);
  await expect(alice.page.getByTestId('connection-status')).toHaveText('offline');

  // --- Reload while the sync server is still unreachable (plain HTTP works: the page itself must
  // load; the collaboration socket is still refused).
  await expect.poll(() => idbCellText(alice.page, codeId)).toBe('base line + alice offline');
  await expect.poll(() => idbCellText(alice.page, newCell)).toBe('Written offline');
  await alice.page.reload();
  await expect(alice.page.getByTestId('doc-ready')).toBeVisible();
  await expect(alice.page.getByTestId('connection-status')).not.toHaveText('connected');
  // Everything she did offline is there, from IndexedDB; bob's edits are not (yet).
  await expect
    .poll(() => notebookState(alice.page))
    .toEqual([
      { id: codeId, kind: 'code', dom: 'base line + alice offline', y: 'base line + alice offline' },
      { id: mdId, kind: 'markdown', dom: 'Shared notes', y: 'Shared notes' },
      { id: newCell, kind: 'markdown', dom: 'Written offline', y: 'Written offline' },
    ]);
  await expect(alice.page.getByTestId('connection-status')).not.toHaveText('connected');

  // --- Back online: the provider reconnects by itself (its own back-off), and both converge.
  offline = false;
  await expect(alice.page.getByTestId('connection-status')).toHaveText('connected', { timeout: 30_000 });
  const merged = [
    { id: codeId, kind: 'code', dom: 'bob online + base line + alice offline', y: 'bob online + base line + alice offline' },
    { id: mdId, kind: 'markdown', dom: 'Shared notes (bob)', y: 'Shared notes (bob)' },
    { id: newCell, kind: 'markdown', dom: 'Written offline', y: 'Written offline' },
  ];
  await expect.poll(() => notebookState(alice.page)).toEqual(merged);
  await expect.poll(() => notebookState(bob.page)).toEqual(merged);
  await expect
    .poll(async () => (await plexus.snapshot(workspace.id)).cells.map((c) => c.text))
    .toEqual(merged.map((c) => c.y));
  await expect(bob.page.getByTestId('avatar')).toHaveCount(2);
});
