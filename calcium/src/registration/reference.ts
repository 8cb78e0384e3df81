/**
 * The registration template, as Suite2p's `compute_reference` builds it: frames sampled evenly
 * through the recording; the start is the mean of the frames that correlate best with the others;
 * then a few rounds of registering the sample to the template and averaging the best-aligned
 * half. Pure (CPU only) apart from reading frames through the FrameSource.
 */
import { checkAborted, type FrameSource, type LongWork } from '../types.ts';
import { phaseCorrelator, type PhaseCorrelationOptions } from './phase-correlation.ts';
import { shiftFrame } from './shift.ts';

export interface ReferenceOptions extends PhaseCorrelationOptions, LongWork {
  /** Frames sampled for the template (default 200, at most the movie). */
  sampleFrames?: number;
  /** Refinement rounds (default 4). */
  iterations?: number;
}

/** Builds the template image (width × height) of a movie. */
export async function computeReference(src: FrameSource, opts: ReferenceOptions = {}): Promise<Float32Array> {
  const { width: W, height: H, frames: F } = src;
  const n = W * H;
  const count = Math.max(1, Math.min(F, opts.sampleFrames ?? 200));
  const sample: Float32Array[] = [];
  for (let i = 0; i < count; i++) {
    checkAborted(opts.signal);
    const f = Math.min(F - 1, Math.floor(((i + 0.5) * F) / count));
    const buf = new Float32Array(n);
    await src.read(f, buf);
    sample.push(buf);
  }
  opts.onProgress?.({ stage: 'template', done: 0, total: (opts.iterations ?? 4) + 1 });
  // Start: the mean of the 20 frames most correlated with the sample's mean.
  const mean = new Float32Array(n);
  for (const s of sample) for (let i = 0; i < n; i++) mean[i]! += s[i]! / count;
  const scored = sample.map((s, i) => ({ i, r: correlation(s, mean) })).sort((a, b) => b.r - a.r);
  let template = averageOf(scored.slice(0, Math.min(20, count)).map((x) => sample[x.i]!), n);
  const pc = phaseCorrelator(W, H, opts);
  const shifted = new Float32Array(n);
  const iterations = opts.iterations ?? 4;
  for (let it = 0; it < iterations; it++) {
    checkAborted(opts.signal);
    pc.setTemplate(template);
    const est = sample.map((s, i) => ({ i, ...pc.estimate(s) })).sort((a, b) => b.peak - a.peak);
    const keep = est.slice(0, Math.max(1, Math.ceil(count * (it === iterations - 1 ? 0.5 : 0.75))));
    // Centre the template: subtract the kept frames' median shift so the reference does not drift.
    const mdx = median(keep.map((k) => k.dx));
    const mdy = median(keep.map((k) => k.dy));
    const next = new Float32Array(n);
    for (const k of keep) {
      shiftFrame(sample[k.i]!, W, H, k.dx - mdx, k.dy - mdy, shifted);
      for (let i = 0; i < n; i++) next[i]! += shifted[i]! / keep.length;
    }
    template = next;
    opts.onProgress?.({ stage: 'template', done: it + 1, total: iterations + 1 });
  }
  return template;
}

function averageOf(frames: Float32Array[], n: number): Float32Array {
  const out = new Float32Array(n);
  for (const f of frames) for (let i = 0; i < n; i++) out[i]! += f[i]! / frames.length;
  return out;
}

/** Pearson correlation of two equally long arrays. */
function correlation(a: Float32Array, b: Float32Array): number {
  let ma = 0;
  let mb = 0;
  for (let i = 0; i < a.length; i++) {
    ma += a[i]!;
    mb += b[i]!;
  }
  ma /= a.length;
  mb /= b.length;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]! - ma;
    const y = b[i]! - mb;
    sab += x * y;
    saa += x * x;
    sbb += y * y;
  }
  return saa > 0 && sbb > 0 ? sab / Math.sqrt(saa * sbb) : 0;
}

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
