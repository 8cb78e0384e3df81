/**
 * Server-side sampling of precomputed volumes, reading the same chunk files the viewer reads:
 * regions, histograms and ROI mean traces (mean over an ROI's pixels per z, i.e. per frame of a
 * movie). Works on any `Volume` (`chunk-source.ts`), has no HTTP dependency, and is meant to be
 * imported by the notebook kernel too. Channel 0 only. Effects: reads through the ChunkSource.
 */
import type { Volume } from './chunk-source.ts';
import { allocVoxels, boxSize, boxVoxels, chunkName, chunksIntersecting, copyBox, decodeRawChunk, requireInside, scaleBox, VolumeError, type Box, type PrecomputedScale, type VoxelArray } from './precomputed.ts';

export interface SampleOptions {
  /** Most voxels (of whole chunks) one call may read; VolumeError('too-large') beyond. */
  maxVoxels?: number;
}

export const DEFAULT_MAX_SAMPLE_VOXELS = 64 * 1024 * 1024;

/** Scale `index` of `volume`, or VolumeError('bad-request'). */
export function scaleOf(volume: Volume, index: number): PrecomputedScale {
  const s = Number.isInteger(index) ? volume.info.scales[index] : undefined;
  if (!s) throw new VolumeError('bad-request', `${volume.name} has scales 0–${volume.info.scales.length - 1}, not ${index}`);
  return s;
}

/**
 * Calls `visit` with each chunk of scale `scale` intersecting `box` (decoded; channel 0), in grid
 * order, after checking that the chunks to read stay within `maxVoxels`. A missing chunk file is
 * a VolumeError('not-found').
 */
export async function forEachChunk(volume: Volume, scale: number, box: Box, visit: (data: VoxelArray, chunk: Box) => void, opts: SampleOptions = {}): Promise<void> {
  const s = scaleOf(volume, scale);
  const chunks = chunksIntersecting(s, box);
  const voxels = chunks.reduce((a, c) => a + boxVoxels(c), 0);
  const limit = opts.maxVoxels ?? DEFAULT_MAX_SAMPLE_VOXELS;
  if (voxels > limit) throw new VolumeError('too-large', `this request would read ${voxels} voxels (${chunks.length} chunks of ${volume.name}); the limit is ${limit}: ask for a smaller region or a coarser scale`);
  const channels = volume.info.num_channels;
  for (const chunk of chunks) {
    const name = chunkName(chunk);
    const bytes = await volume.source.readChunk(s.key, name);
    if (!bytes) throw new VolumeError('not-found', `chunk ${s.key}/${name} of ${volume.name} is missing`);
    const data = decodeRawChunk(bytes, volume.info.data_type, chunk, channels, `${volume.name}/${s.key}/${name}`);
    visit(channels > 1 ? data.subarray(0, boxVoxels(chunk)) : data, chunk);
  }
}

/** The voxels of `box` (inside scale `scale`), x fastest. */
export async function readRegion(volume: Volume, scale: number, box: Box, opts: SampleOptions = {}): Promise<VoxelArray> {
  requireInside(scaleOf(volume, scale), box);
  const out = allocVoxels(volume.info.data_type, boxVoxels(box));
  await forEachChunk(volume, scale, box, (data, chunk) => copyBox(data, chunk, out, box), opts);
  return out;
}

export interface Histogram {
  bins: number;
  /** bins + 1 bin edges; bin i holds lo + i·w ≤ v < lo + (i+1)·w (the last bin includes hi). */
  edges: number[];
  counts: number[];
  /** Over every (non-NaN) voxel of the region, whatever the range. */
  min: number;
  max: number;
  mean: number;
  count: number;
  /** Voxels below / above the range (only with an explicit range). */
  underflow: number;
  overflow: number;
}

/** Bin index of `v` in [lo, hi) with `bins` bins (hi itself goes to the last bin); −1 / bins outside. */
export function binOf(v: number, lo: number, hi: number, bins: number): number {
  if (v < lo) return -1;
  if (v > hi) return bins;
  return Math.min(bins - 1, Math.floor(((v - lo) / (hi - lo)) * bins));
}

/**
 * Histogram of scale `scale` over `bbox` (default: the whole scale) with `bins` bins over `range`
 * (default: [min, max] of the region; a constant region gets [v, v + 1]). uint8/uint16 regions
 * are read once (exact value counts); uint32/float32 without a range are read twice.
 */
export async function histogram(volume: Volume, scale = 0, bbox?: Box, bins = 64, range?: [number, number], opts: SampleOptions = {}): Promise<Histogram> {
  const s = scaleOf(volume, scale);
  const box = bbox ?? scaleBox(s);
  requireInside(s, box);
  if (!Number.isInteger(bins) || bins < 1 || bins > 4096) throw new VolumeError('bad-request', `bins must be an integer from 1 to 4096, got ${bins}`);
  if (range && !(Number.isFinite(range[0]) && Number.isFinite(range[1]) && range[0] < range[1])) throw new VolumeError('bad-request', `range must be two finite numbers min < max, got ${range.join(', ')}`);
  // Visits the voxels of each chunk that lie in `box`.
  const scan = (fn: (v: number) => void) =>
    forEachChunk(volume, scale, box, (data, chunk) => {
      const [cx, cy] = boxSize(chunk);
      const x0 = Math.max(box.min[0], chunk.min[0]) - chunk.min[0];
      const x1 = Math.min(box.max[0], chunk.max[0]) - chunk.min[0];
      for (let z = Math.max(box.min[2], chunk.min[2]); z < Math.min(box.max[2], chunk.max[2]); z++)
        for (let y = Math.max(box.min[1], chunk.min[1]); y < Math.min(box.max[1], chunk.max[1]); y++) {
          const row = cx * (y - chunk.min[1] + cy * (z - chunk.min[2]));
          for (let x = x0; x < x1; x++) fn(data[row + x]!);
        }
    }, opts);

  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  let count = 0;
  const stat = (v: number) => {
    if (v !== v) return; // NaN
    if (v < min) min = v;
    if (v > max) max = v;
    sum += v;
    count++;
  };
  const counts = new Array<number>(bins).fill(0);
  let underflow = 0;
  let overflow = 0;
  const add = (v: number, lo: number, hi: number, n = 1) => {
    const b = binOf(v, lo, hi, bins);
    if (b < 0) underflow += n;
    else if (b >= bins) overflow += n;
    else counts[b]! += n;
  };

  let lo: number;
  let hi: number;
  const dt = volume.info.data_type;
  if (range) {
    [lo, hi] = range;
    await scan((v) => {
      stat(v);
      if (v === v) add(v, lo, hi);
    });
  } else if (dt === 'uint8' || dt === 'uint16') {
    const values = new Float64Array(dt === 'uint8' ? 256 : 65536);
    await scan((v) => {
      values[v]!++;
    });
    for (let v = 0; v < values.length; v++) if (values[v]) {
      min = Math.min(min, v);
      max = Math.max(max, v);
      sum += v * values[v]!;
      count += values[v]!;
    }
    lo = min;
    hi = max > min ? max : min + 1;
    for (let v = min; v <= max; v++) if (values[v]) add(v, lo, hi, values[v]!);
  } else {
    await scan(stat);
    lo = count ? min : 0;
    hi = count && max > min ? max : lo + 1;
    await scan((v) => {
      if (v === v) add(v, lo, hi);
    });
  }
  const edges = Array.from({ length: bins + 1 }, (_, i) => lo + ((hi - lo) * i) / bins);
  return { bins, edges, counts, min: count ? min : NaN, max: count ? max : NaN, mean: count ? sum / count : NaN, count, underflow, overflow };
}

/** Pixels (x, y) in a scale's global voxel coordinates. */
export interface PixelMask {
  xs: Int32Array;
  ys: Int32Array;
}

export interface Trace {
  /** values[i]: mean over the mask's pixels at z = z[0] + i. */
  values: number[];
  /** Mask pixels inside the volume (the ones averaged). */
  pixels: number;
  /** The z range [z0, z1) of the values. */
  z: [number, number];
}

/** Pixels whose centres lie within `r` of (cx, cy) (pixel centres at integer coordinates). */
export function circleMask(cx: number, cy: number, r: number): PixelMask {
  if (![cx, cy, r].every(Number.isFinite) || r < 0) throw new VolumeError('bad-request', 'a circle needs finite x, y and a radius ≥ 0');
  const xs: number[] = [];
  const ys: number[] = [];
  for (let y = Math.ceil(cy - r); y <= Math.floor(cy + r); y++)
    for (let x = Math.ceil(cx - r); x <= Math.floor(cx + r); x++)
      if ((x - cx) ** 2 + (y - cy) ** 2 <= r * r) {
        xs.push(x);
        ys.push(y);
      }
  return { xs: Int32Array.from(xs), ys: Int32Array.from(ys) };
}

/**
 * Mean of scale `scale` over `mask`'s pixels for every z in `z` (default: the whole z extent):
 * reads only the chunk columns under the mask.
 */
export async function maskTrace(volume: Volume, scale: number, mask: PixelMask, opts: SampleOptions & { z?: [number, number] } = {}): Promise<Trace> {
  const s = scaleOf(volume, scale);
  const whole = scaleBox(s);
  const z0 = opts.z?.[0] ?? whole.min[2];
  const z1 = opts.z?.[1] ?? whole.max[2];
  if (!(Number.isInteger(z0) && Number.isInteger(z1) && z0 < z1 && z0 >= whole.min[2] && z1 <= whole.max[2])) throw new VolumeError('bad-request', `z range [${z0}, ${z1}) is not inside [${whole.min[2]}, ${whole.max[2]})`);
  const inside: number[] = [];
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (let i = 0; i < mask.xs.length; i++) {
    const x = mask.xs[i]!;
    const y = mask.ys[i]!;
    if (x < whole.min[0] || x >= whole.max[0] || y < whole.min[1] || y >= whole.max[1]) continue;
    inside.push(i);
    x0 = Math.min(x0, x);
    y0 = Math.min(y0, y);
    x1 = Math.max(x1, x + 1);
    y1 = Math.max(y1, y + 1);
  }
  if (inside.length === 0) throw new VolumeError('bad-request', `the ROI has no pixels inside ${volume.name}`);
  const sums = new Float64Array(z1 - z0);
  await forEachChunk(volume, scale, { min: [x0, y0, z0], max: [x1, y1, z1] }, (data, chunk) => {
    const [cx, cy] = boxSize(chunk);
    const offsets: number[] = [];
    for (const i of inside) {
      const x = mask.xs[i]!;
      const y = mask.ys[i]!;
      if (x >= chunk.min[0] && x < chunk.max[0] && y >= chunk.min[1] && y < chunk.max[1]) offsets.push(x - chunk.min[0] + cx * (y - chunk.min[1]));
    }
    if (offsets.length === 0) return;
    for (let z = Math.max(z0, chunk.min[2]); z < Math.min(z1, chunk.max[2]); z++) {
      const plane = cx * cy * (z - chunk.min[2]);
      let acc = 0;
      for (const o of offsets) acc += data[plane + o]!;
      sums[z - z0]! += acc;
    }
  }, opts);
  return { values: Array.from(sums, (v) => v / inside.length), pixels: inside.length, z: [z0, z1] };
}

/** The pixels of `labels` (its first z plane) equal to `id`, at the scale whose x/y voxel size is `resolution`. */
export async function labelMask(labels: Volume, id: number, resolution: [number, number], opts: SampleOptions = {}): Promise<PixelMask> {
  if (!Number.isInteger(id) || id < 1) throw new VolumeError('bad-request', `roi must be a positive integer label id, got ${id}`);
  const index = labels.info.scales.findIndex((s) => s.resolution[0] === resolution[0] && s.resolution[1] === resolution[1]);
  if (index < 0) throw new VolumeError('bad-request', `${labels.name} has no scale with an x/y voxel size of ${resolution.join('×')} nm (the image scale's)`);
  const s = labels.info.scales[index]!;
  const whole = scaleBox(s);
  const plane: Box = { min: whole.min, max: [whole.max[0], whole.max[1], whole.min[2] + 1] };
  const xs: number[] = [];
  const ys: number[] = [];
  await forEachChunk(labels, index, plane, (data, chunk) => {
    const [cx, cy] = boxSize(chunk);
    for (let y = 0; y < cy; y++)
      for (let x = 0; x < cx; x++)
        if (data[x + cx * y] === id) {
          xs.push(chunk.min[0] + x);
          ys.push(chunk.min[1] + y);
        }
  }, opts);
  if (xs.length === 0) throw new VolumeError('not-found', `roi ${id} has no pixels in ${labels.name}`);
  return { xs: Int32Array.from(xs), ys: Int32Array.from(ys) };
}

/** ROI `roiId` of `labels`' mean per z over scale `scale` of `volume`: the ROI's raw fluorescence trace. */
export async function roiTrace(volume: Volume, labels: Volume, roiId: number, opts: SampleOptions & { scale?: number; z?: [number, number] } = {}): Promise<Trace> {
  const scale = opts.scale ?? 0;
  const s = scaleOf(volume, scale);
  const mask = await labelMask(labels, roiId, [s.resolution[0], s.resolution[1]], opts);
  return maskTrace(volume, scale, mask, opts);
}
