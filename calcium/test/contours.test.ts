import { describe, expect, it } from 'vitest';
import { labelContours, loopPath } from '../src/figures/contours.ts';

/** A label image from rows of characters ('.' = 0, digits = ids). */
const image = (rows: string[]) => ({ data: Uint8Array.from(rows.join('').split('').map((c) => (c === '.' ? 0 : Number(c)))), width: rows[0]!.length, height: rows.length });

/** Twice the signed area of a loop (shoelace; positive = clockwise on screen, y down). */
const area2 = (l: number[]) => {
  let a = 0;
  for (let i = 0; i < l.length; i += 2) {
    const j = (i + 2) % l.length;
    a += l[i]! * l[j + 1]! - l[j]! * l[i + 1]!;
  }
  return a;
};

describe('labelContours', () => {
  it('outlines a rectangle by its four corners, clockwise', () => {
    const { data, width, height } = image(['.....', '.111.', '.111.', '.....']);
    const c = labelContours(data, width, height);
    expect([...c.keys()]).toEqual([1]);
    const [loop] = c.get(1)!;
    expect(loop!.length).toBe(8);
    expect(new Set(Array.from({ length: 4 }, (_, k) => `${loop![2 * k]},${loop![2 * k + 1]}`))).toEqual(new Set(['1,1', '4,1', '4,3', '1,3']));
    expect(area2(loop!)).toBe(2 * 6);
    expect(loopPath(loop!, 2)).toMatch(/^M\d+ \d+(L\d+ \d+){3}Z$/);
  });

  it('outlines touching regions separately, a region at the border, and a hole as a second loop', () => {
    const { data, width, height } = image(['11122', '1.122', '11122', '33...']);
    const c = labelContours(data, width, height);
    expect(c.get(1)!.length).toBe(2); // outer edge and the hole
    const areas = c.get(1)!.map(area2).sort((a, b) => a - b);
    expect(areas).toEqual([-2, 18]); // the hole runs the other way round: 9 − 1 = 8 pixels
    expect(c.get(2)!.map(area2)).toEqual([12]);
    expect(c.get(3)!.map(area2)).toEqual([4]);
  });

  it('closes every loop, also where a region touches itself at a corner', () => {
    const { data, width, height } = image(['1.', '.1']);
    const loops = labelContours(data, width, height).get(1)!;
    expect(loops.map(area2).reduce((a, b) => a + b, 0)).toBe(4);
    for (const l of loops) expect(l.length % 2).toBe(0);
  });
});
