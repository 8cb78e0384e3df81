/**
 * Neuroglancer "precomputed" volumes, unsharded, `raw` chunk encoding: the `info` schema and its
 * validation, the chunk grid (which chunk files cover a region, and their names
 * `x0-x1_y0-y1_z0-z1`), and raw chunk encoding/decoding (little-endian, x fastest, then y, z,
 * channel). Format reference: neuroglancer `src/datasource/precomputed/volume.md`.
 * Pure module: no I/O.
 */

export const DATA_TYPES = ['uint8', 'uint16', 'uint32', 'float32'] as const;
export type DataType = (typeof DATA_TYPES)[number];
export type Vec3 = [number, number, number];

/** A typed array of one of the supported data types. */
export type VoxelArray = Uint8Array | Uint16Array | Uint32Array | Float32Array;

export interface PrecomputedScale {
  key: string;
  size: Vec3;
  /** Voxel size, nanometres (Neuroglancer's unit for precomputed volumes). */
  resolution: Vec3;
  voxel_offset: Vec3;
  chunk_sizes: Vec3[];
  encoding: 'raw';
}

export interface PrecomputedInfo {
  '@type'?: 'neuroglancer_multiscale_volume';
  type: 'image' | 'segmentation';
  data_type: DataType;
  num_channels: number;
  scales: PrecomputedScale[];
}

/** A half-open voxel box [min, max) in a scale's global voxel coordinates (voxel_offset included). */
export interface Box {
  min: Vec3;
  max: Vec3;
}

export class VolumeError extends Error {
  constructor(
    readonly kind: 'bad-request' | 'not-found' | 'too-large' | 'corrupt' | 'unsupported',
    message: string,
  ) {
    super(message);
  }
}

export const BYTES_PER_VOXEL: Record<DataType, number> = { uint8: 1, uint16: 2, uint32: 4, float32: 4 };

const isVec3 = (v: unknown, integer: boolean): v is Vec3 =>
  Array.isArray(v) && v.length === 3 && v.every((x) => typeof x === 'number' && Number.isFinite(x) && (!integer || Number.isInteger(x)));

/** Validates a parsed `info` JSON and returns it typed; throws VolumeError('unsupported' | 'corrupt'). */
export function parseInfo(json: unknown, where = 'info'): PrecomputedInfo {
  const bad = (why: string) => new VolumeError('corrupt', `${where}: ${why}`);
  if (!json || typeof json !== 'object') throw bad('not a JSON object');
  const o = json as Record<string, unknown>;
  if (o.type !== 'image' && o.type !== 'segmentation') throw bad(`type must be "image" or "segmentation", got ${JSON.stringify(o.type)}`);
  const dataType = typeof o.data_type === 'string' ? o.data_type.toLowerCase() : o.data_type;
  if (!DATA_TYPES.includes(dataType as DataType)) throw new VolumeError('unsupported', `${where}: data_type ${JSON.stringify(o.data_type)} is not one of ${DATA_TYPES.join(', ')}`);
  if (!Number.isInteger(o.num_channels) || (o.num_channels as number) < 1) throw bad('num_channels must be a positive integer');
  if (!Array.isArray(o.scales) || o.scales.length === 0) throw bad('scales must be a non-empty array');
  const scales = o.scales.map((s: Record<string, unknown>, i: number): PrecomputedScale => {
    const at = `scales[${i}]`;
    if (typeof s.key !== 'string' || !s.key) throw bad(`${at}.key must be a non-empty string`);
    if (!isVec3(s.size, true) || s.size.some((n) => n < 1)) throw bad(`${at}.size must be three positive integers`);
    if (!isVec3(s.resolution, false)) throw bad(`${at}.resolution must be three numbers`);
    const offset = s.voxel_offset ?? [0, 0, 0];
    if (!isVec3(offset, true)) throw bad(`${at}.voxel_offset must be three integers`);
    const chunks = s.chunk_sizes;
    if (!Array.isArray(chunks) || chunks.length === 0 || !chunks.every((c) => isVec3(c, true) && c.every((n) => n >= 1))) throw bad(`${at}.chunk_sizes must be a list of three positive integers`);
    const encoding = typeof s.encoding === 'string' ? s.encoding.toLowerCase() : s.encoding;
    if (encoding !== 'raw') throw new VolumeError('unsupported', `${where}: ${at}.encoding ${JSON.stringify(s.encoding)} is not supported (only "raw")`);
    if (s.sharding !== undefined) throw new VolumeError('unsupported', `${where}: ${at} is sharded; only unsharded volumes are supported`);
    return { key: s.key, size: s.size, resolution: s.resolution, voxel_offset: offset, chunk_sizes: chunks as Vec3[], encoding: 'raw' };
  });
  const info: PrecomputedInfo = { type: o.type, data_type: dataType as DataType, num_channels: o.num_channels as number, scales };
  if (o['@type'] === 'neuroglancer_multiscale_volume') info['@type'] = o['@type'];
  return info;
}

/** The whole extent of a scale as a box. */
export function scaleBox(scale: PrecomputedScale): Box {
  const o = scale.voxel_offset;
  return { min: [o[0], o[1], o[2]], max: [o[0] + scale.size[0], o[1] + scale.size[1], o[2] + scale.size[2]] };
}

export const boxSize = (b: Box): Vec3 => [b.max[0] - b.min[0], b.max[1] - b.min[1], b.max[2] - b.min[2]];
export const boxVoxels = (b: Box): number => boxSize(b).reduce((a, n) => a * n, 1);

/** Chunk file name of the chunk spanning `box`: `x0-x1_y0-y1_z0-z1`. */
export function chunkName(box: Box): string {
  return `${box.min[0]}-${box.max[0]}_${box.min[1]}-${box.max[1]}_${box.min[2]}-${box.max[2]}`;
}

/** Every chunk of `scale` (its first chunk size) that intersects `region`, in x-fastest grid order. */
export function chunksIntersecting(scale: PrecomputedScale, region: Box): Box[] {
  const whole = scaleBox(scale);
  const cs = scale.chunk_sizes[0]!;
  const lo: number[] = [];
  const hi: number[] = [];
  for (let d = 0; d < 3; d++) {
    const a = Math.max(region.min[d]!, whole.min[d]!);
    const b = Math.min(region.max[d]!, whole.max[d]!);
    if (b <= a) return [];
    lo.push(Math.floor((a - whole.min[d]!) / cs[d]!));
    hi.push(Math.ceil((b - whole.min[d]!) / cs[d]!));
  }
  const out: Box[] = [];
  for (let gz = lo[2]!; gz < hi[2]!; gz++)
    for (let gy = lo[1]!; gy < hi[1]!; gy++)
      for (let gx = lo[0]!; gx < hi[0]!; gx++) {
        const g = [gx, gy, gz];
        const min = [0, 1, 2].map((d) => whole.min[d]! + g[d]! * cs[d]!) as Vec3;
        const max = [0, 1, 2].map((d) => Math.min(min[d]! + cs[d]!, whole.max[d]!)) as Vec3;
        out.push({ min, max });
      }
  return out;
}

/** Every chunk of a scale. */
export const allChunks = (scale: PrecomputedScale): Box[] => chunksIntersecting(scale, scaleBox(scale));

/** A typed view of `n` voxels of `dataType` at `offset` bytes into `buffer`. */
function viewVoxels(dataType: DataType, buffer: ArrayBufferLike, offset: number, n: number): VoxelArray {
  switch (dataType) {
    case 'uint8':
      return new Uint8Array(buffer, offset, n);
    case 'uint16':
      return new Uint16Array(buffer, offset, n);
    case 'uint32':
      return new Uint32Array(buffer, offset, n);
    case 'float32':
      return new Float32Array(buffer, offset, n);
  }
}

/** A new zeroed typed array of `n` voxels. */
export const allocVoxels = (dataType: DataType, n: number): VoxelArray => viewVoxels(dataType, new ArrayBuffer(n * BYTES_PER_VOXEL[dataType]), 0, n);

const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Decodes a raw chunk (`bytes` already gunzipped) spanning `box` with `channels` channels.
 * Throws VolumeError('corrupt') when the length does not match.
 */
export function decodeRawChunk(bytes: Uint8Array, dataType: DataType, box: Box, channels = 1, where = 'chunk'): VoxelArray {
  const n = boxVoxels(box) * channels;
  const bpv = BYTES_PER_VOXEL[dataType];
  if (bytes.byteLength !== n * bpv) throw new VolumeError('corrupt', `${where}: ${bytes.byteLength} bytes, expected ${n * bpv} (${boxSize(box).join('×')}×${channels} ${dataType})`);
  if (!littleEndian) throw new VolumeError('unsupported', 'big-endian hosts are not supported');
  // Views need an aligned offset; file buffers may come from a shared pool at any offset.
  const aligned = bytes.byteOffset % bpv === 0 ? bytes : bytes.slice();
  return viewVoxels(dataType, aligned.buffer, aligned.byteOffset, n);
}

/** Encodes voxels as a raw chunk (little-endian bytes of the array). */
export function encodeRawChunk(voxels: VoxelArray): Uint8Array {
  if (!littleEndian) throw new VolumeError('unsupported', 'big-endian hosts are not supported');
  return new Uint8Array(voxels.buffer, voxels.byteOffset, voxels.byteLength);
}

/**
 * Copies the part of `src` (spanning `srcBox`, x fastest) that lies in `dstBox` into `dst`
 * (spanning `dstBox`). Single channel.
 */
export function copyBox(src: VoxelArray, srcBox: Box, dst: VoxelArray, dstBox: Box): void {
  const lo = [0, 1, 2].map((d) => Math.max(srcBox.min[d]!, dstBox.min[d]!));
  const hi = [0, 1, 2].map((d) => Math.min(srcBox.max[d]!, dstBox.max[d]!));
  if (lo.some((v, d) => v >= hi[d]!)) return;
  const [sx, sy] = boxSize(srcBox);
  const [dx, dy] = boxSize(dstBox);
  const rowLen = hi[0]! - lo[0]!;
  for (let z = lo[2]!; z < hi[2]!; z++)
    for (let y = lo[1]!; y < hi[1]!; y++) {
      const s = (lo[0]! - srcBox.min[0]) + sx * ((y - srcBox.min[1]) + sy * (z - srcBox.min[2]));
      const d = (lo[0]! - dstBox.min[0]) + dx * ((y - dstBox.min[1]) + dy * (z - dstBox.min[2]));
      dst.set(src.subarray(s, s + rowLen), d);
    }
}

/** Parses "x0,y0,z0,x1,y1,z1" into a box; throws VolumeError('bad-request'). */
export function parseBox(text: string): Box {
  const n = text.split(',').map((s) => (s.trim() === '' ? NaN : Number(s)));
  if (n.length !== 6 || !n.every(Number.isInteger)) throw new VolumeError('bad-request', `bbox must be six integers x0,y0,z0,x1,y1,z1, got "${text}"`);
  const box: Box = { min: [n[0]!, n[1]!, n[2]!], max: [n[3]!, n[4]!, n[5]!] };
  if (box.min.some((v, d) => v >= box.max[d]!)) throw new VolumeError('bad-request', `bbox "${text}" is empty: each max must exceed its min (half-open [min, max))`);
  return box;
}

/** Throws VolumeError('bad-request') unless `box` lies inside the scale. */
export function requireInside(scale: PrecomputedScale, box: Box): void {
  const whole = scaleBox(scale);
  if (box.min.some((v, d) => v < whole.min[d]!) || box.max.some((v, d) => v > whole.max[d]!))
    throw new VolumeError('bad-request', `bbox [${box.min.join(',')}]–[${box.max.join(',')}) is outside the volume [${whole.min.join(',')}]–[${whole.max.join(',')})`);
}
