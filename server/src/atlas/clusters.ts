/**
 * Clusters of a map's points for its labels: k-means on the 2-D coordinates (k-means++ starts,
 * seeded), k chosen from 2..8 by the mean silhouette on a seeded sample of at most 1,500 points,
 * then every point assigned to its nearest centre and the centres refined on all points. Clusters
 * are numbered by size (0 = largest). Label texts: for numeric maps the one or two input columns
 * whose cluster mean lies furthest from the overall mean in SD units ("high snr, low area_px").
 * Pure module.
 */
import { sampleIndices, seededRandom } from './seeded-random.ts';

export const MAX_CLUSTERS = 8;
const SILHOUETTE_SAMPLE = 1500;

export interface Clusters {
  k: number;
  /** Cluster of each point, 0 = the largest. */
  cluster: Int32Array;
  /** Centre and size of each cluster. */
  centres: Array<{ x: number; y: number; size: number }>;
  /** Mean silhouette of the chosen k on the sample (null when k = 1). */
  silhouette: number | null;
}

/** Lloyd's k-means on points (xs, ys) from k-means++ starts; returns centres (x0, y0, x1, y1, …) and assignments. */
function kmeans(xs: Float64Array, ys: Float64Array, k: number, rand: () => number, start?: Float64Array, iterations = 50): { centres: Float64Array; assign: Int32Array } {
  const n = xs.length;
  const centres = start ? Float64Array.from(start) : new Float64Array(2 * k);
  if (!start) {
    const first = Math.floor(rand() * n);
    centres[0] = xs[first]!;
    centres[1] = ys[first]!;
    const d2 = new Float64Array(n).fill(Infinity);
    for (let c = 1; c < k; c++) {
      let total = 0;
      for (let i = 0; i < n; i++) {
        const dx = xs[i]! - centres[2 * c - 2]!;
        const dy = ys[i]! - centres[2 * c - 1]!;
        d2[i] = Math.min(d2[i]!, dx * dx + dy * dy);
        total += d2[i]!;
      }
      let pick = n - 1;
      let t = rand() * total;
      for (let i = 0; i < n; i++) if ((t -= d2[i]!) <= 0) ((pick = i), (i = n));
      centres[2 * c] = xs[pick]!;
      centres[2 * c + 1] = ys[pick]!;
    }
  }
  const assign = new Int32Array(n);
  const sum = new Float64Array(2 * k);
  const count = new Int32Array(k);
  for (let it = 0; it < iterations; it++) {
    let moved = it === 0;
    for (let i = 0; i < n; i++) {
      let best = 0;
      let bd = Infinity;
      for (let c = 0; c < k; c++) {
        const dx = xs[i]! - centres[2 * c]!;
        const dy = ys[i]! - centres[2 * c + 1]!;
        const d = dx * dx + dy * dy;
        if (d < bd) (bd = d), (best = c);
      }
      if (assign[i] !== best) (assign[i] = best), (moved = true);
    }
    if (!moved) break;
    sum.fill(0);
    count.fill(0);
    for (let i = 0; i < n; i++) {
      const c = assign[i]!;
      sum[2 * c] += xs[i]!;
      sum[2 * c + 1] += ys[i]!;
      count[c]!++;
    }
    for (let c = 0; c < k; c++)
      if (count[c]) {
        centres[2 * c] = sum[2 * c]! / count[c]!;
        centres[2 * c + 1] = sum[2 * c + 1]! / count[c]!;
      }
  }
  return { centres, assign };
}

/** Mean silhouette of an assignment (exact, O(n²): for samples). */
export function silhouette(xs: Float64Array, ys: Float64Array, assign: Int32Array, k: number): number {
  const n = xs.length;
  const sizes = new Int32Array(k);
  for (const a of assign) sizes[a]!++;
  const dist = new Float64Array(k);
  let total = 0;
  for (let i = 0; i < n; i++) {
    dist.fill(0);
    for (let j = 0; j < n; j++) {
      if (i === j) continue;
      dist[assign[j]!] += Math.hypot(xs[i]! - xs[j]!, ys[i]! - ys[j]!);
    }
    const own = assign[i]!;
    if (sizes[own]! <= 1) continue; // a singleton's silhouette is 0
    const a = dist[own]! / (sizes[own]! - 1);
    let b = Infinity;
    for (let c = 0; c < k; c++) if (c !== own && sizes[c]) b = Math.min(b, dist[c]! / sizes[c]!);
    const s = Math.max(a, b) > 0 && Number.isFinite(b) ? (b - a) / Math.max(a, b) : 0;
    total += s;
  }
  return n ? total / n : 0;
}

/** Clusters of the points (x, y): k by the best silhouette over 2..8; fewer than 10 distinct-ish points give one cluster. */
export function clusterPoints(x: Float64Array, y: Float64Array, opts: { seed: number; maxK?: number }): Clusters {
  const n = x.length;
  const rand = seededRandom(opts.seed ^ 0x5bd1e995);
  const maxK = Math.min(opts.maxK ?? MAX_CLUSTERS, Math.floor(n / 5));
  let spread = 0;
  for (let i = 1; i < n; i++) spread = Math.max(spread, Math.abs(x[i]! - x[0]!), Math.abs(y[i]! - y[0]!));
  if (maxK < 2 || !(spread > 0)) return oneCluster(x, y);
  const s = sampleIndices(n, SILHOUETTE_SAMPLE, rand);
  const sx = Float64Array.from(s, (i) => x[i]!);
  const sy = Float64Array.from(s, (i) => y[i]!);
  let best: { k: number; score: number; centres: Float64Array } | null = null;
  for (let k = 2; k <= maxK; k++) {
    const r = kmeans(sx, sy, k, rand);
    const score = silhouette(sx, sy, r.assign, k);
    if (!best || score > best.score + 1e-9) best = { k, score, centres: r.centres };
  }
  const { k, centres: start, score } = best!;
  const { centres, assign } = kmeans(x, y, k, rand, start, 20);
  // Number clusters by size (largest first), empty ones dropped.
  const sizes = new Array<number>(k).fill(0);
  for (const a of assign) sizes[a]!++;
  const order = sizes.map((sz, c) => [sz, c] as const).filter(([sz]) => sz > 0).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  const rename = new Int32Array(k);
  order.forEach(([, c], i) => (rename[c] = i));
  const cluster = assign.map((a) => rename[a]!);
  return {
    k: order.length,
    cluster,
    centres: order.map(([size, c]) => ({ x: centres[2 * c]!, y: centres[2 * c + 1]!, size })),
    silhouette: score,
  };
}

function oneCluster(x: Float64Array, y: Float64Array): Clusters {
  const n = x.length;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < n; i++) (sx += x[i]!), (sy += y[i]!);
  return { k: n ? 1 : 0, cluster: new Int32Array(n), centres: n ? [{ x: sx / n, y: sy / n, size: n }] : [], silhouette: null };
}

/**
 * Label texts of numeric clusters from standardised input columns (mean 0, SD 1 over all rows):
 * the column whose cluster mean is furthest from 0 ("high snr" / "low snr"), and a second one when
 * it differs by at least 0.5 SD and half as much as the first. Clusters near the mean everywhere
 * (< 0.25 SD) are "typical rows".
 */
export function numericLabels(z: readonly Float64Array[], names: readonly string[], c: Clusters): string[] {
  const k = c.k;
  const means = Array.from({ length: k }, () => new Float64Array(z.length));
  z.forEach((col, j) => {
    for (let i = 0; i < col.length; i++) means[c.cluster[i]!]![j] += col[i]!;
  });
  return means.map((m, cl) => {
    const size = c.centres[cl]!.size || 1;
    const ranked = Array.from(m, (s, j) => [s / size, j] as const).sort((a, b) => Math.abs(b[0]) - Math.abs(a[0]) || a[1] - b[1]);
    const [first, second] = ranked;
    if (!first || Math.abs(first[0]) < 0.25) return 'typical rows';
    const word = ([v, j]: readonly [number, number]) => `${v > 0 ? 'high' : 'low'} ${names[j]}`;
    const parts = [word(first)];
    if (second && Math.abs(second[0]) >= 0.5 && Math.abs(second[0]) >= 0.5 * Math.abs(first[0])) parts.push(word(second));
    return parts.join(', ');
  });
}
