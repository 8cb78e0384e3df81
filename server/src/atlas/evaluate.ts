/** How well a 2-D map keeps known groups apart (tests and the projection benchmark). Pure. */

/** Share of points whose nearest class centroid (in 2-D) is their own class's. */
export function nearestCentroidAccuracy(x: Float64Array, y: Float64Array, truth: Int32Array, k: number): number {
  const cx = new Float64Array(k);
  const cy = new Float64Array(k);
  const cn = new Float64Array(k);
  truth.forEach((c, i) => ((cx[c] += x[i]!), (cy[c] += y[i]!), cn[c]++));
  for (let c = 0; c < k; c++) (cx[c] /= cn[c]!), (cy[c] /= cn[c]!);
  let ok = 0;
  truth.forEach((c, i) => {
    let best = 0;
    for (let j = 1; j < k; j++) if (Math.hypot(x[i]! - cx[j]!, y[i]! - cy[j]!) < Math.hypot(x[i]! - cx[best]!, y[i]! - cy[best]!)) best = j;
    if (best === c) ok++;
  });
  return ok / truth.length;
}

/**
 * How far apart known groups lie: `between`, the smallest distance between points of different
 * groups, and `within`, the largest distance from a point to its nearest neighbour of its own
 * group. `between` > `within`: every group is a separate island. O(n²): for tests.
 */
export function groupSeparation(x: ArrayLike<number>, y: ArrayLike<number>, truth: ArrayLike<number>): { between: number; within: number } {
  let between = Infinity;
  let within = 0;
  for (let i = 0; i < truth.length; i++) {
    let nearest = Infinity;
    for (let j = 0; j < truth.length; j++) {
      if (i === j) continue;
      const d = Math.hypot(x[i]! - x[j]!, y[i]! - y[j]!);
      if (truth[i] === truth[j]) nearest = Math.min(nearest, d);
      else between = Math.min(between, d);
    }
    if (nearest < Infinity) within = Math.max(within, nearest);
  }
  return { between, within };
}
