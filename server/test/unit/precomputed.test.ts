/**
 * Precomputed volumes: chunk grid and names, info validation, raw chunk encode → gzip file →
 * decode round trips for every data type (odd sizes, a voxel offset, partial edge chunks, raw and
 * gzip files), and sampling (region, histogram, traces) against values computed directly.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '@plexus/shared';
import { openLayer } from '../../src/volumes/chunk-source.ts';
import { allocVoxels, chunkName, chunksIntersecting, decodeRawChunk, encodeRawChunk, parseBox, parseInfo, VolumeError, type Box, type DataType, type Vec3, type VoxelArray } from '../../src/volumes/precomputed.ts';
import { binOf, circleMask, histogram, maskTrace, readRegion, roiTrace } from '../../src/volumes/sampling.ts';
import { makeInfo, PrecomputedWriter } from '../../src/volumes/writer.ts';
import { tempDirs } from '@plexus/testkit/dirs';

const dirs = tempDirs('plexus-precomputed-');
const tmp = dirs.make;
afterAll(dirs.cleanup);

const SIZE: Vec3 = [37, 29, 11];
const OFFSET: Vec3 = [3, -2, 5];
const CHUNK: Vec3 = [16, 8, 4];

function randomVoxels(dataType: DataType, n: number, seed: number): VoxelArray {
  const next = mulberry32(seed);
  const out = allocVoxels(dataType, n);
  const top = { uint8: 256, uint16: 65536, uint32: 2 ** 32, float32: 0 }[dataType];
  for (let i = 0; i < n; i++) out[i] = dataType === 'float32' ? (next() - 0.3) * 1000 : Math.floor(next() * top);
  return out;
}

/** Value at global voxel (x, y, z) of an array spanning SIZE at OFFSET. */
const at = (a: VoxelArray, x: number, y: number, z: number) => a[x - OFFSET[0] + SIZE[0] * (y - OFFSET[1] + SIZE[1] * (z - OFFSET[2]))]!;

async function writeVolume(dataType: DataType, seed: number): Promise<{ dir: string; data: VoxelArray }> {
  const dir = tmp();
  const data = randomVoxels(dataType, SIZE[0] * SIZE[1] * SIZE[2], seed);
  const w = new PrecomputedWriter(dir, makeInfo('image', dataType, [{ size: SIZE, resolution: [4, 4, 40], chunk: CHUNK, voxelOffset: OFFSET }]));
  await w.init();
  await w.writeScale(0, data);
  await w.close();
  return { dir, data };
}

describe('precomputed format', () => {
  it('names chunks by absolute begin-end and truncates the last chunk of each axis', () => {
    const info = makeInfo('image', 'uint8', [{ size: SIZE, resolution: [1, 1, 1], chunk: CHUNK, voxelOffset: OFFSET }]);
    const s = info.scales[0]!;
    const all = chunksIntersecting(s, { min: [-100, -100, -100], max: [100, 100, 100] });
    expect(all).toHaveLength(3 * 4 * 3);
    expect(chunkName(all[0]!)).toBe('3-19_-2-6_5-9');
    expect(chunkName(all.at(-1)!)).toBe('35-40_22-27_13-16');
    expect(chunksIntersecting(s, { min: [18, 5, 8], max: [20, 7, 9] }).map(chunkName)).toEqual(['3-19_-2-6_5-9', '19-35_-2-6_5-9', '3-19_6-14_5-9', '19-35_6-14_5-9']);
    expect(chunksIntersecting(s, { min: [0, 0, 0], max: [3, 10, 10] })).toEqual([]);
  });

  it('validates info and refuses encodings it cannot read', () => {
    const good = makeInfo('segmentation', 'uint32', [{ size: [4, 4, 1], resolution: [1, 1, 1], chunk: [4, 4, 1] }]);
    expect(parseInfo(JSON.parse(JSON.stringify(good)))).toEqual(good);
    const kind = (v: unknown) => {
      try {
        parseInfo(v);
        return 'ok';
      } catch (e) {
        return (e as VolumeError).kind;
      }
    };
    expect(kind({ ...good, data_type: 'uint64' })).toBe('unsupported');
    expect(kind({ ...good, scales: [{ ...good.scales[0], encoding: 'jpeg' }] })).toBe('unsupported');
    expect(kind({ ...good, scales: [{ ...good.scales[0], sharding: {} }] })).toBe('unsupported');
    expect(kind({ ...good, scales: [{ ...good.scales[0], size: [4, 0, 1] }] })).toBe('corrupt');
    expect(kind({ ...good, type: 'mesh' })).toBe('corrupt');
    expect(kind('nope')).toBe('corrupt');
  });

  it('decodes exactly what it encodes and refuses a chunk of the wrong length', () => {
    const box: Box = { min: [0, 0, 0], max: [3, 2, 2] };
    for (const dt of ['uint8', 'uint16', 'uint32', 'float32'] as const) {
      const v = randomVoxels(dt, 12, 7);
      // An odd byte offset (as in a pooled Buffer) must still decode.
      const bytes = encodeRawChunk(v);
      const shifted = new Uint8Array(bytes.length + 1).subarray(1);
      shifted.set(bytes);
      expect(Array.from(decodeRawChunk(shifted, dt, box))).toEqual(Array.from(v));
    }
    expect(() => decodeRawChunk(new Uint8Array(5), 'uint16', box)).toThrow(/expected 24/);
  });

  it('parses bounding boxes strictly', () => {
    expect(parseBox('1,2,3,4,5,6')).toEqual({ min: [1, 2, 3], max: [4, 5, 6] });
    for (const bad of ['1,2,3,4,5', '1,2,3,4,5,x', '4,2,3,4,5,6', '1,2,3,4,5,6.5', '']) expect(() => parseBox(bad)).toThrow(VolumeError);
  });
});

describe('round trip through chunk files', () => {
  for (const dt of ['uint8', 'uint16', 'uint32', 'float32'] as const) {
    it(`${dt}: writer → gzip chunk files → reader gives back every voxel`, async () => {
      const { dir, data } = await writeVolume(dt, 11);
      const files = fs.readdirSync(path.join(dir, '4_4_40'));
      expect(files).toHaveLength(36);
      expect(files.every((f) => f.endsWith('.gz'))).toBe(true);
      const vol = await openLayer(dir, 'test/vol');
      const whole = await readRegion(vol, 0, { min: OFFSET, max: [OFFSET[0] + SIZE[0], OFFSET[1] + SIZE[1], OFFSET[2] + SIZE[2]] });
      expect(Buffer.from(encodeRawChunk(whole)).equals(Buffer.from(encodeRawChunk(data)))).toBe(true);
      const box: Box = { min: [10, 3, 6], max: [30, 20, 14] };
      const part = await readRegion(vol, 0, box);
      let i = 0;
      for (let z = box.min[2]; z < box.max[2]; z++) for (let y = box.min[1]; y < box.max[1]; y++) for (let x = box.min[0]; x < box.max[0]; x++) expect(part[i++]).toBe(at(data, x, y, z));
    });
  }

  it('reads chunks stored raw (uncompressed) too', async () => {
    const { dir, data } = await writeVolume('uint16', 3);
    const key = path.join(dir, '4_4_40');
    for (const f of fs.readdirSync(key)) {
      fs.writeFileSync(path.join(key, f.replace(/\.gz$/, '')), gunzipSync(fs.readFileSync(path.join(key, f))));
      fs.rmSync(path.join(key, f));
    }
    const vol = await openLayer(dir, 'raw');
    const v = await readRegion(vol, 0, { min: [20, 10, 9], max: [21, 11, 10] });
    expect(v[0]).toBe(at(data, 20, 10, 9));
  });
});

describe('sampling', () => {
  it('histogram matches a direct count (one-pass uint16 and two-pass float32; explicit range)', async () => {
    for (const dt of ['uint16', 'float32'] as const) {
      const { dir, data } = await writeVolume(dt, 5);
      const vol = await openLayer(dir, 'h');
      const box: Box = { min: [5, 0, 6], max: [33, 17, 15] };
      const values: number[] = [];
      for (let z = box.min[2]; z < box.max[2]; z++) for (let y = box.min[1]; y < box.max[1]; y++) for (let x = box.min[0]; x < box.max[0]; x++) values.push(at(data, x, y, z));
      const min = Math.min(...values);
      const max = Math.max(...values);
      const expected = new Array(16).fill(0);
      for (const v of values) expected[binOf(v, min, max, 16)]++;
      const h = await histogram(vol, 0, box, 16);
      expect(h).toMatchObject({ bins: 16, min, max, count: values.length, underflow: 0, overflow: 0 });
      expect(h.counts).toEqual(expected);
      expect(h.mean).toBeCloseTo(values.reduce((a, b) => a + b, 0) / values.length, 6);
      expect(h.edges[0]).toBe(min);
      expect(h.edges[16]).toBe(max);

      const lo = min + (max - min) / 4;
      const hi = max - (max - min) / 4;
      const ranged = await histogram(vol, 0, box, 4, [lo, hi]);
      expect(ranged.underflow).toBe(values.filter((v) => v < lo).length);
      expect(ranged.overflow).toBe(values.filter((v) => v > hi).length);
      expect(ranged.counts.reduce((a, b) => a + b, 0)).toBe(values.filter((v) => v >= lo && v <= hi).length);
    }
  });

  it('circle and label traces are the mean over the mask per z', async () => {
    const { dir, data } = await writeVolume('uint16', 9);
    const vol = await openLayer(dir, 'img');
    const mask = circleMask(18.4, 5.2, 3.1);
    const trace = await maskTrace(vol, 0, mask);
    expect(trace.z).toEqual([5, 16]);
    expect(trace.pixels).toBe(mask.xs.length);
    for (let z = 5; z < 16; z++) {
      let s = 0;
      for (let i = 0; i < mask.xs.length; i++) s += at(data, mask.xs[i]!, mask.ys[i]!, z);
      expect(trace.values[z - 5]).toBeCloseTo(s / mask.xs.length, 9);
    }

    // A labels plane with one ROI (id 7) straddling four chunks.
    const ldir = tmp();
    const labels = new Uint32Array(SIZE[0] * SIZE[1]);
    const roi: Array<[number, number]> = [];
    for (let y = 4; y < 9; y++) for (let x = 17; x < 22; x++) {
      labels[x - OFFSET[0] + SIZE[0] * (y - OFFSET[1])] = 7;
      roi.push([x, y]);
    }
    const lw = new PrecomputedWriter(ldir, makeInfo('segmentation', 'uint32', [{ size: [SIZE[0], SIZE[1], 1], resolution: [4, 4, 400], chunk: [16, 8, 1], voxelOffset: [OFFSET[0], OFFSET[1], 0] }]));
    await lw.init();
    await lw.writeScale(0, labels);
    await lw.close();
    const t = await roiTrace(vol, await openLayer(ldir, 'labels'), 7, { z: [7, 10] });
    expect(t.pixels).toBe(25);
    expect(t.z).toEqual([7, 10]);
    for (let z = 7; z < 10; z++) expect(t.values[z - 7]).toBeCloseTo(roi.reduce((a, [x, y]) => a + at(data, x, y, z), 0) / 25, 9);
    await expect(roiTrace(vol, await openLayer(ldir, 'labels'), 8)).rejects.toThrow(/no pixels/);
  });

  it('refuses requests beyond the voxel limit, outside the volume or at a missing scale', async () => {
    const { dir } = await writeVolume('uint8', 1);
    const vol = await openLayer(dir, 'lim');
    await expect(histogram(vol, 0, undefined, 8, undefined, { maxVoxels: 1000 })).rejects.toMatchObject({ kind: 'too-large' });
    await expect(histogram(vol, 0, { min: [0, 0, 0], max: [5, 5, 5] })).rejects.toMatchObject({ kind: 'bad-request' });
    await expect(histogram(vol, 1)).rejects.toMatchObject({ kind: 'bad-request' });
    await expect(maskTrace(vol, 0, circleMask(-50, -50, 2))).rejects.toMatchObject({ kind: 'bad-request' });
    fs.rmSync(path.join(dir, '4_4_40', '3-19_-2-6_5-9.gz'));
    await expect(readRegion(vol, 0, { min: [3, -2, 5], max: [4, -1, 6] })).rejects.toMatchObject({ kind: 'not-found' });
  });
});
