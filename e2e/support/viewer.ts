/**
 * Helpers for viewer tests: seed a viewer state through a Node client, wait for the embedded
 * Neuroglancer, read its state and the document's, drag in its canvas. Browser-side functions
 * use `(globalThis as any).__plexusViewer` (client/README.md, test hooks).
 */
import type { Page } from '@playwright/test';
import { replaceViewerState, serverOrigin, type NgState } from '@plexus/shared';
import { ALICE, BOB, expect, openWorkspace, uniq, type Actors, type Plexus } from './plexus.ts';

/** Frames of the demo recording generated for the e2e server (global-setup.ts). */
export const E2E_DEMO_FRAMES = 60;

/** Writes a viewer state into a workspace, as an import would. */
export function seedViewer(plexus: Plexus, workspaceId: string, state: NgState): Promise<void> {
  return plexus.withDoc(workspaceId, (doc) => replaceViewerState(doc, state, serverOrigin('e2e-seed')));
}

/** Waits until the page's viewer has started. */
export async function waitViewer(page: Page): Promise<void> {
  await expect(page.getByTestId('viewer-stage')).toHaveAttribute('data-ready', 'true', { timeout: 30_000 });
}

/** Neuroglancer's own state in the page. */
export const ngState = (page: Page): Promise<any> => page.evaluate(() => (globalThis as any).__plexusViewer.host.getState());
/** The document's viewer state in the page. */
export const docState = (page: Page): Promise<any> => page.evaluate(() => (globalThis as any).__plexusViewer.docState());
export const ngPosition = async (page: Page): Promise<number[]> => (await ngState(page)).position;
/** Camera positions of the others, as this page's awareness has received them. */
export const peerPositions = (page: Page): Promise<number[][]> =>
  page.evaluate(() => {
    const aw = (globalThis as any).__plexus.awareness;
    return [...aw.getStates()].filter(([id]: [number]) => id !== aw.clientID).map(([, s]: [number, any]) => s?.viewer?.camera?.position).filter(Boolean);
  });
export const navMode = (page: Page): Promise<string> => page.evaluate(() => (globalThis as any).__plexusViewer.binding.getMode().kind);

/** The WebGL canvas of the page's viewer. */
export const viewerCanvas = (page: Page) => page.locator('.ng-mount canvas').first();

/** Drags in the middle of the viewer's slice panel (Neuroglancer pans the view). */
export async function dragViewer(page: Page, dx: number, dy: number): Promise<void> {
  const box = (await page.getByTestId('viewer-stage').boundingBox())!;
  const x = box.x + box.width / 2;
  const y = box.y + box.height / 2 + 40;
  await page.mouse.move(x, y);
  await page.mouse.down();
  for (let i = 1; i <= 8; i++) await page.mouse.move(x + (dx * i) / 8, y + (dy * i) / 8);
  await page.mouse.up();
}

/** Two positions equal up to Neuroglancer's float32 rounding. */
export function samePosition(a: number[] | undefined, b: number[] | undefined): boolean {
  return !!a && !!b && a.length === b.length && a.every((x, i) => Math.abs(x - b[i]!) < 1e-3);
}

/** A small state without data sources: a 3-D space and an annotation layer with a point tool. */
export function annotationState(): NgState {
  const dims = { x: [1e-6, 'm'], y: [1e-6, 'm'], z: [1e-6, 'm'] };
  return {
    dimensions: dims,
    position: [50, 50, 0],
    crossSectionScale: 0.3,
    projectionScale: 256,
    layers: [
      {
        type: 'annotation',
        source: { url: 'local://annotations', transform: { outputDimensions: dims } },
        tool: 'annotatePoint',
        annotationColor: '#ffcc00',
        annotations: [
          { type: 'point', point: [40, 40, 0], id: 'roi-1', description: 'ROI 1' },
          { type: 'point', point: [70, 60, 0], id: 'roi-2', description: 'ROI 2' },
        ],
        name: 'rois',
      },
    ],
    layout: 'xy',
  } as NgState;
}

/** Alice (owner) and Bob (editor) with the viewer open on a fresh workspace holding `state`. */
export async function twoInViewer(plexus: Plexus, actor: Actors, name: string, state: NgState = annotationState()) {
  const { workspace } = await plexus.createWorkspace(`${name} ${uniq()}`);
  await seedViewer(plexus, workspace.id, state);
  const link = await plexus.share(workspace.id, 'editor');
  const alice = await actor(ALICE);
  const bob = await actor(BOB);
  await openWorkspace(alice.page, plexus, workspace.id);
  await openWorkspace(bob.page, plexus, workspace.id, link.token);
  await waitViewer(alice.page);
  await waitViewer(bob.page);
  return { workspace, alice, bob };
}
