/**
 * Running baselines (F0) of fluorescence traces and ΔF/F. Pure (numerics on typed arrays, no I/O).
 *
 * Two baselines:
 * - "maximin" (Suite2p): Gaussian smoothing, then a running minimum, then a running maximum over the
 *   same window. The minimum finds the floor under transients; the maximum undoes the minimum's
 *   downward bias where the floor is flat (a morphological opening of the smoothed trace).
 * - running percentile (e.g. the 8th over 60 s), exact, in O(n log n) with a Fenwick tree over the
 *   ranks of the values (each frame enters and leaves the window once; each query is a rank descent).
 *
 * Windows are given in frames at this level and in seconds (converted with the frame rate) by
 * `baseline` / `dff`. Both baselines sit slightly below the true resting level when the trace is
 * noisy (a low order statistic of noise is negative); the pre-smoothing keeps that bias small.
 */
import { assertFinite, assertPositive, gaussianSmooth, median, type TraceLike } from './util.ts';

/**
 * Running minimum (or maximum) over a window of `window` frames, truncated at the edges, O(n)
 * (monotone deque). The window of frame i is [i − before, i + window − 1 − before], `before` =
 * ⌊window / 2⌋ by default (scipy.ndimage centring).
 */
export function runningExtreme(trace: TraceLike, window: number, kind: 'min' | 'max', before?: number): Float64Array {
  const n = trace.length;
  const out = new Float64Array(n);
  const w = Math.max(1, Math.floor(window));
  const lead = before ?? Math.floor(w / 2);
  if (!(Number.isInteger(lead) && lead >= 0 && lead < w)) throw new Error(`before must be an integer in [0, window) (got ${before})`);
  const after = w - 1 - lead;
  const sign = kind === 'min' ? 1 : -1;
  const deque = new Int32Array(n);
  let head = 0;
  let tail = 0; // deque[head..tail) holds indices with increasing sign·value
  let next = 0; // next index to push
  for (let i = 0; i < n; i++) {
    const hi = Math.min(n - 1, i + after);
    while (next <= hi) {
      const v = sign * trace[next]!;
      while (tail > head && sign * trace[deque[tail - 1]!]! >= v) tail--;
      deque[tail++] = next++;
    }
    const lo = i - lead;
    while (deque[head]! < lo) head++;
    out[i] = trace[deque[head]!]!;
  }
  return out;
}

/**
 * Suite2p "maximin" baseline: Gaussian smoothing (σ in frames), running min then running max over
 * `window` frames. Exact on monotone stretches longer than the window; within half a window of either
 * end it is flat (the opening cannot extrapolate).
 */
export function maximin(trace: TraceLike, opts: { sigma: number; window: number }): Float32Array {
  assertFinite(trace);
  const smooth = gaussianSmooth(trace, opts.sigma);
  const w = Math.max(1, Math.floor(opts.window));
  const low = runningExtreme(smooth, w, 'min');
  // The max pass uses the mirrored window so that even windows do not shift the result by a frame
  // (an opening with a symmetric structuring element: exact on monotone stretches).
  return Float32Array.from(runningExtreme(low, w, 'max', w - 1 - Math.floor(w / 2)));
}

/**
 * Exact running q-th percentile (0–100, linear interpolation) over a centred window of `window`
 * frames (truncated at the edges), O(n log n).
 */
export function runningPercentile(trace: TraceLike, opts: { window: number; percentile: number }): Float32Array {
  assertFinite(trace);
  const n = trace.length;
  const out = new Float32Array(n);
  if (n === 0) return out;
  const w = Math.max(1, Math.floor(opts.window));
  const q = Math.min(100, Math.max(0, opts.percentile)) / 100;
  // Ranks: frame i's value is sorted[rank[i]]; ties get distinct ranks (stable), which is harmless.
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((a, b) => trace[a]! - trace[b]! || a - b);
  const rank = new Int32Array(n);
  const sorted = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    rank[order[r]!] = r;
    sorted[r] = trace[order[r]!]!;
  }
  const tree = new Int32Array(n + 1); // Fenwick tree of counts over ranks (1-based)
  const add = (r: number, d: number): void => {
    for (let j = r + 1; j <= n; j += j & -j) tree[j]! += d;
  };
  let topBit = 1;
  while (topBit * 2 <= n) topBit *= 2;
  /** Value of the k-th smallest (0-based) element in the window. */
  const kth = (k: number): number => {
    let pos = 0;
    let rem = k + 1;
    for (let step = topBit; step > 0; step >>= 1) {
      const nx = pos + step;
      if (nx <= n && tree[nx]! < rem) {
        pos = nx;
        rem -= tree[nx]!;
      }
    }
    return sorted[pos]!; // pos is the 0-based rank
  };
  const before = Math.floor(w / 2);
  const after = w - 1 - before;
  let lo = 0; // window is [lo, hi]
  let hi = -1;
  for (let i = 0; i < n; i++) {
    const newHi = Math.min(n - 1, i + after);
    while (hi < newHi) add(rank[++hi]!, 1);
    const newLo = Math.max(0, i - before);
    while (lo < newLo) add(rank[lo++]!, -1);
    const count = hi - lo + 1;
    const pos = q * (count - 1);
    const k = Math.floor(pos);
    const a = kth(k);
    out[i] = pos > k ? a + (pos - k) * (kth(k + 1) - a) : a;
  }
  return out;
}

/** Options of `baseline` and `dff`: windows in seconds, converted to frames with `frameRate`. */
export interface BaselineOptions {
  /** Frames per second of the trace. */
  frameRate: number;
  /** 'maximin' (Suite2p, default) or 'percentile' (running percentile of the smoothed trace). */
  method?: 'maximin' | 'percentile';
  /** Length of the running window in seconds (default 60; it should be several times the longest transient). */
  windowSeconds?: number;
  /**
   * σ of the Gaussian pre-smoothing in seconds (default 0.5; Suite2p uses 10 frames, 1/3 s at 30 Hz).
   * It cuts the noise under the running minimum / low percentile, hence the baseline's downward bias.
   * 0 turns smoothing off.
   */
  sigmaSeconds?: number;
  /** Percentile of the 'percentile' method (default 8). */
  percentile?: number;
}

/** The running baseline F0 of a fluorescence trace (windows in seconds, see `BaselineOptions`). */
export function baseline(trace: TraceLike, opts: BaselineOptions): Float32Array {
  assertPositive(opts.frameRate, 'frameRate');
  const windowSeconds = opts.windowSeconds ?? 60;
  assertPositive(windowSeconds, 'windowSeconds');
  const sigmaSeconds = opts.sigmaSeconds ?? 0.5;
  if (!(sigmaSeconds >= 0)) throw new Error(`sigmaSeconds must be ≥ 0 (got ${sigmaSeconds})`);
  const window = Math.max(1, Math.round(windowSeconds * opts.frameRate));
  const sigma = sigmaSeconds * opts.frameRate;
  if ((opts.method ?? 'maximin') === 'maximin') return maximin(trace, { sigma, window });
  assertFinite(trace);
  return runningPercentile(gaussianSmooth(trace, sigma), { window, percentile: opts.percentile ?? 8 });
}

/** Options of `dff`: those of `baseline` plus the floor F0 is clamped to. */
export interface DffOptions extends BaselineOptions {
  /**
   * F0 is clamped to at least this value before dividing, so ΔF/F never divides by ~0 or by a
   * negative baseline. Default: 1% of the median |F| of the trace (1e-12 when that is 0). Traces that
   * can reach 0 (neuropil-subtracted F) should get an offset or an explicit floor: their ΔF/F is
   * otherwise dominated by the clamp.
   */
  minBaseline?: number;
}

/** ΔF/F = (F − F0) / max(F0, floor) with F0 the running baseline (see `DffOptions.minBaseline` for the floor). */
export function dff(trace: TraceLike, opts: DffOptions): Float32Array {
  const f0 = baseline(trace, opts);
  const n = trace.length;
  let floor = opts.minBaseline;
  if (floor === undefined) {
    const abs = new Float64Array(n);
    for (let i = 0; i < n; i++) abs[i] = Math.abs(trace[i]!);
    const m = n ? median(abs) : 0;
    floor = m > 0 ? 0.01 * m : 1e-12;
  } else if (!(floor > 0)) throw new Error(`minBaseline must be > 0 (got ${floor})`);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const b = Math.max(f0[i]!, floor);
    out[i] = (trace[i]! - f0[i]!) / b;
  }
  return out;
}
