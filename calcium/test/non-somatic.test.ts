/**
 * Structures that are not somata are not cells: a dark blood vessel crossing the field, its lumen
 * flickering as red blood cells stream through, and long thin active dendrites, beside somata that
 * must all still be found.
 */
import { describe, expect, it } from 'vitest';
import { runPipeline } from '../src/pipeline.ts';
import { movieSource } from '../src/types.ts';
import { rng, synthMovie, type SynthCell } from './synthetic.ts';

/** Distance from (x, y) to the line through (x0, y0) with direction angle `th`. */
const lineDistance = (x: number, y: number, x0: number, y0: number, th: number) => Math.abs(-(x - x0) * Math.sin(th) + (y - y0) * Math.cos(th));

function vesselRecording(seed: number, th: number) {
  const W = 96;
  const cells: SynthCell[] = [];
  const centre = [48, 48] as const;
  for (let i = 0; i < 4; i++)
    for (let j = 0; j < 4; j++) {
      const cx = 14 + 22 * i;
      const cy = 14 + 22 * j;
      if (lineDistance(cx, cy, centre[0], centre[1], th) < 10) continue; // the vessel runs here
      cells.push({ cx, cy, a: 5, brightness: 30, rate: 0.6 });
    }
  const m = synthMovie({ width: W, height: W, frames: 400, frameRate: 30, tau: 0.7, cells, noise: 3, background: 40, seed, amplitude: 0.6 });
  // The vessel: a 7 px wide dark band (lumen at 30 % of the neuropil's brightness) in which blood
  // cells stream along the vessel, two pixels a frame, as dark and bright streaks.
  const r = rng(seed + 100);
  const streak = Float32Array.from({ length: 4096 }, () => (r() < 0.3 ? 1 : 0));
  const n = W * W;
  for (let t = 0; t < m.frames; t++)
    for (let y = 0; y < W; y++)
      for (let x = 0; x < W; x++) {
        const d = lineDistance(x, y, centre[0], centre[1], th);
        if (d > 3.5) continue;
        const along = Math.round((x - centre[0]) * Math.cos(th) + (y - centre[1]) * Math.sin(th) + 200 - 2 * t);
        const rbc = streak[((along % 4096) + 4096) % 4096]!;
        const i = t * n + x + y * W;
        m.data[i] = m.data[i]! - 40 * 0.7 + rbc * 25;
      }
  return { m, src: movieSource(m, 30), centre, th };
}

describe('vessels', () => {
  for (const [seed, th] of [[21, 0.4], [22, 1.9]] as const) {
    it(`a flickering vessel (angle ${th} rad) becomes no cell, and every cell beside it is found (seed ${seed})`, async () => {
      const { m, src, centre } = vesselRecording(seed, th);
      const res = await runPipeline(src, { tauDecay: 'GCaMP6f', diameter: 10 });
      const cells = res.rois.filter((roi) => roi.isCell);
      const onVessel = cells.filter((roi) => lineDistance(roi.centroid[0], roi.centroid[1], centre[0], centre[1], th) < 5);
      // What lies on the vessel was found (its flicker looks like activity) and rejected, saying why.
      const found = res.rois.filter((roi) => lineDistance(roi.centroid[0], roi.centroid[1], centre[0], centre[1], th) < 5);
      expect(found.length).toBeGreaterThan(0);
      for (const roi of found) expect(roi.reason).toMatch(/blood vessel/);
      expect(onVessel.map((roi) => ({ id: roi.id, centroid: roi.centroid, reason: roi.reason }))).toEqual([]);
      for (const c of m.cells) expect(cells.filter((roi) => Math.hypot(roi.centroid[0] - c.cx, roi.centroid[1] - c.cy) < 3).length).toBe(1);
    });
  }
});

describe('dendrites', () => {
  for (const seed of [31, 32]) {
    it(`long thin active dendrites become no cell, and the somata beside them are found (seed ${seed})`, async () => {
      const cells: SynthCell[] = [
        { cx: 20, cy: 20, a: 5, brightness: 30, rate: 0.6 },
        { cx: 76, cy: 24, a: 5, brightness: 30, rate: 0.6 },
        { cx: 24, cy: 76, a: 5, brightness: 30, rate: 0.6 },
        { cx: 78, cy: 78, a: 5, brightness: 30, rate: 0.6 },
      ];
      // Two dendrites, 44 and 36 px long, 3 px wide, firing on their own. (Where two dendrites
      // cross or end on each other, the overlap is a bright blob that can pass as a soma.)
      const dendrites: SynthCell[] = [
        { cx: 48, cy: 48, a: 22, b: 1.5, theta: 0.6, brightness: 30, rate: 0.8 },
        { cx: 48, cy: 88, a: 18, b: 1.5, theta: 0.1, brightness: 30, rate: 0.8 },
      ];
      const m = synthMovie({ width: 96, height: 96, frames: 400, frameRate: 30, tau: 0.7, cells: [...cells, ...dendrites], noise: 3, background: 40, seed, amplitude: 0.6 });
      const res = await runPipeline(movieSource(m, 30), { tauDecay: 'GCaMP6f', diameter: 10 });
      const found = res.rois.filter((roi) => roi.isCell);
      for (const c of cells) expect(found.filter((roi) => Math.hypot(roi.centroid[0] - c.cx, roi.centroid[1] - c.cy) < 3).length).toBe(1);
      // Nothing else is called a cell: every other cell ROI would lie on a dendrite.
      expect(found.length).toBe(cells.length);
    });
  }
});
