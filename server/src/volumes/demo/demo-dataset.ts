/**
 * Writes the demo dataset `calcium-demo`: the synthetic recording as precomputed layers `movie`
 * (uint16, z = time, plus a 2×2-downsampled scale), `mean` (float32) and `max` (uint16)
 * projections, `labels` (uint32 segmentation of the ground-truth somata), the ground-truth tables
 * and the `plexus.json` descriptions. Frames are rendered one chunk-slab at a time (bounded memory)
 * while earlier chunks compress on the thread pool.
 * Effects: creates files under the target directory (which the caller makes atomic).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { DatasetMeta, LayerMeta } from '../meta.ts';
import type { Vec3 } from '../precomputed.ts';
import { makeInfo, PrecomputedWriter } from '../writer.ts';
import { simulateCalcium, DEFAULT_CALCIUM_PARAMS, type CalciumParams, type CalciumTruth } from './calcium-sim.ts';
import { frameRenderer } from './calcium-render.ts';
import { roisCsv, spikesCsv, tracesCsv, TABLE_COLUMNS } from './demo-tables.ts';

export const DEMO_DATASET = 'calcium-demo';
/** Bump whenever the generator's output changes: a dataset of another version is regenerated. */
export const DEMO_GENERATOR_VERSION = 2;
export const DEMO_GENERATOR_NAME = 'plexus-calcium-demo';

export interface DemoLayout {
  /** Chunk size of the movie (both scales). */
  movieChunk: Vec3;
  /** Chunk size (x, y) of the 2-D layers. */
  planeChunk: [number, number];
  /** Also write a 2×2×1-downsampled movie scale. */
  downsample: boolean;
}

export const DEFAULT_DEMO_LAYOUT: Readonly<DemoLayout> = Object.freeze<DemoLayout>({ movieChunk: [64, 64, 64], planeChunk: [128, 128], downsample: true });

export interface DemoOptions {
  params?: Partial<CalciumParams>;
  layout?: Partial<DemoLayout>;
}

export interface DemoResult {
  truth: CalciumTruth;
  /** Generation time, ms. */
  ms: number;
  /** Bytes of chunk files written (compressed). */
  chunkBytes: number;
}

/** Full parameters and layout for `options` (what plexus.json records, and what decides regeneration). */
export function resolveDemoOptions(options: DemoOptions = {}): { params: CalciumParams; layout: DemoLayout } {
  return { params: { ...DEFAULT_CALCIUM_PARAMS, ...options.params }, layout: { ...DEFAULT_DEMO_LAYOUT, ...options.layout } };
}

/** 2×2 mean of `nz` frames of W×H (an odd last row or column averages the pixels it has), rounded. */
function downsample2(src: Uint16Array, W: number, H: number, nz: number): Uint16Array {
  const w = Math.ceil(W / 2);
  const h = Math.ceil(H / 2);
  const out = new Uint16Array(w * h * nz);
  for (let z = 0; z < nz; z++)
    for (let y = 0; y < h; y++) {
      const r0 = W * (2 * y + H * z);
      const r1 = 2 * y + 1 < H ? r0 + W : r0; // an odd last row pairs with itself
      const o = w * (y + h * z);
      for (let x = 0; x < w; x++) {
        const x1 = 2 * x + 1 < W ? 2 * x + 1 : 2 * x;
        out[o + x] = (src[r0 + 2 * x]! + src[r0 + x1]! + src[r1 + 2 * x]! + src[r1 + x1]! + 2) >> 2;
      }
    }
  return out;
}

const json = (v: unknown) => JSON.stringify(v, null, 1) + '\n';

/** Generates the dataset into `dir` (created; should be new and empty). */
export async function writeDemoDataset(dir: string, options: DemoOptions = {}): Promise<DemoResult> {
  const started = performance.now();
  const { params, layout } = resolveDemoOptions(options);
  const truth = simulateCalcium(params);
  const { width: W, height: H, frames: F, frameRate } = params;
  const frameNs = Math.round(1e9 / frameRate);
  const planeZ = F * frameNs; // one plane spans the whole recording along z
  const [pcx, pcy] = layout.planeChunk;
  const mc = layout.movieChunk;

  const movieInfo = makeInfo('image', 'uint16', [
    { size: [W, H, F], resolution: [1000, 1000, frameNs], chunk: mc },
    ...(layout.downsample ? [{ size: [Math.ceil(W / 2), Math.ceil(H / 2), F] as Vec3, resolution: [2000, 2000, frameNs] as Vec3, chunk: mc }] : []),
  ]);
  const movie = new PrecomputedWriter(path.join(dir, 'movie'), movieInfo, { compression: 'noisy' });
  await movie.init();
  const render = frameRenderer(truth);
  const plane = W * H;
  const projections = { sum: new Float64Array(plane), max: new Uint16Array(plane) };
  const slab = new Uint16Array(plane * mc[2]);
  for (let z0 = 0; z0 < F; z0 += mc[2]) {
    const z1 = Math.min(F, z0 + mc[2]);
    const data = slab.subarray(0, plane * (z1 - z0));
    for (let f = z0; f < z1; f++) render(f, data, (f - z0) * plane, projections);
    // writeRegion copies its chunks out of `data` before it returns, so the slab can be reused.
    await movie.writeRegion(0, { min: [0, 0, z0], max: [W, H, z1] }, data);
    if (layout.downsample) await movie.writeRegion(1, { min: [0, 0, z0], max: [Math.ceil(W / 2), Math.ceil(H / 2), z1] }, downsample2(data, W, H, z1 - z0));
  }
  const planes = [
    { name: 'mean', type: 'image' as const, dataType: 'float32' as const, data: Float32Array.from(projections.sum, (s) => s / F), values: 'ADU (mean over frames)', description: 'Mean projection of the movie over time.' },
    { name: 'max', type: 'image' as const, dataType: 'uint16' as const, data: projections.max, values: 'ADU (max over frames)', description: 'Maximum projection of the movie over time.' },
    { name: 'labels', type: 'segmentation' as const, dataType: 'uint32' as const, data: truth.labels, values: 'neuron id (0 = background)', description: 'Ground-truth somata: id = neuron id (rois.csv), 0 background; where somata overlap the brighter one wins.' },
  ];
  const writers = [movie];
  for (const p of planes) {
    const w = new PrecomputedWriter(path.join(dir, p.name), makeInfo(p.type, p.dataType, [{ size: [W, H, 1], resolution: [1000, 1000, planeZ], chunk: [pcx, pcy, 1] }]));
    await w.init();
    await w.writeScale(0, p.data);
    writers.push(w);
  }
  for (const w of writers) await w.close();

  const resolutionNote = (z: string) => `precomputed resolution is in nm: x, y 1000 nm = 1 µm per pixel; ${z}`;
  const movieMeta: LayerMeta = {
    description: `Synthetic two-photon calcium-imaging movie, ${W}×${H} pixels × ${F} frames at ${frameRate} Hz; z is time (frame index).`,
    axes: { x: 'µm', y: 'µm', z: 's' },
    voxelSize: [1, 1, 1 / frameRate],
    frameRate,
    values: 'ADU',
    resolutionNote: resolutionNote(`z ${frameNs} "nm" per frame: read nm as ns (1 frame = ${frameNs} ns = 1/${frameRate} s)`),
  };
  await fs.writeFile(path.join(dir, 'movie', 'plexus.json'), json(movieMeta));
  for (const p of planes) {
    const meta: LayerMeta = {
      description: p.description,
      axes: { x: 'µm', y: 'µm', z: 'none' },
      voxelSize: [1, 1, F / frameRate],
      values: p.values,
      resolutionNote: resolutionNote(`the single z plane is ${planeZ} "nm" thick, the whole recording (${F} frames), so it shows at every frame of the movie`),
    };
    await fs.writeFile(path.join(dir, p.name, 'plexus.json'), json(meta));
  }

  await fs.mkdir(path.join(dir, 'tables'));
  await fs.writeFile(path.join(dir, 'tables', 'rois.csv'), roisCsv(truth));
  await fs.writeFile(path.join(dir, 'tables', 'traces.csv'), tracesCsv(truth));
  await fs.writeFile(path.join(dir, 'tables', 'spikes.csv'), spikesCsv(truth));

  const meta: DatasetMeta = {
    plexusDataset: 1,
    title: 'Synthetic two-photon calcium imaging (demo)',
    description: `Simulated GCaMP6f-like recording of ${params.neurons} neurons (${truth.neurons.filter((n) => n.silent).length} silent): soma footprints, bursty Poisson spiking, neuropil, a blood vessel, baseline drift, shot and read noise, rigid motion jitter.`,
    generator: { name: DEMO_GENERATOR_NAME, version: DEMO_GENERATOR_VERSION, params: { ...params, layout } },
    frameRate,
    layers: Object.fromEntries([['movie', { type: 'image' as const, description: movieMeta.description }], ...planes.map((p) => [p.name, { type: p.type, description: p.description }])]),
    tables: {
      rois: { path: 'tables/rois.csv', columns: TABLE_COLUMNS.rois, description: 'One row per neuron: centroid (pixels, pixel centres at integers), area (pixels with footprint ≥ 0.5), single-spike SNR, silent flag, spike count and rate, pixels in the labels layer, peak SNR (single-spike SNR × the largest ΔF/F reached / one spike\'s; 0 when silent).' },
      traces: { path: 'tables/traces.csv', columns: TABLE_COLUMNS.traces, description: 'Long format, one row per neuron and frame: noise-free ΔF/F of the neuron, sampled at the frame centre time_s = (frame + 0.5) / frameRate.' },
      spikes: { path: 'tables/spikes.csv', columns: TABLE_COLUMNS.spikes, description: 'One row per spike: neuron id, frame = floor(time_s · frameRate), spike time.' },
    },
  };
  // Written last: a dataset directory with a current plexus.json is complete.
  await fs.writeFile(path.join(dir, 'plexus.json'), json(meta));
  return { truth, ms: performance.now() - started, chunkBytes: writers.reduce((a, w) => a + w.bytesWritten, 0) };
}
