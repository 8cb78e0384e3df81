/**
 * Presenter mode with three browsers: Alice (owner) presents; Bob (editor link) and Victor (view
 * link) follow by default — her notebook scroll position (the top visible cell and how far into
 * it) and her viewer camera. Bob breaks away by scrolling and rejoins with one click; Alice sees
 * who follows; Victor can follow but has no Present button; "Bring everyone here" brings someone
 * who stopped following to her place once; Ctrl+Alt+P toggles following.
 * Every wait is on state: the pages' scroll positions, awareness, and the bar's data attributes.
 */
import type { Page } from '@playwright/test';
import { expect, ownerEditorViewer, test, uniq } from '../support/plexus.ts';
import { annotationState, dragViewer, navMode, ngPosition, peerPositions, samePosition, seedViewer, waitViewer } from '../support/viewer.ts';

interface Anchor {
  cellId: string;
  ratio: number;
}

/** Where a page's notebook is scrolled to, measured here: the cell at the top edge and the fraction of it above the edge. */
const shownAnchor = (page: Page): Promise<Anchor | null> =>
  page.evaluate(() => {
    const d = (globalThis as any).document;
    const scroller = d.querySelector('[data-testid="notebook"]');
    const top = scroller.getBoundingClientRect().top;
    let found: Anchor | null = null;
    for (const el of d.querySelectorAll('[data-testid="cell"]')) {
      const r = el.getBoundingClientRect();
      if (r.top <= top + 0.5) found = { cellId: el.dataset.cellId, ratio: r.height > 0 ? Math.min(1, (top - r.top) / r.height) : 0 };
      else break;
    }
    return found;
  });

/** The anchor Alice publishes in awareness (`present.anchor`). */
const publishedAnchor = (page: Page): Promise<Anchor | null> =>
  page.evaluate(() => (globalThis as any).__plexus.awareness.getLocalState()?.present?.anchor ?? null);

const near = (a: Anchor | null, b: Anchor | null) => !!a && !!b && a.cellId === b.cellId && Math.abs(a.ratio - b.ratio) < 0.03;

/** Scrolls a page's notebook with the mouse wheel, as a person does. */
async function wheel(page: Page, dy: number): Promise<void> {
  await page.getByTestId('notebook').hover({ position: { x: 40, y: 200 } });
  await page.mouse.wheel(0, dy);
}

/** Waits until a page's scrolling (smooth wheel scrolling included) has come to rest and `also` holds. */
async function atRest(page: Page, also: () => Promise<boolean> = async () => true): Promise<void> {
  let last = -1;
  await expect
    .poll(async () => {
      const top = await page.getByTestId('notebook').evaluate((el) => el.scrollTop);
      const rest = top === last;
      last = top;
      return rest && (await also());
    })
    .toBe(true);
}

/** Waits until the presenter's scrolling has come to rest and her page publishes where she is; returns it. */
async function aliceIsAt(page: Page): Promise<Anchor> {
  await atRest(page, async () => near(await shownAnchor(page), await publishedAnchor(page)));
  return (await publishedAnchor(page))!;
}

const bar = (page: Page) => page.getByTestId('presenter-bar');

test('presenter mode: two people follow by default, one breaks away and rejoins, a viewer follows but cannot present', async ({ plexus, actor }) => {
  const lines = (i: number) => Array.from({ length: 12 }, (_, k) => `const v${i}_${k} = ${i} * ${k}; // line ${k} of cell ${i}`).join('\n');
  const { workspace, cellIds } = await plexus.createWorkspace(`presenter ${uniq()}`, Array.from({ length: 24 }, (_, i) => ({ kind: 'code' as const, source: lines(i) })));
  await seedViewer(plexus, workspace.id, annotationState());
  const { alice, bob, victor } = await ownerEditorViewer(plexus, actor, workspace.id);
  for (const a of [alice, bob, victor]) await waitViewer(a.page);

  // Only people who may edit can present: Victor (view link) has no Present button.
  await expect(victor.page.getByTestId('present-toggle')).toHaveCount(0);
  await expect(bar(victor.page)).toHaveCount(0);

  await alice.page.getByTestId('present-toggle').click();
  await expect(alice.page.getByTestId('present-toggle')).toHaveAttribute('aria-pressed', 'true');
  await expect(bar(alice.page)).toHaveAttribute('data-role', 'presenter');
  // Everyone else follows by default.
  for (const p of [bob.page, victor.page]) {
    await expect(bar(p)).toHaveAttribute('data-following', 'true');
    await expect(bar(p)).toHaveAttribute('data-presenter', 'Alice');
    await expect(bar(p)).toHaveAttribute('data-connected', 'true');
  }
  // The presenter sees who follows.
  const followers = alice.page.getByTestId('presenter-followers');
  await expect(followers).toHaveAttribute('data-count', '2');
  await expect(followers).toContainText('Bob');
  await expect(followers).toContainText('Victor');

  // Alice scrolls the notebook: both followers show the same cell at the top, as far into it.
  await wheel(alice.page, 1800);
  let at = await aliceIsAt(alice.page);
  expect(at.cellId).not.toBe(cellIds[0]);
  for (const p of [bob.page, victor.page]) await expect.poll(async () => near(await shownAnchor(p), at)).toBe(true);

  // Alice moves the viewer camera: both followers' cameras follow (by awareness, follow mode).
  await dragViewer(alice.page, 140, 0);
  for (const p of [bob.page, victor.page]) {
    await expect.poll(async () => samePosition(await ngPosition(p), await ngPosition(alice.page))).toBe(true);
    expect(await navMode(p)).toBe('follow');
  }

  // Bob scrolls on his own: he breaks away (the followers' programmatic scrolls never did).
  await wheel(bob.page, 600);
  await expect(bar(bob.page)).toHaveAttribute('data-following', 'false');
  await expect(bob.page.getByTestId('presenter-note')).toHaveText('you scrolled');
  await expect.poll(() => navMode(bob.page)).toBe('alone');
  await expect(followers).toHaveAttribute('data-count', '1');
  await expect(followers).not.toContainText('Bob');
  await atRest(bob.page);
  const bobAt = (await shownAnchor(bob.page))!;
  const bobCamera = await ngPosition(bob.page);

  // Alice moves on: Victor follows, Bob stays where he is.
  await wheel(alice.page, 1200);
  at = await aliceIsAt(alice.page);
  await expect.poll(async () => near(await shownAnchor(victor.page), at)).toBe(true);
  await dragViewer(alice.page, 0, 90);
  const aliceCamera = await ngPosition(alice.page);
  await expect.poll(async () => samePosition(await ngPosition(victor.page), aliceCamera)).toBe(true);
  // Bob's page has received Alice's new camera and place, and did not move.
  await expect.poll(async () => (await peerPositions(bob.page)).some((p) => samePosition(p, aliceCamera))).toBe(true);
  expect(near(await shownAnchor(bob.page), bobAt)).toBe(true);
  expect(near(bobAt, at)).toBe(false);
  expect(samePosition(await ngPosition(bob.page), bobCamera)).toBe(true);

  // One click and Bob follows again: her place and her camera.
  await bob.page.getByTestId('presenter-rejoin').click();
  await expect(bar(bob.page)).toHaveAttribute('data-following', 'true');
  await expect.poll(async () => near(await shownAnchor(bob.page), at)).toBe(true);
  await expect.poll(async () => samePosition(await ngPosition(bob.page), aliceCamera)).toBe(true);
  await expect(followers).toHaveAttribute('data-count', '2');

  // The keyboard shortcut toggles following (documented in the `?` list).
  await bob.page.keyboard.press('Control+Alt+KeyP');
  await expect(bar(bob.page)).toHaveAttribute('data-following', 'false');
  await bob.page.keyboard.press('Control+Alt+KeyP');
  await expect(bar(bob.page)).toHaveAttribute('data-following', 'true');
  await bob.page.getByTestId('help').click();
  await expect(bob.page.getByTestId('help-popover')).toContainText('Ctrl+Alt+P');
  await bob.page.keyboard.press('Escape');

  // Victor stops following; Alice scrolls back up, then brings everyone to her place once.
  await victor.page.getByTestId('presenter-unfollow').click();
  await expect(bar(victor.page)).toHaveAttribute('data-following', 'false');
  await wheel(alice.page, -2200);
  at = await aliceIsAt(alice.page);
  await expect.poll(async () => near(await shownAnchor(bob.page), at)).toBe(true);
  expect(near(await shownAnchor(victor.page), at)).toBe(false);
  await alice.page.getByTestId('presenter-bring-here').click();
  await expect.poll(async () => near(await shownAnchor(victor.page), at)).toBe(true);
  await expect(victor.page.getByTestId('presenter-note')).toHaveText('Alice brought everyone here');
  // A one-shot jump: Victor still does not follow.
  await expect(bar(victor.page)).toHaveAttribute('data-following', 'false');

  // Alice stops presenting: the bars go, nobody follows.
  await alice.page.getByTestId('presenter-stop').click();
  for (const p of [alice.page, bob.page, victor.page]) await expect(bar(p)).toHaveCount(0);
  await expect.poll(() => navMode(bob.page)).toBe('shared');
  await expect(alice.page.getByTestId('present-toggle')).toHaveAttribute('aria-pressed', 'false');
});
