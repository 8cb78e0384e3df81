/** Minimum-cost assignment against brute force (rectangular, ties, forbidden pairs) and an independent O(n³) solver. */
import { describe, expect, it } from 'vitest';
import { hungarian, sparseAssignment } from '../src/evaluation/index.ts';

/** Mulberry32: a tiny seeded PRNG, uniform in [0, 1). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Best (most pairs, then least cost) partial assignment by exhaustive search. */
function brute(cost: number[][]): { pairs: number; cost: number } {
  const rows = cost.length;
  const cols = rows ? cost[0]!.length : 0;
  const used = new Array<boolean>(cols).fill(false);
  let best = { pairs: -1, cost: Infinity };
  const go = (r: number, pairs: number, total: number): void => {
    if (r === rows) {
      if (pairs > best.pairs || (pairs === best.pairs && total < best.cost - 1e-12)) best = { pairs, cost: total };
      return;
    }
    go(r + 1, pairs, total);
    for (let c = 0; c < cols; c++) {
      if (used[c] || cost[r]![c] === Infinity) continue;
      used[c] = true;
      go(r + 1, pairs + 1, total + cost[r]![c]!);
      used[c] = false;
    }
  };
  go(0, 0, 0);
  return best.pairs < 0 ? { pairs: 0, cost: 0 } : best;
}

/** Textbook O(n³) Hungarian (potentials, e-maxx form) for square dense matrices: an independent reference. */
function reference(a: Float64Array, n: number): number {
  const INF = Infinity;
  const u = new Float64Array(n + 1);
  const v = new Float64Array(n + 1);
  const p = new Int32Array(n + 1);
  const way = new Int32Array(n + 1);
  for (let i = 1; i <= n; i++) {
    p[0] = i;
    let j0 = 0;
    const minv = new Float64Array(n + 1).fill(INF);
    const used = new Uint8Array(n + 1);
    do {
      used[j0] = 1;
      const i0 = p[j0]!;
      let delta = INF;
      let j1 = 0;
      for (let j = 1; j <= n; j++) {
        if (used[j]) continue;
        const cur = a[(i0 - 1) * n + j - 1]! - u[i0]! - v[j]!;
        if (cur < minv[j]!) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j]! < delta) {
          delta = minv[j]!;
          j1 = j;
        }
      }
      for (let j = 0; j <= n; j++) {
        if (used[j]) {
          u[p[j]!]! += delta;
          v[j]! -= delta;
        } else minv[j]! -= delta;
      }
      j0 = j1;
    } while (p[j0] !== 0);
    do {
      const j1 = way[j0]!;
      p[j0] = p[j1]!;
      j0 = j1;
    } while (j0);
  }
  let total = 0;
  for (let j = 1; j <= n; j++) total += a[(p[j]! - 1) * n + j - 1]!;
  return total;
}

function checkConsistent(cost: number[][], rowToCol: Int32Array, colToRow: Int32Array): void {
  rowToCol.forEach((c, r) => {
    if (c < 0) return;
    expect(colToRow[c]).toBe(r);
    expect(cost[r]![c]).not.toBe(Infinity);
  });
  colToRow.forEach((r, c) => {
    if (r >= 0) expect(rowToCol[r]).toBe(c);
  });
}

describe('hungarian', () => {
  it('matches brute force on random small rectangular matrices with ties and forbidden pairs', () => {
    const r = rng(42);
    for (let trial = 0; trial < 300; trial++) {
      const rows = 1 + Math.floor(r() * 5);
      const cols = 1 + Math.floor(r() * 6);
      const pForbid = [0, 0.3, 0.7][trial % 3]!;
      const ints = trial % 2 === 0; // integer costs make ties
      const cost = Array.from({ length: rows }, () =>
        Array.from({ length: cols }, () => (r() < pForbid ? Infinity : ints ? Math.floor(r() * 4) - 1 : r() * 10 - 3)),
      );
      const want = brute(cost);
      const got = hungarian(cost);
      expect(got.pairs).toBe(want.pairs);
      expect(got.cost).toBeCloseTo(want.cost, 9);
      checkConsistent(cost, got.rowToCol, got.colToRow);
      const entries = cost.flatMap((row, i) => row.map((c, j) => ({ row: i, col: j, cost: c }))).filter((e) => e.cost !== Infinity);
      const sparse = sparseAssignment(rows, cols, entries);
      expect(sparse.pairs).toBe(want.pairs);
      expect(sparse.cost).toBeCloseTo(want.cost, 9);
      checkConsistent(cost, sparse.rowToCol, sparse.colToRow);
    }
  });

  it('handles empty and fully forbidden matrices, and the flat CostMatrix form', () => {
    expect(hungarian([]).pairs).toBe(0);
    const none = hungarian([[Infinity, Infinity], [Infinity, Infinity]]);
    expect(none.pairs).toBe(0);
    expect(Array.from(none.rowToCol)).toEqual([-1, -1]);
    const flat = hungarian({ rows: 2, cols: 3, data: [5, 1, 9, 1, 2, 9] });
    expect(Array.from(flat.rowToCol)).toEqual([1, 0]);
    expect(flat.cost).toBe(2);
    expect(() => hungarian([[NaN]])).toThrow(/NaN/);
    expect(() => hungarian([[1, 2], [3]])).toThrow(/row 1/);
    expect(() => sparseAssignment(2, 2, [{ row: 2, col: 0, cost: 1 }])).toThrow(/outside/);
  });

  it('agrees with an independent O(n³) solver on dense 120 × 120 and its transposed rectangular cut', () => {
    const r = rng(7);
    const n = 120;
    const a = new Float64Array(n * n);
    for (let i = 0; i < a.length; i++) a[i] = Math.round(r() * 1000) / 10;
    const got = hungarian({ rows: n, cols: n, data: a });
    expect(got.pairs).toBe(n);
    expect(got.cost).toBeCloseTo(reference(a, n), 6);
    // More rows than columns: every column is used once, some rows stay unassigned.
    const tall = hungarian({ rows: n, cols: 80, data: Float64Array.from({ length: n * 80 }, (_, k) => a[Math.floor(k / 80) * n + (k % 80)]!) });
    expect(tall.pairs).toBe(80);
    expect(new Set(Array.from(tall.rowToCol).filter((c) => c >= 0)).size).toBe(80);
  });

  it('solves sparse 2,000 × 2,000 (ROI-like: a few allowed pairs per row) fast', () => {
    const r = rng(9);
    const n = 2000;
    const entries: { row: number; col: number; cost: number }[] = [];
    for (let i = 0; i < n; i++) for (let k = 0; k < 3; k++) entries.push({ row: i, col: Math.min(n - 1, i + Math.floor(r() * 4)), cost: r() });
    const t0 = performance.now();
    const got = sparseAssignment(n, n, entries);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(got.pairs).toBeGreaterThan(1500);
    // The dense form of the same problem gives the same optimum.
    const dense = new Float64Array(n * n).fill(Infinity);
    for (const e of entries) dense[e.row * n + e.col] = Math.min(dense[e.row * n + e.col]!, e.cost);
    const viaDense = hungarian({ rows: n, cols: n, data: dense });
    expect(viaDense.pairs).toBe(got.pairs);
    expect(viaDense.cost).toBeCloseTo(got.cost, 6);
  });
});
