/** @plexus/calcium: the public API (each stage on its own, and the whole pipeline). */
export * from './types.ts';
export { registerMovie, registeredSource, type Registration, type RegistrationOptions } from './registration/register.ts';
export { computeReference, type ReferenceOptions } from './registration/reference.ts';
export { phaseCorrelator, type PhaseCorrelator, type PhaseCorrelationOptions, type Shift } from './registration/phase-correlation.ts';
export { shiftFrame } from './registration/shift.ts';
export { FrameAccumulator } from './summary/accumulate.ts';
export { localCorrelation } from './summary/local-correlation.ts';
export { activityMovie, type Activity, type ActivityOptions } from './detection/activity.ts';
export { detectCells, type DetectedRoi, type Detection, type DetectionOptions } from './detection/detect.ts';
export { estimateDiameter } from './detection/diameter.ts';
export { DEFAULT_SOMA_RULE, roiQuality, skewness, somaDecision, type RoiQuality, type SomaRule } from './detection/quality.ts';
export { extractionMasks, type ExtractionMask, type MaskOptions } from './extraction/masks.ts';
export { extractTraces, type ExtractOptions, type Traces } from './extraction/extract.ts';
export * from './traces/index.ts';
export * from './evaluation/index.ts';
export * from './tiff/index.ts';
export { INDICATOR_DECAY, resolveParams, runPipeline, type PipelineOptions, type PipelineParams, type PipelineResult, type ResolvedParams, type RoiResult } from './pipeline.ts';
export { labelContours, loopPath, type Contours } from './figures/contours.ts';
