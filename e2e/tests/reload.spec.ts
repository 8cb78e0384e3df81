/**
 * Nothing is lost on reload: after alice and bob edit (typing in code and markdown cells, a new
 * cell, a renamed title), alice's reload shows everything; a brand-new browser (no IndexedDB
 * copy) shows the same, so it came from the server; and after a server restart (SIGTERM, new
 * process on the same data) the open pages reconnect by themselves, a new browser still sees
 * everything and live editing works again.
 */
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
  test,
  uniq,
  CAROL,
} from '../support/plexus.ts';
import { restartServer } from '../support/server.ts';

test('reload, a fresh browser and a server restart all keep every cell and text', async ({ plexus, actor }) => {
  const { workspace, cellIds } = await plexus.createWorkspace(`reload ${uniq()}`, [
    { kind: 'code', source: "print('seed')" },
    { kind: 'markdown', source: 'Seeded notes' },
  ]);
  const [codeId, mdId] = cellIds as [string, string];
  const bobLink = await plexus.share(workspace.id, 'editor');
  const alice = await actor(ALICE);
  const bob = await actor(BOB);
  await openWorkspace(alice.page, plexus, workspace.id);
  await openWorkspace(bob.page, plexus, workspace.id, bobLink.token);

  // Alice types in the code cell, adds an SQL cell and types in it, renames the workspace;
  // bob types in the markdown cell.
  await caretToEnd(alice.page, codeContent(alice.page, codeId));
  await alice.page.keyboard.type(' # alice was here');
  await markdownContent(bob.page, mdId).locator('p').click();
  await bob.page.keyboard.press('End');
  await bob.page.keyboard.type(' and bob added more');
  await alice.page.getByTestId('add-sql').click();
  await expect(alice.page.getByTestId('cell')).toHaveCount(3);
  const sqlId = (await alice.page.locator('[data-testid="cell"][data-kind="sql"]').getAttribute('data-cell-id'))!;
  await codeContent(alice.page, sqlId).click();
  await alice.page.keyboard.type('select 42 as answer');
  const title = `Renamed ${uniq()}`;
  await alice.page.getByTestId('workspace-title').fill(title);
  await alice.page.getByTestId('workspace-title').press('Enter');

  const expected = [
    { id: codeId, kind: 'code', dom: "print('seed') # alice was here", y: "print('seed') # alice was here" },
    { id: mdId, kind: 'markdown', dom: 'Seeded notes and bob added more', y: 'Seeded notes and bob added more' },
    { id: sqlId, kind: 'sql', dom: 'select 42 as answer', y: 'select 42 as answer' },
  ];
  // Both pages agree before anything is reloaded.
  await expect.poll(() => notebookState(alice.page)).toEqual(expected);
  await expect.poll(() => notebookState(bob.page)).toEqual(expected);
  await expect(bob.page.getByTestId('workspace-title')).toHaveValue(title);

  // 1. Alice reloads.
  await alice.page.reload();
  await expect(alice.page.getByTestId('doc-ready')).toBeVisible();
  await expect(alice.page.getByTestId('connection-status')).toHaveText('connected');
  await expect.poll(() => notebookState(alice.page)).toEqual(expected);
  await expect(alice.page.getByTestId('workspace-title')).toHaveValue(title);

  // 2. A browser that never saw the workspace (nothing in IndexedDB): the server has it all.
  const carol = await actor(CAROL);
  await openWorkspace(carol.page, plexus, workspace.id);
  await expect.poll(() => notebookState(carol.page)).toEqual(expected);
  await expect(carol.page.getByTestId('workspace-title')).toHaveValue(title);
  await carol.context.close();

  // 3. Server restart (clean SIGTERM, new process on the same data directory).
  await restartServer();
  // The open pages notice and reconnect by themselves (provider back-off: allow some seconds).
  for (const page of [alice.page, bob.page]) await expect(page.getByTestId('connection-status')).toHaveText('connected', { timeout: 45_000 });
  const carol2 = await actor(CAROL);
  await openWorkspace(carol2.page, plexus, workspace.id);
  await expect.poll(() => notebookState(carol2.page)).toEqual(expected);
  await expect(carol2.page.getByTestId('workspace-title')).toHaveValue(title);

  // Live editing works again after the restart.
  await caretToEnd(alice.page, codeContent(alice.page, codeId));
  await alice.page.keyboard.type(' after restart');
  for (const page of [bob.page, carol2.page]) {
    await expect.poll(() => cellTexts(page, codeId)).toEqual({ dom: "print('seed') # alice was here after restart", y: "print('seed') # alice was here after restart" });
  }
});
