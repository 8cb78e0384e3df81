/**
 * The shared viewer's navigation: the shared camera, following a person through awareness,
 * "bring everyone here", ROI stepping, and state links that import identically elsewhere.
 */
import { ALICE, BOB, expect, openWorkspace, test, uniq } from '../support/plexus.ts';
import { annotationState, docState, dragViewer, navMode, ngPosition, ngState, peerPositions, samePosition, seedViewer, twoInViewer, waitViewer } from '../support/viewer.ts';

test('shared view: a camera move by alice reaches bob through the document', async ({ plexus, actor }) => {
  const { workspace, alice, bob } = await twoInViewer(plexus, actor, 'viewer shared');
  expect(await ngPosition(bob.page)).toEqual([50, 50, 0]);

  await dragViewer(alice.page, 120, -60);
  const moved = await ngPosition(alice.page);
  expect(samePosition(moved, [50, 50, 0])).toBe(false);
  await expect.poll(async () => samePosition(await ngPosition(bob.page), await ngPosition(alice.page))).toBe(true);
  // …and it is the workspace's camera now: a fresh reader of the server's document sees it.
  const stored = await plexus.withDoc(workspace.id, async (doc) => (await import('@plexus/shared')).readCamera(doc));
  expect(samePosition(stored.position as number[], await ngPosition(alice.page))).toBe(true);
});

test('follow: bob follows alice, her moves reach him by awareness until he moves himself', async ({ plexus, actor }) => {
  const { alice, bob } = await twoInViewer(plexus, actor, 'viewer follow');

  // Alice looks around on her own: her camera is not written to the document.
  await alice.page.getByTestId('viewer-mode-alone').click();
  await bob.page.getByTestId('viewer-people').click();
  await bob.page.locator(`[data-testid=viewer-person][data-user$="/${ALICE.id}"]`).getByTestId('viewer-follow').click();
  await expect(bob.page.getByTestId('viewer-status')).toContainText('Following Alice');
  // Everyone sees who follows whom.
  await expect(alice.page.getByTestId('viewer-followers')).toContainText('Bob following you');
  await alice.page.getByTestId('viewer-people').click();
  await expect(alice.page.locator(`[data-testid=viewer-person][data-user$="/${BOB.id}"]`).getByTestId('viewer-person-mode')).toHaveText('following you');
  await alice.page.keyboard.press('Escape');

  for (const [dx, dy] of [[150, 0], [0, 90]] as const) {
    await dragViewer(alice.page, dx, dy);
    await expect.poll(async () => samePosition(await ngPosition(bob.page), await ngPosition(alice.page))).toBe(true);
  }
  // Through awareness, not the document: the workspace camera has not moved.
  expect((await docState(bob.page)).position).toEqual([50, 50, 0]);

  // Bob moves: he stops following and stays where he went.
  await dragViewer(bob.page, -80, 0);
  await expect.poll(() => navMode(bob.page)).toBe('alone');
  await expect(bob.page.getByTestId('viewer-status')).toContainText('On your own');
  const bobAt = await ngPosition(bob.page);
  await dragViewer(alice.page, 0, -120);
  // Bob's page has received Alice's new camera (a state, not a 300 ms guess) and stays put.
  const aliceAt = await ngPosition(alice.page);
  await expect.poll(async () => (await peerPositions(bob.page)).some((p) => samePosition(p, aliceAt))).toBe(true);
  expect(samePosition(await ngPosition(bob.page), bobAt)).toBe(true);
});

test('bring everyone here: a presenter moves people who navigate on their own', async ({ plexus, actor }) => {
  const { alice, bob } = await twoInViewer(plexus, actor, 'viewer present');
  await alice.page.getByTestId('viewer-mode-alone').click();
  await bob.page.getByTestId('viewer-mode-alone').click();
  await dragViewer(alice.page, 100, 100);
  await dragViewer(bob.page, -100, -50);
  expect(samePosition(await ngPosition(bob.page), await ngPosition(alice.page))).toBe(false);

  await alice.page.getByTestId('viewer-bring-here').click();
  await expect.poll(async () => samePosition(await ngPosition(bob.page), await ngPosition(alice.page))).toBe(true);
  await expect.poll(() => navMode(bob.page)).toBe('shared');
  expect(await navMode(alice.page)).toBe('shared');
});

test('ROI stepping centres the view on each annotation, in order', async ({ plexus, actor }) => {
  const { workspace } = await plexus.createWorkspace(`viewer roi ${uniq()}`);
  await seedViewer(plexus, workspace.id, annotationState());
  const alice = await actor(ALICE);
  await openWorkspace(alice.page, plexus, workspace.id);
  await waitViewer(alice.page);
  await expect(alice.page.getByTestId('roi-label')).toHaveText('2 ROIs');
  await alice.page.getByTestId('roi-next').click();
  await expect(alice.page.getByTestId('roi-label')).toHaveText('1/2 ROI 1');
  await expect.poll(() => ngPosition(alice.page)).toEqual([40, 40, 0]);
  await alice.page.getByTestId('roi-next').click();
  await expect.poll(() => ngPosition(alice.page)).toEqual([70, 60, 0]);
  await alice.page.getByTestId('roi-next').click();
  await expect(alice.page.getByTestId('roi-label')).toHaveText('1/2 ROI 1');
  await alice.page.getByTestId('roi-prev').click();
  await expect(alice.page.getByTestId('roi-label')).toHaveText('2/2 ROI 2');
});

test('a state link exported by alice imports identically in a fresh workspace', async ({ plexus, actor }) => {
  const { workspace: first } = await plexus.createWorkspace(`viewer export ${uniq()}`);
  const { workspace: second } = await plexus.createWorkspace(`viewer import ${uniq()}`);
  const source = annotationState();
  // Keys this Neuroglancer does not know travel through the document and the link untouched.
  (source as any).plexusLabNotes = { slide: 'B-12', stain: 'GCaMP6f' };
  await seedViewer(plexus, first.id, source);
  const alice = await actor(ALICE);
  await alice.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: plexus.url });
  await openWorkspace(alice.page, plexus, first.id);
  await waitViewer(alice.page);
  await dragViewer(alice.page, 60, 30);
  await alice.page.getByTestId('viewer-state').click();
  await alice.page.getByTestId('viewer-copy-link').click();
  await expect(alice.page.getByTestId('viewer-state-done')).toHaveText('Link copied.');
  const link: string = await alice.page.evaluate(() => navigator.clipboard.readText());
  expect(link.startsWith('https://neuroglancer-demo.appspot.com/#!')).toBe(true);
  const exported = await ngState(alice.page);

  await openWorkspace(alice.page, plexus, second.id);
  await waitViewer(alice.page);
  await alice.page.getByTestId('viewer-state').click();
  await alice.page.getByTestId('viewer-import-text').fill(link);
  await alice.page.getByTestId('viewer-import').click();
  await expect(alice.page.getByTestId('viewer-state-done')).toContainText('Imported');
  // The viewer in the fresh workspace shows the same state…
  await expect.poll(async () => {
    const now = await ngState(alice.page);
    return JSON.stringify({ ...now, selectedLayer: undefined }) === JSON.stringify({ ...exported, selectedLayer: undefined });
  }).toBe(true);
  // …and the document holds it, including the keys Neuroglancer does not know.
  const stored = await plexus.withDoc(second.id, async (doc) => (await import('@plexus/shared')).readViewerState(doc));
  expect(stored.plexusLabNotes).toEqual({ slide: 'B-12', stain: 'GCaMP6f' });
  expect(stored.layers).toEqual(exported.layers);
  expect(stored.position).toEqual(exported.position);

  // Shared in the chat, the link is masked and opens in the viewer for whoever clicks it.
  await alice.page.getByTestId('viewer-share-chat').click();
  const masked = alice.page.getByTestId('chat-ng-link');
  await expect(masked).toHaveCount(1);
  await expect(masked.locator('a')).toHaveText('Neuroglancer view (neuroglancer-demo.appspot.com)');
  expect((await masked.locator('a').getAttribute('href'))!.length).toBeGreaterThan(500);
  await expect(alice.page.getByTestId('chat-message').last().locator('.chat-text')).not.toContainText('%7B');

  // Garbage is refused with a clear message and changes nothing.
  await alice.page.getByTestId('viewer-import-text').fill('https://example.org/#!{"layers": [');
  await alice.page.getByTestId('viewer-import').click();
  await expect(alice.page.getByTestId('viewer-state-error')).toContainText('not valid JSON');
});

test('a Neuroglancer link pasted raw in the chat (unencoded JSON) is masked whole and opens in the viewer', async ({ plexus, actor }) => {
  const { workspace } = await plexus.createWorkspace(`viewer raw link ${uniq()}`);
  await seedViewer(plexus, workspace.id, annotationState());
  const alice = await actor(ALICE);
  await openWorkspace(alice.page, plexus, workspace.id);
  await waitViewer(alice.page);
  // As copied from an address bar: quotes and brackets unencoded, a layer name with a space and parentheses.
  const target = annotationState();
  target.position = [70, 60, 0];
  (target.layers as Array<Record<string, unknown>>)[0]!.name = 'rois (raw copy)';
  const raw = `https://neuroglancer-demo.appspot.com/#!${JSON.stringify(target)}`;
  await alice.page.getByTestId('chat-input').click();
  await alice.page.keyboard.insertText(`Look at this: ${raw} - thanks`);
  await alice.page.keyboard.press('Enter');
  const message = alice.page.getByTestId('chat-message').filter({ hasText: 'Look at this:' }).last();
  const masked = message.getByTestId('chat-ng-link');
  await expect(masked).toHaveCount(1);
  await expect(masked.locator('a')).toHaveText('Neuroglancer view (neuroglancer-demo.appspot.com)');
  await expect(message.locator('.chat-text')).toContainText('- thanks');
  await expect(message.locator('.chat-text')).not.toContainText('"layers"');
  await masked.getByTestId('chat-ng-open').click();
  await expect(masked).toContainText('opened in the viewer');
  await expect.poll(() => ngPosition(alice.page)).toEqual([70, 60, 0]);
  const stored = await plexus.withDoc(workspace.id, async (doc) => (await import('@plexus/shared')).readViewerState(doc));
  expect((stored.layers as Array<{ name: string }>).map((l) => l.name)).toEqual(['rois (raw copy)']);
});

test('ROI stepping through an uploaded table centres the view on each row', async ({ plexus, actor }) => {
  const { workspace } = await plexus.createWorkspace(`viewer roi table ${uniq()}`);
  await seedViewer(plexus, workspace.id, annotationState());
  const csv = 'roi_id,centroid_x,centroid_y,snr\n7,12.5,20,3.1\n9,30,44.25,5.0\n';
  const res = await fetch(`${plexus.url}/api/workspaces/${workspace.id}/uploads?name=cells.csv`, {
    method: 'POST',
    headers: { authorization: `Bearer ${plexus.ownerToken}`, 'content-type': 'application/octet-stream' },
    body: csv,
  });
  expect(res.status).toBe(201);
  const alice = await actor(ALICE);
  await openWorkspace(alice.page, plexus, workspace.id);
  await waitViewer(alice.page);
  await expect(alice.page.getByTestId('roi-source')).toHaveValue('table: cells');
  await expect(alice.page.getByTestId('roi-label')).toHaveText('2 ROIs');
  await alice.page.getByTestId('roi-next').click();
  await expect(alice.page.getByTestId('roi-label')).toHaveText('1/2 roi_id 7');
  // x and y from the row; the third axis stays where it was.
  await expect.poll(() => ngPosition(alice.page)).toEqual([12.5, 20, 0]);
  await alice.page.getByTestId('roi-next').click();
  await expect.poll(() => ngPosition(alice.page)).toEqual([30, 44.25, 0]);
  // The annotation layer is the other source.
  await alice.page.getByTestId('roi-source').selectOption('rois');
  await expect(alice.page.getByTestId('roi-label')).toHaveText('2 ROIs');
});
