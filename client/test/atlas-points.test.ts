import { describe, expect, it } from 'vitest';
import { encodePoints, parsePoints, rowIndex, type PointsMeta } from '../src/atlas/points.ts';

const meta = (over: Partial<PointsMeta> = {}): PointsMeta => ({ bounds: [-1, -2, 3, 4], color: null, total: 3, sampled: false, ...over });

/** A response built by hand, byte by byte, as the server's contract describes it. */
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

describe('atlas points format', () => {
  it('reads n, the metadata, x, y and rows (no colour)', () => {
    const json = JSON.stringify({ bounds: [0, 0, 10, 5], color: null, total: 3, sampled: false });
    const buf = handBuilt(3, json, [[1, 2.5, 10], [0, 5, 2], [7, 8, 9]], ['f32', 'f32', 'u32']);
    const p = parsePoints(buf);
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
      const p = parsePoints(handBuilt(2, json, [[0.25, 0.75], [0.5, 1], [0, 1]], ['f32', 'f32', 'u32']));
      expect(Array.from(p.x)).toEqual([0.25, 0.75]);
      expect(Array.from(p.row)).toEqual([0, 1]);
      expect(p.meta.sampled).toBe(true);
    }
  });

  it('reads a numeric colour with NaN for missing values', () => {
    const color = { kind: 'numeric' as const, column: 'rate', min: 0, max: 9 };
    const buf = encodePoints({ meta: meta({ color }), x: [1, 2, 3], y: [4, 5, 6], row: [0, 1, 2], color: [0, NaN, 9] });
    const p = parsePoints(buf);
    expect(p.meta.color).toEqual(color);
    expect(p.color![0]).toBe(0);
    expect(Number.isNaN(p.color![1])).toBe(true);
    expect(p.color![2]).toBe(9);
  });

  it('reads categorical colours (category indices)', () => {
    const color = { kind: 'categorical' as const, column: 'label', categories: ['a', 'b'] };
    const p = parsePoints(encodePoints({ meta: meta({ color }), x: [0, 0, 0], y: [0, 0, 0], row: [5, 6, 7], color: [1, 0, NaN] }));
    expect(p.meta.color).toEqual(color);
    expect(Array.from(p.color!.slice(0, 2))).toEqual([1, 0]);
  });

  it('reads an empty map and large row numbers', () => {
    const p0 = parsePoints(encodePoints({ meta: meta({ total: 0 }), x: [], y: [], row: [] }));
    expect(p0.n).toBe(0);
    const p = parsePoints(encodePoints({ meta: meta(), x: [0], y: [0], row: [4_000_000_000] }));
    expect(p.row[0]).toBe(4_000_000_000);
  });

  it('says what is wrong with a malformed response', () => {
    expect(() => parsePoints(new ArrayBuffer(4))).toThrow(/shorter than the header/);
    const good = encodePoints({ meta: meta(), x: [1, 2], y: [3, 4], row: [0, 1] });
    expect(() => parsePoints(good.slice(0, good.byteLength - 4))).toThrow(/need \d+ bytes/);
    const badJson = handBuilt(0, '{nope', [], []);
    expect(() => parsePoints(badJson)).toThrow(/not JSON/);
    expect(() => parsePoints(handBuilt(0, JSON.stringify({ bounds: [0, 0, 1] }), [], []))).toThrow(/bounds/);
    const dv = new DataView(good);
    dv.setUint32(4, 1e6, true);
    expect(() => parsePoints(good)).toThrow(/runs past the end/);
  });

  it('indexes points by row', () => {
    const idx = rowIndex({ n: 3, row: Uint32Array.from([4, 0, 2]) });
    expect(Array.from(idx)).toEqual([1, -1, 2, -1, 0]);
  });
});
