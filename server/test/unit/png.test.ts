import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32, encodeGreyPng } from '../../src/analysis/png.ts';

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
    const raw = zlib.inflateSync(chunks.IDAT!);
    for (let y = 0; y < H; y++) {
      expect(raw[y * (W + 1)]).toBe(0);
      expect([...raw.subarray(y * (W + 1) + 1, (y + 1) * (W + 1))]).toEqual([...grey.subarray(y * W, (y + 1) * W)]);
    }
  });

  it('has the standard CRC-32 and refuses a wrong size', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    expect(() => encodeGreyPng(new Uint8Array(5), 2, 3)).toThrow(/needs 6 values/);
  });
});
