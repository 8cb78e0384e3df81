/**
 * A table's rows → a 2-D map: coordinates by the map's method, clusters for labels, and a sentence
 * saying how it was made (shown in the panel: methods, sampling and missing values said honestly).
 *
 * | method | input | coordinates |
 * |---|---|---|
 * | `columns` | two numeric columns | x = first, y = second, as given |
 * | `pca` | ≥ 2 numeric columns | standardised, first two principal components |
 * | `umap` | ≥ 2 numeric columns | standardised, UMAP (seeded; big tables fit on a sample) |
 * | `tfidf` | one text column | TF-IDF of word tokens + truncated SVD (centred), computed here |
 * | `embeddings` | one text column, its embeddings (embeddings.ts) | L2-normalised, first 32 principal components, then UMAP (PCA for tiny tables) |
 *
 * Missing numeric values (NULL, NaN, ±Infinity) get their column's mean; rows without text sit at
 * the centre of a text map. Text maps' clusters are named by their most distinctive words.
 * Pure module (the job process runs it; tests and benchmarks call it).
 */
import { clusterPoints, numericLabels, type Clusters } from './clusters.ts';
import { embeddingMatrix } from './embedding-matrix.ts';
import type { Embeddings } from './embeddings.ts';
import { fillMissing, pca, standardise, umap, UMAP_FIT_ROWS, UMAP_NEIGHBOURS, PLACE_NEIGHBOURS, type Progress } from './numeric-projection.ts';
import { principalScores } from './randomized-svd.ts';
import { svd2, tfidf, topTerms, type TfIdf } from './text-projection.ts';

export type ProjectionInput =
  | { method: 'columns' | 'pca' | 'umap'; names: string[]; columns: Float64Array[] }
  | { method: 'tfidf'; name: string; texts: Array<string | null> };

/** An embeddings map's input: the texts (their words name the clusters) and their embeddings. */
export interface EmbeddingsInput {
  method: 'embeddings';
  name: string;
  texts: Array<string | null>;
  embeddings: Embeddings;
}

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
/** Principal components of the embeddings that UMAP (or PCA) reduces to 2-D. */
export const EMBEDDING_COMPONENTS = 32;

const fmtInt = (n: number) => n.toLocaleString('en-US');
const plural = (n: number, one: string, many = `${one}s`) => `${fmtInt(n)} ${n === 1 ? one : many}`;
const quoteList = (names: readonly string[]) => names.map((s) => `"${s}"`).join(', ');

export function project(input: ProjectionInput | EmbeddingsInput, opts: ProjectionOptions = {}): Projection {
  const seed = opts.seed ?? DEFAULT_SEED;
  const progress = opts.onProgress ?? (() => {});
  if (input.method === 'tfidf') return projectText(input.name, input.texts, seed, progress);
  if (input.method === 'embeddings') return projectEmbeddings(input.name, input.texts, input.embeddings, seed, opts, progress);
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
    ({ x, y, how } = reduce(std.columns, input.method === 'umap', `${names.length} numeric columns (standardised)`, seed, opts, progress));
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
  const labels = wordLabels(m, clusters);
  progress('clustering', 1, 1);
  const notes = m.empty ? [`${plural(m.empty, 'row')} without words placed at the centre`] : [];
  const how = `TF-IDF of the words of "${name}" (${plural(m.terms.length, 'term')}) + truncated SVD (centred) to 2-D, seed ${seed}, computed locally (no embedding service)`;
  return { x, y, cluster: clusters.cluster, labels: labelsOf(clusters, labels), how: finish(how, notes, clusters) };
}

/**
 * Columns → 2-D: UMAP when asked for and there are enough rows, else PCA; `how` says which, of
 * `what`. `share`: the part of the data's variance the columns hold (below 1 when they are
 * already principal components of it), so PCA's percentages are of the data's whole variance.
 */
function reduce(z: Float64Array[], umapAsked: boolean, what: string, seed: number, opts: ProjectionOptions, progress: Progress, share = 1): { x: Float64Array; y: Float64Array; how: string } {
  const n = z[0]?.length ?? 0;
  if (umapAsked && n >= UMAP_MIN_ROWS) {
    const r = umap(z, { seed, fitRows: opts.umapFitRows ?? UMAP_FIT_ROWS, onProgress: progress });
    let how = `UMAP of ${what}, ${UMAP_NEIGHBOURS} neighbours, seed ${seed}`;
    if (r.placed) how += `; fit on a random sample of ${fmtInt(r.fitted)} of ${fmtInt(n)} rows, the other ${fmtInt(r.placed)} placed at the weighted mean of their ${PLACE_NEIGHBOURS} nearest sampled rows`;
    return { x: r.x, y: r.y, how };
  }
  progress('pca', 0, 1);
  const r = pca(z, 2);
  progress('pca', 1, 1);
  let how = `PCA of ${what}: PC1 ${pct(r.explained[0]! * share)}, PC2 ${pct(r.explained[1]! * share)} of the variance`;
  if (umapAsked) how += ` (UMAP needs at least ${UMAP_MIN_ROWS} rows: PCA instead)`;
  return { x: r.scores[0]!, y: r.scores[1]!, how };
}

/** Cluster labels of a text map: each cluster's most distinctive words, "cluster N" when the texts have none. */
function wordLabels(m: TfIdf, c: Clusters): string[] {
  return m.terms.length ? topTerms(m, c.cluster, c.k, 3).map((t) => t.join(', ') || 'no words') : c.centres.map((_, i) => `cluster ${i + 1}`);
}

/**
 * Embeddings → 2-D: the L2-normalised vectors (rows without text at their mean), their first
 * EMBEDDING_COMPONENTS principal components (randomized SVD, 2 power iterations: enough for a
 * neighbourhood graph, and a 1,536-d table stays quick), then UMAP — or PCA under UMAP_MIN_ROWS rows.
 */
function projectEmbeddings(name: string, texts: Array<string | null>, e: Embeddings, seed: number, opts: ProjectionOptions, progress: Progress): Projection {
  const n = texts.length;
  if (!n) throw new ProjectionError('the table has no rows');
  if (!e.count) throw new ProjectionError(`column "${name}" has no text to map (every row is empty)`);
  const { matrix, total } = embeddingMatrix(e);
  const k = Math.max(2, Math.min(EMBEDDING_COMPONENTS, e.dimensions, n));
  const scores = principalScores(matrix, k, { seed, iterations: 2, stage: 'components', onProgress: progress });
  let kept = 0;
  for (const col of scores) for (const v of col) kept += v * v;
  const share = total > 0 ? Math.min(1, kept / total) : 1;
  const what = `${e.model} embeddings (${e.dimensions}-d) of column "${name}"`;
  const { x, y, how } = reduce(scores, true, what, seed, opts, progress, share);
  const notes = [`vectors L2-normalised, then their first ${k} principal components (${pct(share)} of the variance)`];
  if (e.empty) notes.push(`${plural(e.empty, 'row')} without text given the mean embedding`);
  if (e.cut) notes.push(`${plural(e.cut, 'long text')} cut before embedding`);
  progress('clustering', 0, 1);
  const clusters = clusterPoints(x, y, { seed });
  const labels = wordLabels(tfidf(texts), clusters);
  progress('clustering', 1, 1);
  return { x, y, cluster: clusters.cluster, labels: labelsOf(clusters, labels), how: finish(how, notes, clusters) };
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
