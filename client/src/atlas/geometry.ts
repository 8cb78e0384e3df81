/**
 * Coordinates of the atlas (pure, unit-tested). Three spaces:
 * - map: the server's coordinates (what the document's selection geometry and labels use);
 * - ndc: regl-scatterplot's normalized point space, [-1, 1] on the longer side of the bounds;
 * - screen: CSS pixels from the canvas' top-left corner.
 * map ↔ ndc is a fixed affine map per points response (from its bounds); ndc ↔ screen follows
 * regl-scatterplot's camera: clip = projection · view · model · p, with projection = scale(1/aspect, 1)
 * (aspect = width / height of the canvas) and model = scale(dataAspect, 1) (1 here).
 */
import { inSelection, selectionBoundingBox, MAX_LASSO_POINTS, type AtlasSelection } from '@plexus/shared';

export type Vec2 = [number, number];
export type Bounds = [number, number, number, number];

/** Map ↔ ndc for one set of bounds. */
export interface Normalizer {
  cx: number;
  cy: number;
  /** Map units per ndc unit on each axis. */
  sx: number;
  sy: number;
}

/** Space left around the points (a fraction of the half-extent): room for labels at the edges. */
export const PAD = 1.1;

/**
 * Fits `bounds` into [-1, 1]². `uniform` keeps the map's aspect (projections: distances mean
 * something); otherwise each axis is stretched on its own (two unrelated columns).
 */
export function normalizer(bounds: Bounds, uniform: boolean): Normalizer {
  const [x0, y0, x1, y1] = bounds;
  const cx = (x0 + x1) / 2;
  const cy = (y0 + y1) / 2;
  let hx = Math.abs(x1 - x0) / 2;
  let hy = Math.abs(y1 - y0) / 2;
  if (uniform) hx = hy = Math.max(hx, hy);
  // A single point, or all points on a line: any non-zero scale.
  const fix = (h: number, other: number) => (h > 0 && Number.isFinite(h) ? h : other > 0 && Number.isFinite(other) ? other : 1);
  const sx = fix(hx, hy) * PAD;
  const sy = fix(hy, hx) * PAD;
  return { cx, cy, sx, sy };
}

export const mapToNdc = (nz: Normalizer, [x, y]: Vec2): Vec2 => [(x - nz.cx) / nz.sx, (y - nz.cy) / nz.sy];
export const ndcToMap = (nz: Normalizer, [x, y]: Vec2): Vec2 => [nz.cx + x * nz.sx, nz.cy + y * nz.sy];

/** Normalized coordinates of every point (new arrays, as regl-scatterplot takes them). */
export function normalizeAll(nz: Normalizer, x: Float32Array, y: Float32Array): { x: Float32Array; y: Float32Array } {
  const nx = new Float32Array(x.length);
  const ny = new Float32Array(y.length);
  for (let i = 0; i < x.length; i++) {
    nx[i] = (x[i]! - nz.cx) / nz.sx;
    ny[i] = (y[i]! - nz.cy) / nz.sy;
  }
  return { x: nx, y: ny };
}

/** The canvas and camera a conversion needs (`view`: a column-major 4×4 matrix, gl-matrix style). */
export interface Viewport {
  view: ArrayLike<number>;
  width: number;
  height: number;
  dataAspect?: number;
}

export function ndcToScreen(vp: Viewport, [x, y]: Vec2): Vec2 {
  const v = vp.view;
  const mx = x * (vp.dataAspect ?? 1);
  const aspect = vp.width / vp.height;
  const cx = (v[0]! * mx + v[4]! * y + v[12]!) / aspect;
  const cy = v[1]! * mx + v[5]! * y + v[13]!;
  return [(vp.width * (cx + 1)) / 2, vp.height * (0.5 - cy / 2)];
}

export function screenToNdc(vp: Viewport, [sx, sy]: Vec2): Vec2 {
  const v = vp.view;
  const aspect = vp.width / vp.height;
  // Clip coordinates, then undo projection and view (a 2-D affine map: invert the 2×2 part).
  const cx = ((sx / vp.width) * 2 - 1) * aspect - v[12]!;
  const cy = 1 - (sy / vp.height) * 2 - v[13]!;
  const a = v[0]!, b = v[4]!, c = v[1]!, d = v[5]!;
  const det = a * d - b * c;
  const mx = (d * cx - b * cy) / det;
  const my = (-c * cx + a * cy) / det;
  return [mx / (vp.dataAspect ?? 1), my];
}

export const mapToScreen = (nz: Normalizer, vp: Viewport, p: Vec2): Vec2 => ndcToScreen(vp, mapToNdc(nz, p));
export const screenToMap = (nz: Normalizer, vp: Viewport, p: Vec2): Vec2 => ndcToMap(nz, screenToNdc(vp, p));

/** Indices of the points inside a selection (bounding box first, then the exact test). */
export function pointsInSelection(sel: AtlasSelection, x: Float32Array, y: Float32Array): Uint32Array {
  const bb = selectionBoundingBox(sel);
  const out: number[] = [];
  const exact = sel.kind === 'lasso';
  for (let i = 0; i < x.length; i++) {
    const px = x[i]!;
    const py = y[i]!;
    if (px < bb.x0 || px > bb.x1 || py < bb.y0 || py > bb.y1) continue;
    if (!exact || inSelection(sel, px, py)) out.push(i);
  }
  return Uint32Array.from(out);
}

/** Removes consecutive duplicates and thins a polygon to at most `max` vertices (every k-th). */
export function thinPolygon(points: Vec2[], max = MAX_LASSO_POINTS): Vec2[] {
  const uniq: Vec2[] = [];
  for (const p of points) {
    const last = uniq[uniq.length - 1];
    if (!Number.isFinite(p[0]) || !Number.isFinite(p[1])) continue;
    if (!last || last[0] !== p[0] || last[1] !== p[1]) uniq.push(p);
  }
  // A closing vertex equal to the first adds nothing to an even-odd polygon.
  if (uniq.length > 1 && uniq[0]![0] === uniq[uniq.length - 1]![0] && uniq[0]![1] === uniq[uniq.length - 1]![1]) uniq.pop();
  if (uniq.length <= max) return uniq;
  const step = uniq.length / max;
  const out: Vec2[] = [];
  for (let i = 0; i < max; i++) out.push(uniq[Math.floor(i * step)]!);
  return out;
}

/**
 * A finished brush (vertices in ndc, as regl-scatterplot's `lassoEnd` gives them) as a document
 * selection in map coordinates, or null when it encloses nothing (a click, a line).
 */
export function brushToSelection(
  nz: Normalizer,
  ndcVertices: Vec2[],
  kind: 'rect' | 'lasso',
  who: { by: string; name?: string; at: number },
): AtlasSelection | null {
  const pts = thinPolygon(ndcVertices.map((p) => ndcToMap(nz, p)));
  if (pts.length < 3 && kind === 'lasso') return null;
  if (kind === 'rect') {
    if (pts.length < 2) return null;
    const xs = pts.map((p) => p[0]);
    const ys = pts.map((p) => p[1]);
    const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
    if (!(x1 > x0) || !(y1 > y0)) return null;
    return { kind: 'rect', x0, y0, x1, y1, ...who };
  }
  if (polygonArea(pts) === 0) return null;
  return { kind: 'lasso', points: pts, ...who };
}

/** Absolute area of a polygon (shoelace). */
export function polygonArea(p: Vec2[]): number {
  let s = 0;
  for (let i = 0, j = p.length - 1; i < p.length; j = i++) s += (p[j]![0] + p[i]![0]) * (p[j]![1] - p[i]![1]);
  return Math.abs(s / 2);
}

/** The outline of a selection as a polygon in map coordinates. */
export function selectionOutline(sel: AtlasSelection): Vec2[] {
  if (sel.kind === 'lasso') return sel.points;
  return [
    [sel.x0, sel.y0],
    [sel.x1, sel.y0],
    [sel.x1, sel.y1],
    [sel.x0, sel.y1],
  ];
}
