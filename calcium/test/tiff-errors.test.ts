import { describe, expect, it } from 'vitest';
import { bytesSource, openTiff, TiffError, type TiffStack } from '../src/tiff/index.ts';
import { pattern, patched, rng, tagValueAt } from './tiff-helpers.ts';
import { writeTiffDetailed, type WriteTiffOptions } from './tiff-writer.ts';

function written(o: Partial<WriteTiffOptions> = {}) {
  const width = o.width ?? 8;
  const height = o.height ?? 6;
  const sampleType = o.sampleType ?? 'uint16';
  return writeTiffDetailed({ width, height, sampleType, pages: [0, 1, 2].map((p) => pattern(sampleType, width, height, p)), ...o });
}

/** Opens and reads every page; resolves to the TiffError thrown, fails on any other outcome. */
async function tiffError(bytes: Uint8Array, opts: Parameters<typeof openTiff>[1] = {}): Promise<TiffError> {
  try {
    const stack = await openTiff(bytesSource(bytes), opts);
    await readAll(stack);
  } catch (e) {
    if (e instanceof TiffError && e.name === 'TiffError') return e;
    throw e;
  }
  throw new Error('expected a TiffError, but the file read fine');
}

async function readAll(stack: TiffStack): Promise<void> {
  const out = new Float32Array(stack.width * stack.height);
  for (let p = 0; p < stack.pages; p++) await stack.readPage(p, out);
}

describe('openTiff refuses malformed files with a TiffError', () => {
  it('empty, tiny and non-TIFF files', async () => {
    expect((await tiffError(new Uint8Array(0))).message).toMatch(/not a TIFF file: it is only 0 bytes long/);
    expect((await tiffError(Uint8Array.of(0x49, 0x49, 42))).message).toMatch(/only 3 bytes/);
    const png = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13);
    expect((await tiffError(png)).message).toMatch(/not a TIFF file: a TIFF starts with "II" or "MM", this one with the bytes 89 50 4e 47/);
    expect((await tiffError(Uint8Array.of(0x49, 0x49, 41, 0, 8, 0, 0, 0))).message).toMatch(/version 41/);
    expect((await tiffError(Uint8Array.of(0x49, 0x49, 42, 0, 0, 0, 0, 0))).message).toMatch(/no pages/);
    expect((await tiffError(Uint8Array.of(0x49, 0x49, 43, 0, 8, 0, 0, 0, 16))).message).toMatch(/ends inside its BigTIFF header/);
    expect((await tiffError(Uint8Array.of(0x49, 0x49, 42, 0, 4, 0, 0, 0, 0, 0))).message).toMatch(/inside the file header/);
  });

  it('garbage bytes', async () => {
    const random = rng(1);
    for (let k = 0; k < 50; k++) {
      const junk = Uint8Array.from({ length: 1 + Math.floor(random() * 300) }, () => Math.floor(random() * 256));
      if (k % 2 === 0 && junk.length > 4) junk.set([0x4d, 0x4d, 0, 42]); // a valid start, garbage after it
      await tiffError(junk);
    }
  });

  it('truncated at every byte: in the header, a directory, the description or pixel data', async () => {
    const first = {};
    for (const o of [first, { bigTiff: true, littleEndian: false, rowsPerStrip: 2 }, { compression: 'lzw' as const, description: 'ImageJ=1.54f\nimages=3\n' }]) {
      const { bytes, ifdOffsets, chunks } = written(o);
      const messages = new Set<string>();
      for (let cut = 0; cut < bytes.length; cut += o === first ? 1 : 5) messages.add((await tiffError(bytes.subarray(0, cut))).message);
      const all = [...messages].join('\n');
      expect(all).toMatch(/only \d bytes long/);
      expect(all).toMatch(/the file ends inside page 1's directory \(truncated\?\)/);
      expect(all).toMatch(/page 3's directory would start at byte \d+, beyond the end/);
      expect(all).toMatch(/the file ends inside page 3's pixel data \(truncated\?\)/);
      // Cut inside page 2's pixel data: page 3's directory, which follows, is missing first.
      const inPage2 = chunks[1]![0]!.offset + 3;
      expect(inPage2).toBeLessThan(ifdOffsets[2]!);
      expect((await tiffError(bytes.subarray(0, inPage2))).message).toMatch(/page 3's directory would start/);
    }
  });

  it('a directory offset outside the file, and inside the header', async () => {
    const { bytes, ifdOffsets } = written();
    const nextOfPage2 = ifdOffsets[1]! + 2 + 12 * new DataView(bytes.buffer).getUint16(ifdOffsets[1]!, true);
    expect((await tiffError(patched(bytes, nextOfPage2, bytes.length + 1000))).message).toMatch(
      /page 3's directory would start at byte \d+, beyond the end of the \d+-byte file \(truncated\?\)/,
    );
    expect((await tiffError(patched(bytes, nextOfPage2, 6))).message).toMatch(/page 3's directory is said to start at byte 6, inside the file header/);
    expect((await tiffError(patched(bytes, 4, bytes.length - 1))).message).toMatch(/the file ends inside page 1's directory/);
  });

  it('a loop in the chain of pages', async () => {
    const { bytes, ifdOffsets } = written();
    const nextOfPage3 = ifdOffsets[2]! + 2 + 12 * new DataView(bytes.buffer).getUint16(ifdOffsets[2]!, true);
    expect((await tiffError(patched(bytes, nextOfPage3, ifdOffsets[1]!))).message).toMatch(
      /page 4's directory is page 2's again: the chain of pages loops back on itself/,
    );
    // A directory pointing at itself.
    expect((await tiffError(patched(bytes, nextOfPage3, ifdOffsets[2]!))).message).toMatch(/page 4's directory is page 3's again/);
  });

  it('a strip beyond the end of the file, or short', async () => {
    const { bytes, ifdOffsets } = written();
    const at = tagValueAt(bytes, ifdOffsets[1]!, 273);
    expect((await tiffError(patched(bytes, at, bytes.length + 5))).message).toMatch(/page 2's pixel data would start beyond the end of the file/);
    expect((await tiffError(patched(bytes, at, bytes.length - 20))).message).toMatch(/the file ends inside page 2's pixel data \(truncated\?\)/);
    const counts = tagValueAt(bytes, ifdOffsets[1]!, 279);
    expect((await tiffError(patched(bytes, counts, 10))).message).toMatch(/the strip of page 2 holds 10 bytes where its pixels need 96/);
    expect((await tiffError(patched(bytes, counts, 0))).message).toMatch(/the strip of page 2 is empty/);
  });

  it('strip lists that lie beyond the end, or are too short', async () => {
    const { bytes, ifdOffsets } = written({ rowsPerStrip: 2 });
    const at = tagValueAt(bytes, ifdOffsets[2]!, 273);
    expect((await tiffError(patched(bytes, at, bytes.length - 4))).message).toMatch(/page 3's strip offsets would extend beyond the end of the file/);
    expect((await tiffError(patched(bytes, at - 4, 2))).message).toMatch(/page 3 lists 2 strips of pixel data where its size needs 3/);
  });

  it('pages of different sizes or types', async () => {
    const a = pattern('uint16', 8, 6, 0);
    const b = pattern('uint16', 8, 4, 1);
    const { bytes } = writeTiffDetailed({ width: 8, height: 6, sampleType: 'uint16', pages: [a, a, b], pageSizes: [undefined, undefined, { width: 8, height: 4 }] });
    expect((await tiffError(bytes)).message).toMatch(/page 3 is 8 × 4 uint16 but page 1 is 8 × 6 uint16; every page of a recording must have the same size and sample type/);
    const { bytes: b2, ifdOffsets } = written();
    expect((await tiffError(patched(b2, tagValueAt(b2, ifdOffsets[1]!, 339), 2, 2))).message).toMatch(/page 2 is 8 × 6 int16 but page 1 is 8 × 6 uint16/);
  });

  it('zero-sized and huge images', async () => {
    const { bytes, ifdOffsets } = written();
    expect((await tiffError(patched(bytes, tagValueAt(bytes, ifdOffsets[0]!, 256), 0, 2))).message).toMatch(/page 1 is 0 × 6 pixels: an image needs at least one pixel each way/);
    expect((await tiffError(patched(bytes, tagValueAt(bytes, ifdOffsets[1]!, 257), 0, 2))).message).toMatch(/page 2 is 8 × 0 pixels/);
    const { bytes: big, ifdOffsets: o2 } = written({ width: 70000, height: 1, pages: [new Uint16Array(70000)] });
    expect((await tiffError(patched(big, tagValueAt(big, o2[0]!, 257), 60000, 2))).message).toMatch(/page 1 is 70000 × 60000 pixels, larger than this reader opens/);
    // A compressed strip far too small for the size its page claims.
    const { bytes: lzw, ifdOffsets: o3 } = written({ compression: 'lzw', pages: [pattern('uint16', 8, 6, 0)] });
    const tall = patched(patched(lzw, tagValueAt(lzw, o3[0]!, 257), 60000, 2), tagValueAt(lzw, o3[0]!, 278), 60000);
    expect((await tiffError(tall)).message).toMatch(/the strip of page 1 holds \d+ compressed bytes, too few for the 960000 bytes of its pixels/);
  });

  it('unsupported compressions, predictors and sample formats, named', async () => {
    const { bytes, ifdOffsets } = written();
    const comp = tagValueAt(bytes, ifdOffsets[0]!, 259);
    expect((await tiffError(patched(bytes, comp, 7, 2))).message).toMatch(/page 1 is compressed with JPEG \(TIFF compression 7\), which this reader does not support/);
    expect((await tiffError(patched(bytes, comp, 50000, 2))).message).toMatch(/Zstandard/);
    expect((await tiffError(patched(bytes, comp, 999, 2))).message).toMatch(/an unknown method \(TIFF compression 999\)/);
    expect((await tiffError(patched(bytes, comp, 8, 2))).message).toMatch(/Deflate \(zip\), which needs an inflate function/);
    const bits = tagValueAt(bytes, ifdOffsets[0]!, 258);
    expect((await tiffError(patched(bytes, bits, 12, 2))).message).toMatch(/page 1 stores 12-bit unsigned integer samples; this reader supports/);
    const fmt = tagValueAt(bytes, ifdOffsets[0]!, 339);
    expect((await tiffError(patched(bytes, fmt, 3, 2))).message).toMatch(/16-bit floating-point samples/);
    const { bytes: lzw, ifdOffsets: o2 } = written({ compression: 'lzw', predictor: 2 });
    expect((await tiffError(patched(lzw, tagValueAt(lzw, o2[0]!, 317), 5, 2))).message).toMatch(/predictor 5/);
  });

  it('corrupt compressed data', async () => {
    const { bytes, chunks } = written({ compression: 'lzw' });
    const broken = bytes.slice();
    broken.fill(0xff, chunks[1]![0]!.offset, chunks[1]![0]!.offset + chunks[1]![0]!.length);
    expect((await tiffError(broken)).message).toMatch(/the strip of page 2 cannot be decompressed: its LZW data is corrupt/);
    const { ifdOffsets } = written({ compression: 'lzw' });
    const short = patched(bytes, tagValueAt(bytes, ifdOffsets[0]!, 279), 6);
    expect((await tiffError(short)).message).toMatch(/the strip of page 1 decompresses to \d bytes where its pixels need 96 \(corrupt or truncated data\)/);
    const { bytes: pb, chunks: c2 } = written({ compression: 'packbits' });
    const cut = pb.slice();
    cut.fill(0x80, c2[0]![0]!.offset, c2[0]![0]!.offset + c2[0]![0]!.length); // no-op codes only
    expect((await tiffError(cut)).message).toMatch(/the strip of page 1 decompresses to 0 bytes where its pixels need 96/);
  });

  it('a throwing inflate becomes a TiffError', async () => {
    const { bytes } = written({ compression: 'deflate', deflate: (b) => b });
    const e = await tiffError(bytes, { inflate: () => { throw new Error('incorrect header check'); } });
    expect(e.message).toMatch(/the strip of page 1 cannot be decompressed: its Deflate data are corrupt \(incorrect header check\)/);
  });

  it('too many pages', async () => {
    const { bytes } = written();
    expect((await tiffError(bytes, { maxPages: 2 })).message).toMatch(/more than 2 pages/);
  });

  it('random damage to valid files: a TiffError or a readable file, never another error or a hang', async () => {
    const random = rng(7);
    const bases = [written({ rowsPerStrip: 2 }), written({ compression: 'lzw', predictor: 2, bigTiff: true }), written({ compression: 'packbits', littleEndian: false, tile: { width: 16, height: 16 } })];
    let errors = 0;
    for (let k = 0; k < 400; k++) {
      const { bytes } = bases[k % bases.length]!;
      const copy = bytes.slice();
      const flips = 1 + Math.floor(random() * 4);
      // Mostly damage the directories and headers, where it matters most.
      for (let f = 0; f < flips; f++) copy[Math.floor(random() * Math.min(copy.length, random() < 0.8 ? 400 : copy.length))] = Math.floor(random() * 256);
      try {
        await readAll(await openTiff(bytesSource(copy), { maxPages: 100 }));
      } catch (e) {
        if (!(e instanceof TiffError)) throw new Error(`case ${k}: ${String(e)}`);
        errors++;
      }
    }
    expect(errors).toBeGreaterThan(60); // the damage was not vacuous
  });
});
