/**
 * Outlines of labelled regions: for each id of a label image, the closed loops along its pixels'
 * outer edges (holes too), as corner points only — what a figure draws as ROI contours. Each loop
 * runs clockwise on screen (y down) around its region. Pure (CPU only).
 */

/** Per id, its loops; a loop is its corner points [x0, y0, x1, y1, …] in pixel-edge coordinates. */
export type Contours = Map<number, number[][]>;

/** The outlines of every non-zero id of `labels` (width × height, x fastest). */
export function labelContours(labels: ArrayLike<number>, width: number, height: number): Contours {
  const at = (x: number, y: number) => (x < 0 || y < 0 || x >= width || y >= height ? 0 : Number(labels[x + y * width]));
  // Directed pixel edges with the region on their right (screen coordinates), per id: start vertex -> ends.
  const edges = new Map<number, Map<number, number[]>>();
  const W1 = width + 1;
  const add = (id: number, x0: number, y0: number, x1: number, y1: number) => {
    let m = edges.get(id);
    if (!m) edges.set(id, (m = new Map()));
    const k = x0 + y0 * W1;
    const l = m.get(k);
    if (l) l.push(x1 + y1 * W1);
    else m.set(k, [x1 + y1 * W1]);
  };
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const id = at(x, y);
      if (!id) continue;
      if (at(x, y - 1) !== id) add(id, x, y, x + 1, y);
      if (at(x + 1, y) !== id) add(id, x + 1, y, x + 1, y + 1);
      if (at(x, y + 1) !== id) add(id, x + 1, y + 1, x, y + 1);
      if (at(x - 1, y) !== id) add(id, x, y + 1, x, y);
    }
  const out: Contours = new Map();
  for (const [id, m] of edges) {
    const loops: number[][] = [];
    for (const start of [...m.keys()]) {
      while (m.get(start)?.length) {
        const pts: number[] = [];
        let v = start;
        let dir = 0; // no step yet (a step is ±1 or ±(width + 1), never 0)
        let first = 0;
        for (;;) {
          const ends = m.get(v);
          if (!ends?.length) break;
          const next = ends.pop()!;
          if (!ends.length) m.delete(v);
          const d = next - v; // the step (±1 or ±(width+1)) names the direction
          if (d !== dir) pts.push(v % W1, Math.floor(v / W1));
          if (!first) first = d;
          dir = d;
          v = next;
          if (v === start) break;
        }
        // The start point is a corner only when the last step turns into the first one.
        if (v === start && dir === first) pts.splice(0, 2);
        if (pts.length >= 6) loops.push(pts);
      }
    }
    out.set(id, loops);
  }
  return out;
}

/** A loop as an SVG path ("M x y L … Z"), coordinates scaled by `scale`. */
export function loopPath(loop: readonly number[], scale = 1): string {
  let d = '';
  for (let i = 0; i < loop.length; i += 2) d += `${i ? 'L' : 'M'}${+(loop[i]! * scale).toFixed(2)} ${+(loop[i + 1]! * scale).toFixed(2)}`;
  return d + 'Z';
}
