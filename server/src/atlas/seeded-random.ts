/**
 * Seeded randomness for the atlas: the same table, method and seed give the same map on every
 * machine and every run (sampling, UMAP, k-means starts, SVD starting vectors). Pure module.
 */

/** A uniform generator in [0, 1) (mulberry32: 32-bit state, fast, good enough for sampling and SGD). */
export function seededRandom(seed: number): () => number {
  let a = (seed >>> 0) ^ 0x9e3779b9;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal deviate from `rand` (Box–Muller). */
export function gaussian(rand: () => number): number {
  const u = 1 - rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

/** `m` distinct indices of 0..n-1 chosen uniformly (partial Fisher–Yates), ascending. */
export function sampleIndices(n: number, m: number, rand: () => number): Int32Array {
  if (m >= n) return Int32Array.from({ length: n }, (_, i) => i);
  const all = Int32Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < m; i++) {
    const j = i + Math.floor(rand() * (n - i));
    const t = all[i]!;
    all[i] = all[j]!;
    all[j] = t;
  }
  return all.slice(0, m).sort();
}
