/** OASIS AR(1) deconvolution: exactness against a brute-force solver, recovery of simulated spike trains, parameter handling. */
import { describe, expect, it } from 'vitest';
import { decayFromTau, deconvolve, defaultSMin, detectEvents, estimateDecay, oasisAR1 } from '../src/traces/index.ts';
import { pearson, spikeCorrelation } from '../src/evaluation/index.ts';

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

const FPS = 30;
const TAU = 0.7;
const G = Math.exp(-1 / (TAU * FPS));

/** Poisson spikes (0.5 Hz, unit amplitude) through AR(1) calcium, plus baseline and white noise. */
function simulate(seed: number, frames: number, sigma: number, baseline = 1) {
  const r = rng(seed);
  const calcium = new Float64Array(frames);
  const y = new Float32Array(frames);
  const spikeTimes: number[] = [];
  let c = 0;
  for (let t = 0; t < frames; t++) {
    let k = 0;
    if (r() < 0.5 / FPS) {
      k = 1;
      spikeTimes.push((t + r()) / FPS);
    }
    c = G * c + k;
    calcium[t] = c;
    y[t] = baseline + c + sigma * gauss(r);
  }
  return { calcium, y, spikeTimes };
}

/** ½‖y − c‖² + λ Σ s for the AR(1) calcium c of activity s (s[0] = c[0]). */
function objective(y: ArrayLike<number>, s: ArrayLike<number>, g: number, lambda: number): number {
  let c = 0;
  let f = 0;
  for (let t = 0; t < y.length; t++) {
    c = g * c + s[t]!;
    f += 0.5 * (y[t]! - c) ** 2 + lambda * s[t]!;
  }
  return f;
}

/** Brute force: coordinate descent on s ≥ 0 for the same convex problem (slow, exact enough at n = 25). */
function bruteForce(y: ArrayLike<number>, g: number, lambda: number): Float64Array {
  const n = y.length;
  const s = new Float64Array(n);
  const res = Float64Array.from(y); // y − K s
  const norm = new Float64Array(n);
  for (let j = 0; j < n; j++) for (let t = j; t < n; t++) norm[j]! += g ** (2 * (t - j));
  for (let sweep = 0; sweep < 3000; sweep++) {
    for (let j = 0; j < n; j++) {
      let num = 0;
      let k = 1;
      for (let t = j; t < n; t++, k *= g) num += k * res[t]!;
      const next = Math.max(0, s[j]! + (num - lambda) / norm[j]!);
      const delta = next - s[j]!;
      if (delta === 0) continue;
      s[j] = next;
      k = 1;
      for (let t = j; t < n; t++, k *= g) res[t]! -= k * delta;
    }
  }
  return s;
}

describe('oasisAR1', () => {
  it('reaches the optimum of the convex problem (λ = 0 and λ > 0) found by brute force', () => {
    const r = rng(11);
    for (let trial = 0; trial < 6; trial++) {
      const n = 25;
      const g = 0.6 + 0.35 * r();
      const y = new Float64Array(n);
      let c = 0.5 * r();
      for (let t = 0; t < n; t++) {
        c = g * c + (r() < 0.15 ? 1 + r() : 0);
        y[t] = c + 0.2 * gauss(r);
      }
      for (const lambda of [0, 0.3]) {
        const { c: cHat, s } = oasisAR1(y, g, lambda, 0);
        // OASIS reports s[0] = 0 with c[0] as the initial condition: fold it back into s for the objective.
        const sFull = Float64Array.from(s);
        sFull[0] = cHat[0]!;
        const brute = bruteForce(y, g, lambda);
        expect(Math.abs(objective(y, sFull, g, lambda) - objective(y, brute, g, lambda))).toBeLessThan(1e-6);
        for (let t = 1; t < n; t++) expect(s[t]).toBeGreaterThanOrEqual(0);
      }
    }
  });

  it('reproduces noise-free AR(1) calcium exactly and honours the event floor', () => {
    const g = 0.9;
    const n = 200;
    const truth = new Float64Array(n);
    let c = 0;
    for (let t = 0; t < n; t++) {
      c = g * c + (t % 37 === 5 ? 1 + (t % 3) * 0.5 : 0);
      truth[t] = c;
    }
    const { c: cHat, s } = oasisAR1(truth, g);
    for (let t = 0; t < n; t++) expect(cHat[t]).toBeCloseTo(truth[t]!, 9);
    for (let t = 1; t < n; t++) expect(s[t]).toBeCloseTo(t % 37 === 5 ? 1 + (t % 3) * 0.5 : 0, 9);
    // With a floor above the smallest spike (1.0) those spikes disappear, the larger ones stay ≥ the floor.
    const floored = oasisAR1(truth, g, 0, 1.2).s;
    for (let t = 1; t < n; t++) if (floored[t]! > 0) expect(floored[t]).toBeGreaterThanOrEqual(1.2);
    expect(floored.filter((v) => v > 0).length).toBeLessThan(s.filter((v) => v > 0).length);
  });
});

describe('deconvolve', () => {
  it('recovers a sparse spike train at low noise (σ = 0.1, all parameters estimated)', () => {
    const { calcium, y, spikeTimes } = simulate(1, 9000, 0.1);
    const d = deconvolve(y);
    expect(Math.abs(d.g - G)).toBeLessThan(0.02);
    expect(d.b).toBeGreaterThan(0.95);
    expect(d.b).toBeLessThan(1.05);
    expect(spikeCorrelation(d.s, spikeTimes, { frameRate: FPS, binSeconds: 0.1 })).toBeGreaterThan(0.9);
    expect(pearson(d.c, calcium)).toBeGreaterThan(0.95);
    // Events from s: about one per true spike (close spikes may merge into one event).
    const events = detectEvents(d.s, d.c, { frameRate: FPS });
    expect(events.length).toBeGreaterThan(0.85 * spikeTimes.length);
    expect(events.length).toBeLessThan(1.1 * spikeTimes.length);
  });

  it('recovers it at moderate noise (σ = 0.3, SNR ≈ 3) with the decay given as tauDecay', () => {
    const { calcium, y, spikeTimes } = simulate(2, 9000, 0.3);
    const d = deconvolve(y, { tauDecay: TAU, frameRate: FPS });
    expect(d.g).toBeCloseTo(G, 12);
    expect(d.sigma).toBeGreaterThan(0.27);
    expect(d.sigma).toBeLessThan(0.36);
    expect(d.sMin).toBeCloseTo(defaultSMin(d.sigma, G), 12);
    expect(spikeCorrelation(d.s, spikeTimes, { frameRate: FPS, binSeconds: 0.1 })).toBeGreaterThan(0.6);
    expect(pearson(d.c, calcium)).toBeGreaterThan(0.95);
  });

  it('estimates g from the autocovariance within 0.02 of the truth', () => {
    for (const seed of [3, 4]) {
      const { y } = simulate(seed, 9000, 0.2);
      expect(Math.abs(estimateDecay(y) - G)).toBeLessThan(0.02);
      expect(Math.abs(deconvolve(y).g - G)).toBeLessThan(0.02);
    }
  });

  it('takes the decay as a parameter: tauDecay 1.2 s at 15 Hz', () => {
    const { y } = simulate(5, 600, 0.1);
    const g = deconvolve(y, { tauDecay: 1.2, frameRate: 15 }).g;
    expect(g).toBeCloseTo(Math.exp(-1 / 18), 12);
    expect(decayFromTau(1.2, 15)).toBeCloseTo(0.94596, 5);
    expect(g).not.toBeCloseTo(deconvolve(y, { tauDecay: 0.7, frameRate: 15 }).g, 3);
    expect(deconvolve(y, { g: 0.8 }).g).toBe(0.8);
  });

  it('uses a given baseline, lambda and sMin as they are', () => {
    const { y } = simulate(6, 3000, 0.1, 2);
    const d = deconvolve(y, { baseline: 2, lambda: 0.05, sMin: 0.3, g: G, sigma: 0.1 });
    expect(d).toMatchObject({ b: 2, lambda: 0.05, sMin: 0.3, g: G, sigma: 0.1 });
    for (let t = 1; t < y.length; t++) if (d.s[t]! > 0) expect(d.s[t]).toBeGreaterThanOrEqual(0.3 - 1e-6);
  });

  it('handles empty, constant and invalid traces', () => {
    const empty = deconvolve(new Float32Array(0));
    expect(empty.c.length).toBe(0);
    expect(empty.s.length).toBe(0);
    const flat = deconvolve(new Float32Array(500).fill(3));
    expect(flat.b).toBeCloseTo(3, 9);
    expect(flat.sigma).toBe(0);
    expect(Array.from(flat.c).every((v) => v === 0)).toBe(true);
    expect(Array.from(flat.s).every((v) => v === 0)).toBe(true);
    expect(Number.isFinite(flat.g)).toBe(true);
    const single = deconvolve([5], { baseline: 1 });
    expect(single.c[0]).toBeCloseTo(4, 6);
    const bad = new Float32Array(100);
    bad[40] = NaN;
    expect(() => deconvolve(bad)).toThrow(/non-finite value \(NaN\) at frame 40/);
    expect(() => deconvolve([1, 2, 3], { tauDecay: 1 })).toThrow(/frameRate/);
    expect(() => deconvolve([1, 2, 3], { g: 1 })).toThrow(/g must be in/);
    expect(() => deconvolve([1, 2, 3], { lambda: -1 })).toThrow(/lambda/);
  });

  it('runs in linear time: 30,000 frames well under a second', () => {
    const { y } = simulate(7, 30000, 0.2);
    const t0 = performance.now();
    const d = deconvolve(y);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(d.c.length).toBe(30000);
  });
});
