import { describe, expect, it } from 'vitest';
import { activityMovie } from '../src/detection/activity.ts';
import { detectCells } from '../src/detection/detect.ts';
import { estimateDiameter } from '../src/detection/diameter.ts';
import { somaDecision, skewness } from '../src/detection/quality.ts';
import { extractionMasks } from '../src/extraction/masks.ts';
import { extractTraces } from '../src/extraction/extract.ts';
import { FrameAccumulator } from '../src/summary/accumulate.ts';
import { localCorrelation } from '../src/summary/local-correlation.ts';
import { movieSource, type Movie } from '../src/types.ts';
import { synthMovie, type SynthCell } from './synthetic.ts';

function prepare(m: Movie, bin: number) {
  const acc = new FrameAccumulator(m.width, m.height, m.frames, bin);
  const n = m.width * m.height;
  for (let f = 0; f < m.frames; f++) acc.add(f, m.data.subarray(f * n, (f + 1) * n));
  return { acc, activity: activityMovie(acc.binned()) };
}

/** Pixels of a footprint at ≥ 0.5. */
const core = (fp: Float32Array) => new Set([...fp.keys()].filter((i) => fp[i]! >= 0.5));
const iou = (a: Set<number>, b: Set<number>) => {
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
};

describe('cell detection', () => {
  it('separates two touching somata with their own activity into two ROIs, each matching its cell', () => {
    const cells: SynthCell[] = [
      { cx: 28, cy: 32, a: 6, brightness: 30, rate: 0.8 },
      { cx: 39, cy: 32, a: 6, brightness: 30, rate: 0.8 }, // centres 11 px apart: the discs touch
    ];
    const m = synthMovie({ width: 64, height: 64, frames: 600, frameRate: 30, tau: 0.7, cells, noise: 4, background: 40, seed: 1 });
    const { acc, activity } = prepare(m, 21);
    const det = detectCells(activity, acc.mean(), { diameter: 12, anatomical: false });
    expect(det.rois.length).toBe(2);
    const truth = m.footprints.map(core);
    for (const t of truth) {
      const best = Math.max(...det.rois.map((r) => iou(new Set([...r.pixels].filter((_, k) => r.weights[k]! >= 0.5)), t)));
      expect(best).toBeGreaterThan(0.5);
    }
  });

  it('finds a cell that never fires in the mean image, and marks how it was found', () => {
    const cells: SynthCell[] = [
      { cx: 20, cy: 20, a: 5, brightness: 30, rate: 1 },
      { cx: 44, cy: 40, a: 5, brightness: 30, rate: 0 },
    ];
    const m = synthMovie({ width: 64, height: 64, frames: 400, frameRate: 30, tau: 0.7, cells, noise: 3, background: 40, seed: 2 });
    const { acc, activity } = prepare(m, 21);
    const det = detectCells(activity, acc.mean(), { diameter: 10 });
    const near = (x: number, y: number) => det.rois.find((r) => Math.hypot(r.centroid[0] - x, r.centroid[1] - y) < 3);
    expect(near(20, 20)?.source).toBe('activity');
    expect(near(44, 40)?.source).toBe('anatomy');
    expect(det.rois.length).toBe(2);
  });

  it('estimates the cell diameter from the data at two zooms', () => {
    for (const a of [4, 8]) {
      const cells: SynthCell[] = [];
      for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) cells.push({ cx: 16 + i * 5 * a, cy: 16 + j * 5 * a, a, brightness: 30, rate: 1 });
      const size = 32 + 10 * a;
      const m = synthMovie({ width: size, height: size, frames: 300, frameRate: 30, tau: 0.7, cells, noise: 3, background: 40, seed: 3 });
      const { activity } = prepare(m, 21);
      const d = estimateDiameter(localCorrelation(activity));
      expect(d).toBeGreaterThan(2 * a * 0.6);
      expect(d).toBeLessThan(2 * a * 1.6);
    }
  });

  it('rejects a long thin active structure (a dendrite) as not a soma, with the reason', () => {
    const cells: SynthCell[] = [{ cx: 32, cy: 32, a: 18, b: 2, theta: 0.3, brightness: 30, rate: 1 }];
    const m = synthMovie({ width: 64, height: 64, frames: 400, frameRate: 30, tau: 0.7, cells, noise: 3, background: 40, seed: 4 });
    const { acc, activity } = prepare(m, 21);
    const det = detectCells(activity, acc.mean(), { diameter: 12, anatomical: false });
    expect(det.rois.length).toBeGreaterThan(0);
    const roi = det.rois[0]!;
    const d = somaDecision({ snr: 10, skewness: 2, compactness: roi.compactness, elongation: roi.elongation, area: roi.area, relativeArea: roi.area / (Math.PI * 36), contrast: 1.2 }, 'activity');
    expect(d.isCell).toBe(false);
    expect(d.reason).toMatch(/elongated|compact/);
  });

  it('finds nothing in pure noise', () => {
    const m = synthMovie({ width: 48, height: 48, frames: 300, frameRate: 30, tau: 0.7, cells: [], noise: 5, background: 40, seed: 5 });
    const { acc, activity } = prepare(m, 21);
    expect(detectCells(activity, acc.mean(), { diameter: 10 }).rois).toEqual([]);
  });
});

describe('extraction', () => {
  it('excludes shared pixels, keeps the neuropil off every ROI, and recovers a cell trace', async () => {
    const cells: SynthCell[] = [{ cx: 20, cy: 20, a: 5, brightness: 50, rate: 1 }];
    const m = synthMovie({ width: 48, height: 48, frames: 200, frameRate: 30, tau: 0.7, cells, noise: 1, background: 10, seed: 6 });
    const disc = (cx: number, cy: number, r: number) => {
      const px: number[] = [];
      for (let y = 0; y < 48; y++) for (let x = 0; x < 48; x++) if ((x - cx) ** 2 + (y - cy) ** 2 <= r * r) px.push(x + y * 48);
      return Int32Array.from(px);
    };
    const a = disc(20, 20, 4);
    const b = disc(26, 20, 4); // overlaps a
    const rois = [
      { id: 1, pixels: a, weights: new Float32Array(a.length).fill(1) },
      { id: 2, pixels: b, weights: new Float32Array(b.length).fill(1) },
    ];
    const masks = extractionMasks(rois, 48, 48, { minNeuropilPixels: 100 });
    const shared = [...a].filter((p) => b.includes(p));
    expect(shared.length).toBeGreaterThan(0);
    for (const mk of masks) {
      for (const p of shared) expect(mk.pixels.includes(p)).toBe(false);
      for (const p of mk.neuropil) expect(a.includes(p) || b.includes(p)).toBe(false);
      expect(mk.neuropil.length).toBeGreaterThanOrEqual(100);
    }
    const progress: number[] = [];
    const tr = await extractTraces(movieSource(m), masks, { onProgress: (p) => progress.push(p.done) });
    // ROI 1's raw trace follows the cell's calcium.
    const f = tr.f[0]!;
    const c = m.calcium[0]!;
    let ma = 0, mb = 0;
    for (let t = 0; t < 200; t++) { ma += f[t]!; mb += c[t]!; }
    ma /= 200; mb /= 200;
    let ab = 0, aa = 0, bb = 0;
    for (let t = 0; t < 200; t++) { ab += (f[t]! - ma) * (c[t]! - mb); aa += (f[t]! - ma) ** 2; bb += (c[t]! - mb) ** 2; }
    expect(ab / Math.sqrt(aa * bb)).toBeGreaterThan(0.95);
    expect(tr.corrected[0]![5]).toBeCloseTo(f[5]! - 0.7 * tr.neuropil[0]![5]!, 4);
    expect(progress.at(-1)).toBe(200);
  });

  it('skewness is positive for transients and ~0 for symmetric noise', () => {
    expect(skewness([0, 0, 0, 0, 0, 0, 0, 10])).toBeGreaterThan(1);
    expect(Math.abs(skewness([1, -1, 1, -1, 2, -2]))).toBeLessThan(1e-9);
  });
});
