/**
 * View-only links: the owner creates one in the Share menu; whoever opens it gets a read-only UI
 * (banner, editors not editable, no add/delete/move/undo/share, chat composer disabled), and the
 * server refuses document changes from that connection even when they bypass the UI.
 */
import {
  ALICE,
  CAROL,
  VICTOR,
  caretToEnd,
  cellTexts,
  codeContent,
  expect,
  markdownContent,
  openWorkspace,
  test,
  waitLive,
} from '../support/plexus.ts';

test('a view link gives a read-only UI and the server rejects the viewer’s changes', async ({ plexus, actor }) => {
  const { workspace, cellIds } = await plexus.createWorkspace('view link', [
    { kind: 'code', source: 'const answer = 42;' },
    { kind: 'markdown', source: 'Read me only' },
  ]);
  const [codeId, mdId] = cellIds as [string, string];
  const alice = await actor(ALICE);
  await openWorkspace(alice.page, plexus, workspace.id);
  await alice.page.getByTestId('chat-input').fill('Welcome, viewers');
  await alice.page.getByTestId('chat-input').press('Enter');

  // The owner creates a view-only link in the Share menu.
  await alice.page.getByTestId('share').click();
  await alice.page.getByTestId('share-view').click();
  const url = await alice.page.getByTestId('share-url').inputValue();
  expect(url).toMatch(new RegExp(`^${plexus.url}/w/${workspace.id}\\?token=`));
  const claims = JSON.parse(Buffer.from(new URL(url).searchParams.get('token')!.split('.')[0]!, 'base64url').toString());
  expect(claims).toMatchObject({ ws: workspace.id, role: 'viewer' });

  // Victor opens it in his own browser.
  const victor = await actor(VICTOR);
  const v = victor.page;
  await v.goto(url);
  await waitLive(v);
  expect(await v.evaluate(() => (globalThis as any).__plexus?.role)).toBe('viewer');
  await expect(v.getByTestId('read-only-banner')).toBeVisible();
  await expect(codeContent(v, codeId)).toHaveText('const answer = 42;');
  await expect(markdownContent(v, mdId)).toHaveText('Read me only');
  await expect(v.getByTestId('chat-message').locator('.chat-text')).toHaveText(['Welcome, viewers']);
  // The owner sees the viewer among the people here, marked as a viewer.
  await expect(alice.page.locator('[data-testid="avatar"][title="Victor (view link)"]')).toHaveClass(/is-viewer/);

  // Editors are not editable, and typing into them changes nothing (local edits are synchronous,
  // so "nothing changed" right after the keys is a real observation).
  await expect(codeContent(v, codeId)).toHaveAttribute('contenteditable', 'false');
  await expect(markdownContent(v, mdId)).toHaveAttribute('contenteditable', 'false');
  await caretToEnd(v, codeContent(v, codeId));
  await v.keyboard.type(' viewer typing');
  await v.keyboard.press('Backspace');
  await markdownContent(v, mdId).click();
  await v.keyboard.type(' viewer typing');
  expect(await cellTexts(v, codeId)).toEqual({ dom: 'const answer = 42;', y: 'const answer = 42;' });
  expect(await cellTexts(v, mdId)).toEqual({ dom: 'Read me only', y: 'Read me only' });
  // Structural shortcuts do nothing either.
  await v.keyboard.press('Control+Alt+KeyN');
  await expect(v.getByTestId('cell')).toHaveCount(2);

  // No structural controls, no undo, no share; title read-only; chat composer disabled.
  for (const id of ['add-code', 'add-markdown', 'add-sql', 'insert-code', 'insert-markdown', 'insert-sql', 'cell-delete', 'cell-up', 'cell-down', 'cell-kind', 'undo', 'redo', 'share']) {
    await expect(v.getByTestId(id), id).toHaveCount(0);
  }
  await expect(v.getByTestId('workspace-title')).toHaveAttribute('readonly', '');
  await expect(v.getByTestId('chat-input')).toBeDisabled();

  // Bypassing the UI: a direct change to the viewer's Y.Doc.
  await v.evaluate((id) => {
    const doc = (globalThis as any).__plexus.doc;
    doc.getMap('cells').get(id).get('source').insert(0, 'HACKED ');
  }, codeId);
  expect((await cellTexts(v, codeId)).y).toBe('HACKED const answer = 42;');
  // The server refuses it: the viewer's session reports a read-only refusal...
  await expect(v.getByTestId('session-problem').locator('[data-reason="read-only"]')).toBeVisible();
  await expect(v.getByTestId('session-problem')).toContainText('view-only');

  // ...and it never reaches anyone. The owner edits after the refusal; once the server has her
  // edit, it has certainly handled (and dropped) the viewer's earlier one.
  await caretToEnd(alice.page, codeContent(alice.page, codeId));
  await alice.page.keyboard.type(' // owner');
  const expected = 'const answer = 42; // owner';
  await expect.poll(async () => (await plexus.snapshot(workspace.id)).cells.map((c) => c.text)).toEqual([expected, 'Read me only']);
  expect(await cellTexts(alice.page, codeId)).toEqual({ dom: expected, y: expected });
  // The refused viewer stops (no reconnect loop) and after a reload follows the server's copy
  // again: its refused change was discarded, and new edits reach it live.
  await expect(v.getByTestId('connection-status')).toHaveText('offline');
  await v.reload();
  await expect(v.getByTestId('read-only-banner')).toBeVisible();
  await expect.poll(() => cellTexts(v, codeId)).toEqual({ dom: expected, y: expected });
  await caretToEnd(alice.page, codeContent(alice.page, codeId));
  await alice.page.keyboard.type('!');
  await expect.poll(() => cellTexts(v, codeId)).toEqual({ dom: expected + '!', y: expected + '!' });
  // A fresh browser (no local state) sees the server's copy without the viewer's change.
  const fresh = await actor(CAROL);
  await openWorkspace(fresh.page, plexus, workspace.id);
  await expect.poll(() => cellTexts(fresh.page, codeId)).toEqual({ dom: expected + '!', y: expected + '!' });

  // The owner revokes every link: the viewer is told at once, and the owner's own tab carries on.
  await alice.page.getByTestId('share').click();
  await alice.page.getByTestId('share-reset').click();
  await alice.page.getByTestId('share-reset-confirm').click();
  await expect(alice.page.getByTestId('share-reset-done')).toContainText('1 person was disconnected');
  await expect(v.getByTestId('session-problem').locator('[data-reason="token-revoked"]')).toBeVisible();
  await expect(v.getByTestId('session-problem')).toContainText('revoked this link');
  await expect(alice.page.getByTestId('connection-status')).toHaveText('connected');
});
