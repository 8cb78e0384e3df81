/// <reference lib="dom" />
/**
 * Atlas benchmark plumbing (atlas-render.ts, atlas-brush.ts, atlas-agent-tokens.ts): generated
 * tables uploaded as CSV through the HTTP API, a map of one made in the document (the server
 * computes its coordinates, as for anyone), and the atlas panel opened in a page until the map's
 * points are drawn. Effects: HTTP uploads, document writes, browser clicks.
 */
import type { Page } from '@playwright/test';
import type * as Y from 'yjs';
import { createAtlasMap, getAtlasMap, getTable, userOrigin, type AtlasCoords, type AtlasMethod } from '@plexus/shared';
import { gaussian, seededRandom } from '@plexus/server/atlas/seeded-random';
import { until, type ChildServer } from './lib.ts';

/** The map's test hook in a page (client/src/atlas/MapCanvas.tsx), as the benchmarks read it in `page.evaluate`. */
export interface AtlasWindow {
  __plexusAtlas?: {
    mapToScreen(x: number, y: number): [number, number];
    canvas: HTMLCanvasElement;
    /** The latest draw: when it started, when the library had the points, when it first rendered them (performance.now() ms). */
    lastDraw(): { n: number; started: number; ready: number; rendered: number | null } | null;
  };
}

export const benchPerson = { id: 'bench', name: 'Bench' };
export const benchOrigin = userOrigin('bench', 'Bench');

/**
 * CSV of `n` rows `id,x,y,kind`: `clusters` Gaussian blobs (SD 1, centres on a circle of radius
 * 8, `kind` = the blob's name), or with `clusters: 0` uniform in the unit square (`kind` = the
 * quadrant). Seeded: the same text for the same arguments.
 */
export function pointsCsv(n: number, clusters: number, seed = 1): string {
  const rand = seededRandom(seed);
  const out: string[] = ['id,x,y,kind'];
  for (let i = 0; i < n; i++) {
    let x: number;
    let y: number;
    let kind: string;
    if (clusters > 0) {
      const k = i % clusters;
      const a = (2 * Math.PI * k) / clusters;
      x = 8 * Math.cos(a) + gaussian(rand);
      y = 8 * Math.sin(a) + gaussian(rand);
      kind = `group_${k}`;
    } else {
      x = rand();
      y = rand();
      kind = `q${(x < 0.5 ? 0 : 1) + (y < 0.5 ? 0 : 2)}`;
    }
    out.push(`${i},${x.toFixed(5)},${y.toFixed(5)},${kind}`);
  }
  return out.join('\n') + '\n';
}

/** Uploads `csv` as table `name` and waits until the document registers it. */
export async function uploadCsv(server: ChildServer, ws: string, doc: Y.Doc, name: string, csv: string): Promise<void> {
  const res = await fetch(`${server.url}/api/workspaces/${ws}/uploads?name=${encodeURIComponent(name)}.csv`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/octet-stream' },
    body: csv,
  });
  if (res.status !== 201) throw new Error(`upload ${name}: ${res.status} ${await res.text()}`);
  await until(() => getTable(doc, name) !== null, 120_000, 20, `table ${name} registered`);
}

/** Makes a map of `table` in the document and waits until the server has its coordinates. */
export async function makeMap(
  doc: Y.Doc,
  input: { table: string; method: AtlasMethod; columns: string[]; colorBy?: string },
  timeoutMs = 900_000,
): Promise<{ id: string; coords: AtlasCoords; seconds: number }> {
  const t0 = performance.now();
  const id = createAtlasMap(doc, input, benchPerson, benchOrigin);
  const coords = () => getAtlasMap(doc, id)?.coords ?? null;
  await until(
    () => {
      const c = coords();
      if (c?.status === 'error') throw new Error(`map of ${input.table}: ${c.error}`);
      return c?.status === 'done';
    },
    timeoutMs,
    50,
    `the coordinates of the map of ${input.table}`,
  );
  return { id, coords: coords()!, seconds: (performance.now() - t0) / 1000 };
}

/** Sets a header toggle (Atlas, Viewer panel, Chat) to `on`. */
export async function toggle(page: Page, name: string, on: boolean): Promise<void> {
  const b = page.getByRole('button', { name, exact: true });
  if ((await b.getAttribute('aria-pressed')) !== String(on)) await b.click();
}

export interface FirstRender {
  /** Page times (performance.now(), ms): the click that opened the atlas, the points request (start, response end), the renderer's draw (started, points taken, first rendered), and the next animation frame after that. */
  clicked: number;
  request: { start: number; end: number; bytes: number } | null;
  draw: { n: number; started: number; ready: number; rendered: number };
  nextFrame: number;
}

/**
 * Opens the atlas (the viewer panel closed to make room) and waits until the map's `n` points
 * are drawn and rendered once (the renderer's timing, `window.__plexusAtlas.lastDraw()`, watched
 * every animation frame). `reopen`: closes it first, so the points are fetched and drawn again
 * with the code already loaded.
 */
export async function openAtlas(page: Page, n: number, reopen = false): Promise<FirstRender> {
  await toggle(page, 'Viewer panel', false);
  if (reopen) {
    await toggle(page, 'Atlas', false);
    await page.waitForFunction(() => !(globalThis as AtlasWindow).__plexusAtlas);
  }
  const clicked = await page.evaluate(() => performance.now());
  const watching = page.evaluate(
    ([count, after]) =>
      new Promise<Omit<FirstRender, 'clicked' | 'request'>>((resolve) => {
        const frame = () => {
          const d = (globalThis as AtlasWindow).__plexusAtlas?.lastDraw();
          if (d && d.n === count && d.started > after && d.rendered !== null) {
            const draw = { ...d, rendered: d.rendered };
            requestAnimationFrame((nextFrame) => resolve({ draw, nextFrame }));
          } else requestAnimationFrame(frame);
        };
        requestAnimationFrame(frame);
      }),
    [n, clicked] as const,
  );
  await toggle(page, 'Atlas', true);
  const seen = await watching;
  const request = await page.evaluate((after) => {
    const e = performance
      .getEntriesByType('resource')
      .filter((r) => r.startTime > after && /\/atlas\/[^/]+\/points/.test(r.name))
      .at(-1) as PerformanceResourceTiming | undefined;
    return e ? { start: e.startTime, end: e.responseEnd, bytes: e.encodedBodySize } : null;
  }, clicked);
  return { clicked, request, ...seen };
}
