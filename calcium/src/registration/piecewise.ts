/**
 * Piecewise-rigid motion correction, as Suite2p's non-rigid registration does it: after the rigid
 * shift, the frame is cut into overlapping blocks (`blockSize` px, about 1.5 blocks per block
 * length along each axis); each block's own shift against the same block of the template comes
 * from the rigid estimator (phase correlation, then sub-pixel cross-correlation); a block that
 * matches badly (normalised correlation < 0.2: too little texture) takes the median of its
 * neighbours; the per-pixel shift is interpolated bilinearly between block centres and the frame
 * is resampled there. This corrects motion that differs across the field (brain pulsation, a
 * slow scan under movement) that one rigid shift cannot. Pure (CPU only).
 */
import { phaseCorrelator, type PhaseCorrelator } from './phase-correlation.ts';

export interface BlockGrid {
  width: number;
  height: number;
  /** Block size per axis (at most the frame's side). */
  blockWidth: number;
  blockHeight: number;
  /** Left / top edges of the blocks along each axis. */
  xs: number[];
  ys: number[];
}

/** Blocks along one axis: about 1.5 per block length, evenly spaced from 0 to the far edge (Suite2p's layout). */
function axis(length: number, block: number): { size: number; starts: number[] } {
  const size = Math.min(block, length);
  const n = length <= size ? 1 : Math.ceil((1.5 * length) / size);
  const starts = Array.from({ length: n }, (_, i) => (n === 1 ? 0 : Math.round((i * (length - size)) / (n - 1))));
  return { size, starts };
}

/** The blocks of a `width` × `height` frame for blocks of `blockSize` px. */
export function blockGrid(width: number, height: number, blockSize: number): BlockGrid {
  if (!(blockSize >= 16)) throw new Error(`blockSize must be at least 16 px (got ${blockSize})`);
  const x = axis(width, Math.round(blockSize));
  const y = axis(height, Math.round(blockSize));
  return { width, height, blockWidth: x.size, blockHeight: y.size, xs: x.starts, ys: y.starts };
}

/** Number of blocks of a grid. */
export const blockCount = (g: BlockGrid) => g.xs.length * g.ys.length;

/** Per-block shift estimation against one template. */
export interface BlockCorrelator {
  readonly grid: BlockGrid;
  readonly maxShift: number;
  setTemplate(template: Float32Array): void;
  /** Writes the blocks' shifts [dx, dy, …] (row by row) of `frame` (already rigidly corrected) into `out`. */
  estimate(frame: Float32Array, out: Float32Array): void;
}

/** Makes the block correlators of a grid; `maxShift`: largest shift of a block beyond the rigid one (default a tenth of a block, at least 3). */
export function blockCorrelator(grid: BlockGrid, opts: { maxShift?: number } = {}): BlockCorrelator {
  const { blockWidth: bw, blockHeight: bh, width: W } = grid;
  const maxShift = Math.max(1, Math.round(opts.maxShift ?? Math.max(3, Math.min(bw, bh) / 10)));
  const pcs: PhaseCorrelator[] = [];
  for (let k = 0; k < blockCount(grid); k++) pcs.push(phaseCorrelator(bw, bh, { maxShift, estimateSize: Math.max(bw, bh) }));
  const crop = new Float32Array(bw * bh);
  const cut = (img: Float32Array, x0: number, y0: number) => {
    for (let y = 0; y < bh; y++) crop.set(img.subarray((y0 + y) * W + x0, (y0 + y) * W + x0 + bw), y * bw);
    return crop;
  };
  const nx = grid.xs.length;
  const ny = grid.ys.length;
  const peaks = new Float32Array(nx * ny);
  const raw = new Float32Array(2 * nx * ny);
  return {
    grid,
    maxShift: pcs[0]!.maxShift,
    setTemplate(template) {
      grid.ys.forEach((y0, j) => grid.xs.forEach((x0, i) => pcs[i + j * nx]!.setTemplate(cut(template, x0, y0))));
    },
    estimate(frame, out) {
      grid.ys.forEach((y0, j) =>
        grid.xs.forEach((x0, i) => {
          const k = i + j * nx;
          const s = pcs[k]!.estimate(cut(frame, x0, y0));
          raw[2 * k] = s.dx;
          raw[2 * k + 1] = s.dy;
          peaks[k] = s.peak;
        }),
      );
      // Blocks without texture to match take the median of their trustworthy neighbours (else 0).
      for (let j = 0; j < ny; j++)
        for (let i = 0; i < nx; i++) {
          const k = i + j * nx;
          if (peaks[k]! >= 0.2) {
            out[2 * k] = raw[2 * k]!;
            out[2 * k + 1] = raw[2 * k + 1]!;
            continue;
          }
          const dxs: number[] = [];
          const dys: number[] = [];
          for (let b = Math.max(0, j - 1); b <= Math.min(ny - 1, j + 1); b++)
            for (let a = Math.max(0, i - 1); a <= Math.min(nx - 1, i + 1); a++) {
              const m = a + b * nx;
              if (m !== k && peaks[m]! >= 0.2) {
                dxs.push(raw[2 * m]!);
                dys.push(raw[2 * m + 1]!);
              }
            }
          const med = (v: number[]) => (v.length ? v.sort((p, q) => p - q)[v.length >> 1]! : 0);
          out[2 * k] = med(dxs);
          out[2 * k + 1] = med(dys);
        }
    },
  };
}

/** For each pixel along an axis: the two block centres around it and the weight of the second. */
function interpolation(length: number, starts: number[], size: number): { i0: Int32Array; i1: Int32Array; w: Float32Array } {
  const centres = starts.map((s) => s + (size - 1) / 2);
  const i0 = new Int32Array(length);
  const i1 = new Int32Array(length);
  const w = new Float32Array(length);
  for (let p = 0; p < length; p++) {
    let k = 0;
    while (k < centres.length - 1 && centres[k + 1]! <= p) k++;
    if (centres.length === 1 || p <= centres[0]!) {
      i0[p] = i1[p] = 0;
    } else if (k >= centres.length - 1) {
      i0[p] = i1[p] = centres.length - 1;
    } else {
      i0[p] = k;
      i1[p] = k + 1;
      w[p] = (p - centres[k]!) / (centres[k + 1]! - centres[k]!);
    }
  }
  return { i0, i1, w };
}

/** Resamples frames by per-block shifts, the shift at each pixel interpolated between block centres. */
export function blockWarper(grid: BlockGrid): (frame: Float32Array, blockShifts: Float32Array, out: Float32Array) => void {
  const { width: W, height: H } = grid;
  const nx = grid.xs.length;
  const ix = interpolation(W, grid.xs, grid.blockWidth);
  const iy = interpolation(H, grid.ys, grid.blockHeight);
  const clampX = (v: number) => (v < 0 ? 0 : v > W - 1 ? W - 1 : v);
  const clampY = (v: number) => (v < 0 ? 0 : v > H - 1 ? H - 1 : v);
  return (frame, s, out) => {
    for (let y = 0; y < H; y++) {
      const j0 = iy.i0[y]!;
      const j1 = iy.i1[y]!;
      const wy = iy.w[y]!;
      for (let x = 0; x < W; x++) {
        const a0 = ix.i0[x]!;
        const a1 = ix.i1[x]!;
        const wx = ix.w[x]!;
        const k00 = 2 * (a0 + j0 * nx);
        const k10 = 2 * (a1 + j0 * nx);
        const k01 = 2 * (a0 + j1 * nx);
        const k11 = 2 * (a1 + j1 * nx);
        const dx = (1 - wy) * ((1 - wx) * s[k00]! + wx * s[k10]!) + wy * ((1 - wx) * s[k01]! + wx * s[k11]!);
        const dy = (1 - wy) * ((1 - wx) * s[k00 + 1]! + wx * s[k10 + 1]!) + wy * ((1 - wx) * s[k01 + 1]! + wx * s[k11 + 1]!);
        // Bilinear sample of the frame at (x + dx, y + dy), edges repeated.
        const sx = clampX(x + dx);
        const sy = clampY(y + dy);
        const x0 = Math.floor(sx);
        const y0 = Math.floor(sy);
        const x1 = Math.min(W - 1, x0 + 1);
        const y1 = Math.min(H - 1, y0 + 1);
        const fx = sx - x0;
        const fy = sy - y0;
        const r0 = y0 * W;
        const r1 = y1 * W;
        out[x + y * W] = (1 - fy) * ((1 - fx) * frame[r0 + x0]! + fx * frame[r0 + x1]!) + fy * ((1 - fx) * frame[r1 + x0]! + fx * frame[r1 + x1]!);
      }
    }
  };
}
