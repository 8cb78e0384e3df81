/**
 * Renders frames of the synthetic recording from its ground truth (`calcium-sim.ts`): expected
 * photons = drift · transmission · (neuropil · (1 + activity) + Σ f0 · footprint · (1 + ΔF/F)),
 * shifted rigidly by the frame's motion, then shot noise (Poisson; normal approximation above 10
 * photons, normals from a quantile table) through the detector (gain, offset, Gaussian read noise) into uint16 ADU. Each frame
 * draws from its own seeded stream, so any frame renders identically on its own. Pure (CPU only).
 */
import type { CalciumTruth } from './calcium-sim.ts';
import { mulberry32, mulberry32Fill } from '@plexus/shared';
import { normalTable, subSeed } from './rand.ts';

/** Per-pixel running sum and maximum over rendered frames (for the mean and max projections). */
export interface Projections {
  sum: Float64Array;
  max: Uint16Array;
}

export type FrameRenderer = (frame: number, out: Uint16Array, offset?: number, projections?: Projections) => void;

/**
 * Prepares the static parts once; the returned function writes frame `frame` (x fastest) at
 * `offset` and, when given, adds it to `projections` (in the same pass: a second pass over 59 M
 * pixels costs as much again).
 */
export function frameRenderer(truth: CalciumTruth): FrameRenderer {
  const { width: W, height: H, gain, offset: adcOffset, readNoise, seed } = truth.params;
  const n = W * H;
  const neuropil = new Float32Array(n);
  const base = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    neuropil[i] = truth.transmission[i]! * truth.neuropil[i]!;
    base[i] = neuropil[i]!;
  }
  // Sparse neuron footprints with transmission and brightness folded in.
  const sparse = truth.neurons.map((nr) => {
    const fp = nr.footprint;
    const idx: number[] = [];
    const val: number[] = [];
    for (let y = 0; y < fp.height; y++)
      for (let x = 0; x < fp.width; x++) {
        const w = fp.weights[x + y * fp.width]!;
        if (w <= 0) continue;
        const p = fp.x0 + x + (fp.y0 + y) * W;
        idx.push(p);
        val.push(truth.transmission[p]! * nr.f0 * w);
      }
    for (let k = 0; k < idx.length; k++) base[idx[k]!]! += val[k]!;
    return { idx: Int32Array.from(idx), val: Float32Array.from(val), dff: nr.dff };
  });
  const expected = new Float32Array(n);
  const random = new Uint32Array(n);
  const column = new Int32Array(W);
  const readVar = readNoise * readNoise;
  const g2 = gain * gain;
  const normal = normalTable();

  return (f, out, at = 0, projections) => {
    const act = truth.neuropilActivity[f]!;
    for (let i = 0; i < n; i++) expected[i] = base[i]! + act * neuropil[i]!;
    for (const s of sparse) {
      const d = s.dff[f]!;
      if (d === 0) continue;
      for (let k = 0; k < s.idx.length; k++) expected[s.idx[k]!]! += d * s.val[k]!;
    }
    const drift = truth.drift[f]!;
    const dx = truth.shifts[2 * f]!;
    const dy = truth.shifts[2 * f + 1]!;
    for (let x = 0; x < W; x++) column[x] = Math.min(W - 1, Math.max(0, x - dx));
    // One random 32-bit number per pixel (its high 16 bits pick a normal); a second stream only
    // for the few pixels that need an exact Poisson draw.
    mulberry32Fill(subSeed(seed, 100_000 + f), random);
    let few: (() => number) | null = null;
    for (let y = 0; y < H; y++) {
      const row = Math.min(H - 1, Math.max(0, y - dy)) * W;
      const o = at + y * W;
      for (let x = 0; x < W; x++) {
        const lambda = drift * expected[row + column[x]!]!;
        const z = normal[random[x + y * W]! >>> 16]!;
        let adu: number;
        if (lambda < 10) {
          // Exact Poisson (Knuth) where photons are few: the vessel's shadow, dim neuropil.
          few ??= mulberry32(subSeed(seed, 200_000 + f));
          const limit = Math.exp(-lambda);
          let k = 0;
          for (let p = few(); p > limit; p *= few()) k++;
          adu = adcOffset + gain * k + readNoise * z;
        } else adu = adcOffset + gain * lambda + Math.sqrt(g2 * lambda + readVar) * z;
        out[o + x] = adu <= 0 ? 0 : adu >= 65535 ? 65535 : (adu + 0.5) | 0;
      }
    }
    if (projections) {
      const { sum, max } = projections;
      for (let i = 0; i < n; i++) {
        const v = out[at + i]!;
        sum[i]! += v;
        if (v > max[i]!) max[i] = v;
      }
    }
  };
}
