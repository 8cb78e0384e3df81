/**
 * Small shared helpers of the traces module: input checks, order statistics, Gaussian smoothing.
 * Pure (numerics on typed arrays, no I/O).
 */

/** A trace as any array of numbers (typed arrays included). */
export type TraceLike = ArrayLike<number>;

/** Throws a clear Error when `trace` holds a NaN or ±Infinity (`what` names it in the message). */
export function assertFinite(trace: TraceLike, what = 'trace'): void {
  for (let i = 0; i < trace.length; i++) {
    const v = trace[i]!;
    if (!Number.isFinite(v)) throw new Error(`${what} has a non-finite value (${v}) at frame ${i}; remove or interpolate NaN/Infinity frames first`);
  }
}

/** Throws unless `x` is a finite number > 0 (`what` names it). */
export function assertPositive(x: number, what: string): void {
  if (!(Number.isFinite(x) && x > 0)) throw new Error(`${what} must be a finite number > 0 (got ${x})`);
}

/** The q-th percentile (0–100, linear interpolation between order statistics) of `values`; NaN when empty. */
export function percentile(values: TraceLike, q: number): number {
  const n = values.length;
  if (n === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const pos = (Math.min(100, Math.max(0, q)) / 100) * (n - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(n - 1, lo + 1);
  return sorted[lo]! + (pos - lo) * (sorted[hi]! - sorted[lo]!);
}

/** The median of `values` (NaN when empty). */
export function median(values: TraceLike): number {
  return percentile(values, 50);
}

/** Reflect an out-of-range index into [0, n) (scipy.ndimage 'reflect' mode: d c b a | a b c d | d c b a). */
export function reflectIndex(i: number, n: number): number {
  if (n === 1) return 0;
  const period = 2 * n;
  let k = i % period;
  if (k < 0) k += period;
  return k < n ? k : period - 1 - k;
}

/**
 * Gaussian smoothing with standard deviation `sigma` frames (kernel truncated at 4 σ, reflected edges,
 * as scipy.ndimage.gaussian_filter1d). `sigma` ≤ 0 returns a copy.
 */
export function gaussianSmooth(trace: TraceLike, sigma: number): Float64Array {
  const n = trace.length;
  const out = Float64Array.from(trace);
  if (!(sigma > 0) || n === 0) return out;
  const radius = Math.max(1, Math.ceil(4 * sigma));
  const kernel = new Float64Array(2 * radius + 1);
  let sum = 0;
  for (let k = -radius; k <= radius; k++) sum += kernel[k + radius] = Math.exp(-(k * k) / (2 * sigma * sigma));
  for (let k = 0; k < kernel.length; k++) kernel[k]! /= sum;
  for (let i = 0; i < n; i++) {
    let acc = 0;
    if (i - radius >= 0 && i + radius < n) {
      for (let k = -radius; k <= radius; k++) acc += kernel[k + radius]! * trace[i + k]!;
    } else {
      for (let k = -radius; k <= radius; k++) acc += kernel[k + radius]! * trace[reflectIndex(i + k, n)]!;
    }
    out[i] = acc;
  }
  return out;
}
