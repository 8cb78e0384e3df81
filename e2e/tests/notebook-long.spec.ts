/**
 * A long notebook renders from the top as its cells come near the viewport (speed issue, gap 3:
 * what opening costs grows with what is on screen): it opens with its first cells in the page and
 * builds no more in the background; scrolling down brings the rest; a cell wanted below the
 * rendered ones (one added below the last of them; a presenter's place far down the notebook) is
 * rendered, and focused or scrolled to; the browser's find (Ctrl+F) gets every cell to search.
 */
import type { Page } from '@playwright/test';
import { ALICE, BOB, codeContent, expect, openWorkspace, test, waitLive } from '../support/plexus.ts';

/** Cells in the page's notebook. */
const rendered = (page: Page) => page.getByTestId('notebook').getByTestId('cell').count();

/** Resolves once the page has been idle twice (work put off until the page is idle has had its turn). */
const idleTwice = (page: Page) =>
  page.evaluate(() => new Promise<void>((resolve) => requestIdleCallback(() => requestIdleCallback(() => resolve(), { timeout: 2000 }), { timeout: 2000 })));

test('a long notebook opens with its first cells only, renders the rest as you scroll, and renders down to a cell added below them', async ({ plexus, actor }) => {
  const seeds = Array.from({ length: 300 }, (_, i) => ({ kind: 'code' as const, source: Array.from({ length: 20 }, (_l, j) => `const v${i}_${j} = ${i * j};`).join('\n') }));
  const { workspace, cellIds } = await plexus.createWorkspace('long notebook', seeds);
  const alice = await actor(ALICE);
  await openWorkspace(alice.page, plexus, workspace.id);
  await waitLive(alice.page);
  await expect(codeContent(alice.page, cellIds[0]!)).toBeVisible();

  // The first 60 cells (far more than a screen); none are added while the page is idle.
  await idleTwice(alice.page);
  await idleTwice(alice.page);
  expect(await rendered(alice.page)).toBe(60);
  await expect(alice.page.locator('.notebook-pending')).toHaveCount(1);

  // A new cell below the last rendered one (Ctrl+Alt+N in command mode on cell 60, selected
  // without scrolling: the end of the rendered cells stays far below the viewport) lands at index
  // 60, below what is rendered: it is rendered, gets the focus and the keys typed.
  const last = alice.page.locator(`[data-testid="cell"][data-cell-id="${cellIds[59]}"]`);
  await last.evaluate((el) => el.focus({ preventScroll: true }));
  await idleTwice(alice.page);
  expect(await rendered(alice.page)).toBe(60);
  await alice.page.keyboard.press('Control+Alt+KeyN');
  await expect.poll(async () => (await plexus.snapshot(workspace.id)).cells.length).toBe(301);
  const added = (await plexus.snapshot(workspace.id)).cells[60]!;
  const addedEditor = codeContent(alice.page, added.id);
  await expect(addedEditor).toBeFocused();
  await alice.page.keyboard.type('const added = 1;');
  await expect.poll(async () => (await plexus.snapshot(workspace.id)).cells[60]!.text).toBe('const added = 1;');

  // Scrolling to the end brings every cell, and the add bar after the last.
  await expect
    .poll(async () => {
      await alice.page.getByTestId('notebook').evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
      return rendered(alice.page);
    }, { timeout: 30_000 })
    .toBe(301);
  await expect(alice.page.locator('.notebook-pending')).toHaveCount(0);
  await expect(alice.page.locator(`[data-testid="cell"][data-cell-id="${cellIds[299]}"]`)).toBeAttached();
});

test('the browser’s find (Ctrl+F) gets every cell of a long notebook to search', async ({ plexus, actor }) => {
  const seeds = Array.from({ length: 200 }, (_, i) => ({ kind: 'code' as const, source: `const far${i} = ${i};\n`.repeat(10) }));
  const { workspace, cellIds } = await plexus.createWorkspace('long find', seeds);
  const alice = await actor(ALICE);
  await openWorkspace(alice.page, plexus, workspace.id);
  await waitLive(alice.page);
  await idleTwice(alice.page);
  expect(await rendered(alice.page)).toBe(60);
  await alice.page.getByTestId('notebook').click({ position: { x: 5, y: 5 } });
  await alice.page.keyboard.press('Control+KeyF');
  await expect.poll(() => rendered(alice.page)).toBe(200);
  await expect(alice.page.locator(`[data-testid="cell"][data-cell-id="${cellIds[199]}"]`)).toContainText('const far199 = 199;');
});

/** The cell at the top edge of a page's notebook. */
const topCell = (page: Page): Promise<string | null> =>
  page.getByTestId('notebook').evaluate((scroller) => {
    const top = scroller.getBoundingClientRect().top;
    let found: string | null = null;
    for (const el of Array.from(scroller.querySelectorAll<HTMLElement>('[data-testid="cell"]'))) {
      if (el.getBoundingClientRect().top <= top + 0.5) found = el.dataset.cellId ?? null;
      else break;
    }
    return found;
  });

test('a follower whose page has rendered only the first cells goes to the presenter’s place far down the notebook', async ({ plexus, actor }) => {
  const seeds = Array.from({ length: 240 }, (_, i) => ({ kind: 'code' as const, source: Array.from({ length: 12 }, (_l, j) => `const w${i}_${j} = ${i + j};`).join('\n') }));
  const { workspace, cellIds } = await plexus.createWorkspace('long presentation', seeds);
  const editLink = await plexus.share(workspace.id, 'editor');
  const alice = await actor(ALICE);
  const bob = await actor(BOB);
  await openWorkspace(alice.page, plexus, workspace.id);
  await openWorkspace(bob.page, plexus, workspace.id, editLink.token);
  for (const p of [alice.page, bob.page]) await waitLive(p);
  await alice.page.getByTestId('present-toggle').click();
  await expect(bob.page.getByTestId('presenter-bar')).toHaveAttribute('data-following', 'true');
  await idleTwice(bob.page);
  expect(await rendered(bob.page)).toBe(60);

  // Alice scrolls to the end of her notebook (hers renders as she goes) and rests there.
  let last = -1;
  await expect
    .poll(async () => {
      const top = await alice.page.getByTestId('notebook').evaluate((el) => {
        el.scrollTo({ top: el.scrollHeight });
        return el.scrollTop;
      });
      const rest = top === last && (await rendered(alice.page)) === 240;
      last = top;
      return rest;
    }, { timeout: 30_000 })
    .toBe(true);
  const at = await topCell(alice.page);
  expect(cellIds.indexOf(at!)).toBeGreaterThan(200);
  await expect.poll(() => alice.page.evaluate(() => (globalThis as any).__plexus.awareness.getLocalState()?.present?.anchor?.cellId ?? null)).toBe(at);

  // Bob's page renders down to that cell and shows it at the top, as Alice sees it.
  await expect.poll(() => topCell(bob.page), { timeout: 30_000 }).toBe(at);
  expect(await rendered(bob.page)).toBeGreaterThan(cellIds.indexOf(at!));
  await expect(bob.page.getByTestId('presenter-bar')).toHaveAttribute('data-following', 'true');
});

test('the first cells come with their editors in the notebook’s first render; scrolled far away, they give them up', async ({ plexus, actor }) => {
  const seeds = Array.from({ length: 40 }, (_, i) => ({ kind: 'code' as const, source: Array.from({ length: 20 }, (_l, j) => `const w${i}_${j} = ${i + j};`).join('\n') }));
  const { workspace, cellIds } = await plexus.createWorkspace('first editors', seeds);
  const alice = await actor(ALICE);
  // What the page holds when the notebook's cells first appear (one render's mutations are seen
  // together): which cells have an editor then.
  await alice.page.addInitScript(() => {
    const w = window as unknown as { __firstRender?: { cells: number; editors: string[] } };
    new MutationObserver((_m, obs) => {
      const cells = document.querySelectorAll('[data-testid=notebook] [data-testid=cell]');
      if (!cells.length) return;
      obs.disconnect();
      w.__firstRender = {
        cells: cells.length,
        editors: Array.from(cells).filter((c) => c.querySelector('.cm-content')).map((c) => c.getAttribute('data-cell-id') ?? ''),
      };
    }).observe(document, { childList: true, subtree: true });
  });
  await openWorkspace(alice.page, plexus, workspace.id);
  await waitLive(alice.page);
  const first = await alice.page.evaluate(() => (window as unknown as { __firstRender?: { cells: number; editors: string[] } }).__firstRender);
  expect(first?.cells).toBe(40);
  expect(first?.editors).toEqual(cellIds.slice(0, 3));
  // The scheduler then mounts the others near the viewport as before.
  await expect(codeContent(alice.page, cellIds[3]!)).toBeVisible();
  // Not pinned: far below, the first cell's editor goes (its text stays, as a preview) and comes back.
  await alice.page.getByTestId('notebook').evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
  await expect(codeContent(alice.page, cellIds[0]!)).toHaveCount(0);
  await expect(alice.page.locator(`[data-testid="cell"][data-cell-id="${cellIds[0]}"]`)).toContainText('const w0_0 = 0;');
  await alice.page.getByTestId('notebook').evaluate((el) => el.scrollTo({ top: 0 }));
  await expect(codeContent(alice.page, cellIds[0]!)).toBeVisible();
});
