/**
 * ROI detection scoring against ground truth: IoU of pixel sets, one-to-one matching that maximises
 * IoU (Hungarian, pairs below the IoU threshold forbidden), precision / recall / F1, and the same
 * figures restricted to high-SNR ground-truth cells. Pure (numerics on typed arrays, no I/O).
 *
 * IoU is computed sparsely: an inverted index maps each frame pixel to the truth ROIs covering it, so
 * only pairs that actually share a pixel are ever scored (cost ∝ total detected pixels × overlap depth).
 */
import type { Roi } from '../types.ts';
import { sparseAssignment } from './hungarian.ts';

/** Options of `matchRois` / `overlapPairs`. */
export interface MatchOptions {
  width: number;
  height: number;
  /** Pairs with IoU below this are never matched (default 0.5). */
  iouThreshold?: number;
  /** Keep only pixels whose weight is ≥ this (default: every pixel listed in the ROI counts). */
  binarize?: number;
  /** Peak SNR per truth id: adds the `highSnr` figures (truth ids missing from the map count as low-SNR). */
  truthSnr?: ReadonlyMap<number, number>;
  /** SNR at or above which a truth cell is high-SNR (default 5). */
  snrThreshold?: number;
}

/** One matched pair, by ROI id. */
export interface RoiMatch {
  detected: number;
  truth: number;
  iou: number;
}

/** Precision / recall / F1 restricted to high-SNR truth cells (see `matchRois`). */
export interface HighSnrScore {
  snrThreshold: number;
  /** Truth cells with SNR ≥ threshold. */
  truthHigh: number;
  /** Detections matched to high-SNR truth cells. */
  matchedHigh: number;
  /** Detections matched to low-SNR truth cells (left out of the precision denominator). */
  matchedLow: number;
  precision: number;
  recall: number;
  f1: number;
}

/** The result of `matchRois`. Ratios with a zero denominator are 0 (as scikit-learn's zero_division=0). */
export interface RoiMatchResult {
  matches: RoiMatch[];
  unmatchedDetected: number[];
  unmatchedTruth: number[];
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  precision: number;
  recall: number;
  f1: number;
  /** Mean IoU over the matches (0 when none). */
  meanIou: number;
  highSnr?: HighSnrScore;
}

/** A pair of ROIs (by index into the input lists) that share at least one pixel, with their IoU. */
export interface OverlapPair {
  detected: number;
  truth: number;
  intersection: number;
  iou: number;
}

/** Every (detected, truth) pair sharing a pixel, with its IoU, found through a pixel → truth-ROI index. */
export function overlapPairs(detected: readonly Roi[], truth: readonly Roi[], opts: Pick<MatchOptions, 'width' | 'height' | 'binarize'>): OverlapPair[] {
  const { width, height } = opts;
  if (!(Number.isInteger(width) && Number.isInteger(height) && width > 0 && height > 0)) throw new Error(`width and height must be positive integers (got ${width} × ${height})`);
  const size = width * height;
  const det = detected.map((r) => pixelSet(r, size, opts.binarize));
  const tru = truth.map((r) => pixelSet(r, size, opts.binarize));
  // CSR index: pixel → truth ROIs covering it.
  const start = new Int32Array(size + 1);
  for (const px of tru) for (let k = 0; k < px.length; k++) start[px[k]! + 1]!++;
  for (let p = 0; p < size; p++) start[p + 1]! += start[p]!;
  const owners = new Int32Array(start[size]!);
  const fill = start.slice(0, size);
  tru.forEach((px, t) => {
    for (let k = 0; k < px.length; k++) owners[fill[px[k]!]!++] = t;
  });
  const counts = new Int32Array(truth.length);
  const touched: number[] = [];
  const pairs: OverlapPair[] = [];
  det.forEach((px, d) => {
    for (let k = 0; k < px.length; k++) {
      const p = px[k]!;
      for (let q = start[p]!; q < start[p + 1]!; q++) {
        const t = owners[q]!;
        if (counts[t]++ === 0) touched.push(t);
      }
    }
    for (const t of touched) {
      const inter = counts[t]!;
      pairs.push({ detected: d, truth: t, intersection: inter, iou: inter / (px.length + tru[t]!.length - inter) });
      counts[t] = 0;
    }
    touched.length = 0;
  });
  return pairs;
}

/**
 * Matches detected ROIs to truth ROIs one-to-one, maximising total IoU with pairs below `iouThreshold`
 * forbidden (most matches first, then highest IoU), and scores them. With `truthSnr`, `highSnr`
 * holds: recall over truth cells with SNR ≥ threshold; precision = matched-to-high / (detections −
 * matched-to-low); F1 of those two.
 */
export function matchRois(detected: readonly Roi[], truth: readonly Roi[], opts: MatchOptions): RoiMatchResult {
  const iouThreshold = opts.iouThreshold ?? 0.5;
  if (!(iouThreshold > 0 && iouThreshold <= 1)) throw new Error(`iouThreshold must be in (0, 1] (got ${iouThreshold})`);
  checkIds(detected, 'detected');
  checkIds(truth, 'truth');
  const candidates = overlapPairs(detected, truth, opts).filter((p) => p.iou >= iouThreshold);
  const assignment = sparseAssignment(
    detected.length,
    truth.length,
    candidates.map((p) => ({ row: p.detected, col: p.truth, cost: 1 - p.iou })),
  );
  const iouOf = new Map<number, number>();
  for (const p of candidates) iouOf.set(p.detected * truth.length + p.truth, p.iou);
  const matches: RoiMatch[] = [];
  const unmatchedDetected: number[] = [];
  for (let d = 0; d < detected.length; d++) {
    const t = assignment.rowToCol[d]!;
    if (t < 0) unmatchedDetected.push(detected[d]!.id);
    else matches.push({ detected: detected[d]!.id, truth: truth[t]!.id, iou: iouOf.get(d * truth.length + t)! });
  }
  const unmatchedTruth: number[] = [];
  for (let t = 0; t < truth.length; t++) if (assignment.colToRow[t]! < 0) unmatchedTruth.push(truth[t]!.id);
  const tp = matches.length;
  const precision = ratio(tp, detected.length);
  const recall = ratio(tp, truth.length);
  const result: RoiMatchResult = {
    matches,
    unmatchedDetected,
    unmatchedTruth,
    truePositives: tp,
    falsePositives: detected.length - tp,
    falseNegatives: truth.length - tp,
    precision,
    recall,
    f1: f1Score(precision, recall),
    meanIou: tp ? matches.reduce((acc, m) => acc + m.iou, 0) / tp : 0,
  };
  if (opts.truthSnr) result.highSnr = highSnrScore(matches, detected.length, truth, opts.truthSnr, opts.snrThreshold ?? 5);
  return result;
}

/** High-SNR precision / recall / F1 of a matching (definition in `matchRois`); truth ids missing from `truthSnr` count as low-SNR. */
export function highSnrScore(
  matches: readonly RoiMatch[],
  detectedCount: number,
  truth: readonly Roi[],
  truthSnr: ReadonlyMap<number, number>,
  snrThreshold = 5,
): HighSnrScore {
  const isHigh = (id: number): boolean => (truthSnr.get(id) ?? -Infinity) >= snrThreshold;
  const truthHigh = truth.filter((r) => isHigh(r.id)).length;
  let matchedHigh = 0;
  let matchedLow = 0;
  for (const m of matches) {
    if (isHigh(m.truth)) matchedHigh++;
    else matchedLow++;
  }
  const precision = ratio(matchedHigh, detectedCount - matchedLow);
  const recall = ratio(matchedHigh, truthHigh);
  return { snrThreshold, truthHigh, matchedHigh, matchedLow, precision, recall, f1: f1Score(precision, recall) };
}

/** Harmonic mean of precision and recall (0 when both are 0). */
export function f1Score(precision: number, recall: number): number {
  return precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
}

function ratio(num: number, den: number): number {
  return den > 0 ? num / den : 0;
}

function checkIds(rois: readonly Roi[], what: string): void {
  const seen = new Set<number>();
  for (const r of rois) {
    if (seen.has(r.id)) throw new Error(`${what} ROIs: id ${r.id} appears twice`);
    seen.add(r.id);
  }
}

/** The ROI's distinct pixels (weight ≥ `binarize` when given), ascending, checked against the frame size. */
function pixelSet(roi: Roi, size: number, binarize: number | undefined): Int32Array {
  const { pixels, weights } = roi;
  if (binarize !== undefined && weights.length !== pixels.length) throw new Error(`ROI ${roi.id}: ${pixels.length} pixels but ${weights.length} weights`);
  const kept: number[] = [];
  for (let k = 0; k < pixels.length; k++) {
    const p = pixels[k]!;
    if (!(Number.isInteger(p) && p >= 0 && p < size)) throw new Error(`ROI ${roi.id}: pixel index ${p} is outside the ${size}-pixel frame`);
    if (binarize === undefined || weights[k]! >= binarize) kept.push(p);
  }
  const out = Int32Array.from(kept).sort();
  let w = 0;
  for (let k = 0; k < out.length; k++) if (k === 0 || out[k] !== out[k - 1]) out[w++] = out[k]!;
  return out.subarray(0, w);
}
