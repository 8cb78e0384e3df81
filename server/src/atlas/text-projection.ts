/**
 * A text column → 2-D without any model download or embedding service: TF-IDF vectors of the
 * words of each row (lower-cased word tokens, English stop words dropped, sublinear term
 * frequency, smoothed IDF, rows L2-normalised), then a truncated SVD of the centred vectors to two
 * dimensions (i.e. their first two principal components), computed by a seeded randomized SVD
 * (randomized-svd.ts) that only ever multiplies the sparse matrix by thin dense ones. The words
 * also name the clusters of embedding maps (`topTerms`).
 * Pure module (CPU only; the job process runs it).
 */
import type { Progress } from './numeric-projection.ts';
import { principalScores, type CentredMatrix } from './randomized-svd.ts';

/** Most terms kept (the most frequent by document frequency). */
export const MAX_TERMS = 20_000;

const STOP_WORDS = new Set(
  ('a about above after again against all am an and any are as at be because been before being below between both but by can could did do does ' +
    'doing down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself ' +
    'just me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such than ' +
    'that the their theirs them themselves then there these they this those through to too under until up very was we were what when where which ' +
    'while who whom why will with would you your yours yourself yourselves also may might must shall via per etc').split(' '),
);

/** Word tokens of a text: lower-cased letters and digits (inner ' - _ kept), ≥ 2 characters, not pure numbers, no stop words. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}]+(?:['_-][\p{L}\p{N}]+)*/gu)) {
    const t = m[0];
    if (t.length < 2 || STOP_WORDS.has(t) || /^\d+$/.test(t)) continue;
    out.push(t);
  }
  return out;
}

/** Rows × terms, sparse (CSR), L2-normalised rows. */
export interface TfIdf {
  rows: number;
  terms: string[];
  indptr: Int32Array;
  indices: Int32Array;
  values: Float64Array;
  /** Rows with no kept term (all-zero vectors). */
  empty: number;
}

/**
 * TF-IDF vectors of `texts` (null = no text). Terms in fewer than 2 rows are dropped when there are
 * ≥ 20 rows. The texts are tokenised twice (counting, then weighting) rather than kept as token
 * lists: a million short texts would otherwise hold tens of millions of strings at once.
 */
export function tfidf(texts: ReadonlyArray<string | null>): TfIdf {
  const n = texts.length;
  const df = new Map<string, number>();
  for (const t of texts) if (t) for (const w of new Set(tokenize(t))) df.set(w, (df.get(w) ?? 0) + 1);
  const minDf = n >= 20 ? 2 : 1;
  const kept = [...df.entries()].filter(([, c]) => c >= minDf).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, MAX_TERMS);
  const terms = kept.map(([t]) => t).sort();
  const index = new Map(terms.map((t, i) => [t, i]));
  const idf = terms.map((t) => Math.log((1 + n) / (1 + df.get(t)!)) + 1);
  df.clear();
  const indptr = new Int32Array(n + 1);
  let idx = new Int32Array(Math.max(16, n * 4));
  let vals = new Float64Array(idx.length);
  let used = 0;
  let empty = 0;
  texts.forEach((text, r) => {
    const counts = new Map<number, number>();
    if (text)
      for (const t of tokenize(text)) {
        const j = index.get(t);
        if (j !== undefined) counts.set(j, (counts.get(j) ?? 0) + 1);
      }
    const entries = [...counts.entries()].sort((a, b) => a[0] - b[0]);
    if (used + entries.length > idx.length) {
      const size = Math.max(2 * idx.length, used + entries.length);
      const i2 = new Int32Array(size);
      i2.set(idx.subarray(0, used));
      const v2 = new Float64Array(size);
      v2.set(vals.subarray(0, used));
      idx = i2;
      vals = v2;
    }
    let norm = 0;
    entries.forEach(([j, c], k) => {
      const v = (1 + Math.log(c)) * idf[j]!;
      idx[used + k] = j;
      vals[used + k] = v;
      norm += v * v;
    });
    norm = Math.sqrt(norm) || 1;
    for (let k = 0; k < entries.length; k++) vals[used + k] /= norm;
    used += entries.length;
    if (!entries.length) empty++;
    indptr[r + 1] = used;
  });
  return { rows: n, terms, indptr, indices: idx.slice(0, used), values: vals.slice(0, used), empty };
}

/** Column means of the sparse matrix (the centre the SVD works around). */
function columnMeans(m: TfIdf): Float64Array {
  const mu = new Float64Array(m.terms.length);
  for (let k = 0; k < m.values.length; k++) mu[m.indices[k]!] += m.values[k]!;
  for (let j = 0; j < mu.length; j++) mu[j] /= m.rows || 1;
  return mu;
}

/** The centred TF-IDF matrix X − 1μᵀ as products with thin dense matrices (the sparse matrix is never made dense). */
function centred(m: TfIdf, mu: Float64Array): CentredMatrix {
  return {
    rows: m.rows,
    cols: m.terms.length,
    times: (B) =>
      B.map((b) => {
        let shift = 0;
        for (let j = 0; j < mu.length; j++) shift += mu[j]! * b[j]!;
        const out = new Float64Array(m.rows);
        for (let r = 0; r < m.rows; r++) {
          let s = 0;
          for (let k = m.indptr[r]!; k < m.indptr[r + 1]!; k++) s += m.values[k]! * b[m.indices[k]!]!;
          out[r] = s - shift;
        }
        return out;
      }),
    transposeTimes: (A) =>
      A.map((a) => {
        const out = new Float64Array(m.terms.length);
        let total = 0;
        for (let r = 0; r < m.rows; r++) {
          const ar = a[r]!;
          total += ar;
          if (!ar) continue;
          for (let k = m.indptr[r]!; k < m.indptr[r + 1]!; k++) out[m.indices[k]!] += m.values[k]! * ar;
        }
        for (let j = 0; j < out.length; j++) out[j] -= mu[j]! * total;
        return out;
      }),
  };
}

/**
 * The rows' coordinates on the first two singular directions of the centred TF-IDF matrix (its
 * principal components), by randomized SVD (randomized-svd.ts: 12 seeded Gaussian directions, 4
 * power iterations). Rows without any term sit at the centre (0, 0). Signs fixed: each axis'
 * largest term loading positive.
 */
export function svd2(m: TfIdf, opts: { seed: number; onProgress?: Progress }): { x: Float64Array; y: Float64Array } {
  const [x, y] = principalScores(centred(m, columnMeans(m)), 2, opts) as [Float64Array, Float64Array];
  for (let r = 0; r < m.rows; r++) if (m.indptr[r] === m.indptr[r + 1]) x[r] = y[r] = 0;
  return { x, y };
}

/**
 * The `count` terms that most distinguish each cluster: highest mean TF-IDF weight in the cluster
 * above the mean over all rows.
 */
export function topTerms(m: TfIdf, cluster: Int32Array, k: number, count = 3): string[][] {
  const V = m.terms.length;
  const mu = columnMeans(m);
  const sums = Array.from({ length: k }, () => new Float64Array(V));
  const sizes = new Array<number>(k).fill(0);
  for (let r = 0; r < m.rows; r++) {
    const c = cluster[r]!;
    sizes[c]!++;
    const s = sums[c]!;
    for (let p = m.indptr[r]!; p < m.indptr[r + 1]!; p++) s[m.indices[p]!] += m.values[p]!;
  }
  return sums.map((s, c) => {
    const scored: Array<[number, number]> = [];
    for (let j = 0; j < V; j++) {
      const mean = s[j]! / (sizes[c] || 1);
      if (mean > 0) scored.push([mean - mu[j]!, j]);
    }
    scored.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    return scored.slice(0, count).map(([, j]) => m.terms[j]!);
  });
}
