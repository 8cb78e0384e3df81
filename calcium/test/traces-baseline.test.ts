/** Running baselines, ΔF/F, noise level and event extraction on synthetic traces. */
import { describe, expect, it } from 'vitest';
import { baseline, detectEvents, dff, estimateNoise, madDiffNoise, maximin, runningExtreme, runningPercentile } from '../src/traces/index.ts';

/** Mulberry32: a tiny seeded PRNG, uniform in [0, 1). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
function gauss(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}
function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Window [i − ⌊w/2⌋, i + w − 1 − ⌊w/2⌋] clipped to the trace, as the implementation defines it. */
function windowOf(i: number, w: number, n: number): number[] {
  const lo = Math.max(0, i - Math.floor(w / 2));
  const hi = Math.min(n - 1, i + w - 1 - Math.floor(w / 2));
  return Array.from({ length: hi - lo + 1 }, (_, k) => lo + k);
}

describe('running filters', () => {
  it('running min / max match brute force for odd and even windows', () => {
    const r = rng(1);
    const x = Float64Array.from({ length: 157 }, () => Math.round(r() * 20));
    for (const w of [1, 2, 5, 8, 33, 400]) {
      const mn = runningExtreme(x, w, 'min');
      const mx = runningExtreme(x, w, 'max');
      for (let i = 0; i < x.length; i++) {
        const vals = windowOf(i, w, x.length).map((k) => x[k]!);
        expect(mn[i]).toBe(Math.min(...vals));
        expect(mx[i]).toBe(Math.max(...vals));
      }
    }
  });

  it('running percentile matches a sorted window (with ties) exactly', () => {
    const r = rng(2);
    const x = Float32Array.from({ length: 211 }, () => Math.round(r() * 30) / 4);
    for (const [w, q] of [[1, 8], [7, 8], [10, 50], [31, 8], [64, 0], [64, 100], [500, 20]] as const) {
      const got = runningPercentile(x, { window: w, percentile: q });
      for (let i = 0; i < x.length; i++) {
        const vals = windowOf(i, w, x.length).map((k) => x[k]!).sort((a, b) => a - b);
        const pos = (q / 100) * (vals.length - 1);
        const lo = Math.floor(pos);
        const want = vals[lo]! + (pos - lo) * ((vals[Math.min(lo + 1, vals.length - 1)] ?? 0) - vals[lo]!);
        expect(got[i]).toBeCloseTo(want, 5);
      }
    }
  });

  it('maximin recovers a monotone baseline exactly (flat within half a window of one end) and ignores a transient', () => {
    const ramp = Float32Array.from({ length: 300 }, (_, i) => 10 + 0.01 * i);
    const b = maximin(ramp, { sigma: 0, window: 60 });
    // A rising ramp's floor is visible at the start; the last half window cannot see the rise go on.
    for (let i = 0; i < 270; i++) expect(b[i]).toBeCloseTo(ramp[i]!, 4);
    for (let i = 270; i < 300; i++) expect(b[i]).toBeCloseTo(ramp[269]!, 4);
    const falling = maximin(Float32Array.from(ramp).reverse(), { sigma: 0, window: 60 });
    for (let i = 31; i < 300; i++) expect(falling[i]).toBeCloseTo(ramp[299 - i]!, 4);
    // A 10-frame transient of +5 is cut away; it only hides 10 frames of the ramp (error ≤ slope × width).
    const withBump = Float32Array.from(ramp, (v, i) => v + (i >= 100 && i < 110 ? 5 : 0));
    const bb = maximin(withBump, { sigma: 0, window: 60 });
    for (let i = 0; i < 270; i++) expect(Math.abs(bb[i]! - ramp[i]!)).toBeLessThan(0.1 + 1e-4);
  });

  it('runs a 30,000-frame percentile over a 1,800-frame window quickly', () => {
    const r = rng(3);
    const x = Float32Array.from({ length: 30000 }, () => r());
    const t0 = performance.now();
    runningPercentile(x, { window: 1800, percentile: 8 });
    expect(performance.now() - t0).toBeLessThan(1500);
  });
});

describe('dff', () => {
  // 10 min at 30 Hz: F0 drifts (bleaching ramp + slow wave); ΔF/F transients of height 1, τ = 1 s, every ~20 s.
  const fps = 30;
  const n = 18000;
  const r = rng(4);
  const f0 = new Float64Array(n);
  const truth = new Float64Array(n);
  const peaks: number[] = [];
  let c = 0;
  let nextEvent = 200;
  for (let t = 0; t < n; t++) {
    if (t === nextEvent) {
      peaks.push(t);
      c += 1;
      nextEvent += Math.round((15 + 10 * r()) * fps);
    }
    truth[t] = c;
    c *= Math.exp(-1 / fps);
    f0[t] = 100 + (20 * t) / n + 10 * Math.sin((2 * Math.PI * t) / (600 * fps));
  }
  const F = Float32Array.from(f0, (b, t) => b * (1 + truth[t]!) + 1 * gauss(r));
  const rest = Array.from({ length: n }, (_, t) => t).filter((t) => truth[t]! < 0.005);

  for (const method of ['maximin', 'percentile'] as const) {
    it(`${method}: ΔF/F is ~0 at rest and the peaks keep their height within 10%`, () => {
      const d = dff(F, { frameRate: fps, method });
      const restMedian = median(rest.map((t) => Math.abs(d[t]!)));
      expect(restMedian).toBeLessThan(method === 'maximin' ? 0.015 : 0.04);
      for (const p of peaks) expect(Math.abs(d[p]! - 1)).toBeLessThan(0.1);
      const b = baseline(F, { frameRate: fps, method });
      expect(b.length).toBe(n);
    });
  }

  it('converts windows with the frame rate (the same trace at half the rate gives the same ΔF/F)', () => {
    const half = F.filter((_, t) => t % 2 === 0);
    const full = dff(F, { frameRate: fps });
    const halved = dff(half, { frameRate: fps / 2 });
    const diffs = rest.filter((t) => t % 2 === 0).map((t) => Math.abs(full[t]! - halved[t / 2]!));
    expect(median(diffs)).toBeLessThan(0.01);
  });

  it('clamps F0 away from 0 and rejects bad input', () => {
    const nearZero = Float32Array.from({ length: 600 }, (_, i) => (i % 100 === 50 ? 1 : 0.0));
    const d = dff(nearZero, { frameRate: 10, minBaseline: 0.5 });
    expect(Math.max(...d)).toBeCloseTo(2, 5); // (1 − 0) / max(0, 0.5)
    expect(Array.from(dff(new Float32Array(50), { frameRate: 10 })).every((v) => v === 0)).toBe(true);
    expect(dff([], { frameRate: 10 }).length).toBe(0);
    expect(() => dff([1, NaN, 2], { frameRate: 10 })).toThrow(/non-finite/);
    expect(() => dff([1, 2, 3], { frameRate: 0 })).toThrow(/frameRate/);
  });
});

describe('noise', () => {
  it('estimates white-noise σ within 10% under a slow signal (PSD at any σ; MAD of differences once σ dominates the signal slope)', () => {
    const r = rng(5);
    for (const sigma of [0.05, 0.3, 2]) {
      const x = Float32Array.from({ length: 20000 }, (_, t) => sigma * gauss(r) + 5 * Math.sin((2 * Math.PI * t) / 900) + 2 * Math.sin((2 * Math.PI * t) / 97) + 40);
      expect(Math.abs(estimateNoise(x) / sigma - 1)).toBeLessThan(0.1);
      // First differences keep the signal's slope (here up to 0.16 per frame): MAD leaks it at σ = 0.05.
      if (sigma >= 0.3) {
        expect(Math.abs(madDiffNoise(x) / sigma - 1)).toBeLessThan(0.1);
        expect(Math.abs(estimateNoise(x, { method: 'mad-diff' }) / sigma - 1)).toBeLessThan(0.1);
      } else expect(madDiffNoise(x) / sigma).toBeGreaterThan(1.1);
    }
  });

  it('is 0 for constant traces, works on short ones and rejects NaN', () => {
    expect(estimateNoise(new Float32Array(1000).fill(7))).toBe(0);
    expect(estimateNoise([1])).toBe(0);
    expect(estimateNoise([])).toBe(0);
    const r = rng(6);
    const short = Float32Array.from({ length: 100 }, () => gauss(r));
    expect(estimateNoise(short)).toBeGreaterThan(0.6);
    expect(estimateNoise(short)).toBeLessThan(1.4);
    expect(() => estimateNoise([0, NaN, 1])).toThrow(/non-finite/);
  });
});

describe('detectEvents', () => {
  it('merges runs of non-zero frames into one event at the first frame, amplitude = sum', () => {
    const s = [0, 0.5, 0.3, 0, 0, 1, 0, 0.1];
    const c = [0, 0.5, 0.7, 0.6, 0.5, 1.4, 1.2, 1.1];
    const ev = detectEvents(s, c, { frameRate: 10 });
    expect(ev).toHaveLength(3);
    expect(ev[0]).toMatchObject({ frame: 1, frames: 2, peak: 0.7 });
    expect(ev[0]!.time).toBeCloseTo(0.1, 12);
    expect(ev[0]!.amplitude).toBeCloseTo(0.8, 12);
    expect(ev[1]).toMatchObject({ frame: 5, amplitude: 1, frames: 1, peak: 1.4 });
    expect(ev[2]).toMatchObject({ frame: 7, frames: 1, peak: 1.1 });
    const big = detectEvents(s, undefined, { frameRate: 10, minAmplitude: 0.2 });
    expect(big.map((e) => e.frame)).toEqual([1, 5]);
    expect(big[0]!.peak).toBeUndefined();
    expect(detectEvents([], undefined, { frameRate: 10 })).toEqual([]);
    expect(() => detectEvents([0, 1], [0], { frameRate: 10 })).toThrow(/frames/);
  });
});
