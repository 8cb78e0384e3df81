import { deflateSync, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { bytesSource, openTiff } from '../src/tiff/index.ts';
import type { SampleType } from '../src/tiff/samples.ts';
import { countingSource, pattern, SAMPLE_TYPES } from './tiff-helpers.ts';
import { writeTiff, writeTiffDetailed, type WriteTiffOptions } from './tiff-writer.ts';

async function roundTrip(o: Omit<WriteTiffOptions, 'pages'> & { pageCount?: number }, open: Parameters<typeof openTiff>[1] = {}) {
  const pages = Array.from({ length: o.pageCount ?? 3 }, (_, p) => pattern(o.sampleType, o.width, o.height, p, o.samplesPerPixel ?? 1));
  const stack = await openTiff(bytesSource(writeTiff({ ...o, pages })), open);
  return { stack, pages };
}

/** Checks every page reads back exactly (raw) and as float32. */
async function expectPages(o: Omit<WriteTiffOptions, 'pages'> & { pageCount?: number }, open: Parameters<typeof openTiff>[1] = {}) {
  const { stack, pages } = await roundTrip(o, open);
  expect(stack.pages).toBe(pages.length);
  expect([stack.width, stack.height, stack.sampleType]).toEqual([o.width, o.height, o.sampleType]);
  const out = new Float32Array(o.width * o.height);
  for (let p = 0; p < pages.length; p++) {
    const raw = await stack.readPageRaw(p);
    expect(raw.constructor).toBe(pages[p]!.constructor);
    expect(Array.from(raw)).toEqual(Array.from(pages[p]!));
    await stack.readPage(p, out);
    expect(Array.from(out)).toEqual(Array.from(pages[p]!, (v) => Math.fround(v)));
  }
  return stack;
}

describe('openTiff: sample types and byte orders', () => {
  for (const sampleType of SAMPLE_TYPES) {
    for (const littleEndian of [true, false]) {
      it(`reads ${sampleType} ${littleEndian ? 'II' : 'MM'}`, async () => {
        const stack = await expectPages({ width: 7, height: 5, sampleType, littleEndian });
        expect(stack.littleEndian).toBe(littleEndian);
        expect(stack.bigTiff).toBe(false);
        expect(stack.metadata.source).toBe('unknown');
      });
    }
  }

  for (const littleEndian of [true, false]) {
    it(`reads BigTIFF ${littleEndian ? 'II' : 'MM'} with several strips`, async () => {
      const stack = await expectPages({ width: 9, height: 11, sampleType: 'uint16', littleEndian, bigTiff: true, rowsPerStrip: 2, pageCount: 4 });
      expect(stack.bigTiff).toBe(true);
    });
  }
});

describe('openTiff: strips, tiles and compression', () => {
  it('reads several strips per page, the last one short', async () => {
    await expectPages({ width: 6, height: 10, sampleType: 'int16', rowsPerStrip: 3 });
  });

  it('reads uncompressed data without StripByteCounts', async () => {
    await expectPages({ width: 6, height: 10, sampleType: 'uint16', rowsPerStrip: 4, omitByteCounts: true });
  });

  for (const sampleType of ['uint8', 'uint16', 'float32'] as SampleType[]) {
    for (const littleEndian of [true, false]) {
      it(`reads PackBits ${sampleType} ${littleEndian ? 'II' : 'MM'}`, async () => {
        await expectPages({ width: 13, height: 6, sampleType, littleEndian, compression: 'packbits', rowsPerStrip: 4 });
      });
    }
  }

  it('reads PackBits with long runs', async () => {
    const page = new Uint8Array(40 * 9).fill(7);
    page.fill(200, 50, 300);
    const stack = await openTiff(bytesSource(writeTiff({ width: 40, height: 9, sampleType: 'uint8', pages: [page], compression: 'packbits' })));
    expect(Array.from(await stack.readPageRaw(0))).toEqual(Array.from(page));
  });

  for (const sampleType of SAMPLE_TYPES) {
    for (const littleEndian of [true, false]) {
      const predictor = sampleType.startsWith('float') ? 3 : 2;
      it(`reads LZW ${sampleType} ${littleEndian ? 'II' : 'MM'}, with and without predictor ${predictor}`, async () => {
        await expectPages({ width: 17, height: 9, sampleType, littleEndian, compression: 'lzw', rowsPerStrip: 4, pageCount: 2 });
        await expectPages({ width: 17, height: 9, sampleType, littleEndian, compression: 'lzw', predictor, rowsPerStrip: 4, pageCount: 2 });
      });
    }
  }

  it('reads LZW data long enough to fill the code table (12-bit codes and clears)', async () => {
    const page = pattern('uint8', 120, 100, 0);
    const stack = await openTiff(bytesSource(writeTiff({ width: 120, height: 100, sampleType: 'uint8', pages: [page], compression: 'lzw' })));
    expect(Array.from(await stack.readPageRaw(0))).toEqual(Array.from(page));
  });

  it('reads Deflate through an injected inflate, and refuses it without one', async () => {
    const o = { width: 10, height: 7, sampleType: 'uint16' as const, compression: 'deflate' as const, deflate: (b: Uint8Array) => deflateSync(b), predictor: 2 as const, rowsPerStrip: 3 };
    await expectPages(o, { inflate: (b) => inflateSync(b) });
    await expect(roundTrip(o)).rejects.toThrow(/Deflate \(zip\).*inflate function/);
  });

  it('reads tiles, with partial tiles at the right and bottom edges', async () => {
    await expectPages({ width: 37, height: 21, sampleType: 'uint16', tile: { width: 16, height: 16 }, littleEndian: false });
    await expectPages({ width: 37, height: 21, sampleType: 'float32', tile: { width: 16, height: 16 }, compression: 'lzw', predictor: 3 });
    await expectPages({ width: 32, height: 32, sampleType: 'uint8', tile: { width: 16, height: 16 }, bigTiff: true });
  });

  for (const planar of [1, 2] as const) {
    it(`reads one sample of 3 per pixel (planar configuration ${planar}) when asked, refuses otherwise`, async () => {
      const o = { width: 6, height: 5, sampleType: 'uint16' as const, samplesPerPixel: 3, planar, rowsPerStrip: 2, compression: 'lzw' as const, predictor: 2 as const };
      const { stack, pages } = await roundTrip(o, { sample: 1 });
      const raw = await stack.readPageRaw(2);
      expect(Array.from(raw)).toEqual(Array.from({ length: 30 }, (_, i) => pages[2]![i * 3 + 1]));
      await expect(roundTrip(o)).rejects.toThrow(/3 samples per pixel.*choose which sample/);
      await expect(roundTrip(o, { sample: 3 })).rejects.toThrow(/sample 3 was asked for/);
    });
  }

  it('skips reduced-resolution pages (thumbnails)', async () => {
    const full = [0, 1, 2].map((p) => pattern('uint16', 8, 6, p));
    const thumb = pattern('uint16', 4, 3, 9);
    const bytes = writeTiff({
      width: 8, height: 6, sampleType: 'uint16',
      pages: [full[0]!, thumb, full[1]!, thumb, full[2]!],
      pageSizes: [undefined, { width: 4, height: 3 }, undefined, { width: 4, height: 3 }],
      newSubfileType: [0, 1, 0, 1, 0],
    });
    const stack = await openTiff(bytesSource(bytes));
    expect([stack.pages, stack.thumbnails]).toEqual([3, 2]);
    expect(Array.from(await stack.readPageRaw(2))).toEqual(Array.from(full[2]!));
  });

  it('keeps the first page’s ImageDescription and Software', async () => {
    const { stack } = await roundTrip({ width: 4, height: 4, sampleType: 'uint8', description: 'hello µm\nworld', software: 'Bruker PrairieView 5.5' });
    expect(stack.description).toBe('hello µm\nworld');
    expect(stack.software).toBe('Bruker PrairieView 5.5');
  });

  it('reads ImageJ stacks stored as one directory and back-to-back images (ImageJ over 4 GB)', async () => {
    const pages = [0, 1, 2, 3, 4].map((p) => pattern('uint16', 6, 4, p));
    const first = writeTiff({ width: 6, height: 4, sampleType: 'uint16', pages: [pages[0]!], description: 'ImageJ=1.54f\nimages=5\nframes=5\n', rowsPerStrip: 2 });
    const rest = new Uint8Array(pages.slice(1).flatMap((p) => Array.from(new Uint8Array(p.buffer))));
    const bytes = new Uint8Array(first.length + rest.length);
    bytes.set(first);
    bytes.set(rest, first.length);
    const stack = await openTiff(bytesSource(bytes));
    expect(stack.pages).toBe(5);
    expect(stack.metadata).toMatchObject({ source: 'imagej', channels: 1, planes: 1, timePoints: 5 });
    for (let p = 0; p < 5; p++) expect(Array.from(await stack.readPageRaw(p))).toEqual(Array.from(pages[p]!));
    await expect(openTiff(bytesSource(bytes.subarray(0, bytes.length - 10)))).rejects.toThrow(/says 5 images.*ends after 4 of them/);
  });

  it('rejects readPage with a wrongly sized output and an out-of-range index', async () => {
    const { stack } = await roundTrip({ width: 4, height: 3, sampleType: 'uint8' });
    await expect(stack.readPage(0, new Float32Array(11))).rejects.toThrow(RangeError);
    await expect(stack.readPageRaw(3)).rejects.toThrow(/outside 0…2/);
    await expect(stack.readPageRaw(-1)).rejects.toThrow(RangeError);
  });
});

describe('openTiff: cost of opening and reading', () => {
  it('reads a page of a 2,000-page file with a bounded number of reads and bytes', async () => {
    const w = 16;
    const h = 12;
    const pages = Array.from({ length: 2000 }, (_, p) => pattern('uint16', w, h, p));
    const variants = [{ rowsPerStrip: 4, count: 2000 }, { bigTiff: true, littleEndian: false, compression: 'lzw' as const, rowsPerStrip: 5, count: 300 }];
    for (const { count, ...o } of variants) {
      const src = countingSource(writeTiff({ width: w, height: h, sampleType: 'uint16', pages: pages.slice(0, count), ...o }));
      const stack = await openTiff(src);
      expect(stack.pages).toBe(count);
      for (const p of [0, 123, count - 1]) {
        src.reset();
        const raw = await stack.readPageRaw(p);
        expect(Array.from(raw)).toEqual(Array.from(pages[p]!));
        expect(src.reads.length).toBeLessThanOrEqual(3);
        // The pixels (384 bytes, more when compressed) plus the strip lists.
        expect(src.bytesRead()).toBeLessThanOrEqual(2 * w * h * 2 + 64);
      }
    }
  });

  it('stops opening when aborted', async () => {
    const bytes = writeTiff({ width: 2, height: 2, sampleType: 'uint8', pages: [Uint8Array.of(1, 2, 3, 4)] });
    await expect(openTiff(bytesSource(bytes), { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('walks a 10,000-page chain without reading pixel data, about one read a page', async () => {
    const pages = Array.from({ length: 10_000 }, (_, p) => Uint8Array.of(p & 255, 1, 2, 3, 4, 5));
    const written = writeTiffDetailed({ width: 3, height: 2, sampleType: 'uint8', pages, description: 'x'.repeat(300), rowsPerStrip: 1 });
    const pixel = new Uint8Array(written.bytes.length);
    for (const page of written.chunks) for (const c of page) pixel.fill(1, c.offset, c.offset + c.length);
    const src = countingSource(written.bytes);
    const stack = await openTiff(src);
    expect(stack.pages).toBe(10_000);
    expect(src.reads.filter((r) => pixel.subarray(r.offset, r.offset + r.length).includes(1))).toEqual([]);
    expect(src.reads.length).toBeLessThan(10_000 * 1.1);
    src.reset();
    expect(Array.from(await stack.readPageRaw(9_999))).toEqual([9_999 & 255, 1, 2, 3, 4, 5]);
    expect(src.reads.length).toBe(3); // strip offsets, strip sizes, pixels
  });
});
