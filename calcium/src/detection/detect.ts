/**
 * Cell detection (Suite2p's idea of growing ROIs from activity, with CaImAn's correlation image
 * for seeds, plus an anatomical pass for cells that never fire):
 * 1. Seeds: local maxima of the smoothed local-correlation image of the activity movie, strongest
 *    first, above a robust threshold (median + k·MAD of the image).
 * 2. Growth: a seed's time course (the mean of its centre) is correlated with every pixel around
 *    it; the ROI is the connected region whose pixels follow it. Two touching or overlapping cells
 *    with their own activity grow from their own seeds into two ROIs; a seed that falls in the core
 *    of an ROI already found is dropped.
 * 3. Anatomy: bright blobs of the mean image at the cell scale (difference of Gaussians) that no
 *    ROI covers become ROIs of their own (cells that stayed silent are still cells).
 * Each ROI gets its shape measures (area, compactness, elongation) for the soma decision.
 * Pure (CPU only).
 */
import { componentFrom, gaussianBlur, localMaxima, median, robustSd } from '../image-ops.ts';
import { localCorrelation } from '../summary/local-correlation.ts';
import type { Image, Roi } from '../types.ts';
import type { Activity } from './activity.ts';
import { estimateDiameter } from './diameter.ts';

export interface DetectionOptions {
  /** Expected cell diameter, pixels (default: estimated from the correlation image). */
  diameter?: number;
  /** Seeds need a smoothed correlation above median + seedThreshold × robust SD (default 4). */
  seedThreshold?: number;
  /** A pixel joins a seed's ROI when its signal amplitude reaches this share of the ROI's peak (default 0.5, the half-maximum footprint). */
  growFraction?: number;
  /** …and its correlation with the seed's time course reaches this (default 0.2). */
  minCorrelation?: number;
  /** Look for silent cells in the mean image too (default true). */
  anatomical?: boolean;
  /** Anatomical blobs need a DoG response above median + anatomicalThreshold × robust SD (default 5). */
  anatomicalThreshold?: number;
  /** Pixels at the border to ignore (registration's repeated edge), default 0. */
  border?: number;
  /** Most ROIs returned (default 2,000). */
  maxRois?: number;
}

export interface DetectedRoi extends Roi {
  /** How it was found: from correlated activity, or as a bright blob of the mean image. */
  source: 'activity' | 'anatomy';
  centroid: [number, number];
  /** Pixels with weight ≥ 0.5. */
  area: number;
  /** Disc-likeness in (0, 1]: mean distance from the centroid for a disc of the same area / for the ROI. */
  compactness: number;
  /** Major / minor axis from the second moments (1 = round; dendrites are long). */
  elongation: number;
  /** Seed strength: smoothed local correlation (activity) or DoG contrast in robust SDs (anatomy). */
  score: number;
}

export interface Detection {
  rois: DetectedRoi[];
  correlationImage: Image;
  diameter: number;
}

/** Finds cells in the activity movie (see `activityMovie`), with the mean image for silent ones. */
export function detectCells(activity: Activity, meanImage: Image, opts: DetectionOptions = {}): Detection {
  const { width: W, height: H, frames: T, data } = activity;
  const n = W * H;
  const corr = localCorrelation(activity);
  const diameter = opts.diameter ?? estimateDiameter(corr);
  const r = diameter / 2;
  const border = Math.max(0, Math.ceil(opts.border ?? 0));
  const smooth = gaussianBlur(corr, Math.max(0.5, diameter / 8));
  const med = median(smooth.data);
  const sd = robustSd(smooth.data, med);
  const seeds = localMaxima(smooth, Math.max(1, Math.round(r / 2)), med + (opts.seedThreshold ?? 4) * sd, border);
  const owner = new Float32Array(n); // strongest weight of any ROI so far, per pixel
  const rois: DetectedRoi[] = [];
  const maxRois = opts.maxRois ?? 2000;
  const reach = Math.ceil(diameter);
  const grow = opts.growFraction ?? 0.5;
  const minCorr = opts.minCorrelation ?? 0.2;
  const seedTrace = new Float64Array(T);
  const rad2 = Math.max(1, (r / 2) ** 2);

  for (const s of seeds) {
    if (rois.length >= maxRois) break;
    if (owner[s]! >= 0.5) continue;
    const sx = s % W;
    const sy = (s - sx) / W;
    // The seed's time course: mean over its centre.
    seedTrace.fill(0);
    let cnt = 0;
    const cr = Math.ceil(r / 2);
    for (let y = Math.max(0, sy - cr); y <= Math.min(H - 1, sy + cr); y++)
      for (let x = Math.max(0, sx - cr); x <= Math.min(W - 1, sx + cr); x++) {
        if ((x - sx) ** 2 + (y - sy) ** 2 > rad2) continue;
        const i = x + y * W;
        for (let t = 0; t < T; t++) seedTrace[t]! += data[t * n + i]!;
        cnt++;
      }
    for (let t = 0; t < T; t++) seedTrace[t]! /= cnt;
    const x0 = Math.max(0, sx - reach);
    const x1 = Math.min(W - 1, sx + reach);
    const y0 = Math.max(0, sy - reach);
    const y1 = Math.min(H - 1, sy + reach);
    const bw = x1 - x0 + 1;
    const cells = bw * (y1 - y0 + 1);
    const local = new Float32Array(cells);
    const amp = new Float32Array(cells);
    let best = 0;
    let bestAmp = 0;
    for (let y = y0; y <= y1; y++)
      for (let x = x0; x <= x1; x++) {
        const i = x + y * W;
        const { r: c, slope } = regress(data, i, n, T, seedTrace);
        const j = x - x0 + (y - y0) * bw;
        local[j] = c;
        // The pixel's share of the seed's signal in raw units (the activity movie is noise-scaled).
        amp[j] = slope * activity.noiseSd[i]!;
        if ((x - sx) ** 2 + (y - sy) ** 2 <= rad2 * 4) {
          if (c > best) best = c;
          if (c >= minCorr && amp[j]! > bestAmp) bestAmp = amp[j]!;
        }
      }
    if (best <= 0.1 || bestAmp <= 0) continue;
    const thr = grow * bestAmp;
    const comp = componentFrom(bw, y1 - y0 + 1, sx - x0 + (sy - y0) * bw, (j) => amp[j]! >= thr && local[j]! >= minCorr);
    const pixels = comp.map((j) => x0 + (j % bw) + (y0 + Math.floor(j / bw)) * W);
    const weights = comp.map((j) => Math.min(1, amp[j]! / bestAmp));
    const roi = withShape({ id: rois.length + 1, pixels: Int32Array.from(pixels), weights: Float32Array.from(weights) }, W, 'activity', smooth.data[s]!);
    if (!plausible(roi, diameter)) continue;
    rois.push(roi);
    for (let k = 0; k < pixels.length; k++) owner[pixels[k]!] = Math.max(owner[pixels[k]!]!, weights[k]!);
  }

  if (opts.anatomical ?? true) anatomicalRois(meanImage, diameter, border, opts.anatomicalThreshold ?? 5, owner, rois, maxRois);
  rois.forEach((roi, i) => (roi.id = i + 1));
  return { rois, correlationImage: corr, diameter };
}

/** Bright blobs of the mean image at the cell scale that no ROI covers yet. */
function anatomicalRois(mean: Image, diameter: number, border: number, k: number, owner: Float32Array, rois: DetectedRoi[], maxRois: number): void {
  const { width: W, height: H } = mean;
  const fine = gaussianBlur(mean, Math.max(0.7, diameter / 6));
  const coarse = gaussianBlur(mean, diameter);
  const dog: Image = { width: W, height: H, data: fine.data.map((v, i) => v - coarse.data[i]!) };
  const med = median(dog.data);
  const sd = robustSd(dog.data, med);
  const seeds = localMaxima(dog, Math.max(1, Math.round(diameter / 3)), med + k * sd, border);
  const sharp = gaussianBlur(mean, 0.7);
  const reach = Math.ceil(diameter);
  for (const s of seeds) {
    if (rois.length >= maxRois) break;
    if (owner[s]! > 0) continue;
    const sx = s % W;
    const sy = (s - sx) / W;
    const bg = coarse.data[s]!;
    const peak = fine.data[s]!;
    if (!(peak > bg)) continue;
    const half = bg + 0.5 * (peak - bg);
    const x0 = Math.max(0, sx - reach);
    const y0 = Math.max(0, sy - reach);
    const x1 = Math.min(W - 1, sx + reach);
    const y1 = Math.min(H - 1, sy + reach);
    const bw = x1 - x0 + 1;
    const comp = componentFrom(bw, y1 - y0 + 1, sx - x0 + (sy - y0) * bw, (j) => {
      const i = x0 + (j % bw) + (y0 + Math.floor(j / bw)) * W;
      return owner[i]! < 0.5 && sharp.data[i]! >= half;
    });
    if (!comp.length) continue;
    const pixels = comp.map((j) => x0 + (j % bw) + (y0 + Math.floor(j / bw)) * W);
    const weights = pixels.map((i) => Math.max(0, Math.min(1, (sharp.data[i]! - bg) / (peak - bg))));
    const roi = withShape({ id: rois.length + 1, pixels: Int32Array.from(pixels), weights: Float32Array.from(weights) }, W, 'anatomy', (peak - med - bg + med) / (sd || 1));
    if (!plausible(roi, diameter)) continue;
    rois.push(roi);
    for (let q = 0; q < pixels.length; q++) owner[pixels[q]!] = Math.max(owner[pixels[q]!]!, weights[q]!);
  }
}

/** Shape measures of an ROI. */
function withShape(roi: Roi, width: number, source: DetectedRoi['source'], score: number): DetectedRoi {
  let sw = 0;
  let sx = 0;
  let sy = 0;
  let area = 0;
  for (let k = 0; k < roi.pixels.length; k++) {
    const w = roi.weights[k]!;
    const p = roi.pixels[k]!;
    sw += w;
    sx += w * (p % width);
    sy += w * Math.floor(p / width);
    if (w >= 0.5) area++;
  }
  const cx = sw ? sx / sw : 0;
  const cy = sw ? sy / sw : 0;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  let meanR = 0;
  let m = 0;
  for (let k = 0; k < roi.pixels.length; k++) {
    const w = roi.weights[k]!;
    const p = roi.pixels[k]!;
    const dx = (p % width) - cx;
    const dy = Math.floor(p / width) - cy;
    sxx += w * dx * dx;
    syy += w * dy * dy;
    sxy += w * dx * dy;
    if (w >= 0.5) {
      meanR += Math.hypot(dx, dy);
      m++;
    }
  }
  const tr = (sxx + syy) / (sw || 1);
  const det = (sxx * syy - sxy * sxy) / ((sw || 1) * (sw || 1));
  const disc = Math.sqrt(Math.max(0, (tr * tr) / 4 - det));
  const l1 = tr / 2 + disc;
  const l2 = Math.max(1e-9, tr / 2 - disc);
  // A disc of N pixels has mean distance (2/3)·R with R = sqrt(N/π).
  const discMeanR = (2 / 3) * Math.sqrt(Math.max(1, m) / Math.PI);
  const compactness = m ? Math.min(1, discMeanR / Math.max(1e-9, meanR / m)) : 0;
  return { ...roi, source, centroid: [cx, cy], area, compactness, elongation: Math.sqrt(l1 / l2), score };
}

/** Size and shape a soma could have at this diameter (loose: the soma decision comes later). */
function plausible(roi: DetectedRoi, diameter: number): boolean {
  const disc = Math.PI * (diameter / 2) ** 2;
  return roi.area >= 0.2 * disc && roi.area <= 4 * disc;
}

/** Pearson correlation of pixel i's time course with `trace`, and the regression slope on it. */
function regress(data: Float32Array, i: number, n: number, T: number, trace: Float64Array): { r: number; slope: number } {
  let sa = 0;
  let sb = 0;
  for (let t = 0; t < T; t++) {
    sa += data[t * n + i]!;
    sb += trace[t]!;
  }
  const ma = sa / T;
  const mb = sb / T;
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let t = 0; t < T; t++) {
    const a = data[t * n + i]! - ma;
    const b = trace[t]! - mb;
    ab += a * b;
    aa += a * a;
    bb += b * b;
  }
  return { r: aa > 0 && bb > 0 ? ab / Math.sqrt(aa * bb) : 0, slope: bb > 0 ? ab / bb : 0 };
}
