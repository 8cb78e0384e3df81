/**
 * The demo dataset's ground-truth tables as CSV text: `rois.csv` (one row per neuron, with its
 * single-spike and peak SNR),
 * `traces.csv` (long format: one row per neuron and frame, noise-free ΔF/F) and `spikes.csv`
 * (one row per spike). Numbers are printed with fixed decimals so output is byte-stable. Pure.
 */
import type { CalciumTruth } from './calcium-sim.ts';

export const TABLE_COLUMNS = {
  rois: ['id', 'centroid_x', 'centroid_y', 'area_px', 'snr', 'silent', 'spikes', 'rate_hz', 'label_px', 'peak_snr'],
  traces: ['id', 'frame', 'time_s', 'dff'],
  spikes: ['id', 'frame', 'time_s'],
} as const;

/** Peak SNR of a neuron: its single-spike SNR scaled by the largest noise-free ΔF/F it reaches (0 when silent). */
export function peakSnr(n: CalciumTruth['neurons'][number]): number {
  let peak = 0;
  for (const v of n.dff) if (v > peak) peak = v;
  return n.amplitude > 0 ? (n.snr * peak) / n.amplitude : 0;
}

/** rois.csv: centroids in pixel units (pixel centres at integers), area = pixels with weight ≥ 0.5, label_px = pixels the labels layer gives the neuron. */
export function roisCsv(truth: CalciumTruth): string {
  const labelPx = new Map<number, number>();
  for (const id of truth.labels) if (id) labelPx.set(id, (labelPx.get(id) ?? 0) + 1);
  const duration = truth.params.frames / truth.params.frameRate;
  const rows = truth.neurons.map((n) =>
    [n.id, n.centroid[0].toFixed(2), n.centroid[1].toFixed(2), n.area, n.snr.toFixed(2), n.silent ? 1 : 0, n.spikeTimes.length, (n.spikeTimes.length / duration).toFixed(3), labelPx.get(n.id) ?? 0, peakSnr(n).toFixed(2)].join(','),
  );
  return [TABLE_COLUMNS.rois.join(','), ...rows].join('\n') + '\n';
}

/** traces.csv: time_s is the frame's centre, (frame + 0.5) / frameRate, where ΔF/F is sampled. */
export function tracesCsv(truth: CalciumTruth): string {
  const fps = truth.params.frameRate;
  const out: string[] = [TABLE_COLUMNS.traces.join(',')];
  for (const n of truth.neurons)
    for (let f = 0; f < n.dff.length; f++) out.push(`${n.id},${f},${((f + 0.5) / fps).toFixed(4)},${n.dff[f]!.toFixed(5)}`);
  return out.join('\n') + '\n';
}

/** spikes.csv: the spike's time and the frame it falls in, floor(time_s · frameRate). */
export function spikesCsv(truth: CalciumTruth): string {
  const fps = truth.params.frameRate;
  const out: string[] = [TABLE_COLUMNS.spikes.join(',')];
  for (const n of truth.neurons) for (const t of n.spikeTimes) out.push(`${n.id},${Math.floor(t * fps)},${t.toFixed(4)}`);
  return out.join('\n') + '\n';
}
