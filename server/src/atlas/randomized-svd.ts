/**
 * The leading principal components of a centred matrix that is only ever multiplied by thin dense
 * matrices — the sparse TF-IDF vectors of a text column (text-projection.ts), or the embeddings of
 * its distinct texts (embedding-matrix.ts) — by a seeded randomized SVD (Halko, Martinsson & Tropp
 * 2011): l = k + 10 Gaussian starting directions, a few power iterations, then the eigen
 * decomposition of the small l × l matrix (`ml-matrix`). Pure module (CPU only).
 */
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';
import type { Progress } from './numeric-projection.ts';
import { gaussian, seededRandom } from './seeded-random.ts';

/** X − 1μᵀ (rows × cols), known only by its products with thin dense matrices (column-major: one Float64Array per column). */
export interface CentredMatrix {
  rows: number;
  cols: number;
  /** (X − 1μᵀ) · B, B cols × l. Returns rows × l. */
  times(B: Float64Array[]): Float64Array[];
  /** (X − 1μᵀ)ᵀ · A, A rows × l. Returns cols × l. */
  transposeTimes(A: Float64Array[]): Float64Array[];
}

/** Orthonormalises the columns in place (modified Gram–Schmidt, twice for stability); drops none (a dependent column becomes zeros). */
function orthonormalise(cols: Float64Array[]): void {
  for (let pass = 0; pass < 2; pass++)
    for (let c = 0; c < cols.length; c++) {
      const v = cols[c]!;
      for (let p = 0; p < c; p++) {
        const u = cols[p]!;
        let dot = 0;
        for (let i = 0; i < v.length; i++) dot += u[i]! * v[i]!;
        for (let i = 0; i < v.length; i++) v[i] -= dot * u[i]!;
      }
      let norm = 0;
      for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
      norm = Math.sqrt(norm);
      if (norm > 1e-12) for (let i = 0; i < v.length; i++) v[i] /= norm;
      else v.fill(0);
    }
}

/**
 * The rows' coordinates on the first `k` singular directions of the centred matrix (its principal
 * component scores; column-major, k columns of `rows`). Signs fixed: each direction's largest
 * column loading positive. Directions beyond the matrix's rank are zeros. Progress: `stage`
 * (default "svd") counts the power iterations (default 4).
 */
export function principalScores(m: CentredMatrix, k: number, opts: { seed: number; iterations?: number; stage?: string; onProgress?: Progress }): Float64Array[] {
  const progress = opts.onProgress ?? (() => {});
  const stage = opts.stage ?? 'svd';
  const scores = Array.from({ length: k }, () => new Float64Array(m.rows));
  const V = m.cols;
  if (!V || m.rows < 2) return scores;
  const rand = seededRandom(opts.seed);
  const l = Math.min(k + 10, V, m.rows);
  const iterations = opts.iterations ?? 4;
  let omega: Float64Array[] = Array.from({ length: l }, () => Float64Array.from({ length: V }, () => gaussian(rand)));
  let Q: Float64Array[] = m.times(omega);
  orthonormalise(Q);
  for (let it = 0; it < iterations; it++) {
    progress(stage, it, iterations);
    omega = m.transposeTimes(Q);
    orthonormalise(omega);
    Q = m.times(omega);
    orthonormalise(Q);
  }
  progress(stage, iterations, iterations);
  // B = Qᵀ A (l × V); B Bᵀ = Ũ Σ² Ũᵀ; row coordinates A v_c = Q Ũ_c σ_c.
  const Bt = m.transposeTimes(Q);
  const BBt = Array.from({ length: l }, (_, a) =>
    Array.from({ length: l }, (_, b) => {
      let s = 0;
      for (let j = 0; j < V; j++) s += Bt[a]![j]! * Bt[b]![j]!;
      return s;
    }),
  );
  const evd = new EigenvalueDecomposition(new Matrix(BBt), { assumeSymmetric: true });
  const values = evd.realEigenvalues;
  const order = values.map((v, i) => [v, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]).map(([, i]) => i);
  scores.forEach((out, c) => {
    if (c >= l) return;
    const col = order[c]!;
    const sigma = Math.sqrt(Math.max(0, values[col]!));
    if (!sigma) return;
    const u = Array.from({ length: l }, (_, a) => evd.eigenvectorMatrix.get(a, col));
    // Column loadings v = Bᵀ u / σ: fix the sign by the largest one.
    let big = 0;
    let bigAbs = -1;
    for (let j = 0; j < V; j++) {
      let v = 0;
      for (let a = 0; a < l; a++) v += Bt[a]![j]! * u[a]!;
      if (Math.abs(v) > bigAbs + 1e-12) (bigAbs = Math.abs(v)), (big = j);
    }
    let vBig = 0;
    for (let a = 0; a < l; a++) vBig += Bt[a]![big]! * u[a]!;
    const sign = vBig < 0 ? -1 : 1;
    for (let a = 0; a < l; a++) {
      const w = sign * u[a]! * sigma;
      const q = Q[a]!;
      for (let r = 0; r < m.rows; r++) out[r] += w * q[r]!;
    }
  });
  return scores;
}
