/**
 * Shared viewer state between two browsers on the demo recording: a LUT change and a new
 * annotation by alice reach bob's Neuroglancer — its state and what its canvas shows; a volume
 * served by this server added from the menu reaches him too.
 */
import { expect, test } from '../support/plexus.ts';
import { docState, E2E_DEMO_FRAMES, ngState, twoInViewer, viewerCanvas } from '../support/viewer.ts';
import { demoViewerState } from '../../server/src/demo-viewer.ts';

test('alice changes the movie LUT and adds an annotation; bob sees both, in state and on screen', async ({ plexus, actor }) => {
  const state = demoViewerState() as any;
  state.position = [128, 128, E2E_DEMO_FRAMES / 2];
  // Alice's annotation tool: a point on the ROI layer.
  state.layers.find((l: any) => l.name === 'ROIs').tool = 'annotatePoint';
  state.selectedLayer = { layer: 'ROIs', visible: false };
  const { alice, bob } = await twoInViewer(plexus, actor, 'viewer sync', state);

  // Bob's canvas once the movie has drawn: wait for two identical screenshots in a row.
  let before = await viewerCanvas(bob.page).screenshot();
  await expect.poll(async () => {
    const next = await viewerCanvas(bob.page).screenshot();
    const same = next.equals(before);
    before = next;
    return same;
  }, { timeout: 60_000, intervals: [500] }).toBe(true);

  // Alice narrows the movie's LUT the way the invlerp widget does: on the layer's control state.
  await alice.page.evaluate(() => {
    const host = (globalThis as any).__plexusViewer.host;
    const lm = host.viewer.layerManager;
    lm.getLayerByName('movie').layer.shaderControlState.restoreState({ normalized: { range: [100, 140] } });
  });
  // …and ctrl+clicks in the image to place a point with the layer's tool.
  const box = (await viewerCanvas(alice.page).boundingBox())!;
  await alice.page.keyboard.down('Control');
  await alice.page.mouse.click(box.x + box.width * 0.6, box.y + box.height * 0.45);
  await alice.page.keyboard.up('Control');

  const rois = (s: any) => s.layers.find((l: any) => l.name === 'ROIs').annotations ?? [];
  const movie = (s: any) => s.layers.find((l: any) => l.name === 'movie');
  // Bob's Neuroglancer has both changes…
  await expect.poll(async () => movie(await ngState(bob.page)).shaderControls?.normalized?.range).toEqual([100, 140]);
  await expect.poll(async () => rois(await ngState(bob.page)).length).toBe(1);
  const added = rois(await ngState(bob.page))[0];
  expect(added.type).toBe('point');
  expect(rois(await ngState(alice.page))[0].id).toBe(added.id);
  // …the document holds them…
  expect(movie(await docState(bob.page)).shaderControls.normalized.range).toEqual([100, 140]);
  expect(rois(await docState(bob.page)).map((a: any) => a.id)).toEqual([added.id]);
  // …and his canvas shows them.
  await expect.poll(async () => (await viewerCanvas(bob.page).screenshot()).equals(before), { timeout: 60_000 }).toBe(false);
});

test('adding a served volume from the menu: bob gets the layer, with a portable source and a time axis', async ({ plexus, actor }) => {
  const { alice, bob } = await twoInViewer(plexus, actor, 'viewer add layer', { layers: [] });
  await alice.page.getByTestId('viewer-add-layer').click();
  await alice.page.locator('[data-testid=viewer-add-volume][data-layer="calcium-demo/movie"]').click();
  await expect.poll(async () => (await ngState(bob.page)).layers?.map((l: any) => l.name)).toEqual(['movie']);
  const layer = (await docState(bob.page)).layers[0];
  expect(layer.source.url).toBe('precomputed://plexus://volumes/calcium-demo/movie');
  expect(Object.keys(layer.source.transform.outputDimensions)).toEqual(['x', 'y', 't']);
  // Bob's Neuroglancer loads it from this server, and the time axis exists.
  const bobLayer = (await ngState(bob.page)).layers[0];
  expect(bobLayer.source.url).toMatch(/^precomputed:\/\/http:\/\/127\.0\.0\.1:\d+\/volumes\/calcium-demo\/movie$/);
  await expect.poll(async () => Object.keys((await ngState(bob.page)).dimensions ?? {})).toEqual(['x', 'y', 't']);
  // A frame is drawn as wide as a pixel, so the time scale bar reads seconds (not "t : 75 µs"):
  // Neuroglancer itself holds the render scale once the layer's dimensions are known.
  const scales = (await docState(bob.page)).relativeDisplayScales;
  expect(scales.t).toBeGreaterThan(0);
  for (const page of [alice.page, bob.page]) {
    await expect.poll(async () => (await ngState(page)).relativeDisplayScales?.t, { message: page === alice.page ? "alice" : "bob" }).toBeCloseTo(scales.t, 12);
  }
  // Added twice: the second gets its own name.
  await alice.page.getByTestId('viewer-add-layer').click();
  await alice.page.locator('[data-testid=viewer-add-volume][data-layer="calcium-demo/movie"]').click();
  await expect.poll(async () => (await ngState(bob.page)).layers?.map((l: any) => l.name)).toEqual(['movie', 'movie 2']);
});
