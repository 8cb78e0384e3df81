/**
 * OASIS deconvolution of calcium traces under an AR(1) model (Friedrich, Zhou & Paninski 2017,
 * PLoS Comput Biol 13:e1005423). Pure (numerics on typed arrays, no I/O).
 *
 * Model: y_t = b + c_t + noise, c_t = g·c_{t−1} + s_t. OASIS solves
 *   min ½‖y − b − c‖² + λ‖s‖₁  subject to  s_t = 0 or s_t ≥ sMin (s_t ≥ 0 when sMin = 0)
 * with the pool-adjacent-violators active-set method: each new frame opens a pool (a stretch of c
 * that decays as v·g^k); while a pool's start jumps less than sMin above its predecessor's end the two
 * are merged (their least-squares amplitude is exact: v = Σ y·g^k / Σ g^2k). Every merge removes a
 * pool, so there are fewer than n merges: O(n) in all. λ enters as a shift of y (Σ s = (1−g)·Σ_{t<T} c_t + c_T).
 *
 * Defaults, each with its reason:
 * - σ: `estimateNoise` (PSD of the upper half of the spectrum), independent of the slow calcium.
 * - g: from the autocovariance (AR(1) least-squares fit of lags 1…L, lag 0 left out because white
 *   noise inflates only lag 0), clamped to [0.001, 0.999]; or exp(−1/(τ·frameRate)) from `tauDecay`.
 * - λ = 0 and sMin = `defaultSMin(σ, g)` = 2.5·√2·σ·√(1−g²): the paper's thresholded variant
 *   replaces ℓ1 shrinkage, which biases every amplitude down, by a hard floor on event size at 2.5
 *   SDs of a noise-only jump between two pools (on white noise that leaves < 0.2 spurious events per
 *   1,000 frames for g from 0.8 to 0.99, against ~40 with no floor at g = 0.95).
 * - b: 'estimate' alternates OASIS with the least-squares baseline b = mean(y − c) (five rounds at
 *   most), started from the 15th percentile plus 1.04 σ (where the 15th percentile of resting frames
 *   sits below their mean).
 *
 * Frame 0's s is 0 by convention (its c is the initial condition, spikes before the recording
 * included), as in CaImAn.
 */
import { estimateNoise } from './noise.ts';
import { assertFinite, percentile, type TraceLike } from './util.ts';

/** Options of `deconvolve`. Give `g`, or `tauDecay` with `frameRate` (`g` wins when both), or neither (g is then estimated). */
export interface DeconvolveOptions {
  /** AR(1) decay per frame, in (0, 1). */
  g?: number;
  /** Decay time constant in seconds (needs `frameRate`): g = exp(−1/(tauDecay·frameRate)). */
  tauDecay?: number;
  /** Frames per second (needed with `tauDecay`). */
  frameRate?: number;
  /** Noise SD of the trace (default: `estimateNoise`). */
  sigma?: number;
  /** ℓ1 sparsity penalty λ ≥ 0 (default 0: sparsity comes from `sMin`). */
  lambda?: number;
  /** Smallest non-zero event per frame (default `defaultSMin(sigma, g)`; 0 gives plain non-negative deconvolution). */
  sMin?: number;
  /** Baseline b: a number, or 'estimate' (default). */
  baseline?: number | 'estimate';
}

/** The result of `deconvolve`: denoised calcium `c` (baseline removed), activity `s` and the parameters used. */
export interface Deconvolution {
  c: Float32Array;
  s: Float32Array;
  b: number;
  g: number;
  sigma: number;
  lambda: number;
  sMin: number;
}

/** The decay per frame for a decay time constant in seconds at a frame rate: exp(−1/(τ·fps)). */
export function decayFromTau(tauDecay: number, frameRate: number): number {
  if (!(tauDecay > 0 && Number.isFinite(tauDecay))) throw new Error(`tauDecay must be a finite number of seconds > 0 (got ${tauDecay})`);
  if (!(frameRate > 0 && Number.isFinite(frameRate))) throw new Error(`frameRate must be a finite number > 0 (got ${frameRate})`);
  return Math.exp(-1 / (tauDecay * frameRate));
}

const G_MIN = 0.001;
const G_MAX = 0.999;

/**
 * AR(1) decay estimated from the autocovariance: least squares of a(k+1) = g·a(k) over lags 1…`lags`
 * (lag 0 left out: white noise inflates it alone), clamped to [0.001, 0.999]. A slow drift biases it
 * upwards: pass a detrended (ΔF/F) trace.
 */
export function estimateDecay(trace: TraceLike, lags = 10): number {
  assertFinite(trace);
  const n = trace.length;
  const L = Math.min(Math.max(2, Math.floor(lags)), n - 2);
  if (L < 2) return G_MIN;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += trace[i]!;
  mean /= n;
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) x[i] = trace[i]! - mean;
  const a = new Float64Array(L + 1);
  for (let k = 1; k <= L; k++) {
    let acc = 0;
    for (let i = k; i < n; i++) acc += x[i]! * x[i - k]!;
    a[k] = acc / n;
  }
  let num = 0;
  let den = 0;
  for (let k = 1; k < L; k++) {
    num += a[k]! * a[k + 1]!;
    den += a[k]! * a[k]!;
  }
  const g = num / den;
  if (!Number.isFinite(g) || g <= G_MIN || a[1]! <= 0) return G_MIN;
  return Math.min(G_MAX, g);
}

/**
 * Default event floor sMin = 2.5·√2·σ·√(1−g²). A long pool's amplitude v = Σ y·g^k / Σ g^2k has SD
 * σ·√(1−g²) under white noise; a jump v₂ − g^l·v₁ between two pools has at most √2 times that. 2.5 of
 * those SDs keeps noise-only events rare while a unit event stays well above the floor at SNR ≥ 2.
 * 0 when σ is 0.
 */
export function defaultSMin(sigma: number, g: number): number {
  return 2.5 * Math.SQRT2 * sigma * Math.sqrt(Math.max(0, 1 - g * g));
}

/** Plain OASIS AR(1) on a baseline-free trace: the pool algorithm with ℓ1 penalty `lambda` and event floor `sMin`. */
export function oasisAR1(y: TraceLike, g: number, lambda = 0, sMin = 0): { c: Float64Array; s: Float64Array } {
  const n = y.length;
  const c = new Float64Array(n);
  const s = new Float64Array(n);
  if (n === 0) return { c, s };
  const pv = new Float64Array(n); // Σ y_{t+k} g^k over the pool
  const pw = new Float64Array(n); // Σ g^2k
  const pg = new Float64Array(n); // g^length (underflows harmlessly to 0 for long pools)
  const pt = new Int32Array(n); // first frame
  const pl = new Int32Array(n); // length
  let i = -1;
  for (let t = 0; t < n; t++) {
    i++;
    pv[i] = y[t]! - lambda * (t === n - 1 ? 1 : 1 - g);
    pw[i] = 1;
    pg[i] = g;
    pt[i] = t;
    pl[i] = 1;
    // Merge backwards while the newest pool starts less than sMin above its predecessor's end.
    while (i > 0 && (pv[i - 1]! / pw[i - 1]!) * pg[i - 1]! + sMin > pv[i]! / pw[i]!) {
      const gl = pg[i - 1]!;
      pv[i - 1]! += pv[i]! * gl;
      pw[i - 1]! += pw[i]! * gl * gl;
      pg[i - 1] = gl * pg[i]!;
      pl[i - 1]! += pl[i]!;
      i--;
    }
  }
  for (let j = 0; j <= i; j++) {
    let v = Math.max(0, pv[j]! / pw[j]!);
    const end = pt[j]! + pl[j]!;
    for (let t = pt[j]!; t < end; t++) {
      c[t] = v;
      v *= g;
    }
  }
  for (let t = 1; t < n; t++) {
    const d = c[t]! - g * c[t - 1]!; // exactly 0 inside a pool (c[t] was computed as c[t−1]·g)
    s[t] = d > 0 ? d : 0;
  }
  return { c, s };
}

/** OASIS AR(1) deconvolution of a fluorescence trace: denoised calcium, inferred activity and the parameters used (see file header for defaults). */
export function deconvolve(y: TraceLike, opts: DeconvolveOptions = {}): Deconvolution {
  assertFinite(y);
  const n = y.length;
  const lambda = opts.lambda ?? 0;
  if (!(lambda >= 0 && Number.isFinite(lambda))) throw new Error(`lambda must be a finite number ≥ 0 (got ${lambda})`);
  if (opts.sigma !== undefined && !(opts.sigma >= 0 && Number.isFinite(opts.sigma))) throw new Error(`sigma must be a finite number ≥ 0 (got ${opts.sigma})`);
  if (opts.sMin !== undefined && !(opts.sMin >= 0 && Number.isFinite(opts.sMin))) throw new Error(`sMin must be a finite number ≥ 0 (got ${opts.sMin})`);
  if (typeof opts.baseline === 'number' && !Number.isFinite(opts.baseline)) throw new Error(`baseline must be finite (got ${opts.baseline})`);
  let g: number | undefined;
  if (opts.g !== undefined) {
    if (!(opts.g > 0 && opts.g < 1)) throw new Error(`g must be in (0, 1) (got ${opts.g})`);
    g = opts.g;
  } else if (opts.tauDecay !== undefined) {
    if (opts.frameRate === undefined) throw new Error('tauDecay needs frameRate to convert seconds to frames');
    g = decayFromTau(opts.tauDecay, opts.frameRate);
  }
  const sigma = opts.sigma ?? estimateNoise(y);
  if (n === 0) {
    return { c: new Float32Array(0), s: new Float32Array(0), b: typeof opts.baseline === 'number' ? opts.baseline : 0, g: g ?? G_MIN, sigma, lambda, sMin: opts.sMin ?? 0 };
  }
  g ??= estimateDecay(y);
  const sMin = opts.sMin ?? defaultSMin(sigma, g);
  const shifted = new Float64Array(n);
  const fit = (b: number): { c: Float64Array; s: Float64Array } => {
    for (let t = 0; t < n; t++) shifted[t] = y[t]! - b;
    return oasisAR1(shifted, g, lambda, sMin);
  };
  let b: number;
  let result: { c: Float64Array; s: Float64Array };
  if (typeof opts.baseline === 'number') {
    b = opts.baseline;
    result = fit(b);
  } else {
    b = percentile(y, 15) + 1.036 * sigma;
    result = fit(b);
    for (let iter = 0; iter < 5; iter++) {
      let acc = 0;
      for (let t = 0; t < n; t++) acc += y[t]! - result.c[t]!;
      const next = acc / n;
      const moved = Math.abs(next - b);
      b = next;
      result = fit(b);
      if (moved <= 1e-3 * sigma) break;
    }
  }
  return { c: Float32Array.from(result.c), s: Float32Array.from(result.s), b, g, sigma, lambda, sMin };
}
