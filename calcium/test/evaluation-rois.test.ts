/** ROI matching on hand-made discs and pixel sets: counts, IoU threshold, Hungarian vs greedy, high-SNR figures. */
import { describe, expect, it } from 'vitest';
import { matchRois, overlapPairs } from '../src/evaluation/index.ts';
import type { Roi } from '../src/types.ts';

const W = 64;
const H = 48;

/** A disc of radius r centred at (cx, cy), weight falling from 1 at the centre to 0.2 at the rim. */
function disc(id: number, cx: number, cy: number, r: number): Roi {
  const pixels: number[] = [];
  const weights: number[] = [];
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const d = Math.hypot(x - cx, y - cy);
      if (d <= r) {
        pixels.push(x + y * W);
        weights.push(1 - (0.8 * d) / r);
      }
    }
  }
  return { id, pixels: Int32Array.from(pixels), weights: Float32Array.from(weights) };
}

/** An ROI from explicit pixel indices (weights 1). */
function set(id: number, pixels: number[]): Roi {
  return { id, pixels: Int32Array.from(pixels), weights: new Float32Array(pixels.length).fill(1) };
}
const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, k) => a + k);

describe('matchRois', () => {
  const truth = [disc(1, 10, 10, 5), disc(2, 30, 10, 5), disc(3, 50, 12, 6), disc(4, 12, 35, 5), disc(5, 40, 35, 4)];

  it('scores a perfect detection (other ids, other order) as F1 = 1', () => {
    const detected = [...truth].reverse().map((r, k) => ({ ...r, id: 100 + k }));
    const res = matchRois(detected, truth, { width: W, height: H });
    expect(res).toMatchObject({ truePositives: 5, falsePositives: 0, falseNegatives: 0, precision: 1, recall: 1, f1: 1, meanIou: 1 });
    expect(res.matches.find((m) => m.truth === 1)).toEqual({ detected: 104, truth: 1, iou: 1 });
  });

  it('counts one missed, one spurious and one shifted below IoU 0.5 exactly', () => {
    const shifted = disc(13, 50 + 5, 12, 6); // a 5-pixel shift of a radius-6 disc
    const detected = [disc(11, 10, 10, 5), disc(12, 31, 10, 5), shifted, disc(14, 40, 35, 4), disc(15, 25, 40, 4)];
    // truth 4 is missed; 15 is spurious (it overlaps nothing); 13 overlaps truth 3 below 0.5.
    const iou13 = overlapPairs([shifted], [truth[2]!], { width: W, height: H })[0]!.iou;
    expect(iou13).toBeGreaterThan(0.2);
    expect(iou13).toBeLessThan(0.5);
    const res = matchRois(detected, truth, { width: W, height: H });
    expect(res.matches.map((m) => [m.detected, m.truth])).toEqual([[11, 1], [12, 2], [14, 5]]);
    expect(res).toMatchObject({ truePositives: 3, falsePositives: 2, falseNegatives: 2, unmatchedDetected: [13, 15], unmatchedTruth: [3, 4] });
    expect(res.precision).toBeCloseTo(3 / 5, 12);
    expect(res.recall).toBeCloseTo(3 / 5, 12);
    expect(res.f1).toBeCloseTo(3 / 5, 12);
    expect(res.matches[1]!.iou).toBeLessThan(1);
    expect(res.matches[1]!.iou).toBeGreaterThan(0.5);
    // Lowering the threshold admits the shifted disc.
    expect(matchRois(detected, truth, { width: W, height: H, iouThreshold: 0.2 }).truePositives).toBe(4);
  });

  it('maximises the number of matches where greedy highest-IoU-first would lose one', () => {
    // T1 = {0..9}, T2 = {4..9}; D1 = {1..9}: IoU(D1,T1) = 0.9, IoU(D1,T2) = 0.667; D2 = {0..5}: IoU(D2,T1) = 0.6, IoU(D2,T2) = 0.2.
    const truthSets = [set(1, range(0, 9)), set(2, range(4, 9))];
    const det = [set(1, range(1, 9)), set(2, range(0, 5))];
    const res = matchRois(det, truthSets, { width: W, height: H });
    expect(res.matches).toEqual([
      { detected: 1, truth: 2, iou: 6 / 9 },
      { detected: 2, truth: 1, iou: 0.6 },
    ]);
    expect(res.f1).toBe(1);
  });

  it('binarizes by weight when asked (rims of the discs drop out)', () => {
    const a = disc(1, 20, 20, 8);
    const b = disc(2, 29, 20, 8);
    const all = overlapPairs([a], [b], { width: W, height: H })[0]!.iou;
    const cores = overlapPairs([a], [b], { width: W, height: H, binarize: 0.6 });
    // weight ≥ 0.6 keeps d ≤ 4: two radius-4 cores 9 pixels apart do not touch.
    expect(all).toBeGreaterThan(0.1);
    expect(cores).toEqual([]);
    // duplicate pixels do not count twice
    const dup = { id: 9, pixels: Int32Array.from([1, 1, 2, 3]), weights: Float32Array.from([1, 1, 1, 1]) };
    expect(overlapPairs([dup], [set(1, [1, 2, 3])], { width: W, height: H })[0]!.iou).toBe(1);
  });

  it('computes the high-SNR figures exactly as defined', () => {
    // Truth SNR: 1 → 10, 2 → 8, 3 → 3 (low), 4 → 2 (low), 5 → 6; high = {1, 2, 5}.
    const snr = new Map([[1, 10], [2, 8], [3, 3], [4, 2], [5, 6]]);
    const detected = [disc(21, 10, 10, 5), disc(22, 30, 10, 5), disc(23, 50, 12, 6), disc(24, 25, 40, 3), disc(25, 55, 40, 3)];
    // Matched: 21→1 (high), 22→2 (high), 23→3 (low); 24, 25 spurious; 4 (low) and 5 (high) missed.
    const res = matchRois(detected, truth, { width: W, height: H, truthSnr: snr });
    expect(res.truePositives).toBe(3);
    const hs = res.highSnr!;
    expect(hs).toMatchObject({ snrThreshold: 5, truthHigh: 3, matchedHigh: 2, matchedLow: 1 });
    expect(hs.recall).toBeCloseTo(2 / 3, 12); // high cells found / high cells
    expect(hs.precision).toBeCloseTo(2 / (5 - 1), 12); // matched-to-high / (detections − matched-to-low)
    expect(hs.f1).toBeCloseTo((2 * 0.5 * (2 / 3)) / (0.5 + 2 / 3), 12);
    // The threshold is inclusive and configurable; ids missing from the map count as low.
    const strict = matchRois(detected, truth, { width: W, height: H, truthSnr: new Map([[1, 10], [2, 8]]), snrThreshold: 8 }).highSnr!;
    expect(strict).toMatchObject({ truthHigh: 2, matchedHigh: 2, matchedLow: 1 });
    expect(strict.precision).toBeCloseTo(2 / 4, 12);
    expect(strict.recall).toBe(1);
    expect(matchRois(detected, truth, { width: W, height: H }).highSnr).toBeUndefined();
  });

  it('handles empty inputs and rejects bad ones', () => {
    expect(matchRois([], [], { width: W, height: H })).toMatchObject({ precision: 0, recall: 0, f1: 0, matches: [] });
    expect(matchRois([], truth, { width: W, height: H })).toMatchObject({ falseNegatives: 5, recall: 0 });
    expect(() => matchRois([set(1, [W * H])], truth, { width: W, height: H })).toThrow(/outside/);
    expect(() => matchRois([set(1, [0]), set(1, [1])], truth, { width: W, height: H })).toThrow(/twice/);
  });

  it('matches 2,000 × 2,000 cells quickly', () => {
    const w = 512;
    const h = 512;
    const make = (id: number, cx: number, cy: number): Roi => {
      const px: number[] = [];
      for (let y = cy - 4; y <= cy + 4; y++) for (let x = cx - 4; x <= cx + 4; x++) if ((x - cx) ** 2 + (y - cy) ** 2 <= 16) px.push(x + y * w);
      return set(id, px);
    };
    const t: Roi[] = [];
    const d: Roi[] = [];
    for (let k = 0; k < 2000; k++) {
      const cx = 6 + ((k * 11) % 500);
      const cy = 6 + Math.floor(k / 45) * 11;
      t.push(make(k + 1, cx, cy));
      d.push(make(k + 1, cx + (k % 3 === 0 ? 1 : 0), cy));
    }
    const t0 = performance.now();
    const res = matchRois(d, t, { width: w, height: h });
    expect(performance.now() - t0).toBeLessThan(1500);
    expect(res.truePositives).toBe(2000);
  });
});
