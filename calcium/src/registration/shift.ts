/**
 * Applies a rigid sub-pixel shift to a frame by bilinear interpolation: the corrected frame at
 * (x, y) is the input at (x + dx, y + dy), so a frame displaced by (dx, dy) lands back on the
 * template. Pixels that would come from outside the frame repeat the nearest edge pixel. Pure.
 */

/** Writes `frame` moved back by (dx, dy) into `out` (both width × height, x fastest). */
export function shiftFrame(frame: Float32Array, width: number, height: number, dx: number, dy: number, out: Float32Array): void {
  const ix = Math.floor(dx);
  const iy = Math.floor(dy);
  const fx = dx - ix;
  const fy = dy - iy;
  const w00 = (1 - fx) * (1 - fy);
  const w10 = fx * (1 - fy);
  const w01 = (1 - fx) * fy;
  const w11 = fx * fy;
  const col0 = new Int32Array(width);
  const col1 = new Int32Array(width);
  for (let x = 0; x < width; x++) {
    col0[x] = Math.min(width - 1, Math.max(0, x + ix));
    col1[x] = Math.min(width - 1, Math.max(0, x + ix + 1));
  }
  for (let y = 0; y < height; y++) {
    const r0 = Math.min(height - 1, Math.max(0, y + iy)) * width;
    const r1 = Math.min(height - 1, Math.max(0, y + iy + 1)) * width;
    const o = y * width;
    for (let x = 0; x < width; x++) {
      const c0 = col0[x]!;
      const c1 = col1[x]!;
      out[o + x] = w00 * frame[r0 + c0]! + w10 * frame[r0 + c1]! + w01 * frame[r1 + c0]! + w11 * frame[r1 + c1]!;
    }
  }
}
