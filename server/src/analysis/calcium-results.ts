/**
 * Writes a calcium pipeline result as a served dataset: `rois` (segmentation, uint32: each pixel
 * the id of the ROI that weighs most there), `mean`, `max` and `correlation` images (float32), and
 * CSV tables (`rois`, `traces`, `events`, `shifts`) that the job manager registers as workspace
 * tables. The dataset is written into `dir` (a new, empty temporary directory; the caller renames
 * it into place). Effects: files under `dir`.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { PipelineResult } from '@plexus/calcium/pipeline';
import type { DatasetMeta, LayerMeta } from '../volumes/meta.ts';
import { makeInfo, PrecomputedWriter } from '../volumes/writer.ts';

export const RESULT_TABLES = {
  rois: ['id', 'centroid_x', 'centroid_y', 'area_px', 'source', 'is_cell', 'reason', 'snr', 'skewness', 'compactness', 'elongation', 'contrast', 'events'],
  traces: ['id', 'frame', 'time_s', 'f', 'f_neuropil', 'dff', 'denoised', 'spikes'],
  events: ['id', 'frame', 'time_s', 'amplitude'],
  shifts: ['frame', 'dx', 'dy', 'match'],
} as const;

export interface ResultSummary {
  rois: number;
  cells: number;
  events: number;
  diameter: number;
  maxShift: number;
  frames: number;
  width: number;
  height: number;
}

const json = (v: unknown) => JSON.stringify(v, null, 1) + '\n';
const num = (v: number, d = 4) => (Number.isFinite(v) ? String(Number(v.toFixed(d))) : '');
const csvText = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** The labels image: per pixel the id of the heaviest ROI whose weight there is ≥ 0.5 (its half-maximum footprint; 0 = none). */
export function labelImage(res: PipelineResult, width: number, height: number): Uint32Array {
  const labels = new Uint32Array(width * height);
  const best = new Float32Array(width * height);
  for (const roi of res.rois)
    roi.pixels.forEach((p, k) => {
      const w = roi.weights[k]!;
      if (w >= 0.5 && w > best[p]!) {
        best[p] = w;
        labels[p] = roi.id;
      }
    });
  return labels;
}

/** Writes layers, tables and `plexus.json` of a result into `dir`; returns the summary. */
export async function writeCalciumResult(dir: string, res: PipelineResult, info: { width: number; height: number; frames: number; title: string; source: string }): Promise<ResultSummary> {
  const { width: W, height: H, frames: F } = info;
  const fps = res.params.frameRate;
  const frameNs = Math.round(1e9 / fps);
  const planeZ = F * frameNs;
  const planes = [
    { name: 'rois', type: 'segmentation' as const, dataType: 'uint32' as const, data: labelImage(res, W, H), values: 'ROI id (0 = background)', description: `ROIs found by the calcium analysis of ${info.source}: id = the id in the rois table.` },
    { name: 'mean', type: 'image' as const, dataType: 'float32' as const, data: res.images.mean.data, values: 'ADU (mean of the registered frames)', description: `Mean image of ${info.source} after motion correction.` },
    { name: 'max', type: 'image' as const, dataType: 'float32' as const, data: res.images.max.data, values: 'ADU (max of the registered frames)', description: `Maximum image of ${info.source} after motion correction.` },
    { name: 'correlation', type: 'image' as const, dataType: 'float32' as const, data: res.images.correlation.data, values: 'mean correlation with the 8 neighbours (−1…1)', description: `Local-correlation image of ${info.source}'s activity (cells light up).` },
  ];
  const resolutionNote = `precomputed resolution is in nm: x, y 1000 nm = 1 µm per pixel; the single z plane is ${planeZ} "nm" thick, the whole recording, so it shows at every frame of the movie`;
  for (const p of planes) {
    const w = new PrecomputedWriter(path.join(dir, p.name), makeInfo(p.type, p.dataType, [{ size: [W, H, 1], resolution: [1000, 1000, planeZ], chunk: [128, 128, 1] }]), { compression: 'default' });
    await w.init();
    await w.writeScale(0, p.data);
    await w.close();
    const meta: LayerMeta = { description: p.description, axes: { x: 'µm', y: 'µm', z: 'none' }, voxelSize: [1, 1, F / fps], values: p.values, resolutionNote };
    await fs.writeFile(path.join(dir, p.name, 'plexus.json'), json(meta));
  }
  await fs.mkdir(path.join(dir, 'tables'));
  const write = async (name: keyof typeof RESULT_TABLES, rows: Iterable<string>) => {
    const fh = await fs.open(path.join(dir, 'tables', `${name}.csv`), 'w');
    try {
      let buf = RESULT_TABLES[name].join(',') + '\n';
      for (const r of rows) {
        buf += r + '\n';
        if (buf.length > 1 << 20) {
          await fh.write(buf);
          buf = '';
        }
      }
      await fh.write(buf);
    } finally {
      await fh.close();
    }
  };
  let events = 0;
  await write('rois', res.rois.map((r, k) => {
    events += res.events[k]!.length;
    const q = r.quality;
    return [r.id, num(r.centroid[0], 2), num(r.centroid[1], 2), r.area, r.source, r.isCell ? 1 : 0, csvText(r.reason ?? ''), num(q.snr, 2), num(q.skewness, 3), num(q.compactness, 3), num(q.elongation, 2), num(q.contrast, 3), res.events[k]!.length].join(',');
  }));
  const t = res.traces;
  await write('traces', (function* () {
    for (let k = 0; k < res.rois.length; k++) {
      const id = res.rois[k]!.id;
      for (let f = 0; f < t.frames; f++) yield `${id},${f},${num(f / fps, 4)},${num(t.f[k]![f]!, 2)},${num(t.neuropil[k]![f]!, 2)},${num(t.dff[k]![f]!, 5)},${num(t.denoised[k]![f]!, 5)},${num(t.spikes[k]![f]!, 5)}`;
    }
  })());
  await write('events', (function* () {
    for (let k = 0; k < res.rois.length; k++) for (const e of res.events[k]!) yield `${res.rois[k]!.id},${e.frame},${num(e.time, 4)},${num(e.amplitude, 5)}`;
  })());
  const sh = res.registration.shifts;
  await write('shifts', (function* () {
    for (let f = 0; f < sh.length / 2; f++) yield `${f},${num(sh[2 * f]!, 3)},${num(sh[2 * f + 1]!, 3)},${num(res.registration.peaks[f]!, 3)}`;
  })());
  const meta: DatasetMeta = {
    plexusDataset: 1,
    title: info.title,
    description: `Calcium analysis of ${info.source}: ${res.rois.length} ROIs (${res.rois.filter((r) => r.isCell).length} cells), motion-corrected mean, max and local-correlation images.`,
    frameRate: fps,
    layers: Object.fromEntries(planes.map((p) => [p.name, { type: p.type, description: p.description }])),
    tables: {
      rois: { path: 'tables/rois.csv', columns: RESULT_TABLES.rois, description: 'One row per ROI: centroid (pixels, registered frame), area, how it was found, the soma decision and its reason, quality measures, number of events.' },
      traces: { path: 'tables/traces.csv', columns: RESULT_TABLES.traces, description: 'Long format, one row per ROI and frame: F, neuropil, ΔF/F, denoised ΔF/F and inferred activity.' },
      events: { path: 'tables/events.csv', columns: RESULT_TABLES.events, description: 'One row per inferred event: ROI id, frame, time, amplitude (ΔF/F).' },
      shifts: { path: 'tables/shifts.csv', columns: RESULT_TABLES.shifts, description: 'Motion correction: per frame the shift (pixels) and how well it matched the template.' },
    },
  };
  await fs.writeFile(path.join(dir, 'plexus.json'), json(meta));
  return {
    rois: res.rois.length,
    cells: res.rois.filter((r) => r.isCell).length,
    events,
    diameter: Number(res.params.diameter.toFixed(2)),
    maxShift: Number(res.registration.maxAbsShift.toFixed(2)),
    frames: F,
    width: W,
    height: H,
  };
}
