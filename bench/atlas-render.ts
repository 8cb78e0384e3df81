/// <reference lib="dom" />
/**
 * Atlas rendering: the first render and the pan/zoom frame times of a map of 10k, 100k and
 * 1,000,000 points in headless Chromium, with the real client (the production bundle, served by a
 * real server that computed the map) and the real renderer (client/src/atlas/renderer.ts,
 * regl-scatterplot). Chromium here renders WebGL in software (SwiftShader, printed below): the
 * raster part of every time is a CPU's, not a GPU's. So the figures are split:
 *   1. Per-point CPU costs of the code around the renderer, measured in Node on the same modules
 *      (shared points format, client geometry and colours): encode, decode, normalise, colour,
 *      index by row, selection test. These carry over to a machine with a GPU as they are.
 *   2. First render in the page, in phases: click → points request; the request (server read +
 *      encode + transfer); response → draw started (decode, normalise, colour, React; the lazy
 *      renderer chunk on a cold open); the library taking the points (buffers, spatial index);
 *      → first rendered; → the next animation frame. Cold (first open of the page) and warm
 *      (closed and reopened: fetched and drawn again, code loaded).
 *   3. Frame times over a scripted pan (a circular drag) and zoom (wheel in, then out), one input
 *      event per animation frame, from requestAnimationFrame timestamps; idle frames for the
 *      cadence; the marginal cost per point between sizes (software raster: does not carry over).
 * Also: whether the panel draws every point or a sample (the points' `sampled`, the canvas'
 * `data-points`). Prints figures; asserts nothing.
 *
 * Run: npm run build -w client && node --import tsx bench/atlas-render.ts [--sizes=10000,100000,1000000] [--frames=120] [--opens=2]
 */
import fs from 'node:fs';
import { decodePoints, encodePoints, type AtlasPoints } from '@plexus/shared';
import { coloring } from '../client/src/atlas/colors.ts';
import { normalizeAll, normalizer, pointsInSelection } from '../client/src/atlas/geometry.ts';
import { rowIndex } from '../client/src/atlas/points.ts';
import { makeMap, openAtlas, pointsCsv, toggle, uploadCsv, type AtlasWindow, type FirstRender } from './atlas-setup.ts';
import { clientDir, launchChromium, openWorkspacePage, webglRenderer } from './browser.ts';
import { connectClient, createWorkspace, fmt, machine, median, printTable, spawnServer, summarize } from './lib.ts';

const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const SIZES = arg('sizes', '10000,100000,1000000').split(',').map(Number);
const FRAMES = Number(arg('frames', '120'));
const OPENS = Number(arg('opens', '2'));
const CLUSTERS = 5;
const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').trim();
const int = (n: number) => n.toLocaleString('en-US');

// ---------------------------------------------------------------------------------------------
// 1. per-point CPU costs of the code around the renderer (Node, same modules)

function syntheticPoints(n: number): AtlasPoints {
  const x = new Float32Array(n);
  const y = new Float32Array(n);
  const row = new Uint32Array(n);
  const color = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const k = i % CLUSTERS;
    x[i] = Math.cos(k) * 8 + Math.sin(i * 0.37);
    y[i] = Math.sin(k) * 8 + Math.cos(i * 0.91);
    row[i] = i;
    color[i] = k;
  }
  const meta = { bounds: [-9, -9, 9, 9] as [number, number, number, number], color: { kind: 'categorical' as const, column: 'kind', categories: Array.from({ length: CLUSTERS }, (_, k) => `group_${k}`) }, total: n, sampled: false };
  return { n, meta, x, y, row, color };
}

/** Median ms of `reps` runs of `f` (after one warm-up run). */
function timeMs(f: () => unknown, reps = 5): number {
  f();
  const t: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    f();
    t.push(performance.now() - t0);
  }
  return median(t);
}

function cpuCosts(): void {
  const rows: Array<Array<string | number>> = [];
  for (const n of SIZES) {
    const p = syntheticPoints(n);
    const bytes = encodePoints(p);
    const nz = normalizer(p.meta.bounds, true);
    const sel = { kind: 'rect' as const, x0: -9, y0: -9, x1: 0, y1: 9, by: 'bench', at: 0 };
    const costs = [
      timeMs(() => encodePoints(p)),
      timeMs(() => decodePoints(bytes)),
      timeMs(() => normalizeAll(nz, p.x, p.y)),
      timeMs(() => coloring(p, null)),
      timeMs(() => rowIndex(p)),
      timeMs(() => pointsInSelection(sel, p.x, p.y)),
    ];
    rows.push([int(n), (bytes.byteLength / 1024 / 1024).toFixed(1), ...costs.map((ms) => `${fmt(ms, ms < 1 ? 2 : 1)} ms (${fmt((ms * 1e6) / n, 1)})`)]);
  }
  console.log('\n1. CPU per point around the renderer (Node, the same modules; median of 5): ms (ns/point)');
  printTable(['points', 'MiB', 'encode (server)', 'decode', 'normalise', 'colour', 'index by row', 'selection test'], rows);
}

// ---------------------------------------------------------------------------------------------
// 3. frame times over a scripted pan and zoom

interface Frames {
  idle: number[];
  pan: number[];
  zoom: number[];
  /** Input frames after which the camera had moved. */
  moved: number;
  canvas: { width: number; height: number };
}

function panZoom(page: import('@playwright/test').Page, frames: number): Promise<Frames> {
  return page.evaluate(async (frames) => {
    const h = (globalThis as AtlasWindow).__plexusAtlas!;
    const c = h.canvas;
    const r = c.getBoundingClientRect();
    const cx = r.left + r.width / 2;
    const cy = r.top + r.height / 2;
    const raf = () => new Promise<number>((res) => requestAnimationFrame(res));
    const mouse = (type: string, x: number, y: number, buttons: number) =>
      c.dispatchEvent(new MouseEvent(type, { clientX: x, clientY: y, buttons, button: 0, bubbles: true, cancelable: true, view: window }));
    const wheel = (dy: number) => c.dispatchEvent(new WheelEvent('wheel', { clientX: cx, clientY: cy, deltaY: dy, deltaMode: 0, bubbles: true, cancelable: true }));
    const probe = () => h.mapToScreen(0, 0).join(',');
    const out = { idle: [] as number[], pan: [] as number[], zoom: [] as number[], moved: 0, canvas: { width: r.width, height: r.height } };
    let t = await raf();
    const step = async (into: number[], input: () => void) => {
      const before = probe();
      input();
      const t2 = await raf();
      into.push(t2 - t);
      t = t2;
      // The camera moves in the library's frame: look one frame later.
      if (probe() !== before) out.moved++;
    };
    for (let i = 0; i < 30; i++) await step(out.idle, () => {});
    out.moved = 0;
    // Pan: a drag around a circle of 80 px, one mouse move per frame.
    mouse('mousedown', cx, cy, 1);
    for (let i = 1; i <= frames; i++) {
      const a = (2 * Math.PI * i) / frames;
      await step(out.pan, () => mouse('mousemove', cx + 80 * Math.sin(a), cy + 80 * (1 - Math.cos(a)), 1));
    }
    mouse('mouseup', cx, cy, 0);
    // Zoom: the wheel in for half the frames, then out again.
    for (let i = 0; i < frames; i++) await step(out.zoom, () => wheel(i < frames / 2 ? -25 : 25));
    return out;
  }, frames);
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  console.log(`Atlas rendering — ${machine()}\nload average at start: ${loadavg()}`);
  cpuCosts();

  const server = await spawnServer('plexus', { env: { PLEXUS_CLIENT_DIR: clientDir(), PLEXUS_JOB_NICE: '0' } });
  const browser = await launchChromium();
  const renders: Array<Array<string | number>> = [];
  const frameRows: Array<Array<string | number>> = [];
  const drawn: Array<Array<string | number>> = [];
  const p50s = new Map<number, number>();
  let gl = '';
  let canvas = '';
  try {
    for (const n of SIZES) {
      const ws = await createWorkspace(server, `atlas render ${n}`);
      const a = connectClient(server.url, ws, server.token);
      await a.synced;
      const table = `pts_${n}`;
      const t0 = performance.now();
      await uploadCsv(server, ws, a.doc, table, pointsCsv(n, CLUSTERS));
      const upload = (performance.now() - t0) / 1000;
      const map = await makeMap(a.doc, { table, method: 'columns', columns: ['x', 'y'], colorBy: 'kind' });
      console.log(`\n${int(n)} points: upload ${fmt(upload, 1)} s, coordinates ${fmt(map.seconds, 1)} s (${map.coords.how ?? ''}); load ${loadavg()}`);

      // What the server sends: every row, or a sample.
      const res = await fetch(`${server.url}/api/workspaces/${ws}/atlas/${map.id}/points`, { headers: { authorization: `Bearer ${server.token}` } });
      const sent = decodePoints(await res.arrayBuffer());

      const page = await openWorkspacePage(browser, server.url, ws, server.token, { id: 'u_render', name: 'Render' });
      gl ||= await webglRenderer(page);
      // The chat closed too: the map gets the width of two panels.
      await toggle(page, 'Chat', false);
      const opens: Array<{ kind: string; r: FirstRender }> = [{ kind: 'cold', r: await openAtlas(page, n) }];
      for (let k = 0; k < OPENS; k++) opens.push({ kind: 'warm', r: await openAtlas(page, n, true) });
      const shown = Number(await page.getByTestId('atlas-canvas').getAttribute('data-points'));
      const says = ((await page.getByTestId('atlas-points').textContent()) ?? '').replace(/^[\s·]+/, '');
      drawn.push([int(n), int(sent.n), int(sent.meta.total), String(sent.meta.sampled), int(shown), says, shown === n && !sent.meta.sampled ? 'all points' : 'a sample']);

      const phases = (r: FirstRender) => {
        const q = r.request ?? { start: NaN, end: NaN, bytes: NaN };
        return [q.start - r.clicked, q.end - q.start, r.draw.started - q.end, r.draw.ready - r.draw.started, r.draw.rendered - r.draw.ready, r.draw.rendered - r.clicked, r.nextFrame - r.clicked];
      };
      const cold = phases(opens[0]!.r);
      const warm = phases(opens[1]!.r).map((_, i) => median(opens.slice(1).map((o) => phases(o.r)[i]!)));
      for (const [kind, ph] of [['cold', cold], [`warm (median of ${OPENS})`, warm]] as const)
        renders.push([int(n), kind, ...ph.map((v) => fmt(v, 0)), fmt((warm[3]! * 1e6) / n, 0)]);

      const f = await panZoom(page, FRAMES);
      canvas = `${Math.round(f.canvas.width)}×${Math.round(f.canvas.height)} CSS px`;
      const idle = summarize(f.idle);
      const pan = summarize(f.pan);
      const zoom = summarize(f.zoom);
      const all = summarize([...f.pan, ...f.zoom]);
      p50s.set(n, all.p50);
      frameRows.push([int(n), fmt(idle.p50, 1), fmt(pan.p50, 1), fmt(pan.p95, 1), fmt(pan.p99, 1), fmt(zoom.p50, 1), fmt(zoom.p95, 1), fmt(zoom.p99, 1), fmt(1000 / all.p50, 1), `${f.moved}/${f.pan.length + f.zoom.length}`]);
      console.log(`  first render (warm) ${fmt(warm[5]!, 0)} ms to rendered; frames p50 ${fmt(all.p50, 1)} ms; load ${loadavg()}`);
      await page.context().close();
      a.destroy();
    }
  } finally {
    await browser.close();
    await server.stop();
  }

  console.log(`\nWebGL: ${gl} — software rendering (no GPU on this machine); canvas ${canvas}; Debian Chromium headless.`);
  console.log('\nDoes the panel draw every point?');
  printTable(['map rows', 'points sent', 'total', 'sampled', 'canvas data-points', 'the panel says', 'drawn'], drawn);
  console.log('\n2. First render in the page (ms from the click that opens the atlas; phases)');
  printTable(['points', 'open', 'click → request', 'request (server + transfer)', 'response → draw (decode, normalise, colour, React)', 'library takes points', '→ rendered', 'total to rendered', 'total to next frame', 'library ns/point (warm)'], renders);
  console.log(`\n3. Frame times over a scripted pan (${FRAMES} frames) and zoom (${FRAMES} frames), one input event per frame; requestAnimationFrame deltas, ms`);
  printTable(['points', 'idle p50', 'pan p50', 'pan p95', 'pan p99', 'zoom p50', 'zoom p95', 'zoom p99', 'fps (p50)', 'frames with a camera move'], frameRows);
  const sizes = [...p50s.keys()].sort((x, y) => x - y);
  for (let i = 1; i < sizes.length; i++) {
    const [lo, hi] = [sizes[i - 1]!, sizes[i]!];
    console.log(`marginal frame cost ${int(lo)} → ${int(hi)} points: ${fmt(((p50s.get(hi)! - p50s.get(lo)!) * 1e6) / (hi - lo), 1)} ns/point (software raster: a GPU's is far lower)`);
  }
  console.log(`\nload average at end: ${loadavg()}`);
}

await main();
