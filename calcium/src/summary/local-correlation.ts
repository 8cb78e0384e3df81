/**
 * Local-correlation image (CaImAn's `local_correlations`): for each pixel, the mean Pearson
 * correlation of its time course with those of its 8 neighbours. Cells light up because their
 * pixels share one signal; noise and a static background stay near 0. Computed in one pass over
 * the frames of a movie held in memory (normally the binned movie). Pure (CPU only).
 */
import type { Image, Movie } from '../types.ts';

/** The local-correlation image of `movie` (values in [−1, 1]). */
export function localCorrelation(movie: Movie): Image {
  const { width: W, height: H, frames: T, data } = movie;
  const n = W * H;
  const mean = new Float64Array(n);
  for (let t = 0; t < T; t++) {
    const o = t * n;
    for (let i = 0; i < n; i++) mean[i]! += data[o + i]!;
  }
  for (let i = 0; i < n; i++) mean[i]! /= Math.max(1, T);
  const sd = new Float64Array(n);
  // Products with 4 neighbours (right, down-left, down, down-right); the other 4 are symmetric.
  const OFFS = [[1, 0], [-1, 1], [0, 1], [1, 1]] as const;
  const prod = OFFS.map(() => new Float64Array(n));
  for (let t = 0; t < T; t++) {
    const o = t * n;
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const i = x + y * W;
        const a = data[o + i]! - mean[i]!;
        sd[i]! += a * a;
        for (let k = 0; k < 4; k++) {
          const nx = x + OFFS[k]![0];
          const ny = y + OFFS[k]![1];
          if (nx < 0 || nx >= W || ny >= H) continue;
          const j = nx + ny * W;
          prod[k]![i]! += a * (data[o + j]! - mean[j]!);
        }
      }
  }
  for (let i = 0; i < n; i++) sd[i] = Math.sqrt(sd[i]!);
  const sum = new Float64Array(n);
  const cnt = new Uint8Array(n);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const i = x + y * W;
      for (let k = 0; k < 4; k++) {
        const nx = x + OFFS[k]![0];
        const ny = y + OFFS[k]![1];
        if (nx < 0 || nx >= W || ny >= H) continue;
        const j = nx + ny * W;
        const den = sd[i]! * sd[j]!;
        const r = den > 0 ? prod[k]![i]! / den : 0;
        sum[i]! += r;
        sum[j]! += r;
        cnt[i]!++;
        cnt[j]!++;
      }
    }
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = cnt[i] ? sum[i]! / cnt[i]! : 0;
  return { width: W, height: H, data: out };
}
