/**
 * Trace and spike scoring against ground truth: Pearson correlation of matched traces, and of
 * inferred activity with true spike times at a common time binning. Pure (numerics, no I/O).
 */

/** A matched pair of ROI ids (as `matchRois` returns). */
export interface IdPair {
  detected: number;
  truth: number;
}

/** Pearson correlation of two equal-length series; NaN when shorter than 2 or either is constant. */
export function pearson(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = a.length;
  if (b.length !== n) throw new Error(`pearson: lengths differ (${n} vs ${b.length})`);
  if (n < 2) return NaN;
  let ma = 0;
  let mb = 0;
  for (let i = 0; i < n; i++) {
    ma += a[i]!;
    mb += b[i]!;
  }
  ma /= n;
  mb /= n;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    const da = a[i]! - ma;
    const db = b[i]! - mb;
    sab += da * db;
    saa += da * da;
    sbb += db * db;
  }
  if (!(saa > 0 && sbb > 0)) return NaN;
  return Math.max(-1, Math.min(1, sab / Math.sqrt(saa * sbb)));
}

/** Median of the finite values (NaN when there are none). */
export function finiteMedian(values: ArrayLike<number>): number {
  const v: number[] = [];
  for (let i = 0; i < values.length; i++) if (Number.isFinite(values[i]!)) v.push(values[i]!);
  if (v.length === 0) return NaN;
  v.sort((x, y) => x - y);
  const m = v.length >> 1;
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

/** Per-match Pearson r between detected and true traces, and their median (NaN r — constant traces — are left out of the median). */
export function traceCorrelations(
  matches: readonly IdPair[],
  detectedTraces: ReadonlyMap<number, ArrayLike<number>>,
  truthTraces: ReadonlyMap<number, ArrayLike<number>>,
): { perMatch: { detected: number; truth: number; r: number }[]; median: number } {
  const perMatch = matches.map(({ detected, truth }) => {
    const a = detectedTraces.get(detected);
    const b = truthTraces.get(truth);
    if (!a) throw new Error(`traceCorrelations: no trace for detected ROI ${detected}`);
    if (!b) throw new Error(`traceCorrelations: no trace for truth ROI ${truth}`);
    if (a.length !== b.length) throw new Error(`traceCorrelations: detected ROI ${detected} has ${a.length} frames, truth ROI ${truth} has ${b.length}`);
    return { detected, truth, r: pearson(a, b) };
  });
  return { perMatch, median: finiteMedian(perMatch.map((m) => m.r)) };
}

/**
 * Number of bins of `binSeconds` covering `frames` frames at `frameRate` (the last bin may be partial;
 * a float tolerance keeps an exact multiple from growing a sliver bin).
 */
export function binCount(frames: number, frameRate: number, binSeconds: number): number {
  const duration = frames / frameRate;
  return Math.max(0, Math.ceil(duration / binSeconds - 1e-9));
}

/**
 * Per-frame activity re-binned in time: frame f covers [f/fps, (f+1)/fps) and its value is split
 * between the bins it overlaps in proportion to the overlap (so the sum is preserved).
 */
export function binFrames(values: ArrayLike<number>, opts: { frameRate: number; binSeconds: number }): Float64Array {
  const { frameRate, binSeconds } = opts;
  checkRates(frameRate, binSeconds);
  const n = values.length;
  const bins = new Float64Array(binCount(n, frameRate, binSeconds));
  for (let f = 0; f < n; f++) {
    const v = values[f]!;
    if (v === 0) continue;
    const t0 = f / frameRate;
    const t1 = (f + 1) / frameRate;
    // Start one bin early so float rounding at a shared edge never drops an overlap.
    for (let k = Math.max(0, Math.floor(t0 / binSeconds) - 1); k < bins.length && k * binSeconds < t1; k++) {
      const lo = Math.max(t0, k * binSeconds);
      const hi = Math.min(t1, (k + 1) * binSeconds);
      if (hi > lo) bins[k]! += v * (hi - lo) * frameRate;
    }
  }
  return bins;
}

/** Counts of spike times (seconds) per bin of `binSeconds` over the recording's `frames` frames; spikes outside [0, frames/fps) are ignored. */
export function binSpikeTimes(spikeTimes: readonly number[], opts: { frames: number; frameRate: number; binSeconds: number }): Float64Array {
  const { frames, frameRate, binSeconds } = opts;
  checkRates(frameRate, binSeconds);
  const bins = new Float64Array(binCount(frames, frameRate, binSeconds));
  const duration = frames / frameRate;
  for (const t of spikeTimes) {
    if (!(t >= 0 && t < duration)) continue;
    bins[Math.min(bins.length - 1, Math.floor(t / binSeconds))]! += 1;
  }
  return bins;
}

/**
 * Pearson r between inferred per-frame activity and true spike times binned alike (bins of
 * `binSeconds`, default max(0.04 s, one frame)); frames are spread over the bins they overlap.
 */
export function spikeCorrelation(
  inferred: ArrayLike<number>,
  truthSpikeTimes: readonly number[],
  opts: { frameRate: number; binSeconds?: number },
): number {
  const binSeconds = opts.binSeconds ?? Math.max(0.04, 1 / opts.frameRate);
  const a = binFrames(inferred, { frameRate: opts.frameRate, binSeconds });
  const b = binSpikeTimes(truthSpikeTimes, { frames: inferred.length, frameRate: opts.frameRate, binSeconds });
  return pearson(a, b);
}

function checkRates(frameRate: number, binSeconds: number): void {
  if (!(frameRate > 0 && Number.isFinite(frameRate))) throw new Error(`frameRate must be a finite number > 0 (got ${frameRate})`);
  if (!(binSeconds > 0 && Number.isFinite(binSeconds))) throw new Error(`binSeconds must be a finite number > 0 (got ${binSeconds})`);
}
