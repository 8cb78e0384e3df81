/**
 * A text column's embeddings as the centred matrix the randomized SVD reduces (randomized-svd.ts):
 * one row per table row, each the L2-normalised vector of its text (so euclidean distances rank
 * neighbours as cosine similarity does, as embeddings are meant to be compared), rows without text
 * given the mean vector (so centred, they are zeros: the centre of the map). The vectors are kept
 * once per distinct text and never copied per row. Pure module (CPU only; the job process runs it).
 */
import type { Embeddings } from './embeddings.ts';
import type { CentredMatrix } from './randomized-svd.ts';

export interface EmbeddingMatrix {
  matrix: CentredMatrix;
  /** Σ over rows of the squared length of the centred row: the variance (× (rows − 1)) the principal components share. */
  total: number;
}

export function embeddingMatrix(e: Embeddings): EmbeddingMatrix {
  const { dimensions: d, count: u, vectors: v, index } = e;
  const rows = index.length;
  const invNorm = new Float64Array(u);
  for (let t = 0; t < u; t++) {
    let s = 0;
    for (let j = 0; j < d; j++) s += v[t * d + j]! ** 2;
    invNorm[t] = s > 0 ? 1 / Math.sqrt(s) : 0;
  }
  // How many rows hold each text; the mean (normalised) vector over rows with text.
  const mult = new Float64Array(u);
  for (const t of index) if (t >= 0) mult[t]++;
  const withText = rows - e.empty;
  const mu = new Float64Array(d);
  let squares = 0;
  for (let t = 0; t < u; t++) {
    const w = mult[t]! * invNorm[t]!;
    for (let j = 0; j < d; j++) mu[j] += w * v[t * d + j]!;
    if (invNorm[t]) squares += mult[t]!;
  }
  for (let j = 0; j < d; j++) mu[j] /= withText || 1;
  let muSquared = 0;
  for (let j = 0; j < d; j++) muSquared += mu[j]! ** 2;

  const matrix: CentredMatrix = {
    rows,
    cols: d,
    times: (B) =>
      B.map((b) => {
        let shift = 0;
        for (let j = 0; j < d; j++) shift += mu[j]! * b[j]!;
        const perText = new Float64Array(u);
        for (let t = 0; t < u; t++) {
          let s = 0;
          for (let j = 0; j < d; j++) s += v[t * d + j]! * b[j]!;
          perText[t] = s * invNorm[t]! - shift;
        }
        const out = new Float64Array(rows);
        for (let r = 0; r < rows; r++) out[r] = index[r]! >= 0 ? perText[index[r]!]! : 0;
        return out;
      }),
    transposeTimes: (A) =>
      A.map((a) => {
        const perText = new Float64Array(u);
        let sum = 0;
        for (let r = 0; r < rows; r++) {
          const t = index[r]!;
          if (t < 0) continue;
          perText[t] += a[r]!;
          sum += a[r]!;
        }
        const out = new Float64Array(d);
        for (let t = 0; t < u; t++) {
          const w = perText[t]! * invNorm[t]!;
          if (w) for (let j = 0; j < d; j++) out[j] += w * v[t * d + j]!;
        }
        for (let j = 0; j < d; j++) out[j] -= mu[j]! * sum;
        return out;
      }),
  };
  // Σ‖x_r − μ‖² over rows with text = Σ‖x_r‖² − n‖μ‖² (each non-zero x_r has length 1).
  return { matrix, total: Math.max(0, squares - withText * muSquared) };
}
