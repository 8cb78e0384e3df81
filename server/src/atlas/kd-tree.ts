/**
 * Exact k-nearest-neighbour search among a few thousand points in a few dimensions (a k-d tree),
 * for placing the rows a UMAP map did not fit on next to their nearest fitted rows. Brute force
 * would cost rows × sample × dims (10⁹–10¹⁰ for 100k rows); the tree visits a few hundred points
 * per query in ≤ 10 dimensions. Pure module.
 */

interface Node {
  /** Point index at this node; its split dimension and value. */
  point: number;
  dim: number;
  left: Node | null;
  right: Node | null;
}

export class KdTree {
  private readonly root: Node | null;

  /** `points` row-major: point i is points[i*dims … i*dims+dims-1]. */
  constructor(
    private readonly points: Float64Array,
    private readonly dims: number,
  ) {
    const n = dims ? points.length / dims : 0;
    const idx = Int32Array.from({ length: n }, (_, i) => i);
    this.root = this.build(idx, 0, n);
  }

  private build(idx: Int32Array, lo: number, hi: number): Node | null {
    if (hi <= lo) return null;
    const { points: P, dims: D } = this;
    // Split on the dimension of widest spread, at the median.
    let dim = 0;
    let widest = -1;
    for (let d = 0; d < D; d++) {
      let mn = Infinity;
      let mx = -Infinity;
      for (let i = lo; i < hi; i++) {
        const v = P[idx[i]! * D + d]!;
        if (v < mn) mn = v;
        if (v > mx) mx = v;
      }
      if (mx - mn > widest) (widest = mx - mn), (dim = d);
    }
    const part = idx.subarray(lo, hi).sort((a, b) => P[a * D + dim]! - P[b * D + dim]!);
    const mid = lo + (part.length >> 1);
    return { point: idx[mid]!, dim, left: this.build(idx, lo, mid), right: this.build(idx, mid + 1, hi) };
  }

  /**
   * The `k` nearest points to `q` (length `dims`): indices into `outIdx` and Euclidean distances
   * into `outDist`, nearest first. Returns how many were found (min(k, points)).
   */
  nearest(q: ArrayLike<number>, k: number, outIdx: Int32Array, outDist: Float64Array): number {
    const { points: P, dims: D } = this;
    let found = 0;
    // outDist holds squared distances while searching, ascending.
    const visit = (node: Node | null): void => {
      if (!node) return;
      let d2 = 0;
      const base = node.point * D;
      for (let d = 0; d < D; d++) {
        const t = q[d]! - P[base + d]!;
        d2 += t * t;
      }
      if (found < k || d2 < outDist[found - 1]!) {
        let i = found < k ? found++ : found - 1;
        while (i > 0 && outDist[i - 1]! > d2) {
          outDist[i] = outDist[i - 1]!;
          outIdx[i] = outIdx[i - 1]!;
          i--;
        }
        outDist[i] = d2;
        outIdx[i] = node.point;
      }
      const diff = q[node.dim]! - P[base + node.dim]!;
      const [near, far] = diff < 0 ? [node.left, node.right] : [node.right, node.left];
      visit(near);
      if (found < k || diff * diff < outDist[found - 1]!) visit(far);
    };
    visit(this.root);
    for (let i = 0; i < found; i++) outDist[i] = Math.sqrt(outDist[i]!);
    return found;
  }
}
