/**
 * Noise level (standard deviation of the white measurement noise) of a trace. Pure (numerics on
 * typed arrays, no I/O).
 *
 * Default method 'psd' (CaImAn's GetSn): the Welch power spectrum (Hann windows of 256 frames, 50%
 * overlap, each segment's mean removed) averaged over the upper half of the spectrum, frequencies in
 * (0.25, 0.5] cycles per frame (0.5 = Nyquist). Calcium transients and drift are slow, so that band holds
 * almost only the white noise, whose power per bin is σ² there. We average the power with the plain
 * mean (unbiased for white noise) rather than CaImAn's default 'logmexp' (exp of the mean log power),
 * which is biased low by up to e^(−γ/2) ≈ 0.75 in σ when few segments are averaged.
 *
 * Alternative 'mad-diff': the median absolute deviation of first differences, × 1.4826 / √2. Robust to
 * rare large jumps, but slow signal leaks into it more than into the PSD band; used as the fallback for
 * traces too short for a spectrum (< 16 frames).
 */
import FFT from 'fft.js';
import { assertFinite, median, type TraceLike } from './util.ts';

/** Options of `estimateNoise`. */
export interface NoiseOptions {
  /** 'psd' (default) or 'mad-diff', see the file header. */
  method?: 'psd' | 'mad-diff';
  /** Band of the PSD average in cycles per frame, default [0.25, 0.5] (the upper half of the spectrum). */
  range?: [number, number];
  /** Welch segment length in frames (a power of two, default 256, shortened for short traces). */
  segment?: number;
}

/** Noise standard deviation of a trace (CaImAn GetSn-style PSD mean by default; 0 for constant or < 2 frames). */
export function estimateNoise(trace: TraceLike, opts: NoiseOptions = {}): number {
  assertFinite(trace);
  const n = trace.length;
  if (n < 2) return 0;
  if ((opts.method ?? 'psd') === 'mad-diff' || n < 16) return madDiffNoise(trace);
  const [fLo, fHi] = opts.range ?? [0.25, 0.5];
  if (!(fLo >= 0 && fHi <= 0.5 && fLo < fHi)) throw new Error(`noise range must satisfy 0 ≤ lo < hi ≤ 0.5 cycles/frame (got [${fLo}, ${fHi}])`);
  let seg = opts.segment ?? 256;
  if (!(seg >= 4 && (seg & (seg - 1)) === 0)) throw new Error(`segment must be a power of two ≥ 4 (got ${seg})`);
  while (seg > n) seg >>= 1;
  const step = seg >> 1;
  const win = new Float64Array(seg);
  let winPower = 0;
  for (let k = 0; k < seg; k++) {
    win[k] = 0.5 - 0.5 * Math.cos((2 * Math.PI * k) / seg); // periodic Hann, as scipy.signal.welch
    winPower += win[k]! * win[k]!;
  }
  const fft = new FFT(seg);
  const input = new Float64Array(seg);
  const spectrum = fft.createComplexArray();
  const kLo = Math.floor(fLo * seg) + 1; // bins with frequency k/seg in (lo, hi]
  const kHi = Math.floor(fHi * seg);
  if (kHi < kLo) return madDiffNoise(trace);
  const power = new Float64Array(kHi - kLo + 1);
  let segments = 0;
  for (let start = 0; start + seg <= n; start += step) {
    let mean = 0;
    for (let k = 0; k < seg; k++) mean += trace[start + k]!;
    mean /= seg;
    for (let k = 0; k < seg; k++) input[k] = (trace[start + k]! - mean) * win[k]!;
    fft.realTransform(spectrum, input);
    for (let k = kLo; k <= kHi; k++) {
      const re = spectrum[2 * k]!;
      const im = spectrum[2 * k + 1]!;
      power[k - kLo]! += re * re + im * im;
    }
    segments++;
  }
  // E|X_k|² = σ² Σ w² for white noise at every bin away from DC, so this is σ² per bin.
  let sum = 0;
  for (let j = 0; j < power.length; j++) sum += power[j]! / (segments * winPower);
  return Math.sqrt(sum / power.length);
}

/** Noise SD from the median absolute first difference: 1.4826 · MAD(diff) / √2 (robust to rare jumps). */
export function madDiffNoise(trace: TraceLike): number {
  assertFinite(trace);
  const n = trace.length;
  if (n < 2) return 0;
  const d = new Float64Array(n - 1);
  for (let i = 1; i < n; i++) d[i - 1] = trace[i]! - trace[i - 1]!;
  const m = median(d);
  for (let i = 0; i < d.length; i++) d[i] = Math.abs(d[i]! - m);
  return (1.4826 * median(d)) / Math.SQRT2;
}
