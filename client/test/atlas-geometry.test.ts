import { describe, expect, it } from 'vitest';
import { inSelection } from '@plexus/shared';
import {
  brushToSelection,
  mapToNdc,
  mapToScreen,
  ndcToMap,
  ndcToScreen,
  normalizer,
  PAD,
  pointsInSelection,
  screenToMap,
  screenToNdc,
  thinPolygon,
  type Vec2,
  type Viewport,
} from '../src/atlas/geometry.ts';

const close = (a: Vec2, b: Vec2, eps = 1e-9) => {
  expect(a[0]).toBeCloseTo(b[0], 6);
  expect(a[1]).toBeCloseTo(b[1], 6);
  expect(Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1])).toBeLessThan(1e-6 + eps);
};

/** A camera view matrix (column-major) for a 2-D camera: scale s around target t. */
const view = (s: number, tx = 0, ty = 0): number[] => [s, 0, 0, 0, 0, s, 0, 0, 0, 0, 1, 0, -s * tx, -s * ty, 0, 1];

describe('map ↔ ndc', () => {
  it('fits the bounds into [-1, 1] keeping the aspect (uniform)', () => {
    const nz = normalizer([0, 0, 10, 4], true);
    const [x0] = mapToNdc(nz, [0, 2]);
    const [x1, y1] = mapToNdc(nz, [10, 4]);
    expect(x0).toBeCloseTo(-1 / PAD);
    expect(x1).toBeCloseTo(1 / PAD);
    // Same scale on y: 2 map units of 5 half-extent.
    expect(y1).toBeCloseTo(2 / 5 / PAD);
    close(ndcToMap(nz, mapToNdc(nz, [3.3, -7])), [3.3, -7]);
  });

  it('stretches each axis on its own when not uniform', () => {
    const nz = normalizer([100, -1, 200, 1], false);
    close(mapToNdc(nz, [200, 1]), [1 / PAD, 1 / PAD]);
    close(mapToNdc(nz, [150, 0]), [0, 0]);
  });

  it('survives degenerate bounds (one point, a line)', () => {
    const one = normalizer([5, 5, 5, 5], true);
    close(mapToNdc(one, [5, 5]), [0, 0]);
    expect(Number.isFinite(mapToNdc(one, [6, 6])[0])).toBe(true);
    const line = normalizer([0, 3, 10, 3], false);
    expect(Number.isFinite(mapToNdc(line, [5, 4])[1])).toBe(true);
  });
});

describe('ndc ↔ screen (regl-scatterplot camera)', () => {
  const square: Viewport = { view: view(1), width: 400, height: 400 };
  it('identity camera on a square canvas: corners and centre', () => {
    close(ndcToScreen(square, [0, 0]), [200, 200]);
    close(ndcToScreen(square, [-1, 1]), [0, 0]);
    close(ndcToScreen(square, [1, -1]), [400, 400]);
  });

  it('a wide canvas keeps the data square (x shrinks by the aspect)', () => {
    const wide: Viewport = { view: view(1), width: 800, height: 400 };
    close(ndcToScreen(wide, [1, 1]), [600, 0]);
    close(ndcToScreen(wide, [-1, -1]), [200, 400]);
  });

  it('zoom and pan move points as the camera says', () => {
    const vp: Viewport = { view: view(2, 0.5, 0.25), width: 400, height: 300 };
    // The camera target is at the canvas centre.
    close(ndcToScreen(vp, [0.5, 0.25]), [200, 150]);
    // Twice the zoom: 0.1 ndc to the right is 0.2 clip units, divided by the aspect.
    const [x] = ndcToScreen(vp, [0.6, 0.25]);
    expect(x - 200).toBeCloseTo(((0.2 / (400 / 300)) * 400) / 2);
  });

  it('screen → ndc inverts ndc → screen (with rotation too)', () => {
    const a = 0.3;
    const rot = [Math.cos(a) * 1.7, Math.sin(a) * 1.7, 0, 0, -Math.sin(a) * 1.7, Math.cos(a) * 1.7, 0, 0, 0, 0, 1, 0, 0.2, -0.4, 0, 1];
    for (const vp of [square, { view: rot, width: 640, height: 360 }, { view: view(0.5, -1, 2), width: 333, height: 777 }] as Viewport[])
      for (const p of [[0, 0], [0.3, -0.9], [-1, 1]] as Vec2[]) close(screenToNdc(vp, ndcToScreen(vp, p)), p);
  });

  it('map → screen → map round trip', () => {
    const nz = normalizer([-50, 10, 50, 30], true);
    const vp: Viewport = { view: view(3, 0.1, -0.2), width: 500, height: 320 };
    for (const p of [[-50, 10], [0, 20], [12.5, 29]] as Vec2[]) close(screenToMap(nz, vp, mapToScreen(nz, vp, p)), p);
  });
});

describe('brushes and selections', () => {
  const nz = normalizer([0, 0, 100, 100], true);
  const who = { by: 'u1', name: 'Ada', at: 1 };

  it('a released rectangle becomes a rect in map coordinates', () => {
    const a = mapToNdc(nz, [10, 20]);
    const b = mapToNdc(nz, [40, 60]);
    const corners: Vec2[] = [a, [b[0], a[1]], b, [a[0], b[1]], a];
    const sel = brushToSelection(nz, corners, 'rect', who)!;
    expect(sel.kind).toBe('rect');
    if (sel.kind !== 'rect') return;
    expect(sel.x0).toBeCloseTo(10);
    expect(sel.y0).toBeCloseTo(20);
    expect(sel.x1).toBeCloseTo(40);
    expect(sel.y1).toBeCloseTo(60);
    expect(sel.by).toBe('u1');
    expect(sel.name).toBe('Ada');
  });

  it('a click or a line is no selection', () => {
    const p = mapToNdc(nz, [5, 5]);
    expect(brushToSelection(nz, [p], 'rect', who)).toBeNull();
    expect(brushToSelection(nz, [p, p, p], 'lasso', who)).toBeNull();
    expect(brushToSelection(nz, [mapToNdc(nz, [0, 0]), mapToNdc(nz, [1, 1]), mapToNdc(nz, [2, 2])], 'lasso', who)).toBeNull();
  });

  it('a lasso keeps at most 500 vertices and selects what it encloses', () => {
    const ring: Vec2[] = Array.from({ length: 2000 }, (_, i) => {
      const t = (i / 2000) * 2 * Math.PI;
      return mapToNdc(nz, [50 + 20 * Math.cos(t), 50 + 20 * Math.sin(t)]);
    });
    const sel = brushToSelection(nz, ring, 'lasso', who)!;
    expect(sel.kind).toBe('lasso');
    if (sel.kind !== 'lasso') return;
    expect(sel.points.length).toBeLessThanOrEqual(500);
    expect(sel.points.length).toBeGreaterThanOrEqual(3);
    expect(inSelection(sel, 50, 50)).toBe(true);
    expect(inSelection(sel, 80, 80)).toBe(false);
    const x = Float32Array.from([50, 80, 55, 31, 10]);
    const y = Float32Array.from([50, 80, 45, 50, 10]);
    expect(Array.from(pointsInSelection(sel, x, y))).toEqual([0, 2, 3]);
  });

  it('pointsInSelection agrees with inSelection for rectangles', () => {
    const sel = { kind: 'rect' as const, x0: 30, y0: 0, x1: 10, y1: 20, by: 'u', at: 0 };
    const x = Float32Array.from([10, 20, 30, 31, 20]);
    const y = Float32Array.from([0, 10, 20, 10, -1]);
    expect(Array.from(pointsInSelection(sel, x, y))).toEqual([0, 1, 2]);
  });

  it('thinPolygon drops duplicates and the closing vertex', () => {
    expect(thinPolygon([[0, 0], [0, 0], [1, 0], [1, 1], [0, 0]])).toEqual([[0, 0], [1, 0], [1, 1]]);
  });
});
