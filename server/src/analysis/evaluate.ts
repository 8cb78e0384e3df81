/**
 * Scores a calcium result against a dataset with ground truth (the demo's: a `labels` layer and
 * `rois.csv` / `traces.csv` / `spikes.csv` tables), as cells (`calcium.evaluate`) and people ask
 * for it: ROI precision / recall / F1 at IoU ≥ 0.5 (all cells, and cells of peak SNR ≥ 5), median
 * correlation of ΔF/F traces with the noise-free truth, median spike correlation in bins of
 * max(40 ms, one frame). Only ROIs the pipeline called cells count, after people's edits (deleted
 * ROIs left out, merged ones folded into their target). Effects: file reads.
 */
import path from 'node:path';
import { finiteMedian, matchRois, pearson, spikeCorrelation } from '@plexus/calcium/evaluation/index';
import type { Roi } from '@plexus/calcium/types';
import { effectiveRoiIds, roiIsCell, type RoiEdit } from '@plexus/shared';
import { readMeta, type DatasetMeta } from '../volumes/meta.ts';
import type { Volumes } from '../volumes/volume-store.ts';
import { readCsv, roisOfLabels } from './result-files.ts';

export interface Evaluation {
  rois: { detected: number; truth: number; matched: number; precision: number; recall: number; f1: number; highSnr: { truth: number; precision: number; recall: number; f1: number } };
  traces: { matched: number; medianR: number };
  spikes: { matched: number; medianR: number; binSeconds: number };
}

const asRoi = (id: number, px: number[]): Roi => ({ id, pixels: Int32Array.from(px.sort((a, b) => a - b)), weights: new Float32Array(px.length).fill(1) });

/** Evaluates result dataset `result` (written by a calcium job) against `truth`. */
export async function evaluateResult(volumes: Volumes, result: string, truth: string, edits: Readonly<Record<string, RoiEdit>> = {}): Promise<Evaluation> {
  const dir = (d: string) => path.join(volumes.root, d);
  const meta = await readMeta<DatasetMeta>(path.join(dir(truth), 'plexus.json'));
  const frameRate = meta?.frameRate;
  if (!frameRate) throw new Error(`${truth} does not say its frame rate`);
  const det = await roisOfLabels(volumes, result, 'rois');
  const tru = await roisOfLabels(volumes, truth, 'labels').catch(() => {
    throw new Error(`${truth} has no labels layer (ground truth) to compare with`);
  });
  if (det.width !== tru.width || det.height !== tru.height) throw new Error(`${result} (${det.width}×${det.height}) and ${truth} (${tru.width}×${tru.height}) differ in size`);
  // Cells after people's edits: deleted ones out, merged ones folded into their target, and the
  // soma decision as people overruled it.
  const roiRows = await readCsv(path.join(dir(result), 'tables', 'rois.csv'), ['id', 'is_cell']);
  // A merged group is a cell when the ROI it was merged into is one (as the figure and the table say).
  const pipelineCell = new Map(roiRows.map((r) => [Number(r.id), r.is_cell === '1']));
  const mapped = effectiveRoiIds([...det.rois.keys()], edits);
  const cells = new Set([...new Set(mapped.values())].filter((t) => roiIsCell(t, pipelineCell.get(t) ?? false, edits)));
  const merged = new Map<number, number[]>();
  for (const [id, px] of det.rois) {
    const to = mapped.get(id);
    if (to === undefined || !cells.has(to)) continue;
    merged.set(to, [...(merged.get(to) ?? []), ...px]);
  }
  const truthRows = await readCsv(path.join(dir(truth), 'tables', 'rois.csv'), ['id', 'peak_snr']);
  const truthSnr = new Map(truthRows.map((r) => [Number(r.id), Number(r.peak_snr)]));
  const m = matchRois([...merged].map(([id, px]) => asRoi(id, px)), [...tru.rois].map(([id, px]) => asRoi(id, px)), { width: det.width, height: det.height, truthSnr });
  // Traces and spikes of the matched pairs.
  const detTraces = new Map<number, { dff: number[]; spikes: number[] }>();
  for (const r of await readCsv(path.join(dir(result), 'tables', 'traces.csv'), ['id', 'frame', 'dff', 'spikes'])) {
    const id = Number(r.id);
    let t = detTraces.get(id);
    if (!t) detTraces.set(id, (t = { dff: [], spikes: [] }));
    t.dff[Number(r.frame)] = Number(r.dff);
    t.spikes[Number(r.frame)] = Number(r.spikes);
  }
  const truthTraces = new Map<number, number[]>();
  for (const r of await readCsv(path.join(dir(truth), 'tables', 'traces.csv'), ['id', 'frame', 'dff'])) {
    const id = Number(r.id);
    let t = truthTraces.get(id);
    if (!t) truthTraces.set(id, (t = []));
    t[Number(r.frame)] = Number(r.dff);
  }
  const spikeTimes = new Map<number, number[]>();
  for (const r of await readCsv(path.join(dir(truth), 'tables', 'spikes.csv'), ['id', 'time_s'])) {
    const id = Number(r.id);
    spikeTimes.set(id, [...(spikeTimes.get(id) ?? []), Number(r.time_s)]);
  }
  const traceR: number[] = [];
  const spikeR: number[] = [];
  for (const { detected, truth: t } of m.matches) {
    const d = detTraces.get(detected);
    const tt = truthTraces.get(t);
    if (!d || !tt) continue;
    traceR.push(pearson(d.dff, tt));
    const sp = spikeTimes.get(t) ?? [];
    if (sp.length) spikeR.push(spikeCorrelation(d.spikes, sp, { frameRate }));
  }
  const binSeconds = Math.max(0.04, 1 / frameRate);
  const hi = m.highSnr!;
  const r3 = (v: number) => Math.round(v * 1000) / 1000;
  return {
    rois: { detected: merged.size, truth: tru.rois.size, matched: m.matches.length, precision: r3(m.precision), recall: r3(m.recall), f1: r3(m.f1), highSnr: { truth: hi.truthHigh, precision: r3(hi.precision), recall: r3(hi.recall), f1: r3(hi.f1) } },
    traces: { matched: traceR.length, medianR: r3(finiteMedian(traceR)) },
    spikes: { matched: spikeR.length, medianR: r3(finiteMedian(spikeR)), binSeconds },
  };
}
