/** Trace processing: baselines and ΔF/F, noise level, OASIS deconvolution, events. Pure (re-exports only). */
export { baseline, dff, maximin, runningExtreme, runningPercentile, type BaselineOptions, type DffOptions } from './baseline.ts';
export { estimateNoise, madDiffNoise, type NoiseOptions } from './noise.ts';
export { decayFromTau, deconvolve, defaultSMin, estimateDecay, oasisAR1, type Deconvolution, type DeconvolveOptions } from './oasis.ts';
export { detectEvents, type CalciumEvent, type EventOptions } from './events.ts';
export { gaussianSmooth, percentile, type TraceLike } from './util.ts';
