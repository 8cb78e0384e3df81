/**
 * The whole analysis of one recording, stage after stage, streamed over the frames so that a
 * movie larger than memory can be analysed:
 *   1. registration — template, then every frame's rigid shift, optionally per-block shifts on
 *      top (piecewise-rigid; one pass: the corrected frames feed the mean / max projections and
 *      the binned movie);
 *   2. detection — activity movie, local-correlation image, ROIs from activity and anatomy;
 *   3. extraction — a second pass over the frames (shifts replayed): F, neuropil, F − r·Fneu;
 *   4. traces — ΔF/F with a running baseline, OASIS deconvolution (the indicator's decay as a
 *      parameter), events, quality measures and the soma decision.
 * Every parameter has a default derived from what the recording says (frame rate, indicator
 * decay, the data's own cell size), and the resolved values are returned with the result. The
 * pipeline never reads ground truth: `evaluation/` scores results separately. Each stage is
 * exported on its own too, so a cell can run one at a time. Pure (CPU only) apart from reading
 * frames through the FrameSource.
 */
import { activityMovie } from './detection/activity.ts';
import { detectCells, type DetectedRoi, type DetectionOptions } from './detection/detect.ts';
import { roiQuality, somaDecision, type RoiQuality } from './detection/quality.ts';
import { extractTraces, type Traces } from './extraction/extract.ts';
import { dropCoveredRois, extractionMasks } from './extraction/masks.ts';
import { registeredSource, registerMovie, type Registration } from './registration/register.ts';
import { FrameAccumulator } from './summary/accumulate.ts';
import { baseline } from './traces/baseline.ts';
import { estimateNoise } from './traces/noise.ts';
import { deconvolve } from './traces/oasis.ts';
import { detectEvents, type CalciumEvent } from './traces/events.ts';
import type { FrameSource, Image, LongWork } from './types.ts';
import { sampledQuantile } from './image-ops.ts';

/** Indicator decay time constants (s) people can name instead of a number. */
export const INDICATOR_DECAY: Readonly<Record<string, number>> = Object.freeze({ GCaMP6f: 0.7, GCaMP6m: 1.0, GCaMP6s: 1.8, GCaMP7f: 0.7, GCaMP8f: 0.3, GCaMP8m: 0.6, jGCaMP8s: 1.2, OGB1: 0.7 });

export interface PipelineParams {
  /** Frames per second (default: the source's, else an error: it matters for every time window). */
  frameRate?: number;
  /** Indicator decay time constant, seconds (default 0.7, GCaMP6f), or an indicator's name. */
  tauDecay?: number | string;
  /** Expected cell diameter, pixels (default: estimated from the data). */
  diameter?: number;
  /** Largest motion searched, pixels (default: a tenth of the estimation crop). */
  maxShift?: number;
  /**
   * Piecewise-rigid registration after the rigid one, in blocks of this many pixels (Suite2p's
   * default is 128); absent: rigid only. For motion that differs across the field.
   */
  blockSize?: number;
  /** Temporal bin for detection, seconds (default: the decay time constant). */
  binSeconds?: number;
  /** Detection options (thresholds; see DetectionOptions). */
  detection?: Omit<DetectionOptions, 'diameter' | 'border'>;
  /** Neuropil coefficient (default 0.7). */
  neuropilCoefficient?: number;
  /** ΔF/F baseline window, seconds (default 60, at most the recording). */
  baselineSeconds?: number;
  /**
   * Frames between a spike and the frame where deconvolution finds its jump (default 1): a frame
   * integrates light over its whole exposure and the indicator takes tens of ms to rise, so a
   * spike in frame t shows fully only in frame t + 1. Inferred spikes and events are moved back
   * by this many frames.
   */
  onsetLagFrames?: number;
}

export interface ResolvedParams {
  frameRate: number;
  tauDecay: number;
  diameter: number;
  maxShift: number | null;
  blockSize: number | null;
  binFrames: number;
  neuropilCoefficient: number;
  baselineSeconds: number;
  onsetLagFrames: number;
  detection: Omit<DetectionOptions, 'diameter' | 'border'>;
}

export interface RoiResult extends DetectedRoi {
  quality: RoiQuality;
  isCell: boolean;
  /** Why the soma decision said no (absent when it said yes). */
  reason?: string;
}

export interface PipelineResult {
  params: ResolvedParams;
  registration: Registration;
  images: { mean: Image; max: Image; correlation: Image };
  rois: RoiResult[];
  traces: Traces & { dff: Float32Array[]; denoised: Float32Array[]; spikes: Float32Array[] };
  events: CalciumEvent[][];
  /** Milliseconds per stage. */
  timings: Record<'registration' | 'detection' | 'extraction' | 'traces', number>;
}

export interface PipelineOptions extends LongWork {
  /** A registration of this same recording to reuse (parameters changed after it, not the movie). */
  reuseRegistration?: Registration;
}

/** Resolves the parameters against the recording (what the result records). */
export function resolveParams(src: FrameSource, p: PipelineParams = {}): Omit<ResolvedParams, 'diameter'> & { diameter: number | null } {
  const frameRate = p.frameRate ?? src.frameRate;
  if (!(typeof frameRate === 'number' && frameRate > 0 && Number.isFinite(frameRate))) throw new Error('the frame rate is unknown: give frameRate (frames per second); the file does not say');
  let tauDecay: number;
  if (typeof p.tauDecay === 'string') {
    const known = INDICATOR_DECAY[p.tauDecay];
    if (known === undefined) throw new Error(`unknown indicator "${p.tauDecay}" (known: ${Object.keys(INDICATOR_DECAY).join(', ')}); give tauDecay in seconds instead`);
    tauDecay = known;
  } else tauDecay = p.tauDecay ?? INDICATOR_DECAY.GCaMP6f!;
  if (!(tauDecay > 0 && tauDecay < 60)) throw new Error(`tauDecay must be between 0 and 60 s (got ${tauDecay})`);
  if (p.blockSize !== undefined && !(p.blockSize >= 16 && p.blockSize <= Math.max(src.width, src.height))) throw new Error(`blockSize must be between 16 px and the frame's size (got ${p.blockSize})`);
  if (p.diameter !== undefined && !(p.diameter >= 3 && p.diameter <= Math.min(src.width, src.height))) throw new Error(`diameter must be between 3 px and the frame's size (got ${p.diameter})`);
  // Bins of about one decay, but at least 30 of them: correlations over fewer samples are noise.
  const binFrames = Math.max(1, Math.min(Math.floor(src.frames / 30) || 1, Math.round((p.binSeconds ?? tauDecay) * frameRate)));
  return {
    frameRate,
    tauDecay,
    diameter: p.diameter ?? null,
    maxShift: p.maxShift ?? null,
    blockSize: p.blockSize ?? null,
    binFrames,
    neuropilCoefficient: p.neuropilCoefficient ?? 0.7,
    baselineSeconds: Math.min(p.baselineSeconds ?? 60, src.frames / frameRate),
    onsetLagFrames: Math.max(0, Math.round(p.onsetLagFrames ?? 1)),
    detection: p.detection ?? {},
  };
}

/** Runs every stage on `src`; progress per stage, interruptible between frames. */
export async function runPipeline(src: FrameSource, p: PipelineParams = {}, opts: PipelineOptions = {}): Promise<PipelineResult> {
  const r = resolveParams(src, p);
  const { width: W, height: H } = src;
  const acc = new FrameAccumulator(W, H, src.frames, r.binFrames);
  let t = performance.now();
  let registration: Registration;
  if (opts.reuseRegistration) {
    registration = opts.reuseRegistration;
    if (registration.shifts.length !== 2 * src.frames) throw new Error('the registration to reuse belongs to another recording (frame count differs)');
    if ((registration.piecewise ? registration.piecewise.grid : null) === null ? r.blockSize !== null : r.blockSize === null)
      throw new Error('the registration to reuse was made with another blockSize (rigid vs piecewise-rigid)');
    const reg = registeredSource(src, registration.shifts, registration.piecewise);
    const buf = new Float32Array(W * H);
    for (let f = 0; f < src.frames; f++) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      await reg.read(f, buf);
      acc.add(f, buf);
      if (f % 50 === 0) opts.onProgress?.({ stage: 'registration', done: f + 1, total: src.frames });
    }
  } else {
    registration = await registerMovie(src, { maxShift: r.maxShift ?? undefined, blockSize: r.blockSize ?? undefined, signal: opts.signal, onProgress: opts.onProgress, onFrame: (f, c) => acc.add(f, c) });
  }
  const timings = { registration: performance.now() - t, detection: 0, extraction: 0, traces: 0 };

  t = performance.now();
  opts.onProgress?.({ stage: 'detection', done: 0, total: 1 });
  const border = Math.ceil(registration.maxAbsShift) + 1;
  const mean = acc.mean();
  const max = acc.max();
  const activity = activityMovie(acc.binned(), { highPassBins: Math.max(3, Math.round(60 / (r.binFrames / r.frameRate))) });
  const found = detectCells(activity, mean, { ...r.detection, diameter: r.diameter ?? undefined, border });
  // ROIs covered entirely by others have no pixel to extract a trace from (short movies detect such duplicates).
  const det = { ...found, rois: dropCoveredRois(found.rois, W, H) };
  opts.onProgress?.({ stage: 'detection', done: 1, total: 1 });
  timings.detection = performance.now() - t;

  t = performance.now();
  const masks = extractionMasks(det.rois, W, H, { border });
  const traces = await extractTraces(registeredSource(src, registration.shifts, registration.piecewise), masks, { neuropilCoefficient: r.neuropilCoefficient, signal: opts.signal, onProgress: opts.onProgress });
  timings.extraction = performance.now() - t;

  t = performance.now();
  const dffs: Float32Array[] = [];
  const denoised: Float32Array[] = [];
  const spikes: Float32Array[] = [];
  const events: CalciumEvent[][] = [];
  const rois: RoiResult[] = [];
  const bopts = { frameRate: r.frameRate, windowSeconds: r.baselineSeconds };
  // The recording's dark level (detector offset, vessel lumen): the 1st percentile of the mean image.
  const darkLevel = sampledQuantile(mean.data, 0.01);
  det.rois.forEach((roi, k) => {
    const fc = traces.corrected[k]!;
    // ΔF/F of the neuropil-corrected trace over the baseline of the raw trace: F − r·Fneu can
    // sit near zero, and dividing by its own baseline would blow the noise up.
    const f0c = baseline(fc, bopts);
    const f0 = baseline(traces.f[k]!, bopts);
    const d = new Float32Array(fc.length);
    for (let i = 0; i < fc.length; i++) d[i] = (fc[i]! - f0c[i]!) / Math.max(f0[i]!, 1e-6);
    const dec = deconvolve(d, { tauDecay: r.tauDecay, frameRate: r.frameRate });
    const s = new Float32Array(dec.s.length);
    s.set(dec.s.subarray(r.onsetLagFrames));
    dffs.push(d);
    denoised.push(dec.c);
    spikes.push(s);
    events.push(detectEvents(s, dec.c, { frameRate: r.frameRate }));
    const q = roiQuality(roi, { f: traces.f[k]!, neuropil: traces.neuropil[k]!, floor: darkLevel }, fc, d, estimateNoise(d), det.diameter);
    const decision = somaDecision(q, roi.source);
    rois.push({ ...roi, quality: q, isCell: decision.isCell, ...(decision.reason ? { reason: decision.reason } : {}) });
    if (k % 20 === 0) opts.onProgress?.({ stage: 'traces', done: k + 1, total: det.rois.length });
  });
  opts.onProgress?.({ stage: 'traces', done: det.rois.length, total: det.rois.length });
  timings.traces = performance.now() - t;

  return {
    params: { ...r, diameter: det.diameter },
    registration,
    images: { mean, max, correlation: det.correlationImage },
    rois,
    traces: { ...traces, dff: dffs, denoised, spikes },
    events,
    timings,
  };
}
