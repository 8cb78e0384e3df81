/**
 * Numeric columns → 2-D: missing values filled with the column mean, columns standardised
 * (z-scores), then PCA or UMAP. Columns are column-major Float64Arrays of one length (one entry
 * per row, NaN where missing). Pure module (CPU only; the job process runs it).
 *
 * Libraries: `ml-matrix` (MIT, pure JS, no native build) gives the eigen decomposition of the
 * small d×d covariance matrix; it is the matrix library of the mljs ecosystem, maintained and
 * typed. `umap-js` (MIT, pure JS, Google PAIR) is the JavaScript port of UMAP that takes an
 * injected random generator (so a seed makes maps reproducible) and can be stepped epoch by epoch
 * (so the job reports progress). Its own `transform` is far too slow for tens of thousands of new
 * rows (minutes), so big tables fit on a random sample and the other rows are placed among their
 * nearest fitted rows (kd-tree.ts), which is what UMAP's transform starts from.
 */
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';
import { UMAP } from 'umap-js';
import { KdTree } from './kd-tree.ts';
import { sampleIndices, seededRandom } from './seeded-random.ts';

export type Progress = (stage: string, done: number, total: number) => void;

/** Most rows UMAP is fitted on; the others are placed next to their nearest fitted rows. */
export const UMAP_FIT_ROWS = 10_000;
/** Neighbours UMAP's graph uses, and fitted rows each other row is placed among. */
export const UMAP_NEIGHBOURS = 15;
export const PLACE_NEIGHBOURS = 10;

/**
 * Replaces NaN / ±Infinity with the mean of the column's finite values. Returns new columns, how
 * many values were filled, and the indices of columns without any finite value.
 */
export function fillMissing(columns: readonly Float64Array[]): { columns: Float64Array[]; filled: number; empty: number[] } {
  let filled = 0;
  const empty: number[] = [];
  const out = columns.map((col, j) => {
    let sum = 0;
    let n = 0;
    for (const v of col) if (Number.isFinite(v)) (sum += v), n++;
    if (!n) empty.push(j);
    const mean = n ? sum / n : 0;
    const c = Float64Array.from(col);
    for (let i = 0; i < c.length; i++) if (!Number.isFinite(c[i]!)) (c[i] = mean), filled++;
    return c;
  });
  return { columns: out, filled, empty };
}

/** Z-scores of each column (mean 0, SD 1); a constant column becomes zeros (its index in `constant`). */
export function standardise(columns: readonly Float64Array[]): { columns: Float64Array[]; constant: number[] } {
  const constant: number[] = [];
  const out = columns.map((col, j) => {
    const n = col.length;
    let mean = 0;
    for (const v of col) mean += v;
    mean /= n || 1;
    let ss = 0;
    for (const v of col) ss += (v - mean) ** 2;
    const sd = n > 1 ? Math.sqrt(ss / (n - 1)) : 0;
    if (!(sd > 1e-12 * Math.max(1, Math.abs(mean)))) {
      constant.push(j);
      return new Float64Array(n);
    }
    return col.map((v) => (v - mean) / sd);
  });
  return { columns: out, constant };
}

/**
 * The first `components` principal components of standardised columns (scores per row), and the
 * share of the variance each explains. Each axis' sign is fixed (its largest loading positive), so
 * the same data always gives the same picture. Fewer columns than components: the rest are zeros.
 */
export function pca(z: readonly Float64Array[], components = 2): { scores: Float64Array[]; explained: number[] } {
  const d = z.length;
  const n = d ? z[0]!.length : 0;
  const cov = Array.from({ length: d }, () => new Array<number>(d).fill(0));
  for (let a = 0; a < d; a++)
    for (let b = a; b < d; b++) {
      const za = z[a]!;
      const zb = z[b]!;
      let s = 0;
      for (let i = 0; i < n; i++) s += za[i]! * zb[i]!;
      cov[a]![b] = cov[b]![a] = s / Math.max(1, n - 1);
    }
  const scores = Array.from({ length: components }, () => new Float64Array(n));
  const explained = new Array<number>(components).fill(0);
  if (!d || !n) return { scores, explained };
  const evd = new EigenvalueDecomposition(new Matrix(cov), { assumeSymmetric: true });
  const values = evd.realEigenvalues;
  const vectors = evd.eigenvectorMatrix;
  const order = values.map((v, i) => [v, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]).map(([, i]) => i);
  const total = values.reduce((s, v) => s + Math.max(0, v), 0) || 1;
  for (let c = 0; c < Math.min(components, d); c++) {
    const col = order[c]!;
    const w = Array.from({ length: d }, (_, j) => vectors.get(j, col));
    let big = 0;
    for (let j = 1; j < d; j++) if (Math.abs(w[j]!) > Math.abs(w[big]!) + 1e-12) big = j;
    const sign = w[big]! < 0 ? -1 : 1;
    const out = scores[c]!;
    for (let j = 0; j < d; j++) {
      const wj = sign * w[j]!;
      if (!wj) continue;
      const zj = z[j]!;
      for (let i = 0; i < n; i++) out[i] += wj * zj[i]!;
    }
    explained[c] = Math.max(0, values[col]!) / total;
  }
  return { scores, explained };
}

export interface UmapResult {
  x: Float64Array;
  y: Float64Array;
  /** Rows UMAP was fitted on (all rows, or a random sample of UMAP_FIT_ROWS). */
  fitted: number;
  /** Rows placed among their nearest fitted rows (0 when every row was fitted). */
  placed: number;
}

/**
 * UMAP of standardised columns into 2-D (euclidean, 15 neighbours, min_dist 0.1), seeded. Tables
 * over `fitRows` rows: fitted on a seeded random sample of `fitRows` rows; every other row is put
 * at the inverse-distance weighted mean of the positions of its PLACE_NEIGHBOURS nearest fitted
 * rows (nearest in the standardised space, or in its first 10 principal components when there are
 * more than 10 columns).
 */
export function umap(z: readonly Float64Array[], opts: { seed: number; fitRows?: number; onProgress?: Progress }): UmapResult {
  const d = z.length;
  const n = d ? z[0]!.length : 0;
  const progress = opts.onProgress ?? (() => {});
  const rand = seededRandom(opts.seed);
  const fit = sampleIndices(n, opts.fitRows ?? UMAP_FIT_ROWS, rand);
  const m = fit.length;
  const rows = Array.from(fit, (i) => Array.from({ length: d }, (_, j) => z[j]![i]!));
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  progress('neighbours', 0, 1);
  const model = new UMAP({ nComponents: 2, nNeighbors: Math.max(2, Math.min(UMAP_NEIGHBOURS, m - 1)), minDist: 0.1, random: rand });
  const epochs = model.initializeFit(rows);
  progress('neighbours', 1, 1);
  for (let e = 0; e < epochs; e++) {
    model.step();
    if (e % 10 === 9 || e === epochs - 1) progress('umap', e + 1, epochs);
  }
  const emb = model.getEmbedding();
  fit.forEach((row, k) => {
    x[row] = emb[k]![0]!;
    y[row] = emb[k]![1]!;
  });
  const placed = n - m;
  if (placed > 0) {
    // The space the neighbours are searched in: the columns themselves, or their first 10 PCs.
    const space = d <= 10 ? z : pca(z, 10).scores;
    const D = space.length;
    const pts = new Float64Array(m * D);
    fit.forEach((row, k) => {
      for (let j = 0; j < D; j++) pts[k * D + j] = space[j]![row]!;
    });
    const tree = new KdTree(pts, D);
    const inFit = new Uint8Array(n);
    for (const r of fit) inFit[r] = 1;
    const k = Math.min(PLACE_NEIGHBOURS, m);
    const idx = new Int32Array(k);
    const dist = new Float64Array(k);
    const q = new Float64Array(D);
    let done = 0;
    for (let i = 0; i < n; i++) {
      if (inFit[i]) continue;
      for (let j = 0; j < D; j++) q[j] = space[j]![i]!;
      const got = tree.nearest(q, k, idx, dist);
      let sw = 0;
      let sx = 0;
      let sy = 0;
      for (let t = 0; t < got; t++) {
        const w = 1 / (dist[t]! + 1e-6);
        const e = emb[idx[t]!]!;
        sw += w;
        sx += w * e[0]!;
        sy += w * e[1]!;
      }
      x[i] = sx / sw;
      y[i] = sy / sw;
      if (++done % 5000 === 0 || done === placed) progress('placing', done, placed);
    }
  }
  return { x, y, fitted: m, placed };
}
