/**
 * Reading what a calcium job wrote (calcium-results.ts) back from a served dataset: its CSV
 * tables, its 2-D image layers and its ROI labels. Effects: file reads.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { readRegion } from '../volumes/sampling.ts';
import type { Volumes } from '../volumes/volume-store.ts';

/** One CSV line split into fields (double-quoted fields may hold commas and "" quotes). */
export function splitCsv(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

/** Rows of a CSV file as objects of the named columns. */
export async function readCsv(file: string, columns: string[]): Promise<Array<Record<string, string>>> {
  const text = await fs.readFile(file, 'utf8').catch(() => {
    throw new Error(`${path.basename(path.dirname(path.dirname(file)))} has no ${path.basename(file)} table`);
  });
  const lines = text.split('\n').filter((l) => l.length);
  const head = splitCsv(lines[0] ?? '');
  const idx = columns.map((c) => {
    const i = head.indexOf(c);
    if (i < 0) throw new Error(`${path.basename(file)} has no column ${c}`);
    return i;
  });
  return lines.slice(1).map((l) => {
    const f = splitCsv(l);
    return Object.fromEntries(columns.map((c, k) => [c, f[idx[k]!] ?? '']));
  });
}

/** The first z plane of a layer at full resolution, as numbers (x fastest). */
export async function readPlane(volumes: Volumes, dataset: string, layer: string): Promise<{ data: ArrayLike<number>; width: number; height: number }> {
  const vol = await volumes.openLayer(dataset, layer);
  const s = vol.info.scales[0]!;
  const [W, H] = s.size;
  const o = s.voxel_offset;
  const data = await readRegion(vol, 0, { min: [o[0], o[1], o[2]], max: [o[0] + W, o[1] + H, o[2] + 1] });
  return { data: data as ArrayLike<number>, width: W, height: H };
}

/** ROIs (pixel sets) from a 2-D labels layer. */
export async function roisOfLabels(volumes: Volumes, dataset: string, layer: string): Promise<{ rois: Map<number, number[]>; width: number; height: number }> {
  const { data, width: W, height: H } = await readPlane(volumes, dataset, layer);
  const rois = new Map<number, number[]>();
  for (let i = 0; i < W * H; i++) {
    const id = Number(data[i]!);
    if (!id) continue;
    let l = rois.get(id);
    if (!l) rois.set(id, (l = []));
    l.push(i);
  }
  return { rois, width: W, height: H };
}
