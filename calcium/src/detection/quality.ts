/**
 * Per-ROI quality measures and the soma / not-soma decision (people can override it in the
 * workspace). A soma is a compact, roundish blob of about the expected size whose trace has
 * positive transients; dendrites are long and thin, vessels darker than the neuropil around them (their lumen holds
 * no indicator; red blood cells streaming through make it flicker), noise has no skew.
 * Pure (CPU only).
 */
import type { DetectedRoi } from './detect.ts';

export interface RoiQuality {
  /** Peak of the ΔF/F trace over its noise SD (from the trace's own high frequencies). */
  snr: number;
  /** Skewness of the neuropil-corrected trace (calcium transients make it positive). */
  skewness: number;
  compactness: number;
  elongation: number;
  area: number;
  /** Area / the area of a disc of the expected diameter. */
  relativeArea: number;
  /**
   * Median raw F of the ROI over the median of its neuropil annulus, both above the recording's
   * dark level (the mean image's 1st percentile): a vessel's lumen is darker than what surrounds
   * it, a soma is not.
   */
  contrast: number;
}

export interface SomaRule {
  minCompactness: number;
  maxElongation: number;
  minRelativeArea: number;
  maxRelativeArea: number;
  /** Active ROIs need at least this skewness (anatomical ones are kept as silent cells). */
  minSkewness: number;
  /** ROIs darker than this fraction of their surroundings are vessels, not somata. */
  minContrast: number;
}

export const DEFAULT_SOMA_RULE: Readonly<SomaRule> = Object.freeze({
  minCompactness: 0.55,
  maxElongation: 2.5,
  minRelativeArea: 0.25,
  maxRelativeArea: 3,
  minSkewness: 0.2,
  minContrast: 0.75,
});

/** Sample skewness of a trace (0 for fewer than 3 values or no spread). */
export function skewness(x: ArrayLike<number>): number {
  const n = x.length;
  if (n < 3) return 0;
  let m = 0;
  for (let i = 0; i < n; i++) m += x[i]!;
  m /= n;
  let m2 = 0;
  let m3 = 0;
  for (let i = 0; i < n; i++) {
    const d = x[i]! - m;
    m2 += d * d;
    m3 += d * d * d;
  }
  m2 /= n;
  m3 /= n;
  return m2 > 0 ? m3 / m2 ** 1.5 : 0;
}

/** The median of a trace (0 when empty). */
function median(x: ArrayLike<number>): number {
  if (!x.length) return 0;
  const s = Float32Array.from(x as ArrayLike<number>).sort();
  return s[s.length >> 1]!;
}

/** Quality of one ROI from its shape, its raw and neuropil traces, its corrected trace and its ΔF/F with noise SD. */
export function roiQuality(roi: DetectedRoi, raw: { f: Float32Array; neuropil: Float32Array; floor?: number }, corrected: Float32Array, dff: Float32Array, dffNoise: number, diameter: number): RoiQuality {
  // Brightness above the recording's dark level (an offset of the detector would pull every ratio towards 1).
  const floor = raw.floor ?? 0;
  const fneu = median(raw.neuropil) - floor;
  let peak = -Infinity;
  for (const v of dff) if (v > peak) peak = v;
  return {
    snr: dffNoise > 0 && Number.isFinite(peak) ? peak / dffNoise : 0,
    skewness: skewness(corrected),
    compactness: roi.compactness,
    elongation: roi.elongation,
    area: roi.area,
    relativeArea: roi.area / (Math.PI * (diameter / 2) ** 2),
    contrast: fneu > 0 ? (median(raw.f) - floor) / fneu : 1,
  };
}

/** The soma decision and, when it says no, why (for the person who may override it). */
export function somaDecision(q: RoiQuality, source: DetectedRoi['source'], rule: SomaRule = DEFAULT_SOMA_RULE): { isCell: boolean; reason?: string } {
  if (q.compactness < rule.minCompactness) return { isCell: false, reason: `not compact (${q.compactness.toFixed(2)} < ${rule.minCompactness})` };
  if (q.elongation > rule.maxElongation) return { isCell: false, reason: `elongated like a dendrite (${q.elongation.toFixed(1)} : 1)` };
  if (q.relativeArea < rule.minRelativeArea) return { isCell: false, reason: `smaller than a soma (${(q.relativeArea * 100).toFixed(0)} % of the expected area)` };
  if (q.relativeArea > rule.maxRelativeArea) return { isCell: false, reason: `larger than a soma (${q.relativeArea.toFixed(1)}× the expected area)` };
  if (q.contrast < rule.minContrast) return { isCell: false, reason: `darker than its surroundings, like a blood vessel (${(q.contrast * 100).toFixed(0)} %)` };
  if (source === 'activity' && q.skewness < rule.minSkewness) return { isCell: false, reason: `no transients (skewness ${q.skewness.toFixed(2)})` };
  return { isCell: true };
}
