/**
 * The picture people check an analysis by: a summary image of the recording (mean, max or
 * local correlation) with every ROI's outline on it — cells in green, ROIs the soma rule (or a
 * person) rejected in dashed orange, ROI ids beside the cells — after everyone's edits (deleted
 * ROIs gone, merged ones outlined as one, reclassified ones in their new colour). An SVG with the
 * image embedded as a PNG, so it shows in a cell output, a report and a `.ipynb` alike.
 * Effects: file reads.
 */
import path from 'node:path';
import { labelContours, loopPath } from '@plexus/calcium/figures/contours';
import { sampledQuantile } from '@plexus/calcium/image-ops';
import { calciumResult, effectiveRoiIds, roiIsCell, type Job } from '@plexus/shared';
import type { Volumes } from '../volumes/volume-store.ts';
import { encodeGreyPng } from './png.ts';
import { readCsv, readPlane } from './result-files.ts';

export const FIGURE_IMAGES = ['mean', 'max', 'correlation'] as const;
export type FigureImage = (typeof FIGURE_IMAGES)[number];

export interface RoiFigure {
  svg: string;
  /** Display size (px). */
  width: number;
  height: number;
  cells: number;
  notCells: number;
  deleted: number;
}

/** Greyscale bytes of `data` stretched between its 0.5th and 99.5th percentiles (estimated from a sample). */
function stretch(data: ArrayLike<number>): Uint8Array {
  const lo = sampledQuantile(data, 0.005);
  const hi = sampledQuantile(data, 0.995);
  const span = hi > lo ? hi - lo : 1;
  const out = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const v = Number(data[i]);
    out[i] = Number.isFinite(v) ? Math.max(0, Math.min(255, Math.round(((v - lo) / span) * 255))) : 0;
  }
  return out;
}

/** `grey` (w × h) averaged down by a whole factor `k` (k = 1: unchanged). */
function shrink(grey: Uint8Array, w: number, h: number, k: number): { data: Uint8Array; width: number; height: number } {
  if (k <= 1) return { data: grey, width: w, height: h };
  const W = Math.floor(w / k);
  const H = Math.floor(h / k);
  const out = new Uint8Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      let s = 0;
      for (let b = 0; b < k; b++) for (let a = 0; a < k; a++) s += grey[x * k + a + (y * k + b) * w]!;
      out[x + y * W] = Math.round(s / (k * k));
    }
  return { data: out, width: W, height: H };
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot' }[c]};`);

/** The figure of a done calcium job's result. */
export async function roiFigure(volumes: Volumes, job: Job, opts: { image?: FigureImage; ids?: boolean; maxSize?: number } = {}): Promise<RoiFigure> {
  const r = calciumResult(job);
  if (!r) throw new Error(`job ${job.id} has no calcium result yet (${job.status})`);
  const image = opts.image ?? 'mean';
  if (!FIGURE_IMAGES.includes(image)) throw new Error(`image must be one of ${FIGURE_IMAGES.join(', ')}, not ${JSON.stringify(image)}`);
  const bg = await readPlane(volumes, r.dataset, image);
  const labels = await readPlane(volumes, r.dataset, 'rois');
  const { width: W, height: H } = labels;
  if (bg.width !== W || bg.height !== H) throw new Error(`${r.dataset}: ${image} (${bg.width}×${bg.height}) and rois (${W}×${H}) differ in size`);
  const rows = await readCsv(path.join(volumes.root, r.dataset, 'tables', 'rois.csv'), ['id', 'is_cell']);
  const pipelineCell = new Map(rows.map((row) => [Number(row.id), row.is_cell === '1']));

  // Labels after the edits: deleted ROIs cleared, merged ones relabelled as their target.
  const ids = [...pipelineCell.keys()];
  const mapped = effectiveRoiIds(ids, job.roiEdits);
  const edited = new Uint32Array(W * H);
  const sum = new Map<number, { x: number; y: number; n: number }>();
  for (let i = 0; i < W * H; i++) {
    const id = Number(labels.data[i]);
    const to = id ? (mapped.get(id) ?? 0) : 0;
    edited[i] = to;
    if (!to) continue;
    const c = sum.get(to) ?? { x: 0, y: 0, n: 0 };
    c.x += i % W;
    c.y += Math.floor(i / W);
    c.n++;
    sum.set(to, c);
  }
  const contours = labelContours(edited, W, H);
  // Small fields are enlarged by whole pixels (to about 512 px), large ones shrunk to `maxSize`.
  const maxSize = opts.maxSize ?? 640;
  const side = Math.max(W, H);
  const scale = side > maxSize ? maxSize / side : Math.max(1, Math.floor(512 / side));
  const dw = Math.round(W * scale);
  const dh = Math.round(H * scale);
  const caption = 36;
  let cells = 0;
  let notCells = 0;
  const cellPaths: string[] = [];
  const otherPaths: string[] = [];
  const idText: string[] = [];
  const font = Math.max(7, Math.min(12, 9 * scale));
  for (const [id, loops] of [...contours].sort((a, b) => a[0] - b[0])) {
    const cell = roiIsCell(id, pipelineCell.get(id) ?? false, job.roiEdits);
    const d = loops.map((l) => loopPath(l, scale)).join('');
    (cell ? cellPaths : otherPaths).push(`<path d="${d}"><title>ROI ${id}</title></path>`);
    if (cell) {
      cells++;
      const c = sum.get(id)!;
      if (opts.ids !== false) idText.push(`<text x="${+((c.x / c.n + 0.5) * scale + font * 0.6).toFixed(1)}" y="${+((c.y / c.n + 0.5) * scale - font * 0.6).toFixed(1)}">${id}</text>`);
    } else notCells++;
  }
  const deleted = Object.values(job.roiEdits).filter((e) => e.action === 'delete').length;
  // The picture at about its display size (a large field is averaged down: smaller, faster).
  const img = shrink(stretch(bg.data), W, H, Math.max(1, Math.floor(1 / scale)));
  const png = encodeGreyPng(img.data, img.width, img.height).toString('base64');
  const what = `${image === 'correlation' ? 'local-correlation' : image} image of ${job.input.dataset ?? r.dataset}`;
  const counts = `${cells} cells (green) · ${notCells} not cells (orange, dashed)${deleted ? ` · ${deleted} deleted` : ''}`;
  const text = `${what}: ${counts}`;
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${dw}" height="${dh + caption}" viewBox="0 0 ${dw} ${dh + caption}" font-family="system-ui, sans-serif">`,
    `<title>${esc(text)}</title>`,
    `<image href="data:image/png;base64,${png}" width="${dw}" height="${dh}" preserveAspectRatio="none" style="image-rendering:pixelated"/>`,
    `<g fill="none" stroke="#ff9f43" stroke-width="1" stroke-dasharray="3 2" stroke-linejoin="round">${otherPaths.join('')}</g>`,
    `<g fill="none" stroke="#3ddc84" stroke-width="1.2" stroke-linejoin="round">${cellPaths.join('')}</g>`,
    `<g fill="#3ddc84" font-size="${font.toFixed(1)}" paint-order="stroke" stroke="#000" stroke-width="2">${idText.join('')}</g>`,
    `<rect y="${dh}" width="${dw}" height="${caption}" fill="#fff"/>`,
    `<text x="4" y="${dh + 14}" font-size="11" fill="#333">${esc(what)}</text>`,
    `<text x="4" y="${dh + 29}" font-size="11" fill="#333">${esc(counts)}</text>`,
    '</svg>',
  ].join('');
  return { svg, width: dw, height: dh + caption, cells, notCells, deleted };
}
