/**
 * Trace extraction, streamed over the registered frames: per ROI the weighted mean fluorescence
 * F over its own pixels and the mean of its neuropil annulus Fneu, then the neuropil-corrected
 * F − r·Fneu with Suite2p's coefficient r = 0.7 by default. Pure (CPU only) apart from reading
 * frames through the FrameSource.
 */
import { checkAborted, type FrameSource, type LongWork } from '../types.ts';
import type { ExtractionMask } from './masks.ts';

export interface Traces {
  ids: number[];
  frames: number;
  /** Per ROI (in `ids` order), length `frames`. */
  f: Float32Array[];
  neuropil: Float32Array[];
  /** F − neuropilCoefficient · Fneu. */
  corrected: Float32Array[];
  neuropilCoefficient: number;
}

export interface ExtractOptions extends LongWork {
  /** Neuropil coefficient (default 0.7, Suite2p's). */
  neuropilCoefficient?: number;
}

/** Extracts every mask's traces in one pass over `src`. */
export async function extractTraces(src: FrameSource, masks: readonly ExtractionMask[], opts: ExtractOptions = {}): Promise<Traces> {
  const F = src.frames;
  const k = opts.neuropilCoefficient ?? 0.7;
  const f = masks.map(() => new Float32Array(F));
  const np = masks.map(() => new Float32Array(F));
  const wsum = masks.map((m) => m.weights.reduce((a, b) => a + b, 0));
  const frame = new Float32Array(src.width * src.height);
  const every = Math.max(1, Math.floor(F / 100));
  for (let t = 0; t < F; t++) {
    checkAborted(opts.signal);
    await src.read(t, frame);
    for (let m = 0; m < masks.length; m++) {
      const mask = masks[m]!;
      let s = 0;
      for (let q = 0; q < mask.pixels.length; q++) s += mask.weights[q]! * frame[mask.pixels[q]!]!;
      f[m]![t] = wsum[m]! > 0 ? s / wsum[m]! : NaN;
      let z = 0;
      for (let q = 0; q < mask.neuropil.length; q++) z += frame[mask.neuropil[q]!]!;
      np[m]![t] = mask.neuropil.length ? z / mask.neuropil.length : 0;
    }
    if (t % every === 0 || t === F - 1) opts.onProgress?.({ stage: 'extraction', done: t + 1, total: F });
  }
  const corrected = f.map((tr, m) => tr.map((v, t) => v - k * np[m]![t]!));
  return { ids: masks.map((m) => m.id), frames: F, f, neuropil: np, corrected, neuropilCoefficient: k };
}
