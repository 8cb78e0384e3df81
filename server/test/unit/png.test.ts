import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32, encodeGreyPng } from '../../src/analysis/png.ts';

/** Inflates and unfilters IDAT (filter types 0–2, what the encoder writes). */
function decode(idat: Buffer, W: number, H: number): number[] {
  const raw = zlib.inflateSync(idat);
  const out: number[] = [];
  for (let y = 0; y < H; y++) {
    const type = raw[y * (W + 1)]!;
    expect([0, 1, 2]).toContain(type);
    for (let x = 0; x < W; x++) {
      const v = raw[y * (W + 1) + 1 + x]!;
      const left = x ? out[y * W + x - 1]! : 0;
      const above = y ? out[(y - 1) * W + x]! : 0;
      out.push((v + (type === 1 ? left : type === 2 ? above : 0)) & 0xff);
    }
  }
  return out;
}

describe('encodeGreyPng', () => {
  it('writes a valid PNG whose pixels read back', () => {
    const W = 5;
    const H = 3;
    const grey = Uint8Array.from({ length: W * H }, (_, i) => i * 17);
    const png = encodeGreyPng(grey, W, H);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    // Walk the chunks, checking every CRC.
    const chunks: Record<string, Buffer> = {};
    for (let p = 8; p < png.length; ) {
      const len = png.readUInt32BE(p);
      const type = png.toString('latin1', p + 4, p + 8);
      expect(png.readUInt32BE(p + 8 + len)).toBe(crc32(png.subarray(p + 4, p + 8 + len)));
      chunks[type] = png.subarray(p + 8, p + 8 + len);
      p += 12 + len;
    }
    expect(Object.keys(chunks)).toEqual(['IHDR', 'IDAT', 'IEND']);
    expect([chunks.IHDR!.readUInt32BE(0), chunks.IHDR!.readUInt32BE(4), chunks.IHDR![8], chunks.IHDR![9]]).toEqual([W, H, 8, 0]);
    expect(decode(chunks.IDAT!, W, H)).toEqual([...grey]);
  });

  it('filters rows: a smooth image reads back exactly and deflates smaller than unfiltered', () => {
    const W = 256;
    const H = 256;
    const grey = Uint8Array.from({ length: W * H }, (_, i) => Math.round(128 + 100 * Math.sin((i % W) / 20) * Math.cos(Math.floor(i / W) / 30)));
    const png = encodeGreyPng(grey, W, H);
    const len = png.readUInt32BE(33);
    expect(png.toString('latin1', 37, 41)).toBe('IDAT');
    expect(decode(png.subarray(41, 41 + len), W, H)).toEqual([...grey]);
    const unfiltered = Buffer.alloc((W + 1) * H);
    for (let y = 0; y < H; y++) unfiltered.set(grey.subarray(y * W, (y + 1) * W), y * (W + 1) + 1);
    expect(len).toBeLessThan(zlib.deflateSync(unfiltered).length * 0.8);
  });

  it('has the standard CRC-32 and refuses a wrong size', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    expect(() => encodeGreyPng(new Uint8Array(5), 2, 3)).toThrow(/needs 6 values/);
  });
});
