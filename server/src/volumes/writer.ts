/**
 * Writes Neuroglancer precomputed layers: the `info` file and gzip-compressed raw chunks
 * (`<scale key>/x0-x1_y0-y1_z0-z1.gz`). Compression runs on libuv's thread pool with a bounded
 * queue, so a producer can compute the next region while earlier chunks compress.
 * Effects: creates directories and files under the layer directory.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { allocVoxels, chunkName, chunksIntersecting, copyBox, encodeRawChunk, scaleBox, boxVoxels, type Box, type DataType, type PrecomputedInfo, type Vec3, type VoxelArray } from './precomputed.ts';

const gzip = promisify(zlib.gzip);

export interface ScaleSpec {
  size: Vec3;
  resolution: Vec3;
  chunk: Vec3;
  voxelOffset?: Vec3;
}

/** An `info` object; scale keys follow the usual `<rx>_<ry>_<rz>` convention. */
export function makeInfo(type: 'image' | 'segmentation', dataType: DataType, scales: ScaleSpec[]): PrecomputedInfo {
  return {
    '@type': 'neuroglancer_multiscale_volume',
    type,
    data_type: dataType,
    num_channels: 1,
    scales: scales.map((s) => ({
      key: s.resolution.join('_'),
      size: s.size,
      resolution: s.resolution,
      voxel_offset: s.voxelOffset ?? [0, 0, 0],
      chunk_sizes: [s.chunk],
      encoding: 'raw',
    })),
  };
}

export interface WriterOptions {
  /**
   * `noisy`: Huffman coding only — noisy images have almost no repeated strings, so LZ77 matching
   * costs 1.5× the time for ~5 % smaller files. `default`: zlib level 6 (labels, projections).
   */
  compression?: 'noisy' | 'default';
  /** Chunks compressing or being written at once. */
  concurrency?: number;
}

export class PrecomputedWriter {
  private readonly pending = new Set<Promise<void>>();
  private failure: unknown = null;
  private readonly zopts: zlib.ZlibOptions;
  private readonly concurrency: number;
  bytesWritten = 0;

  constructor(
    readonly dir: string,
    readonly info: PrecomputedInfo,
    opts: WriterOptions = {},
  ) {
    this.zopts = opts.compression === 'noisy' ? { strategy: zlib.constants.Z_HUFFMAN_ONLY } : { level: 6 };
    this.concurrency = opts.concurrency ?? 8;
  }

  /** Creates the layer directory, its scale directories and the `info` file. */
  async init(): Promise<void> {
    for (const s of this.info.scales) await fs.mkdir(path.join(this.dir, s.key), { recursive: true });
    await fs.writeFile(path.join(this.dir, 'info'), JSON.stringify(this.info, null, 1) + '\n');
  }

  /**
   * Queues every chunk of scale `scale` that intersects `region`, cut from `data` (which spans
   * `region`, x fastest). Each such chunk must lie wholly inside `region` (regions follow the
   * chunk grid). Resolves once the queue has room again.
   */
  async writeRegion(scale: number, region: Box, data: VoxelArray): Promise<void> {
    const s = this.info.scales[scale]!;
    if (data.length !== boxVoxels(region)) throw new Error(`region data has ${data.length} voxels, expected ${boxVoxels(region)}`);
    for (const chunk of chunksIntersecting(s, region)) {
      if (chunk.min.some((v, d) => v < region.min[d]!) || chunk.max.some((v, d) => v > region.max[d]!))
        throw new Error(`chunk ${chunkName(chunk)} is not inside the region: regions must follow the chunk grid`);
      const voxels = allocVoxels(this.info.data_type, boxVoxels(chunk));
      copyBox(data, region, voxels, chunk);
      await this.enqueue(path.join(this.dir, s.key, chunkName(chunk) + '.gz'), voxels);
    }
  }

  /** Writes a whole scale from one array spanning it. */
  async writeScale(scale: number, data: VoxelArray): Promise<void> {
    await this.writeRegion(scale, scaleBox(this.info.scales[scale]!), data);
  }

  private async enqueue(file: string, voxels: VoxelArray): Promise<void> {
    if (this.failure) throw this.failure;
    const job = gzip(encodeRawChunk(voxels), this.zopts)
      .then((z) => {
        this.bytesWritten += z.length;
        return fs.writeFile(file, z);
      })
      .catch((e) => {
        this.failure ??= e;
      })
      .finally(() => this.pending.delete(job));
    this.pending.add(job);
    while (this.pending.size >= this.concurrency) await Promise.race(this.pending);
  }

  /** Waits for every queued chunk; throws the first write error. */
  async close(): Promise<void> {
    await Promise.all(this.pending);
    if (this.failure) throw this.failure;
  }
}
