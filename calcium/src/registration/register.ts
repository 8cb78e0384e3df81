/**
 * Motion correction of a whole recording, streamed frame by frame: each frame's rigid shift
 * against the template (phase correlation), optionally followed by piecewise-rigid correction
 * (`blockSize`: per-block shifts, piecewise.ts); the corrected frame is handed to the caller (who
 * accumulates what later stages need: projections, a binned movie), never the whole movie in
 * memory. `registeredSource` replays the correction from stored shifts for later passes.
 * Pure (CPU only) apart from reading frames through the FrameSource.
 */
import { checkAborted, type FrameSource, type LongWork } from '../types.ts';
import { phaseCorrelator, type PhaseCorrelationOptions } from './phase-correlation.ts';
import { computeReference, type ReferenceOptions } from './reference.ts';
import { blockCorrelator, blockCount, blockGrid, blockWarper, type BlockGrid } from './piecewise.ts';
import { shiftFrame } from './shift.ts';

export interface RegistrationOptions extends ReferenceOptions, PhaseCorrelationOptions, LongWork {
  /** A template to register against (default: computed from the movie). */
  template?: Float32Array;
  /** Called with each corrected frame (the buffer is reused: copy what you keep). */
  onFrame?: (frame: number, corrected: Float32Array) => void;
  /** Piecewise-rigid correction after the rigid one, in blocks of this many pixels (Suite2p's 128 is a good start); absent: rigid only. */
  blockSize?: number;
  /** Largest shift of a block beyond the frame's rigid shift (default a tenth of a block, at least 3). */
  maxBlockShift?: number;
}

/** The piecewise-rigid part of a registration. */
export interface PiecewiseShifts {
  grid: BlockGrid;
  /** Per frame, per block (row by row) [dx, dy] beyond the rigid shift. */
  shifts: Float32Array;
}

export interface Registration {
  template: Float32Array;
  /** Per frame [dx0, dy0, dx1, dy1, …]: frame f shows the template moved by (dx, dy). */
  shifts: Float32Array;
  /** Per frame: normalised cross-correlation with the template at the shift found (−1…1). */
  peaks: Float32Array;
  /** Largest |shift| in pixels (rigid and per block together): a border this wide holds repeated edge pixels. */
  maxAbsShift: number;
  /** Present when the registration was piecewise-rigid. */
  piecewise?: PiecewiseShifts;
}

/** Estimates every frame's rigid shift and hands each corrected frame to `onFrame`. */
export async function registerMovie(src: FrameSource, opts: RegistrationOptions = {}): Promise<Registration> {
  const { width: W, height: H, frames: F } = src;
  const template = opts.template ?? (await computeReference(src, opts));
  const pc = phaseCorrelator(W, H, opts);
  pc.setTemplate(template);
  const shifts = new Float32Array(2 * F);
  const peaks = new Float32Array(F);
  const raw = new Float32Array(W * H);
  const corrected = new Float32Array(W * H);
  const grid = opts.blockSize ? blockGrid(W, H, opts.blockSize) : null;
  const blocks = grid ? blockCorrelator(grid, { maxShift: opts.maxBlockShift }) : null;
  const warp = grid ? blockWarper(grid) : null;
  const n = grid ? blockCount(grid) : 0;
  const blockShifts = new Float32Array(2 * n * F);
  const warped = grid ? new Float32Array(W * H) : null;
  blocks?.setTemplate(template);
  let maxAbsShift = 0;
  let maxBlock = 0;
  const every = Math.max(1, Math.floor(F / 100));
  for (let f = 0; f < F; f++) {
    checkAborted(opts.signal);
    await src.read(f, raw);
    const s = pc.estimate(raw);
    shifts[2 * f] = s.dx;
    shifts[2 * f + 1] = s.dy;
    peaks[f] = s.peak;
    maxAbsShift = Math.max(maxAbsShift, Math.abs(s.dx), Math.abs(s.dy));
    if (opts.onFrame || blocks) shiftFrame(raw, W, H, s.dx, s.dy, corrected);
    if (blocks && warp && warped) {
      const mine = blockShifts.subarray(2 * n * f, 2 * n * (f + 1));
      blocks.estimate(corrected, mine);
      for (const v of mine) maxBlock = Math.max(maxBlock, Math.abs(v));
      warp(corrected, mine, warped);
      opts.onFrame?.(f, warped);
    } else opts.onFrame?.(f, corrected);
    if (f % every === 0 || f === F - 1) opts.onProgress?.({ stage: 'registration', done: f + 1, total: F });
  }
  if (grid) return { template, shifts, peaks, maxAbsShift: maxAbsShift + maxBlock, piecewise: { grid, shifts: blockShifts } };
  return { template, shifts, peaks, maxAbsShift };
}

/** A FrameSource that reads `src` and applies stored shifts, rigid and per block (for passes after registration). */
export function registeredSource(src: FrameSource, shifts: Float32Array, piecewise?: PiecewiseShifts): FrameSource {
  const { width: W, height: H } = src;
  const raw = new Float32Array(W * H);
  const rigid = piecewise ? new Float32Array(W * H) : null;
  const warp = piecewise ? blockWarper(piecewise.grid) : null;
  const n = piecewise ? 2 * blockCount(piecewise.grid) : 0;
  return {
    width: W,
    height: H,
    frames: src.frames,
    frameRate: src.frameRate,
    async read(f, out) {
      await src.read(f, raw);
      if (!piecewise || !rigid || !warp) return shiftFrame(raw, W, H, shifts[2 * f]!, shifts[2 * f + 1]!, out);
      shiftFrame(raw, W, H, shifts[2 * f]!, shifts[2 * f + 1]!, rigid);
      warp(rigid, piecewise.shifts.subarray(n * f, n * (f + 1)), out);
    },
  };
}
