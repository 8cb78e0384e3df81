import { describe, expect, it } from 'vitest';
import { bytesSource, openTiff } from '../src/tiff/index.ts';
import * as F from './tiff-libtiff-fixtures.ts';

// Files written by libtiff itself, so the decoders are checked against an independent encoder
// rather than only against this package's test writer. The formulas are those of the generator.
const W = 37;
const H = 23;
const u16 = (p: number) => Array.from({ length: W * H }, (_, i) => {
  const x = i % W;
  const y = Math.floor(i / W);
  return (x * 131 + y * 977 + p * 7919 + ((x * y) % 13)) & 0xffff;
});
const u8 = (p: number) => Array.from({ length: W * H }, (_, i) => {
  const x = i % W;
  const y = Math.floor(i / W);
  return (Math.floor((x * 3 + y * 5 + p * 11) / 2) + ((x * y) % 7)) & 0xff;
});
const f32 = (p: number) => Array.from({ length: W * H }, (_, i) => {
  const x = i % W;
  const y = Math.floor(i / W);
  return (x - 18.5) * 0.25 + y * 1.5 - p * 3.0 + ((x * y) % 5) * 0.125;
});

const open = (b64: string) => openTiff(bytesSource(new Uint8Array(Buffer.from(b64, 'base64'))));

async function pagesOf(b64: string) {
  const stack = await open(b64);
  const out: number[][] = [];
  for (let p = 0; p < stack.pages; p++) out.push(Array.from(await stack.readPageRaw(p)));
  return { stack, out };
}

describe('files written by libtiff', () => {
  it('LZW, horizontal predictor, uint16, 5 rows per strip', async () => {
    const { stack, out } = await pagesOf(F.lzwU16Pred2);
    expect([stack.width, stack.height, stack.sampleType, stack.pages]).toEqual([W, H, 'uint16', 2]);
    expect(out).toEqual([u16(0), u16(1)]);
  });

  it('LZW uint8', async () => {
    expect((await pagesOf(F.lzwU8)).out).toEqual([u8(0)]);
  });

  it('PackBits uint8, 4 rows per strip', async () => {
    expect((await pagesOf(F.packbitsU8)).out).toEqual([u8(0), u8(1)]);
  });

  it('LZW, floating-point predictor, float32', async () => {
    const { stack, out } = await pagesOf(F.lzwF32Pred3);
    expect(stack.sampleType).toBe('float32');
    expect(out).toEqual([f32(0), f32(1)]);
  });

  it('BigTIFF, big-endian, LZW with predictor', async () => {
    const { stack, out } = await pagesOf(F.lzwU16BigtiffBe);
    expect([stack.bigTiff, stack.littleEndian]).toEqual([true, false]);
    expect(out).toEqual([u16(0)]);
  });

  it('LZW of random bytes (12-bit codes, table resets)', async () => {
    let x = 12345;
    const expected = Array.from({ length: 100 * 60 }, () => {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      return x >>> 24;
    });
    expect((await pagesOf(F.lzwBig)).out).toEqual([expected]);
  });
});
