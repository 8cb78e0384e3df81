/**
 * Extraction masks, as Suite2p builds them: each ROI's own pixels minus those it shares with
 * another ROI (overlaps belong to nobody, so one cell's activity does not leak into its
 * neighbour's trace), and a neuropil annulus around it — from a gap past the cell's edge outwards
 * until it holds enough pixels — that avoids every ROI. Pure (CPU only).
 */
import type { Roi } from '../types.ts';

export interface ExtractionMask {
  id: number;
  pixels: Int32Array;
  weights: Float32Array;
  /** Neuropil pixels (equal weight). */
  neuropil: Int32Array;
}

export interface MaskOptions {
  /** Gap between the ROI and its neuropil annulus, pixels (Suite2p's inner_neuropil_radius: 2). */
  innerRadius?: number;
  /** Fewest neuropil pixels (Suite2p's min_neuropil_pixels: 350). */
  minNeuropilPixels?: number;
  /** Pixels of the border that the neuropil avoids (registration's repeated edge). */
  border?: number;
}

/**
 * The ROIs that keep a pixel of their own (one no other ROI covers, with a weight), renumbered
 * 1…n in their order. An ROI whose every pixel other ROIs also cover has nothing to extract — its
 * trace would be 0/0 — and duplicates them; the later (weaker) of two such ROIs goes first, so of
 * two identical ROIs one stays. The same array when nothing is dropped.
 */
export function dropCoveredRois<R extends Roi>(rois: readonly R[], width: number, height: number): readonly R[] {
  const count = new Uint16Array(width * height);
  for (const r of rois) for (const p of r.pixels) count[p] = Math.min(65535, count[p]! + 1);
  const keep = rois.map(() => true);
  for (let k = rois.length - 1; k >= 0; k--) {
    const r = rois[k]!;
    let own = false;
    r.pixels.forEach((p, i) => (own ||= count[p] === 1 && r.weights[i]! > 0));
    if (own) continue;
    keep[k] = false;
    for (const p of r.pixels) count[p] = count[p]! - 1;
  }
  return keep.every(Boolean) ? rois : rois.filter((_, k) => keep[k]).map((r, i) => ({ ...r, id: i + 1 }));
}

/** Builds the extraction masks of ROIs in a width × height frame. */
export function extractionMasks(rois: readonly Roi[], width: number, height: number, opts: MaskOptions = {}): ExtractionMask[] {
  const n = width * height;
  const count = new Uint16Array(n);
  for (const r of rois) for (const p of r.pixels) count[p] = Math.min(65535, count[p]! + 1);
  // Everything within innerRadius of any ROI pixel is off-limits for neuropil.
  const gap = Math.max(0, Math.round(opts.innerRadius ?? 2));
  const blocked = new Uint8Array(n);
  for (let p = 0; p < n; p++) {
    if (!count[p]) continue;
    const x = p % width;
    const y = (p - x) / width;
    for (let dy = -gap; dy <= gap; dy++)
      for (let dx = -gap; dx <= gap; dx++) {
        const xx = x + dx;
        const yy = y + dy;
        if (xx >= 0 && xx < width && yy >= 0 && yy < height) blocked[xx + yy * width] = 1;
      }
  }
  const border = Math.max(0, Math.ceil(opts.border ?? 0));
  const minNp = opts.minNeuropilPixels ?? 350;
  return rois.map((r) => {
    const own: number[] = [];
    const w: number[] = [];
    r.pixels.forEach((p, k) => {
      if (count[p] === 1) {
        own.push(p);
        w.push(r.weights[k]!);
      }
    });
    // Centre and extent of the ROI.
    let cx = 0;
    let cy = 0;
    let maxR = 0;
    for (const p of r.pixels) {
      cx += p % width;
      cy += Math.floor(p / width);
    }
    cx /= Math.max(1, r.pixels.length);
    cy /= Math.max(1, r.pixels.length);
    for (const p of r.pixels) maxR = Math.max(maxR, Math.hypot((p % width) - cx, Math.floor(p / width) - cy));
    // Grow the annulus's outer radius until it holds enough pixels (or covers the frame).
    let outer = maxR + gap + 3;
    let neuropil: number[] = [];
    for (let round = 0; round < 40; round++) {
      neuropil = [];
      const R = Math.ceil(outer);
      for (let y = Math.max(border, Math.floor(cy - R)); y <= Math.min(height - 1 - border, Math.ceil(cy + R)); y++)
        for (let x = Math.max(border, Math.floor(cx - R)); x <= Math.min(width - 1 - border, Math.ceil(cx + R)); x++) {
          const p = x + y * width;
          if (!blocked[p] && Math.hypot(x - cx, y - cy) <= outer) neuropil.push(p);
        }
      if (neuropil.length >= minNp || outer > Math.max(width, height)) break;
      outer *= 1.25;
    }
    return { id: r.id, pixels: Int32Array.from(own), weights: Float32Array.from(w), neuropil: Int32Array.from(neuropil) };
  });
}
