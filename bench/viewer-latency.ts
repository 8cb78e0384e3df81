/// <reference lib="dom" />
/**
 * Viewer change latency between two browsers: from a change in A's Neuroglancer until B's
 * Neuroglancer state holds it (state applied; rendering excluded). Three paths:
 *   lut     — a shader-control (LUT range) change, through the document
 *   camera  — a camera move in the shared view, through the document
 *   follow  — a camera move while B follows A, through awareness
 * Each sample starts after a quiet spell (the leading edge of the write throttle). Timestamps use
 * performance.timeOrigin + performance.now() in each page (one machine, one clock).
 *
 *   npx tsx bench/viewer-latency.ts [samples=100]
 */
import { chromium, type Page } from '@playwright/test';
import { userOrigin, replaceViewerState } from '@plexus/shared';
import { api, hocuspocusClient, startChildServer, tmpDir, waitFor } from '@plexus/testkit';
import { demoViewerState } from '../server/src/demo-viewer.ts';
import { demoDatasetDir, writeDemoDatasetAtomically } from '../server/src/volumes/demo/ensure-demo.ts';
import { fmt, machine, printTable, sleep, summarize } from './lib.ts';

const SAMPLES = Number(process.argv[2] ?? 100);
const QUIET_MS = 120;

type Kind = 'lut' | 'camera' | 'follow';

async function main() {
  const dataDir = tmpDir('plexus-bench-viewer-');
  await writeDemoDatasetAtomically(demoDatasetDir(dataDir), { params: { frames: 60 } });
  const server = await startChildServer(dataDir, { PLEXUS_CLIENT_DIR: new URL('../client/dist', import.meta.url).pathname });
  const browser = await chromium.launch({
    executablePath: process.env.PLEXUS_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const ws = (await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name: 'Viewer latency' })).json.workspace.id as string;
    const c = hocuspocusClient(server.url, ws, server.ownerToken);
    await c.synced;
    const state = demoViewerState();
    state.position = [128, 128, 30];
    replaceViewerState(c.doc, state, userOrigin('bench'));
    await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'state stored' });
    c.destroy();

    const open = async (id: string, name: string): Promise<Page> => {
      const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      await ctx.addInitScript((u) => localStorage.setItem('plexus.user', JSON.stringify(u)), { id, name, color: '#4363d8' });
      const page = await ctx.newPage();
      await page.goto(`${server.url}/w/${ws}?token=${server.ownerToken}`);
      await page.waitForSelector('[data-testid=viewer-stage][data-ready=true]', { timeout: 60_000 });
      return page;
    };
    const a = await open('u_bench_a', 'A');
    const b = await open('u_bench_b', 'B');
    await sleep(2000);

    // B records when its Neuroglancer first holds the expected value.
    await b.evaluate(() => {
      const w = window as any;
      const v = w.__plexusViewer;
      w.__expect = null;
      v.host.onChange(() => {
        const e = w.__expect;
        if (!e || e.at) return;
        const s = v.host.getState();
        const got = e.kind === 'lut' ? s.layers.find((l: any) => l.name === 'movie')?.shaderControls?.normalized?.range?.[1] : s.position?.[0];
        if (typeof got === 'number' && Math.abs(got - e.value) < 1e-3) e.at = performance.timeOrigin + performance.now();
      });
    });

    const sample = async (kind: Kind, i: number): Promise<number> => {
      // Integers for the LUT: Neuroglancer rounds a uint16 layer's range to whole values.
      const value = kind === 'lut' ? 150 + (i % 100) : 60 + (i % 100) + (i % 2 ? 0.25 : 0);
      await b.evaluate(([k, v]) => ((window as any).__expect = { kind: k, value: v, at: 0 }), [kind, value] as const);
      await sleep(QUIET_MS);
      const t0 = await a.evaluate(([k, v]) => {
        const host = (window as any).__plexusViewer.host;
        const t = performance.timeOrigin + performance.now();
        if (k === 'lut') host.viewer.layerManager.getLayerByName('movie').layer.shaderControlState.restoreState({ normalized: { range: [95, v] } });
        else {
          const p = host.getState().position;
          host.setTopLevel({ position: [v, p[1], p[2]] });
        }
        return t;
      }, [kind, value] as const);
      const t1 = await waitFor(() => b.evaluate(() => (window as any).__expect.at as number), { timeout: 10_000, interval: 2, message: `${kind} sample ${i} to reach B` });
      return t1 - t0;
    };

    const results: Record<Kind, number[]> = { lut: [], camera: [], follow: [] };
    for (const kind of ['lut', 'camera'] as const) for (let i = 0; i < SAMPLES; i++) results[kind].push(await sample(kind, i));
    // Follow: A navigates alone, B follows A.
    await a.getByTestId('viewer-mode-alone').click();
    await b.getByTestId('viewer-people').click();
    await b.locator('[data-testid=viewer-person][data-user=u_bench_a]').getByTestId('viewer-follow').click();
    await sleep(500);
    for (let i = 0; i < SAMPLES; i++) results.follow.push(await sample('follow', i));

    console.log(`Viewer change latency A → B's applied Neuroglancer state (${SAMPLES} samples each, ${machine()})\n`);
    printTable(
      ['path', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'],
      (Object.keys(results) as Kind[]).map((k) => {
        const s = summarize(results[k]);
        return [k, fmt(s.p50, 1), fmt(s.p95, 1), fmt(s.p99, 1), fmt(s.max, 1)];
      }),
    );
  } finally {
    await browser.close();
    await server.kill('SIGTERM');
  }
}

await main();
