/**
 * A small seeded PRNG (mulberry32): deterministic on every machine, for fuzzers, benchmarks and
 * generated demo data. Not for anything secret. Pure module.
 */

/** Returns a function yielding uniform numbers in [0, 1) from `seed`. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Fills `out` with the first `out.length` outputs of `mulberry32(seed)` as raw 32-bit integers
 * (`out[i] / 2**32` is the i-th number the function form yields). For bulk noise, where a call
 * per number costs more than the generator itself.
 */
export function mulberry32Fill(seed: number, out: Uint32Array): void {
  let a = seed >>> 0;
  for (let i = 0; i < out.length; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (t ^ (t >>> 14)) >>> 0;
  }
}
