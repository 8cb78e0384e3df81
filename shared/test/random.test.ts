/** The seeded PRNG: the bulk integer form yields exactly the function form's sequence. */
import { describe, expect, it } from 'vitest';
import { mulberry32, mulberry32Fill } from '../src/random.ts';

describe('mulberry32', () => {
  it('mulberry32Fill yields the same sequence as mulberry32, as 32-bit integers', () => {
    for (const seed of [0, 1, 42, 0xffffffff]) {
      const next = mulberry32(seed);
      const out = new Uint32Array(1000);
      mulberry32Fill(seed, out);
      for (let i = 0; i < out.length; i++) expect(out[i]! / 2 ** 32).toBe(next());
    }
  });
});
