/**
 * The atlas points format (shared/src/atlas/points-format.ts): what the server encodes and the
 * panel decodes. Byte-level checks against the documented layout (built by hand, and read back
 * by hand), round trips, the no-copy views, and a clear error for each kind of malformed buffer.
 */
import { describe, expect, it } from 'vitest';
import { decodePoints, encodePoints, pointsArraysStart, type PointsMeta } from '../src/atlas/points-format.ts';

const meta = (over: Partial<PointsMeta> = {}): PointsMeta => ({ bounds: [-1, -2, 3, 4], color: null, total: 3, sampled: false, ...over });

/** A response built by hand, byte by byte, as the layout describes it. */
function handBuilt(n: number, metaJson: string, arrays: number[][], types: Array<'f32' | 'u32'>): ArrayBuffer {
  const metaBytes = new TextEncoder().encode(metaJson);
  const start = Math.ceil((8 + metaBytes.length) / 4) * 4;
  const buf = new ArrayBuffer(start + arrays.length * 4 * n);
  const dv = new DataView(buf);
  dv.setUint32(0, n, true);
  dv.setUint32(4, metaBytes.length, true);
  new Uint8Array(buf, 8).set(metaBytes);
  arrays.forEach((a, k) => a.forEach((v, i) => (types[k] === 'u32' ? dv.setUint32(start + k * 4 * n + i * 4, v, true) : dv.setFloat32(start + k * 4 * n + i * 4, v, true))));
  return buf;
}

describe('atlas points format: decoding', () => {
  it('reads n, the metadata, x, y and rows (no colour)', () => {
    const json = JSON.stringify({ bounds: [0, 0, 10, 5], color: null, total: 3, sampled: false });
    const p = decodePoints(handBuilt(3, json, [[1, 2.5, 10], [0, 5, 2], [7, 8, 9]], ['f32', 'f32', 'u32']));
    expect(p.n).toBe(3);
    expect(p.meta).toEqual({ bounds: [0, 0, 10, 5], color: null, total: 3, sampled: false });
    expect(Array.from(p.x)).toEqual([1, 2.5, 10]);
    expect(Array.from(p.y)).toEqual([0, 5, 2]);
    expect(Array.from(p.row)).toEqual([7, 8, 9]);
    expect(p.color).toBeNull();
  });

  it('pads the metadata to a multiple of 4 whatever its length', () => {
    for (const pad of ['', ' ', '  ', '   ']) {
      const json = JSON.stringify({ bounds: [0, 0, 1, 1], color: null, total: 2, sampled: true }) + pad;
      const p = decodePoints(handBuilt(2, json, [[0.25, 0.75], [0.5, 1], [0, 1]], ['f32', 'f32', 'u32']));
      expect(Array.from(p.x)).toEqual([0.25, 0.75]);
      expect(Array.from(p.row)).toEqual([0, 1]);
      expect(p.meta.sampled).toBe(true);
    }
  });

  it('reads a numeric colour with NaN for missing values, and a null min/max as NaN', () => {
    const color = { kind: 'numeric' as const, column: 'rate', min: 0, max: 9 };
    const p = decodePoints(encodePoints({ meta: meta({ color }), x: [1, 2, 3], y: [4, 5, 6], row: [0, 1, 2], color: [0, NaN, 9] }));
    expect(p.meta.color).toEqual(color);
    expect(p.color![0]).toBe(0);
    expect(Number.isNaN(p.color![1])).toBe(true);
    expect(p.color![2]).toBe(9);
    const empty = decodePoints(encodePoints({ meta: meta({ color: { kind: 'numeric', column: 'rate', min: NaN, max: NaN } }), x: [1], y: [1], row: [0], color: [NaN] }));
    expect(empty.meta.color).toEqual({ kind: 'numeric', column: 'rate', min: NaN, max: NaN });
  });

  it('reads categorical colours (category indices)', () => {
    const color = { kind: 'categorical' as const, column: 'label', categories: ['a', 'b'] };
    const p = decodePoints(encodePoints({ meta: meta({ color }), x: [0, 0, 0], y: [0, 0, 0], row: [5, 6, 7], color: [1, 0, NaN] }));
    expect(p.meta.color).toEqual(color);
    expect(Array.from(p.color!.slice(0, 2))).toEqual([1, 0]);
  });

  it('reads an empty map and large row numbers', () => {
    const p0 = decodePoints(encodePoints({ meta: meta({ total: 0 }), x: [], y: [], row: [] }));
    expect(p0.n).toBe(0);
    const p = decodePoints(encodePoints({ meta: meta(), x: [0], y: [0], row: [4_000_000_000] }));
    expect(p.row[0]).toBe(4_000_000_000);
  });

  it('decodes bytes anywhere in a buffer: views when aligned, copies when not', () => {
    const enc = encodePoints({ meta: meta(), x: [1, 2], y: [3, 4], row: [5, 6] });
    for (const offset of [0, 4, 1, 3]) {
      const host = new Uint8Array(offset + enc.length);
      host.set(enc, offset);
      const p = decodePoints(host.subarray(offset));
      expect([Array.from(p.x), Array.from(p.y), Array.from(p.row)]).toEqual([[1, 2], [3, 4], [5, 6]]);
      expect(p.x.buffer === host.buffer).toBe(offset % 4 === 0);
    }
  });

  it('says what is wrong with a malformed buffer', () => {
    expect(() => decodePoints(new ArrayBuffer(4))).toThrow('points: 4 bytes is shorter than the header (8 bytes)');
    const good = encodePoints({ meta: meta(), x: [1, 2], y: [3, 4], row: [0, 1] });
    expect(() => decodePoints(good.slice(0, good.byteLength - 4))).toThrow(/points: 2 points need \d+ bytes, the response has \d+/);
    expect(() => decodePoints(handBuilt(0, '{nope', [], []))).toThrow(/the metadata is not JSON/);
    expect(() => decodePoints(handBuilt(0, '[1,2]', [], []))).toThrow('the metadata is not an object');
    expect(() => decodePoints(handBuilt(0, JSON.stringify({ bounds: [0, 0, 1] }), [], []))).toThrow('bounds must be four finite numbers');
    expect(() => decodePoints(handBuilt(0, JSON.stringify({ bounds: [0, 0, 1, 1], color: { kind: 'hue' } }), [], []))).toThrow('unknown colour kind "hue"');
    const lying = good.slice();
    new DataView(lying.buffer).setUint32(4, 1e6, true);
    expect(() => decodePoints(lying)).toThrow(/metadata of 1000000 bytes runs past the end/);
  });
});

describe('atlas points format: encoding', () => {
  it('writes n, metaLen, meta, zero padding to 4, x, y, row[, color] little-endian', () => {
    for (const withColor of [false, true]) {
      const color = withColor ? { kind: 'numeric' as const, column: 'v', min: 2, max: 2 } : null;
      const p = { x: Float32Array.of(1.5, -2), y: Float32Array.of(0.25, 3), row: Uint32Array.of(0, 7), color: withColor ? Float32Array.of(NaN, 2) : null, meta: meta({ bounds: [-2, 0.25, 1.5, 3], total: 9, color }) };
      const buf = encodePoints(p);
      const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
      expect(dv.getUint32(0, true)).toBe(2);
      const metaLen = dv.getUint32(4, true);
      expect(JSON.parse(new TextDecoder().decode(buf.subarray(8, 8 + metaLen)))).toEqual(p.meta);
      const start = Math.ceil((8 + metaLen) / 4) * 4;
      expect(pointsArraysStart(metaLen)).toBe(start);
      expect(buf.subarray(8 + metaLen, start).every((b) => b === 0)).toBe(true);
      expect(buf.length).toBe(start + (withColor ? 4 : 3) * 8);
      expect([dv.getFloat32(start, true), dv.getFloat32(start + 4, true)]).toEqual([1.5, -2]);
      expect([dv.getFloat32(start + 8, true), dv.getFloat32(start + 12, true)]).toEqual([0.25, 3]);
      expect([dv.getUint32(start + 16, true), dv.getUint32(start + 20, true)]).toEqual([0, 7]);
      if (withColor) expect([dv.getFloat32(start + 24, true), dv.getFloat32(start + 28, true)]).toEqual([NaN, 2]);
    }
  });

  it('round-trips typed arrays (copied whole, views in the middle of a buffer) and plain arrays alike', () => {
    const big = new Float32Array(10).map((_, i) => i / 4);
    const x = big.subarray(3, 7);
    const y = Float32Array.of(-1, 0, 1, 1e30);
    const row = new Uint32Array(new ArrayBuffer(32), 8, 4).fill(9);
    const p = decodePoints(encodePoints({ meta: meta({ color: { kind: 'numeric', column: 'v', min: 1, max: 3 } }), x, y, row, color: [1, 2, 3, NaN] }));
    expect(Array.from(p.x)).toEqual([0.75, 1, 1.25, 1.5]);
    expect(Array.from(p.y)).toEqual([-1, 0, 1, Math.fround(1e30)]);
    expect(Array.from(p.row)).toEqual([9, 9, 9, 9]);
    expect(Array.from(p.color!)).toEqual([1, 2, 3, NaN]);
  });

  it('refuses arrays of different lengths, and a colour array without a colour in the metadata (or the other way round)', () => {
    expect(() => encodePoints({ meta: meta(), x: [1, 2], y: [1], row: [0, 1] })).toThrow('points: x, y, row must have the same length (2, 1, 2)');
    expect(() => encodePoints({ meta: meta(), x: [1], y: [1], row: [0], color: [1] })).toThrow('points: a colour array needs a colour in the metadata, and the other way round (array: yes, metadata: no)');
    expect(() => encodePoints({ meta: meta({ color: { kind: 'categorical', column: 'k', categories: [] } }), x: [1], y: [1], row: [0] })).toThrow('(array: no, metadata: yes)');
  });
});
