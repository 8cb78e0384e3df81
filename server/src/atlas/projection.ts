/**
 * A table's rows → a 2-D map: coordinates by the map's method, clusters for labels, and a sentence
 * saying how it was made (shown in the panel: methods, sampling and missing values said honestly).
 *
 * | method | input | coordinates |
 * |---|---|---|
 * | `columns` | two numeric columns | x = first, y = second, as given |
 * | `pca` | ≥ 2 numeric columns | standardised, first two principal components |
 * | `umap` | ≥ 2 numeric columns | standardised, UMAP (seeded; big tables fit on a sample) |
 * | `tfidf` | one text column | TF-IDF of word tokens + truncated SVD (centred) |
 *
 * Missing numeric values (NULL, NaN, ±Infinity) get their column's mean; rows without text sit at
 * the centre of a text map. Pure module (the job process runs it; tests and benchmarks call it).
 */
import { clusterPoints, numericLabels, type Clusters } from './clusters.ts';
import { fillMissing, pca, standardise, umap, UMAP_FIT_ROWS, UMAP_NEIGHBOURS, PLACE_NEIGHBOURS, type Progress } from './numeric-projection.ts';
import { svd2, tfidf, topTerms } from './text-projection.ts';

export type ProjectionInput =
  | { method: 'columns' | 'pca' | 'umap'; names: string[]; columns: Float64Array[] }
  | { method: 'tfidf'; name: string; texts: Array<string | null> };

export interface ProjectionOptions {
  seed?: number;
  /** Most rows UMAP is fitted on (default UMAP_FIT_ROWS). */
  umapFitRows?: number;
  onProgress?: Progress;
}

export interface MapLabel {
  cluster: number;
  x: number;
  y: number;
  text: string;
  size: number;
}

export interface Projection {
  x: Float64Array;
  y: Float64Array;
  cluster: Int32Array;
  labels: MapLabel[];
  how: string;
}

/** A projection that cannot be made from this input (the message says why, for the person). */
export class ProjectionError extends Error {
  override readonly name = 'ProjectionError';
}

export const DEFAULT_SEED = 1;
/** Rows a UMAP needs; smaller tables get PCA (said in `how`). */
export const UMAP_MIN_ROWS = 10;

const fmtInt = (n: number) => n.toLocaleString('en-US');
const plural = (n: number, one: string, many = `${one}s`) => `${fmtInt(n)} ${n === 1 ? one : many}`;
const quoteList = (names: readonly string[]) => names.map((s) => `"${s}"`).join(', ');

export function project(input: ProjectionInput, opts: ProjectionOptions = {}): Projection {
  const seed = opts.seed ?? DEFAULT_SEED;
  const progress = opts.onProgress ?? (() => {});
  if (input.method === 'tfidf') return projectText(input.name, input.texts, seed, progress);
  const { names } = input;
  const n = input.columns[0]?.length ?? 0;
  if (!n) throw new ProjectionError('the table has no rows');
  const filled = fillMissing(input.columns);
  if (filled.empty.length) throw new ProjectionError(`column ${quoteList(filled.empty.map((j) => names[j]!))} has no numeric values`);
  const notes: string[] = [];
  if (filled.filled) notes.push(`${plural(filled.filled, 'missing value')} filled with the column mean`);
  const std = standardise(filled.columns);
  let x: Float64Array;
  let y: Float64Array;
  let how: string;
  if (input.method === 'columns') {
    if (names.length !== 2) throw new ProjectionError(`a "columns" map needs two columns, x and y (got ${names.length})`);
    [x, y] = filled.columns as [Float64Array, Float64Array];
    how = `x = "${names[0]}", y = "${names[1]}" as given`;
  } else {
    if (names.length < 2) throw new ProjectionError(`${input.method === 'pca' ? 'PCA' : 'UMAP'} needs at least two numeric columns (got ${quoteList(names) || 'none'})`);
    if (std.constant.length === names.length) throw new ProjectionError(`every column is constant (${quoteList(names)}): there is nothing to map`);
    if (std.constant.length) notes.push(`constant ${std.constant.length === 1 ? 'column' : 'columns'} ${quoteList(std.constant.map((j) => names[j]!))} ignored`);
    const what = `${names.length} numeric columns (standardised)`;
    if (input.method === 'umap' && n >= UMAP_MIN_ROWS) {
      const r = umap(std.columns, { seed, fitRows: opts.umapFitRows ?? UMAP_FIT_ROWS, onProgress: progress });
      x = r.x;
      y = r.y;
      how = `UMAP of ${what}, ${UMAP_NEIGHBOURS} neighbours, seed ${seed}`;
      if (r.placed) how += `; fit on a random sample of ${fmtInt(r.fitted)} of ${fmtInt(n)} rows, the other ${fmtInt(r.placed)} placed at the weighted mean of their ${PLACE_NEIGHBOURS} nearest sampled rows`;
    } else {
      progress('pca', 0, 1);
      const r = pca(std.columns, 2);
      progress('pca', 1, 1);
      [x, y] = r.scores as [Float64Array, Float64Array];
      how = `PCA of ${what}: PC1 ${pct(r.explained[0]!)}, PC2 ${pct(r.explained[1]!)} of the variance`;
      if (input.method === 'umap') how += ` (UMAP needs at least ${UMAP_MIN_ROWS} rows: PCA instead)`;
    }
  }
  progress('clustering', 0, 1);
  const clusters = clusterPoints(x, y, { seed });
  // Labels name the input columns; a "columns" map's labels are about its own two columns.
  const texts = numericLabels(std.columns, names, clusters);
  progress('clustering', 1, 1);
  return { x, y, cluster: clusters.cluster, labels: labelsOf(clusters, texts), how: finish(how, notes, clusters) };
}

function projectText(name: string, texts: Array<string | null>, seed: number, progress: Progress): Projection {
  const n = texts.length;
  if (!n) throw new ProjectionError('the table has no rows');
  progress('tf-idf', 0, 1);
  const m = tfidf(texts);
  progress('tf-idf', 1, 1);
  if (!m.terms.length) throw new ProjectionError(`column "${name}" has no words to map (every row is empty, numbers or stop words)`);
  const { x, y } = svd2(m, { seed, onProgress: progress });
  progress('clustering', 0, 1);
  const clusters = clusterPoints(x, y, { seed });
  const terms = topTerms(m, clusters.cluster, clusters.k, 3);
  progress('clustering', 1, 1);
  const notes = m.empty ? [`${plural(m.empty, 'row')} without words placed at the centre`] : [];
  const how = `TF-IDF of the words of "${name}" (${plural(m.terms.length, 'term')}) + truncated SVD (centred) to 2-D, seed ${seed}`;
  return { x, y, cluster: clusters.cluster, labels: labelsOf(clusters, terms.map((t) => t.join(', ') || 'no words')), how: finish(how, notes, clusters) };
}

const pct = (v: number) => `${Math.round(v * 100)} %`;

function labelsOf(c: Clusters, texts: string[]): MapLabel[] {
  return c.centres.map((ctr, i) => ({ cluster: i, x: ctr.x, y: ctr.y, text: texts[i]!.slice(0, 200), size: ctr.size }));
}

function finish(how: string, notes: string[], c: Clusters): string {
  const parts = [how, ...notes, c.k > 1 ? `${c.k} clusters by k-means (k by silhouette)` : 'one cluster'];
  const text = parts.join('; ');
  return text.length <= 500 ? text : `${text.slice(0, 497)}...`;
}
