/**
 * Small synthetic recordings with known answers for the calcium tests: discs (or any footprint)
 * with their own spike trains through an exponential kernel, a flat background, Gaussian noise and
 * optional integer motion. Deterministic (seeded).
 */
import type { Movie } from '../src/types.ts';

/** Seeded PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal draw. */
export const gaussian = (r: () => number): number => Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());

export interface SynthCell {
  cx: number;
  cy: number;
  /** Semi-axes (px); b defaults to a. */
  a: number;
  b?: number;
  theta?: number;
  brightness: number;
  /** Spikes per second (0: silent). */
  rate: number;
}

export interface SynthMovie extends Movie {
  cells: SynthCell[];
  /** Per cell, per frame: the noise-free calcium (relative, 0 at rest). */
  calcium: Float32Array[];
  spikeFrames: number[][];
  footprints: Float32Array[];
}

/** Renders cells with their own activity over a background, plus noise. */
export function synthMovie(opts: { width: number; height: number; frames: number; frameRate: number; tau: number; cells: SynthCell[]; noise: number; background: number; seed: number; amplitude?: number }): SynthMovie {
  const { width: W, height: H, frames: T } = opts;
  const r = rng(opts.seed);
  const g = Math.exp(-1 / (opts.tau * opts.frameRate));
  const footprints = opts.cells.map((c) => {
    const fp = new Float32Array(W * H);
    const b = c.b ?? c.a;
    const th = c.theta ?? 0;
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const dx = x - c.cx;
        const dy = y - c.cy;
        const u = (dx * Math.cos(th) + dy * Math.sin(th)) / c.a;
        const v = (-dx * Math.sin(th) + dy * Math.cos(th)) / b;
        const rho = Math.hypot(u, v);
        fp[x + y * W] = 1 / (1 + Math.exp((rho - 1) * 8));
      }
    return fp;
  });
  const spikeFrames: number[][] = [];
  const calcium = opts.cells.map((c) => {
    const ca = new Float32Array(T);
    const sp: number[] = [];
    let v = 0;
    for (let t = 0; t < T; t++) {
      v *= g;
      if (c.rate > 0 && r() < c.rate / opts.frameRate) {
        v += opts.amplitude ?? 1;
        sp.push(t);
      }
      ca[t] = v;
    }
    spikeFrames.push(sp);
    return ca;
  });
  const data = new Float32Array(W * H * T);
  for (let t = 0; t < T; t++)
    for (let i = 0; i < W * H; i++) {
      let v = opts.background;
      opts.cells.forEach((c, k) => {
        const w = footprints[k]![i]!;
        if (w > 1e-4) v += w * c.brightness * (1 + calcium[k]![t]!);
      });
      data[t * W * H + i] = v + opts.noise * gaussian(r);
    }
  return { width: W, height: H, frames: T, data, cells: opts.cells, calcium, spikeFrames, footprints };
}
