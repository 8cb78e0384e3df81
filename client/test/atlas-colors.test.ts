import { describe, expect, it } from 'vitest';
import { coloring, HIGHLIGHT_COLOR, MISSING_COLOR, NUMERIC_BINS, BASE_COLOR, sequential } from '../src/atlas/colors.ts';
import type { PointsMeta } from '../src/atlas/points.ts';

const meta = (color: PointsMeta['color']): PointsMeta => ({ bounds: [0, 0, 1, 1], color, total: 4, sampled: false });

describe('atlas colouring', () => {
  it('numeric: missing first, bins by value, highlight last', () => {
    const c = coloring({ n: 4, meta: meta({ kind: 'numeric', column: 'v', min: 0, max: 10 }), color: Float32Array.from([0, 10, NaN, 5]) }, new Set([3]));
    expect(c.palette[0]).toBe(MISSING_COLOR);
    expect(c.palette.length).toBe(NUMERIC_BINS + 2);
    expect(c.palette.at(-1)).toBe(HIGHLIGHT_COLOR);
    expect(Array.from(c.z)).toEqual([1, NUMERIC_BINS, 0, NUMERIC_BINS + 1]);
    expect(c.z.every((z) => Number.isInteger(z))).toBe(true);
  });

  it('categorical: index per category, missing after them', () => {
    const c = coloring({ n: 4, meta: meta({ kind: 'categorical', column: 'k', categories: ['a', 'b', 'c'] }), color: Float32Array.from([2, 0, NaN, 7]) }, null);
    expect(Array.from(c.z)).toEqual([2, 0, 3, 3]);
    expect(c.palette[3]).toBe(MISSING_COLOR);
    expect(c.palette.length).toBe(5);
  });

  it('no colour column: one colour and the highlight', () => {
    const c = coloring({ n: 3, meta: meta(null), color: null }, new Set([1]));
    expect(c.palette).toEqual([BASE_COLOR, HIGHLIGHT_COLOR]);
    expect(Array.from(c.z)).toEqual([0, 1, 0]);
  });

  it('the sequential palette runs from viridis purple to yellow', () => {
    const s = sequential(5);
    expect(s[0]).toBe('#440154');
    expect(s[4]).toBe('#fde725');
  });
});
