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
