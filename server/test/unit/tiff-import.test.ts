/**
 * The TIFF import: files written by the test TIFF writer come back voxel for voxel from the
 * precomputed layers (uint16 and float32 movies, slab boundaries, the downsampled scale, mean and
 * max), one channel of a ScanImage recording, frame rates from metadata or the caller, errors that
 * name no server path, atomicity (nothing left behind after a failure or an abort), progress, and
 * page-by-page reading (bytes read ≈ the file's size, no read larger than a page).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { TiffError } from '@plexus/calcium/tiff/index';
import { writeTiff, type WriteTiffOptions } from '../../../calcium/test/tiff-writer.ts';
import { downsample2, fileByteSource, importTiff, importTiffFromSource, TiffImportError, type TiffImportOptions } from '../../src/analysis/tiff-import.ts';
import { openLayer } from '../../src/volumes/chunk-source.ts';
import type { DatasetMeta, LayerMeta } from '../../src/volumes/meta.ts';
import { readRegion } from '../../src/volumes/sampling.ts';

const made: string[] = [];
afterAll(() => made.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** A fresh directory with an empty `volumes/` and room for TIFF files. */
function workspace(): { root: string; volumesDir: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-tiff-import-'));
  made.push(root);
  return { root, volumesDir: path.join(root, 'volumes') };
}

const W = 40;
const H = 30;
const F = 70; // not a multiple of the 64-frame slab

const u16 = (x: number, y: number, f: number) => (x * 7 + y * 131 + f * 1009 + ((x * y) % 17) * 97) % 65536;
const f32 = (x: number, y: number, f: number) => (x - 2 * y) * 0.5 + f * 0.25 - 3 + ((x * y) % 5) * 0.125;

function frames(value: (x: number, y: number, f: number) => number, n = F, w = W, h = H): number[][] {
  return Array.from({ length: n }, (_, f) => Array.from({ length: w * h }, (_, i) => value(i % w, Math.floor(i / w), f)));
}

function writeFile(dir: string, name: string, o: WriteTiffOptions): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, writeTiff(o));
  return file;
}

async function movieFrame(layerDir: string, f: number, scale = 0): Promise<number[]> {
  const v = await openLayer(layerDir, 'movie');
  const [w, h] = v.info.scales[scale]!.size;
  return Array.from(await readRegion(v, scale, { min: [0, 0, f], max: [w, h, f + 1] }));
}

async function plane(layerDir: string): Promise<{ type: string; data: number[] }> {
  const v = await openLayer(layerDir, path.basename(layerDir));
  return { type: v.info.data_type, data: Array.from(await readRegion(v, 0, { min: [0, 0, 0], max: [W, H, 1] })) };
}

const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;

/** Everything in volumesDir, hidden entries included. */
const entries = (volumesDir: string): string[] => (fs.existsSync(volumesDir) ? fs.readdirSync(volumesDir).sort() : []);

/** Runs `work`, expects it to fail, and returns the error. */
async function failure(work: Promise<unknown>): Promise<Error> {
  const e = await work.then(() => null, (err: unknown) => err);
  if (!(e instanceof Error)) throw new Error('expected the import to fail');
  return e;
}

function expectNoPaths(e: Error, ...paths: string[]): void {
  for (const p of paths) expect(e.message).not.toContain(p);
  expect(e.message).not.toContain(os.tmpdir());
}

describe('importTiff: layers', () => {
  it('a uint16 stack: movie (both scales), mean and max come back exactly; info and plexus.json describe them', async () => {
    const { root, volumesDir } = workspace();
    const pages = frames(u16);
    const file = writeFile(root, 'mouse 3.tif', { width: W, height: H, sampleType: 'uint16', pages, description: 'ImageJ=1.54f\nimages=70\nframes=70\nfinterval=0.05\n' });
    const progress: { done: number; total: number }[] = [];
    const r = await importTiff({ file, volumesDir, dataset: 'rec1', inflate: zlib.inflateSync, onProgress: (p) => progress.push(p) });
    expect(r).toMatchObject({ dataset: 'rec1', layers: ['movie', 'mean', 'max'], width: W, height: H, frames: F, frameRate: 20, sampleType: 'uint16', channels: 1, planes: 1, droppedPages: 0 });
    expect(r.bytesWritten).toBeGreaterThan(0);
    expect(entries(volumesDir)).toEqual(['rec1']);

    const ds = path.join(volumesDir, 'rec1');
    const info = readJson<{ data_type: string; scales: { size: number[]; resolution: number[]; chunk_sizes: number[][] }[] }>(path.join(ds, 'movie', 'info'));
    expect(info.data_type).toBe('uint16');
    expect(info.scales.map((s) => s.size)).toEqual([[W, H, F], [W / 2, H / 2, F]]);
    expect(info.scales[0]!.resolution).toEqual([1000, 1000, 5e7]);
    expect(info.scales[0]!.chunk_sizes).toEqual([[64, 64, 64]]);
    for (const f of [0, 1, 63, 64, 69]) expect(await movieFrame(path.join(ds, 'movie'), f)).toEqual(pages[f]);
    const small = await movieFrame(path.join(ds, 'movie'), 65, 1);
    expect(small).toEqual(Array.from(downsample2(Uint16Array.from(pages[65]!), new Uint16Array((W / 2) * (H / 2)), W, H, 1)));
    expect(small[0]).toBe(Math.round((pages[65]![0]! + pages[65]![1]! + pages[65]![W]! + pages[65]![W + 1]!) / 4));

    const mean = await plane(path.join(ds, 'mean'));
    const max = await plane(path.join(ds, 'max'));
    expect(mean.type).toBe('float32');
    expect(max.type).toBe('uint16');
    for (const i of [0, 17, W * H - 1]) {
      const column = pages.map((p) => p[i]!);
      expect(mean.data[i]).toBeCloseTo(column.reduce((a, b) => a + b, 0) / F, 2);
      expect(max.data[i]).toBe(Math.max(...column));
    }
    const meanInfo = readJson<{ scales: { size: number[]; resolution: number[] }[] }>(path.join(ds, 'mean', 'info'));
    expect(meanInfo.scales[0]).toMatchObject({ size: [W, H, 1], resolution: [1000, 1000, F * 5e7] });

    const movieMeta = readJson<LayerMeta>(path.join(ds, 'movie', 'plexus.json'));
    expect(movieMeta).toMatchObject({ axes: { x: 'µm', y: 'µm', z: 's' }, voxelSize: [1, 1, 0.05], frameRate: 20, values: 'ADU' });
    expect(movieMeta.description).toContain('mouse 3.tif');
    expect(movieMeta.description).toContain('channel 1 of 1, plane 1 of 1');
    expect(movieMeta.description).toContain('assumed');
    expect(movieMeta.description).not.toContain(root);
    expect(readJson<LayerMeta>(path.join(ds, 'mean', 'plexus.json'))).toMatchObject({ axes: { z: 'none' }, values: 'ADU (mean)' });
    expect(readJson<LayerMeta>(path.join(ds, 'max', 'plexus.json'))).toMatchObject({ axes: { z: 'none' }, values: 'ADU (max)' });
    const meta = readJson<DatasetMeta>(path.join(ds, 'plexus.json'));
    expect(meta).toMatchObject({ plexusDataset: 1, title: 'mouse 3.tif', frameRate: 20 });
    expect(Object.keys(meta.layers)).toEqual(['movie', 'mean', 'max']);
    expect(JSON.stringify(meta)).not.toContain(root);

    // Progress: about 100 reports at most, in order, ending at the total.
    expect(progress.length).toBeLessThanOrEqual(102);
    expect(progress.at(-1)).toEqual({ stage: 'reading', done: F, total: F });
    expect(progress.every((p, k) => k === 0 || p.done > progress[k - 1]!.done)).toBe(true);
  });

  it('a float32 stack with a frame rate and pixel size given: a float32 movie, max and mean', async () => {
    const { root, volumesDir } = workspace();
    const pages = frames(f32);
    const file = writeFile(root, 'f.tif', { width: W, height: H, sampleType: 'float32', pages, compression: 'lzw', predictor: 3, rowsPerStrip: 7 });
    const r = await importTiff({ file, volumesDir, dataset: 'float', frameRate: 12.5, micronsPerPixel: 0.5, title: 'Float movie' });
    expect(r).toMatchObject({ frames: F, frameRate: 12.5, sampleType: 'float32' });
    const ds = path.join(volumesDir, 'float');
    const info = readJson<{ data_type: string; scales: { resolution: number[] }[] }>(path.join(ds, 'movie', 'info'));
    expect(info.data_type).toBe('float32');
    expect(info.scales.map((s) => s.resolution)).toEqual([[500, 500, 8e7], [1000, 1000, 8e7]]);
    for (const f of [0, 64, 69]) expect(await movieFrame(path.join(ds, 'movie'), f)).toEqual(pages[f]);
    const max = await plane(path.join(ds, 'max'));
    const mean = await plane(path.join(ds, 'mean'));
    expect(max.type).toBe('float32');
    for (const i of [0, 5, W * H - 1]) {
      const column = pages.map((p) => p[i]!);
      expect(max.data[i]).toBe(Math.max(...column));
      expect(mean.data[i]).toBeCloseTo(column.reduce((a, b) => a + b, 0) / F, 4);
    }
    const movieMeta = readJson<LayerMeta>(path.join(ds, 'movie', 'plexus.json'));
    expect(movieMeta).toMatchObject({ voxelSize: [0.5, 0.5, 0.08], frameRate: 12.5 });
    expect(movieMeta.description).not.toContain('assumed');
    expect(readJson<DatasetMeta>(path.join(ds, 'plexus.json')).title).toBe('Float movie');
  });

  it('int16 becomes float32 (negative values kept); uint8 becomes uint16; Deflate files need inflate', async () => {
    const { root, volumesDir } = workspace();
    const i16 = frames((x, y, f) => x * 100 - y * 300 + f - 2000, 3);
    const r1 = await importTiff({ file: writeFile(root, 'a.tif', { width: W, height: H, sampleType: 'int16', pages: i16 }), volumesDir, dataset: 'a', frameRate: 10 });
    expect(r1.sampleType).toBe('int16');
    expect(readJson<{ data_type: string }>(path.join(volumesDir, 'a', 'movie', 'info')).data_type).toBe('float32');
    expect(await movieFrame(path.join(volumesDir, 'a', 'movie'), 2)).toEqual(i16[2]);
    expect(readJson<LayerMeta>(path.join(volumesDir, 'a', 'movie', 'plexus.json')).description).toContain('int16 samples stored as float32');

    const u8 = frames((x, y, f) => (x + y * 3 + f) % 256, 3);
    const deflated = writeFile(root, 'b.tif', { width: W, height: H, sampleType: 'uint8', pages: u8, compression: 'deflate', deflate: zlib.deflateSync });
    await expect(importTiff({ file: deflated, volumesDir, dataset: 'b', frameRate: 10 })).rejects.toThrow(TiffError);
    expect(entries(volumesDir)).toEqual(['a']);
    await importTiff({ file: deflated, volumesDir, dataset: 'b', frameRate: 10, inflate: zlib.inflateSync });
    expect(readJson<{ data_type: string }>(path.join(volumesDir, 'b', 'max', 'info')).data_type).toBe('uint16');
    expect(await movieFrame(path.join(volumesDir, 'b', 'movie'), 1)).toEqual(u8[1]);
  });

  it('a single frame without a frame rate: stored without a time unit', async () => {
    const { root, volumesDir } = workspace();
    const r = await importTiff({ file: writeFile(root, 'one.tif', { width: W, height: H, sampleType: 'uint16', pages: frames(u16, 1) }), volumesDir, dataset: 'one' });
    expect(r).toMatchObject({ frames: 1, frameRate: null });
    const m = readJson<LayerMeta>(path.join(volumesDir, 'one', 'movie', 'plexus.json'));
    expect(m.axes.z).toBe('none');
    expect(m.frameRate).toBeUndefined();
    expect(readJson<DatasetMeta>(path.join(volumesDir, 'one', 'plexus.json')).frameRate).toBeUndefined();
  });
});

describe('importTiff: channels, planes and frame rates', () => {
  const scanimage = ['SI.LINE_FORMAT_VERSION = 1', 'SI.hChannels.channelSave = [1;2]', 'SI.hRoiManager.scanFrameRate = 30', 'SI.hStackManager.numSlices = 1', 'SI.hFastZ.enable = false'].join('\n');
  const two = (n: number) => {
    const ch0 = frames(u16, n);
    const ch1 = frames((x, y, f) => 60000 - x - y - f, n);
    return { ch0, ch1, pages: ch0.flatMap((p, f) => [p, ch1[f]!]) };
  };

  it('ScanImage, 2 channels: channel 1 takes only the second channel\'s pages, at the file\'s frame rate', async () => {
    const { root, volumesDir } = workspace();
    const { ch1, pages } = two(F);
    const file = writeFile(root, 'si.tif', { width: W, height: H, sampleType: 'uint16', pages, bigTiff: true, software: scanimage, description: 'frameNumbers = 1\n' });
    const r = await importTiff({ file, volumesDir, dataset: 'si', channel: 1 });
    expect(r).toMatchObject({ frames: F, frameRate: 30, channels: 2, planes: 1 });
    for (const f of [0, 64, 69]) expect(await movieFrame(path.join(volumesDir, 'si', 'movie'), f)).toEqual(ch1[f]);
    expect(readJson<LayerMeta>(path.join(volumesDir, 'si', 'movie', 'plexus.json')).description).toContain('channel 2 of 2');
    expect(readJson<LayerMeta>(path.join(volumesDir, 'si', 'movie', 'plexus.json')).description).toContain('ScanImage');
  });

  it('a channel or plane the file does not have: an error that says how many it has, and nothing left', async () => {
    const { root, volumesDir } = workspace();
    const file = writeFile(root, 'si.tif', { width: W, height: H, sampleType: 'uint16', pages: two(4).pages, bigTiff: true, software: scanimage });
    const e = await failure(importTiff({ file, volumesDir, dataset: 'x', channel: 2 }));
    expect(e).toBeInstanceOf(TiffError);
    expect(e.message).toMatch(/2 channels/);
    const p = await failure(importTiff({ file, volumesDir, dataset: 'x', plane: 1 }));
    expect(p.message).toMatch(/1 plane/);
    expect(entries(volumesDir)).toEqual([]);
  });

  it('an incomplete last time point is dropped and reported', async () => {
    const { root, volumesDir } = workspace();
    const { ch0, pages } = two(5);
    const file = writeFile(root, 'cut.tif', { width: W, height: H, sampleType: 'uint16', pages: pages.slice(0, 9), bigTiff: true, software: scanimage });
    const r = await importTiff({ file, volumesDir, dataset: 'cut' });
    expect(r).toMatchObject({ frames: 4, droppedPages: 1 });
    expect(await movieFrame(path.join(volumesDir, 'cut', 'movie'), 3)).toEqual(ch0[3]);
  });

  it('no frame rate in the file: a clear error unless frameRate is given', async () => {
    const { root, volumesDir } = workspace();
    const file = writeFile(root, 'plain.tif', { width: W, height: H, sampleType: 'uint16', pages: frames(u16, 5) });
    const e = await failure(importTiff({ file, volumesDir, dataset: 'p' }));
    expect(e).toBeInstanceOf(TiffImportError);
    expect(e.message).toBe('the file does not say its frame rate: give frameRate');
    expect((e as TiffImportError).kind).toBe('bad-request');
    expect(entries(volumesDir)).toEqual([]);
    expect((await importTiff({ file, volumesDir, dataset: 'p', frameRate: 7 })).frameRate).toBe(7);
  });
});

describe('importTiff: failures leave nothing behind', () => {
  const stack = (root: string) => writeFile(root, 'rec.tif', { width: W, height: H, sampleType: 'uint16', pages: frames(u16) });

  it('a truncated file: the reader\'s TiffError (after a slab was written), no directory left, not even hidden', async () => {
    const { root, volumesDir } = workspace();
    const bytes = fs.readFileSync(stack(root));
    const file = path.join(root, 'truncated.tif');
    fs.writeFileSync(file, bytes.subarray(0, bytes.length - 100));
    let seen = 0;
    const e = await failure(importTiff({ file, volumesDir, dataset: 't', frameRate: 10, onProgress: (p) => (seen = p.done) }));
    expect(e).toBeInstanceOf(TiffError);
    expect(e.message).toMatch(/page 70.*truncated/);
    expect(seen).toBeGreaterThanOrEqual(64);
    expect(entries(volumesDir)).toEqual([]);
    expectNoPaths(e, root, volumesDir, file);

    // Cut inside the chain of page directories: the error comes from opening.
    fs.writeFileSync(file, bytes.subarray(0, Math.floor(bytes.length / 2)));
    const e2 = await failure(importTiff({ file, volumesDir, dataset: 't', frameRate: 10 }));
    expect(e2).toBeInstanceOf(TiffError);
    expect(entries(volumesDir)).toEqual([]);
  });

  it('an existing dataset name: a clear error, the existing dataset untouched', async () => {
    const { root, volumesDir } = workspace();
    fs.mkdirSync(path.join(volumesDir, 'taken'), { recursive: true });
    fs.writeFileSync(path.join(volumesDir, 'taken', 'keep.txt'), 'x');
    const e = await failure(importTiff({ file: stack(root), volumesDir, dataset: 'taken', frameRate: 10 }));
    expect(e).toBeInstanceOf(TiffImportError);
    expect(e.message).toBe('a dataset named "taken" already exists: choose another name');
    expect((e as TiffImportError).kind).toBe('exists');
    expect(entries(volumesDir)).toEqual(['taken']);
    expect(fs.readdirSync(path.join(volumesDir, 'taken'))).toEqual(['keep.txt']);
  });

  it('two imports of one name at once: one completes, the other is refused', async () => {
    const { root, volumesDir } = workspace();
    const file = stack(root);
    const both = await Promise.allSettled([0, 1].map(() => importTiff({ file, volumesDir, dataset: 'same', frameRate: 10 })));
    expect(both.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = both.find((r) => r.status === 'rejected');
    expect(refused?.reason).toBeInstanceOf(TiffImportError);
    expect((refused?.reason as TiffImportError).kind).toBe('exists');
    expect(entries(volumesDir)).toEqual(['same']);
  });

  it('aborting mid-way throws an AbortError and leaves nothing; so does a signal aborted before the start', async () => {
    const { root, volumesDir } = workspace();
    const file = stack(root);
    const ac = new AbortController();
    const e = await failure(importTiff({ file, volumesDir, dataset: 'a', frameRate: 10, signal: ac.signal, onProgress: (p) => p.done >= 64 && ac.abort() }));
    expect(e.name).toBe('AbortError');
    expect(entries(volumesDir)).toEqual([]);
    const e2 = await failure(importTiff({ file, volumesDir, dataset: 'a', frameRate: 10, signal: AbortSignal.abort() }));
    expect(e2.name).toBe('AbortError');
    expect(entries(volumesDir)).toEqual([]);
  });

  it('bad options and a missing file: clear errors without paths', async () => {
    const { root, volumesDir } = workspace();
    const file = stack(root);
    const bad: [Partial<TiffImportOptions>, RegExp][] = [
      [{ dataset: '../up' }, /dataset name "\.\.\/up" is not allowed/],
      [{ dataset: '.hidden' }, /not allowed/],
      [{ dataset: '' }, /not allowed/],
      [{ channel: -1 }, /channel must be a whole number/],
      [{ plane: 0.5 }, /plane must be a whole number/],
      [{ frameRate: 0 }, /frameRate .* must be a positive number/],
      [{ micronsPerPixel: Number.NaN }, /micronsPerPixel must be a positive number/],
    ];
    for (const [o, message] of bad) {
      const e = await failure(importTiff({ file, volumesDir, dataset: 'ok', frameRate: 10, ...o }));
      expect(e).toBeInstanceOf(TiffImportError);
      expect(e.message).toMatch(message);
    }
    const missing = path.join(root, 'gone.tif');
    const e = await failure(importTiff({ file: missing, volumesDir, dataset: 'ok', frameRate: 10 }));
    expect(e).toBeInstanceOf(TiffImportError);
    expect(e.message).toMatch(/cannot be opened \(ENOENT/);
    expectNoPaths(e, missing, root);
    expect(entries(volumesDir)).toEqual([]);
  });

  it('a write failure: a message without the volumes or temporary directory, nothing left', async () => {
    const { root } = workspace();
    // A file where the volumes directory should be: making it fails with a system error whose own message holds the path.
    const blocked = path.join(root, 'blocked');
    fs.writeFileSync(blocked, '');
    const e = await failure(importTiff({ file: stack(root), volumesDir: blocked, dataset: 'w', frameRate: 10 }));
    expect(e.message).toMatch(/^the TIFF import failed while writing the dataset \(E[A-Z]+/);
    expectNoPaths(e, blocked, root);
    expect(e.cause).toBeInstanceOf(Error);
  });

  it('leftovers of a crashed import (a process that no longer runs) are removed; a live one\'s are kept', async () => {
    const { root, volumesDir } = workspace();
    fs.mkdirSync(path.join(volumesDir, '.old.tmp-99999999-abcd', 'movie'), { recursive: true });
    fs.mkdirSync(path.join(volumesDir, `.live.tmp-${process.ppid}-abcd`), { recursive: true });
    await importTiff({ file: stack(root), volumesDir, dataset: 'new', frameRate: 10 });
    expect(entries(volumesDir)).toEqual([`.live.tmp-${process.ppid}-abcd`, 'new']);
  });
});

describe('importTiff: streaming', () => {
  async function counted(file: string, o: Omit<TiffImportOptions, 'file'>) {
    const handle = await fs.promises.open(file, 'r');
    try {
      const size = (await handle.stat()).size;
      const inner = fileByteSource(handle, size);
      const reads: number[] = [];
      const source = { size, read: async (offset: number, length: number) => {
        const b = await inner.read(offset, length);
        reads.push(b.length);
        return b;
      } };
      await importTiffFromSource(source, { ...o, sourceName: path.basename(file) });
      return { size, bytes: reads.reduce((a, b) => a + b, 0), largest: Math.max(...reads), reads: reads.length };
    } finally {
      await handle.close();
    }
  }

  it('reads the file page by page: about its size in all, no read larger than one page', async () => {
    const { root, volumesDir } = workspace();
    const file = writeFile(root, 's.tif', { width: W, height: H, sampleType: 'uint16', pages: frames(u16) });
    const r = await counted(file, { volumesDir, dataset: 's', frameRate: 10 });
    expect(r.bytes).toBeGreaterThanOrEqual(W * H * 2 * F);
    expect(r.bytes).toBeLessThan(r.size * 1.1);
    expect(r.largest).toBeLessThanOrEqual(W * H * 2);
  });

  it('of two channels, reads only the chosen channel\'s pixels', async () => {
    const { root, volumesDir } = workspace();
    const pages = frames(u16, 2 * F);
    const software = 'SI.LINE_FORMAT_VERSION = 1\nSI.hChannels.channelSave = [1;2]\nSI.hRoiManager.scanFrameRate = 30\nSI.hStackManager.numSlices = 1';
    const file = writeFile(root, 'c.tif', { width: W, height: H, sampleType: 'uint16', pages, bigTiff: true, software });
    const r = await counted(file, { volumesDir, dataset: 'c', channel: 1 });
    expect(r.bytes).toBeGreaterThanOrEqual(W * H * 2 * F);
    expect(r.bytes).toBeLessThan(r.size * 0.6);
  });

  it('fileByteSource: short reads at the end of the file, nothing beyond it', async () => {
    const { root } = workspace();
    const file = path.join(root, 'bytes');
    fs.writeFileSync(file, Uint8Array.from({ length: 100 }, (_, i) => i));
    const handle = await fs.promises.open(file, 'r');
    try {
      const src = fileByteSource(handle, 100);
      expect(Array.from(await src.read(10, 3))).toEqual([10, 11, 12]);
      expect(Array.from(await src.read(98, 10))).toEqual([98, 99]);
      expect((await src.read(200, 10)).length).toBe(0);
    } finally {
      await handle.close();
    }
  });
});

describe('downsample2', () => {
  it('averages 2×2 blocks (rounded for integers), odd edges average what they have', () => {
    const src = Uint16Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]); // 5×3
    expect(Array.from(downsample2(src, new Uint16Array(6), 5, 3, 1))).toEqual([4, 6, 8, 12, 14, 15]);
    const f = Float32Array.from([1, 2, 3, 4]);
    expect(Array.from(downsample2(f, new Float32Array(1), 2, 2, 1))).toEqual([2.5]);
  });
});
