/**
 * Undo is per person: Ctrl+Z in an editor undoes only your own typing in that cell (code and
 * markdown), and Ctrl+Z outside the editors undoes only your own structural changes (a cell you
 * added), never someone else's — on both pages and on the server.
 */
import type { Page } from '@playwright/test';
import {
  ALICE,
  BOB,
  caretToEnd,
  cellTexts,
  codeContent,
  docCellIds,
  expect,
  focusInEditor,
  markdownContent,
  openWorkspace,
  renderedCellIds,
  test,
} from '../support/plexus.ts';

const texts = async (pages: Page[], cellId: string) => Promise.all(pages.map((p) => cellTexts(p, cellId)));
const both = (t: string) => [
  { dom: t, y: t },
  { dom: t, y: t },
];

test('Ctrl+Z in a code (and a markdown) cell undoes only my typing; bob’s typing stays', async ({ plexus, actor }) => {
  const { workspace, cellIds } = await plexus.createWorkspace('undo typing', [
    { kind: 'code', source: '' },
    { kind: 'markdown', source: 'Start' },
  ]);
  const [cellId, mdId] = cellIds as [string, string];
  const bobLink = await plexus.share(workspace.id, 'editor');
  const alice = await actor(ALICE);
  const bob = await actor(BOB);
  await openWorkspace(alice.page, plexus, workspace.id);
  await openWorkspace(bob.page, plexus, workspace.id, bobLink.token);
  const pages = [alice.page, bob.page];

  await codeContent(alice.page, cellId).click();
  await alice.page.keyboard.type('AAA');
  await expect.poll(() => texts(pages, cellId)).toEqual(both('AAA'));

  await caretToEnd(bob.page, codeContent(bob.page, cellId));
  await bob.page.keyboard.type('BBB');
  await expect.poll(() => texts(pages, cellId)).toEqual(both('AAABBB'));

  // Alice's editor still has the focus: her Ctrl+Z removes her AAA only, everywhere.
  expect(await focusInEditor(alice.page)).toBe(true);
  await alice.page.keyboard.press('Control+z');
  await expect.poll(() => texts(pages, cellId)).toEqual(both('BBB'));
  await expect.poll(async () => (await plexus.snapshot(workspace.id)).cells.map((c) => c.text)).toEqual(['BBB', 'Start']);

  // A second Ctrl+Z has nothing of alice's left to undo: bob's text is never touched.
  await alice.page.keyboard.press('Control+z');
  // Redo brings exactly her text back (CodeMirror's Mod-Shift-z through the Yjs undo manager).
  // (KeyZ: with Shift a real keyboard sends key "Z"; Playwright's "Control+Shift+z" would send "z".)
  await alice.page.keyboard.press('Control+Shift+KeyZ');
  await expect.poll(() => texts(pages, cellId)).toEqual(both('AAABBB'));

  // The same in a markdown cell (tiptap: the Collaboration extension's Yjs undo).
  await markdownContent(alice.page, mdId).locator('p').click();
  await alice.page.keyboard.press('End');
  await alice.page.keyboard.type(' AAA');
  await expect.poll(() => texts(pages, mdId)).toEqual(both('Start AAA'));
  await markdownContent(bob.page, mdId).locator('p').click();
  await bob.page.keyboard.press('End');
  await bob.page.keyboard.type(' BBB');
  await expect.poll(() => texts(pages, mdId)).toEqual(both('Start AAA BBB'));
  await alice.page.keyboard.press('Control+z');
  await expect.poll(() => texts(pages, mdId)).toEqual(both('Start BBB'));
  await expect.poll(async () => (await plexus.snapshot(workspace.id)).cells.map((c) => c.text)).toEqual(['AAABBB', 'Start BBB']);
});

test('Ctrl+Z outside the editors undoes only my added cell; bob’s cell stays', async ({ plexus, actor }) => {
  const { workspace, cellIds } = await plexus.createWorkspace('undo structure', [{ kind: 'code', source: 'seeded()' }]);
  const seeded = cellIds[0]!;
  const bobLink = await plexus.share(workspace.id, 'editor');
  const alice = await actor(ALICE);
  const bob = await actor(BOB);
  await openWorkspace(alice.page, plexus, workspace.id);
  await openWorkspace(bob.page, plexus, workspace.id, bobLink.token);
  const pages = [alice.page, bob.page];
  const cellsEverywhere = () => Promise.all(pages.map(async (p) => ({ rendered: (await renderedCellIds(p)).sort(), doc: await docCellIds(p) })));

  // Alice adds a code cell, bob a markdown cell.
  await alice.page.getByTestId('add-code').click();
  await expect(alice.page.getByTestId('cell')).toHaveCount(2);
  const aliceCell = (await renderedCellIds(alice.page)).find((id) => id !== seeded)!;
  await expect(bob.page.getByTestId('cell')).toHaveCount(2);
  await bob.page.getByTestId('add-markdown').click();
  await expect(bob.page.getByTestId('cell')).toHaveCount(3);
  const bobCell = (await renderedCellIds(bob.page)).find((id) => id !== seeded && id !== aliceCell)!;
  const all = [seeded, aliceCell, bobCell].sort();
  await expect.poll(cellsEverywhere).toEqual([
    { rendered: all, doc: all },
    { rendered: all, doc: all },
  ]);

  // The new cell took alice's focus; Esc leaves the editor (selects the cell), then Ctrl+Z.
  await alice.page.keyboard.press('Escape');
  expect(await focusInEditor(alice.page)).toBe(false);
  await alice.page.keyboard.press('Control+z');
  const after = [seeded, bobCell].sort();
  await expect.poll(cellsEverywhere).toEqual([
    { rendered: after, doc: after },
    { rendered: after, doc: after },
  ]);
  await expect(alice.page.getByTestId('undo')).toBeDisabled();
  await expect.poll(async () => (await plexus.snapshot(workspace.id)).cells.map((c) => c.id).sort()).toEqual(after);

  // Bob's own Ctrl+Z (outside editors) removes his cell and nothing else.
  await bob.page.locator(`[data-testid="cell"][data-cell-id="${bobCell}"]`).focus();
  expect(await focusInEditor(bob.page)).toBe(false);
  await bob.page.keyboard.press('Control+z');
  await expect.poll(cellsEverywhere).toEqual([
    { rendered: [seeded], doc: [seeded] },
    { rendered: [seeded], doc: [seeded] },
  ]);
});
