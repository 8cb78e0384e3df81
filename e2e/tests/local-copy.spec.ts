/**
 * This browser's copy of a workspace (client/src/collab/localCopy.ts: IndexedDB, y-indexeddb's
 * layout), kept without encoding the whole document on the page (speed issue, gap 3): what came
 * before its database opened (the document fetched while opening, applied without an 'update'
 * event, and edits made meanwhile) is written when it opens, and a copy of many entries is folded
 * into one by a worker. Each visit that reads the copy back holds the socket, so what shows can
 * only come from the copy.
 */
import type { Page, WebSocketRoute } from '@playwright/test';
import { ALICE, codeContent, expect, openWorkspace, test, waitLive } from '../support/plexus.ts';

/** From the next navigation on, this page's workspace copies open only once `__openCopies()` is called. */
async function holdCopyOpening(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const open = IDBFactory.prototype.open;
    const w = window as unknown as { __openCopies(): void; __copiesOpen?: boolean };
    const held: Array<() => void> = [];
    w.__openCopies = () => {
      w.__copiesOpen = true;
      for (const go of held.splice(0)) go();
    };
    IDBFactory.prototype.open = function (this: IDBFactory, name: string, version?: number) {
      if (!name.startsWith('plexus:') || w.__copiesOpen) return open.call(this, name, version);
      // A stand-in request: the handlers set on it go to the real one when it is let through.
      const handlers: Record<string, unknown> = {};
      held.push(() => Object.assign(open.call(indexedDB, name, version), handlers));
      return handlers as unknown as IDBOpenDBRequest;
    };
  });
}

/** A new page of the same browser (same IndexedDB) whose socket never reaches the server. */
async function offlinePage(page: Page): Promise<Page> {
  const next = await page.context().newPage();
  await next.routeWebSocket(/\/collab/, (_ws: WebSocketRoute) => {});
  return next;
}

const entriesOf = (page: Page, workspaceId: string): Promise<number> =>
  page.evaluate(async (ws) => {
    const name = (await indexedDB.databases()).map((d) => d.name ?? '').find((n) => n.includes(ws));
    if (!name) return -1;
    const db = await new Promise<IDBDatabase>((ok, fail) => Object.assign(indexedDB.open(name), { onsuccess(this: IDBOpenDBRequest) { ok(this.result); }, onerror: fail }));
    const n = await new Promise<number>((ok, fail) => Object.assign(db.transaction('updates').objectStore('updates').count(), { onsuccess(this: IDBRequest<number>) { ok(this.result); }, onerror: fail }));
    db.close();
    return n;
  }, workspaceId);

test('the document fetched before the copy opened, and an edit made meanwhile, are kept: the next visit shows both without the server', async ({ plexus, actor }) => {
  const { workspace, cellIds } = await plexus.createWorkspace('copy opens late', [
    { kind: 'code', source: 'const early = 1;' },
    { kind: 'markdown', source: '# Kept notes' },
    { kind: 'sql', source: 'SELECT 3 AS three', name: 'threes' },
  ]);
  const alice = await actor(ALICE);
  await holdCopyOpening(alice.page);
  await openWorkspace(alice.page, plexus, workspace.id);
  // The fetched document is applied and synced; the copy has not opened yet.
  expect(await alice.page.evaluate(() => performance.getEntriesByName('plexus:state-applied').length)).toBe(1);
  expect(await alice.page.evaluate(() => (globalThis as any).__plexus.session.idb.synced)).toBe(false);
  await codeContent(alice.page, cellIds[0]!).click();
  await alice.page.keyboard.press('Control+End');
  await alice.page.keyboard.type(' // before the copy');
  await expect.poll(async () => (await plexus.snapshot(workspace.id)).cells[0]!.text).toBe('const early = 1; // before the copy');
  await alice.page.evaluate(() => (window as unknown as { __openCopies(): void }).__openCopies());
  await alice.page.waitForFunction(() => performance.getEntriesByName('plexus:idb-synced').length > 0);
  // Written when it opened: the fetched bytes and the edit, nothing encoded from the whole document.
  await expect.poll(() => entriesOf(alice.page, workspace.id)).toBeGreaterThanOrEqual(2);

  const later = await offlinePage(alice.page);
  await later.goto(`${plexus.url}/w/${workspace.id}?token=${encodeURIComponent(plexus.ownerToken)}`);
  await expect(later.getByTestId('doc-ready')).toBeVisible();
  await expect(later.getByTestId('cell')).toHaveCount(3);
  await expect(codeContent(later, cellIds[0]!)).toHaveText('const early = 1; // before the copy');
  await expect(later.getByTestId('notebook')).toContainText('Kept notes');
  await expect(later.getByTestId('notebook')).toContainText('SELECT 3 AS three');
  expect(await later.evaluate(() => (globalThis as any).__plexus.provider.isSynced)).toBe(false);
});

test('a copy of many entries is folded into one by a worker, and still holds the document', async ({ plexus, actor }) => {
  const { workspace, cellIds } = await plexus.createWorkspace('folded copy', [{ kind: 'code', source: '' }]);
  const alice = await actor(ALICE);
  await openWorkspace(alice.page, plexus, workspace.id);
  await alice.page.waitForFunction(() => performance.getEntriesByName('plexus:idb-synced').length > 0);
  // 600 edits, one transaction each (one entry each in the copy): past the 500 that start a fold.
  await alice.page.evaluate((id) => {
    const { session } = (globalThis as any).__plexus;
    const text = session.doc.getMap('cells').get(id).get('source');
    for (let i = 0; i < 600; i++) session.doc.transact(() => text.insert(text.length, String(i % 10)), session.origin);
  }, cellIds[0]!);
  const typed = Array.from({ length: 600 }, (_, i) => String(i % 10)).join('');
  await expect.poll(() => alice.page.evaluate(() => (globalThis as any).__plexus.session.idb.foldStats.inWorker), { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
  expect(await alice.page.evaluate(() => (globalThis as any).__plexus.session.idb.foldStats.onPage)).toBe(0);
  expect(await entriesOf(alice.page, workspace.id)).toBeLessThan(10);
  await expect.poll(async () => (await plexus.snapshot(workspace.id)).cells[0]!.text).toBe(typed);

  const later = await offlinePage(alice.page);
  await later.goto(`${plexus.url}/w/${workspace.id}?token=${encodeURIComponent(plexus.ownerToken)}`);
  await expect(later.getByTestId('doc-ready')).toBeVisible();
  await expect(codeContent(later, cellIds[0]!)).toHaveText(typed);
  // Edits go on into the folded copy.
  const stored = await entriesOf(later, workspace.id);
  await codeContent(later, cellIds[0]!).click();
  await later.keyboard.press('Control+End');
  await later.keyboard.type('!');
  await expect.poll(() => later.evaluate((id) => String((globalThis as any).__plexus.doc.getMap('cells').get(id).get('source')), cellIds[0]!)).toBe(`${typed}!`);
  // Closed only once the copy has stored the edit: IndexedDB commits after the document has it,
  // and a page closed in between may lose that write (the browser's, not the copy's doing).
  await expect.poll(() => entriesOf(later, workspace.id)).toBeGreaterThan(stored);
  await later.close();
  const third = await offlinePage(alice.page);
  await third.goto(`${plexus.url}/w/${workspace.id}?token=${encodeURIComponent(plexus.ownerToken)}`);
  await expect(codeContent(third, cellIds[0]!)).toHaveText(`${typed}!`);
});

test('the chat composer comes when the page is idle, or at once, focused, when someone goes to type there', async ({ plexus, actor }) => {
  const { workspace } = await plexus.createWorkspace('composer on demand', [{ kind: 'code', source: 'x = 1' }]);
  const alice = await actor(ALICE);
  // The page is never idle here: only going to the composer brings it.
  await alice.page.addInitScript(() => {
    window.requestIdleCallback = () => 0;
  });
  await openWorkspace(alice.page, plexus, workspace.id);
  await expect(alice.page.getByTestId('chat-composer-waiting')).toBeVisible();
  await expect(alice.page.getByTestId('chat-input')).toHaveCount(0);
  await alice.page.getByTestId('chat-composer-waiting').click();
  await expect(alice.page.getByTestId('chat-input')).toBeFocused();
  await alice.page.keyboard.type('on demand');
  await alice.page.keyboard.press('Enter');
  await expect(alice.page.getByTestId('chat-message').filter({ hasText: 'on demand' })).toHaveCount(1);
  await waitLive(alice.page);
});

test('without IndexedDB the workspace works, nothing piles up in memory waiting for a copy, and no copy is recorded', async ({ plexus, actor }) => {
  const { workspace, cellIds } = await plexus.createWorkspace('no copy', [{ kind: 'code', source: 'let n = 0;' }]);
  const alice = await actor(ALICE);
  // A browser that refuses IndexedDB (as some private windows do): every open fails.
  await alice.page.addInitScript(() => {
    IDBFactory.prototype.open = function () {
      const request = {} as Record<string, unknown>;
      setTimeout(() => (request.onerror as ((e: unknown) => void) | undefined)?.({ target: { error: new DOMException('refused', 'InvalidStateError') } }), 0);
      return request as unknown as IDBOpenDBRequest;
    };
  });
  await openWorkspace(alice.page, plexus, workspace.id);
  await codeContent(alice.page, cellIds[0]!).click();
  await alice.page.keyboard.press('Control+End');
  await alice.page.keyboard.type(' n += 1;');
  await expect.poll(async () => (await plexus.snapshot(workspace.id)).cells[0]!.text).toBe('let n = 0; n += 1;');
  expect(await alice.page.evaluate(() => (globalThis as any).__plexus.session.idb.waitingUpdates)).toBe(0);
  // Synced, but no copy recorded: the next visit fetches the document instead of waiting for a copy.
  expect(await alice.page.evaluate((id) => JSON.parse(localStorage.getItem('plexus.localCopies') ?? '{}')[id] ?? null, workspace.id)).toBeNull();
});
