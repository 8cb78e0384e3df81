/** Ground-truth scoring: assignment, ROI matching, trace and spike correlations. Pure (re-exports only). */
export { hungarian, sparseAssignment, type Assignment, type CostMatrix } from './hungarian.ts';
export { f1Score, highSnrScore, matchRois, overlapPairs, type HighSnrScore, type MatchOptions, type OverlapPair, type RoiMatch, type RoiMatchResult } from './rois.ts';
export { binCount, binFrames, binSpikeTimes, finiteMedian, pearson, spikeCorrelation, traceCorrelations, type IdPair } from './traces.ts';
