// The points format itself is tested where it lives: shared/test/atlas-points-format.test.ts.
import { describe, expect, it } from 'vitest';
import { rowIndex } from '../src/atlas/points.ts';

describe('atlas points on the client', () => {
  it('indexes points by row', () => {
    const idx = rowIndex({ n: 3, row: Uint32Array.from([4, 0, 2]) });
    expect(Array.from(idx)).toEqual([1, -1, 2, -1, 0]);
  });
});
