/**
 * Rigid motion correction of a whole recording, streamed frame by frame: each frame's shift
 * against the template (phase correlation), the corrected frame handed to the caller (who
 * accumulates what later stages need: projections, a binned movie), never the whole movie in
 * memory. `registeredSource` replays the correction from stored shifts for later passes.
 * Pure (CPU only) apart from reading frames through the FrameSource.
 */
import { checkAborted, type FrameSource, type LongWork } from '../types.ts';
import { phaseCorrelator, type PhaseCorrelationOptions } from './phase-correlation.ts';
import { computeReference, type ReferenceOptions } from './reference.ts';
import { shiftFrame } from './shift.ts';

export interface RegistrationOptions extends ReferenceOptions, PhaseCorrelationOptions, LongWork {
  /** A template to register against (default: computed from the movie). */
  template?: Float32Array;
  /** Called with each corrected frame (the buffer is reused: copy what you keep). */
  onFrame?: (frame: number, corrected: Float32Array) => void;
}

export interface Registration {
  template: Float32Array;
  /** Per frame [dx0, dy0, dx1, dy1, …]: frame f shows the template moved by (dx, dy). */
  shifts: Float32Array;
  /** Per frame: normalised cross-correlation with the template at the shift found (−1…1). */
  peaks: Float32Array;
  /** Largest |shift| in pixels: a border this wide holds repeated edge pixels. */
  maxAbsShift: number;
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
  let maxAbsShift = 0;
  const every = Math.max(1, Math.floor(F / 100));
  for (let f = 0; f < F; f++) {
    checkAborted(opts.signal);
    await src.read(f, raw);
    const s = pc.estimate(raw);
    shifts[2 * f] = s.dx;
    shifts[2 * f + 1] = s.dy;
    peaks[f] = s.peak;
    maxAbsShift = Math.max(maxAbsShift, Math.abs(s.dx), Math.abs(s.dy));
    if (opts.onFrame) {
      shiftFrame(raw, W, H, s.dx, s.dy, corrected);
      opts.onFrame(f, corrected);
    }
    if (f % every === 0 || f === F - 1) opts.onProgress?.({ stage: 'registration', done: f + 1, total: F });
  }
  return { template, shifts, peaks, maxAbsShift };
}

/** A FrameSource that reads `src` and applies stored shifts (for passes after registration). */
export function registeredSource(src: FrameSource, shifts: Float32Array): FrameSource {
  const { width: W, height: H } = src;
  const raw = new Float32Array(W * H);
  return {
    width: W,
    height: H,
    frames: src.frames,
    frameRate: src.frameRate,
    async read(f, out) {
      await src.read(f, raw);
      shiftFrame(raw, W, H, shifts[2 * f]!, shifts[2 * f + 1]!, out);
    },
  };
}
