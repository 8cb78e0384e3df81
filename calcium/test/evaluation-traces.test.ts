/** Trace and spike correlations on hand-made inputs, bins finer and coarser than frames. */
import { describe, expect, it } from 'vitest';
import { binFrames, binSpikeTimes, pearson, spikeCorrelation, traceCorrelations } from '../src/evaluation/index.ts';

describe('pearson', () => {
  it('gives ±1 for linear relations, a hand value otherwise, NaN when undefined', () => {
    expect(pearson([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 12);
    expect(pearson([1, 2, 3], [3, 2, 1])).toBeCloseTo(-1, 12);
    expect(pearson([1, 2, 3, 4], [1, 3, 2, 4])).toBeCloseTo(0.8, 12);
    expect(pearson([1, 1, 1], [1, 2, 3])).toBeNaN();
    expect(pearson([1], [1])).toBeNaN();
    expect(() => pearson([1, 2], [1, 2, 3])).toThrow(/lengths differ/);
  });

  it('traceCorrelations: per match r and their median', () => {
    const det = new Map([[1, Float32Array.from([1, 2, 3, 4])], [2, Float32Array.from([4, 3, 2, 1])], [3, Float32Array.from([1, 3, 2, 4])]]);
    const tru = new Map([[10, Float32Array.from([2, 4, 6, 8])], [20, Float32Array.from([1, 2, 3, 4])], [30, Float32Array.from([1, 2, 3, 4])]]);
    const res = traceCorrelations([{ detected: 1, truth: 10 }, { detected: 2, truth: 20 }, { detected: 3, truth: 30 }], det, tru);
    expect(res.perMatch.map((m) => m.r)).toEqual([expect.closeTo(1, 12), expect.closeTo(-1, 12), expect.closeTo(0.8, 12)]);
    expect(res.median).toBeCloseTo(0.8, 12);
    expect(traceCorrelations([], det, tru).median).toBeNaN();
    expect(() => traceCorrelations([{ detected: 9, truth: 10 }], det, tru)).toThrow(/detected ROI 9/);
  });
});

describe('spikeCorrelation', () => {
  it('bins finer than frames: a frame is split evenly over the bins it covers', () => {
    // 10 Hz → frames of 0.1 s; bins of 0.05 s. Frame 1 = [0.1, 0.2) → bins 2 and 3.
    const inferred = [0, 2, 0, 0];
    expect(Array.from(binFrames(inferred, { frameRate: 10, binSeconds: 0.05 }))).toEqual([0, 0, 1, 1, 0, 0, 0, 0].map((v) => expect.closeTo(v, 12)));
    expect(Array.from(binSpikeTimes([0.12], { frames: 4, frameRate: 10, binSeconds: 0.05 }))).toEqual([0, 0, 1, 0, 0, 0, 0, 0]);
    // a = [0,0,1,1,0,0,0,0], b = [0,0,1,0,0,0,0,0]: cov 0.75, Saa 1.5, Sbb 0.875.
    expect(spikeCorrelation(inferred, [0.12], { frameRate: 10, binSeconds: 0.05 })).toBeCloseTo(0.75 / Math.sqrt(1.5 * 0.875), 12);
  });

  it('bins coarser than frames: frames straddling a bin edge are shared, spikes outside the recording ignored', () => {
    // 10 frames at 10 Hz, bins of 0.25 s: frame 2 = [0.2, 0.3) and frame 7 = [0.7, 0.8) straddle edges.
    const inferred = [1, 0, 2, 0, 0, 0, 0, 3, 0, 0];
    expect(Array.from(binFrames(inferred, { frameRate: 10, binSeconds: 0.25 }))).toEqual([2, 1, 1.5, 1.5].map((v) => expect.closeTo(v, 12)));
    const spikes = [0.05, 0.21, 0.6, 0.9, 0.95, 1.5, -0.1];
    expect(Array.from(binSpikeTimes(spikes, { frames: 10, frameRate: 10, binSeconds: 0.25 }))).toEqual([2, 0, 1, 2]);
    // a − mean = [.5, −.5, 0, 0], b − mean = [.75, −1.25, −.25, .75]: r = 1 / √(0.5 · 2.75).
    expect(spikeCorrelation(inferred, spikes, { frameRate: 10, binSeconds: 0.25 })).toBeCloseTo(1 / Math.sqrt(0.5 * 2.75), 12);
  });

  it('keeps the total activity when bins and frames do not align, and defaults to max(0.04 s, one frame)', () => {
    const inferred = Array.from({ length: 97 }, (_, k) => (k % 7 === 3 ? 1 + k / 100 : 0));
    const total = inferred.reduce((a, b) => a + b, 0);
    for (const binSeconds of [0.013, 0.04, 0.1, 0.77]) {
      const bins = binFrames(inferred, { frameRate: 30, binSeconds });
      expect(bins.reduce((a, b) => a + b, 0)).toBeCloseTo(total, 9);
      expect(bins.length).toBe(Math.ceil(97 / 30 / binSeconds - 1e-9));
    }
    // At 10 Hz the default bin is one frame: identical frames and spike bins give r = 1.
    const frames = [0, 1, 0, 0, 2, 0];
    expect(spikeCorrelation(frames, [0.15, 0.41, 0.45], { frameRate: 10 })).toBeCloseTo(1, 12);
    // At 30 Hz it is 0.04 s: 30 frames → 25 bins.
    expect(binFrames(new Array(30).fill(1), { frameRate: 30, binSeconds: 0.04 }).length).toBe(25);
    expect(() => spikeCorrelation([1, 2], [0], { frameRate: 0 })).toThrow(/frameRate/);
  });
});
