/**
 * Turns the binned movie into an "activity movie" in which cells stand out and nothing else does
 * (the preprocessing Suite2p's detection runs before looking for cells): the global signal
 * (bleaching, the neuropil's shared fluctuation: the median pixel's time course) is regressed out of every pixel, slow drift is
 * removed by subtracting a running mean, and each pixel is divided by its noise level (from
 * successive differences), so that correlations and averages weigh every pixel alike.
 * Pure (CPU only).
 */
import type { Movie } from '../types.ts';

export interface ActivityOptions {
  /** Running-mean window for the high-pass, in bins (default: 30, at most the movie). */
  highPassBins?: number;
}

/** The activity movie plus each pixel's noise SD (to turn its values back into raw units). */
export interface Activity extends Movie {
  noiseSd: Float32Array;
}

/** The preprocessed activity movie (same size as `binned`, new buffer). */
export function activityMovie(binned: Movie, opts: ActivityOptions = {}): Activity {
  const { width: W, height: H, frames: T } = binned;
  const n = W * H;
  const out = Float32Array.from(binned.data);
  // Global signal: the median pixel of each bin (of a strided sample), centred. The median is the
  // neuropil and bleaching that every pixel shares; unlike the mean, it does not follow cells,
  // which cover a minority of pixels — with few cells in view the mean *is* their activity.
  const g = new Float64Array(T);
  const stride = Math.max(1, Math.floor(n / 16384));
  const sample = new Float64Array(Math.ceil(n / stride));
  for (let t = 0; t < T; t++) {
    const o = t * n;
    let k = 0;
    for (let i = 0; i < n; i += stride) sample[k++] = out[o + i]!;
    const sorted = sample.subarray(0, k).sort();
    g[t] = k % 2 ? sorted[k >> 1]! : (sorted[(k >> 1) - 1]! + sorted[k >> 1]!) / 2;
  }
  const gm = g.reduce((a, b) => a + b, 0) / Math.max(1, T);
  let gg = 0;
  for (let t = 0; t < T; t++) {
    g[t]! -= gm;
    gg += g[t]! * g[t]!;
  }
  const win = Math.max(3, Math.min(T, Math.round(opts.highPassBins ?? 30)));
  const x = new Float64Array(T);
  const cum = new Float64Array(T + 1);
  const noiseSd = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let m = 0;
    for (let t = 0; t < T; t++) m += x[t] = out[t * n + i]!;
    m /= Math.max(1, T);
    let xg = 0;
    for (let t = 0; t < T; t++) {
      x[t]! -= m;
      xg += x[t]! * g[t]!;
    }
    const beta = gg > 0 ? xg / gg : 0;
    for (let t = 0; t < T; t++) x[t]! -= beta * g[t]!;
    // High-pass: subtract the running mean over `win` bins (centred, shrinking at the ends).
    if (win < T) {
      cum[0] = 0;
      for (let t = 0; t < T; t++) cum[t + 1] = cum[t]! + x[t]!;
      const h = win >> 1;
      for (let t = 0; t < T; t++) {
        const a = Math.max(0, t - h);
        const b = Math.min(T, t + h + 1);
        out[t * n + i] = x[t]! - (cum[b]! - cum[a]!) / (b - a);
      }
    } else for (let t = 0; t < T; t++) out[t * n + i] = x[t]!;
    // Noise from successive differences (robust to slow signal).
    let d2 = 0;
    for (let t = 1; t < T; t++) {
      const d = out[t * n + i]! - out[(t - 1) * n + i]!;
      d2 += d * d;
    }
    const sd = T > 1 ? Math.sqrt(d2 / (2 * (T - 1))) : 0;
    noiseSd[i] = sd;
    const k = sd > 1e-9 ? 1 / sd : 0;
    for (let t = 0; t < T; t++) out[t * n + i]! *= k;
  }
  return { width: W, height: H, frames: T, data: out, noiseSd };
}
