/**
 * Two people typing into the same cell at the same time (both `keyboard.type` calls run
 * concurrently): at different positions and at the same position, in a code cell (CodeMirror +
 * y-codemirror.next) and in a markdown cell (tiptap + y-prosemirror). Every typed character must
 * survive, both editors and both Y.Docs must converge to the same text, the server must hold it,
 * and each person must see the other's caret labelled with their name.
 */
import type { Page } from '@playwright/test';
import {
  ALICE,
  BOB,
  cellTexts,
  codeContent,
  expect,
  markdownContent,
  openWorkspace,
  test,
  type Actor,
  type Plexus,
} from '../support/plexus.ts';

// 40+ characters each; letters, digits and spaces only (no auto-indent or markdown input rules).
const A1 = 'alice writes on the first line 0123456789';
const B1 = 'bob appends to the third line 9876543210 zz';
const A2 = ' alice at the shared end abcdefghijklmnop';
const B2 = ' bob at the same place qrstuvwxyz 1357924680';

/** True when the characters of `needle` occur in `hay` in order (possibly interleaved). */
function isSubsequence(needle: string, hay: string): boolean {
  let i = 0;
  for (const ch of hay) if (i < needle.length && ch === needle[i]) i++;
  return i === needle.length;
}

/** The text both pages show and hold for a cell, once all four agree (else a description). */
async function agreed(pages: Page[], cellId: string): Promise<string> {
  const all = await Promise.all(pages.map((p) => cellTexts(p, cellId)));
  const values = all.flatMap((t) => [t.dom, t.y]);
  return values.every((v) => v === values[0]) ? (values[0] ?? '<no text>') : `<disagree> ${JSON.stringify(all)}`;
}

async function typeConcurrently(a: Actor, textA: string, b: Actor, textB: string): Promise<void> {
  // Both type at once; a small delay per key makes the two streams overlap for ~1-2 s.
  await Promise.all([a.page.keyboard.type(textA, { delay: 15 }), b.page.keyboard.type(textB, { delay: 15 })]);
}

async function setup(plexus: Plexus, actor: (p: typeof ALICE) => Promise<Actor>, kind: 'code' | 'markdown', source: string) {
  const { workspace, cellIds } = await plexus.createWorkspace(`typing ${kind}`, [{ kind, source }]);
  const bobLink = await plexus.share(workspace.id, 'editor');
  const alice = await actor(ALICE);
  const bob = await actor(BOB);
  await openWorkspace(alice.page, plexus, workspace.id);
  await openWorkspace(bob.page, plexus, workspace.id, bobLink.token);
  return { workspace, cellId: cellIds[0]!, alice, bob };
}

test('concurrent typing in one code cell converges, keeps every character and shows named carets', async ({ plexus, actor }) => {
  const base = ['const first = 1;', 'const second = 2;', 'const third = 3;'];
  const { workspace, cellId, alice, bob } = await setup(plexus, actor, 'code', base.join('\n'));
  const pages = [alice.page, bob.page];
  const aEditor = codeContent(alice.page, cellId);
  const bEditor = codeContent(bob.page, cellId);
  await expect(aEditor).toContainText('const third = 3;');
  await expect(bEditor).toContainText('const third = 3;');

  // 1. Different positions: alice at the end of line 1, bob at the end of line 3.
  // (Carets put there by keys, not by where a click lands: see the markdown test.)
  await aEditor.locator('.cm-line').nth(0).click();
  await alice.page.keyboard.press('Control+Home');
  await alice.page.keyboard.press('End');
  await bEditor.locator('.cm-line').nth(2).click();
  await bob.page.keyboard.press('Control+End');
  await typeConcurrently(alice, A1, bob, B1);
  const phase1 = [base[0] + A1, base[1], base[2] + B1].join('\n');
  await expect.poll(() => agreed(pages, cellId)).toBe(phase1);

  // Each sees the other's caret in this cell, labelled with the other's name.
  await expect(aEditor.locator('.cm-ySelectionInfo')).toHaveText(['Bob']);
  await expect(bEditor.locator('.cm-ySelectionInfo')).toHaveText(['Alice']);

  // 2. The same position: both at the very end of the text.
  await alice.page.keyboard.press('Control+End');
  await bob.page.keyboard.press('Control+End');
  await typeConcurrently(alice, A2, bob, B2);
  await expect
    .poll(async () => {
      const t = await agreed(pages, cellId);
      return t.length === phase1.length + A2.length + B2.length && t.startsWith(phase1) ? 'complete' : t;
    })
    .toBe('complete');
  const final = await agreed(pages, cellId);
  const tail = final.slice(phase1.length);
  expect(isSubsequence(A2, tail), `alice's keys all arrived, in order, in ${JSON.stringify(tail)}`).toBe(true);
  expect(isSubsequence(B2, tail), `bob's keys all arrived, in order, in ${JSON.stringify(tail)}`).toBe(true);
  await expect(aEditor.locator('.cm-ySelectionInfo')).toHaveText(['Bob']);
  await expect(bEditor.locator('.cm-ySelectionInfo')).toHaveText(['Alice']);

  // The server holds exactly what both editors show.
  await expect.poll(async () => (await plexus.snapshot(workspace.id)).cells.map((c) => c.text)).toEqual([final]);
});

test('concurrent typing in one markdown cell converges, keeps every character and shows named carets', async ({ plexus, actor }) => {
  const base = ['First paragraph seeded', 'Second paragraph seeded'];
  const { workspace, cellId, alice, bob } = await setup(plexus, actor, 'markdown', base.join('\n\n'));
  const pages = [alice.page, bob.page];
  const aEditor = markdownContent(alice.page, cellId);
  const bEditor = markdownContent(bob.page, cellId);
  await expect(aEditor.locator('p')).toHaveText(base);
  await expect(bEditor.locator('p')).toHaveText(base);

  // 1. Different positions: alice at the end of paragraph 1, bob at the end of paragraph 2. The
  // caret is put there by keys, not by where a click lands: under load a remote caret appearing
  // as Bob clicks could move his click into paragraph 1 (seen in a stressed run).
  await aEditor.locator('p').nth(0).click();
  await alice.page.keyboard.press('Control+Home');
  await alice.page.keyboard.press('End');
  await bEditor.locator('p').nth(1).click();
  await bob.page.keyboard.press('Control+End');
  await typeConcurrently(alice, A1, bob, B1);
  const phase1 = [base[0] + A1, base[1] + B1].join('\n');
  await expect.poll(() => agreed(pages, cellId)).toBe(phase1);
  await expect(aEditor.locator('.remote-caret-label')).toHaveText(['Bob']);
  await expect(bEditor.locator('.remote-caret-label')).toHaveText(['Alice']);

  // 2. The same position: both at the very end of the last paragraph.
  await alice.page.keyboard.press('Control+End');
  await bob.page.keyboard.press('Control+End');
  await typeConcurrently(alice, A2, bob, B2);
  await expect
    .poll(async () => {
      const t = await agreed(pages, cellId);
      return t.length === phase1.length + A2.length + B2.length && t.startsWith(phase1) ? 'complete' : t;
    })
    .toBe('complete');
  const final = await agreed(pages, cellId);
  const tail = final.slice(phase1.length);
  expect(isSubsequence(A2, tail), `alice's keys all arrived, in order, in ${JSON.stringify(tail)}`).toBe(true);
  expect(isSubsequence(B2, tail), `bob's keys all arrived, in order, in ${JSON.stringify(tail)}`).toBe(true);
  // Still two paragraphs: no block was duplicated or split by the merge.
  await expect(aEditor.locator(':scope > p')).toHaveCount(2);
  await expect(bEditor.locator(':scope > p')).toHaveCount(2);
  await expect(aEditor.locator('.remote-caret-label')).toHaveText(['Bob']);
  await expect(bEditor.locator('.remote-caret-label')).toHaveText(['Alice']);

  await expect.poll(async () => (await plexus.snapshot(workspace.id)).cells.map((c) => c.text)).toEqual([final]);
});
