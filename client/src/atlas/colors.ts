/**
 * Point colours of the atlas (pure). regl-scatterplot colours a point by an integer index into a
 * palette (its `valueA`, drawn as categorical): we lay the palette out so that one index array
 * carries the colour-by column, missing values and the shared highlight at once.
 */
import { ATLAS_HIGHLIGHT_COLOR, ATLAS_SELECTION_COLOR } from '@plexus/shared';
import type { AtlasPoints, PointsColor } from './points.ts';

/** Points without a colour-by column. */
export const BASE_COLOR = '#4c78a8';
/** A missing value of the colour-by column. */
export const MISSING_COLOR = '#c3c8d0';
/** The shared highlight (setAtlasHighlight): one colour for everyone, unlike any palette's (the viewer draws its ROIs in it too). */
export const HIGHLIGHT_COLOR = ATLAS_HIGHLIGHT_COLOR;
/** Points inside the shared selection (and their ROIs in the viewer). */
export const SELECTED_COLOR = ATLAS_SELECTION_COLOR;
export const HOVER_COLOR = '#111827';

/** Bins of a numeric colour scale. */
export const NUMERIC_BINS = 64;

// Viridis at 9 stops (matplotlib's), interpolated to NUMERIC_BINS.
const VIRIDIS = ['#440154', '#472d7b', '#3b528b', '#2c728e', '#21918c', '#28ae80', '#5ec962', '#addc30', '#fde725'];
// Tableau 10, then Tableau 20's light variants.
export const CATEGORICAL = [
  '#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f', '#bab0ac', '#17becf',
  '#a0cbe8', '#ffbe7d', '#8cd17d', '#ff9d9a', '#86bcb6', '#f1ce63', '#d4a6c8', '#d7b5a6', '#79706e', '#bcbd22',
];

const hex = (c: string): [number, number, number] => [parseInt(c.slice(1, 3), 16), parseInt(c.slice(3, 5), 16), parseInt(c.slice(5, 7), 16)];
const toHex = (v: number[]) => '#' + v.map((x) => Math.round(x).toString(16).padStart(2, '0')).join('');

/** `n` colours evenly along viridis. */
export function sequential(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const t = n === 1 ? 0.5 : i / (n - 1);
    const f = t * (VIRIDIS.length - 1);
    const k = Math.min(VIRIDIS.length - 2, Math.floor(f));
    const a = hex(VIRIDIS[k]!);
    const b = hex(VIRIDIS[k + 1]!);
    const u = f - k;
    out.push(toHex(a.map((v, j) => v + (b[j]! - v) * u)));
  }
  return out;
}

export const categoryColor = (i: number): string => CATEGORICAL[i % CATEGORICAL.length]!;

/** The CSS gradient of the numeric legend. */
export const sequentialGradient = (): string => `linear-gradient(to right, ${VIRIDIS.join(', ')})`;

export interface Coloring {
  /** Palette index of each point (integers, drawn as categorical). */
  z: Float32Array;
  palette: string[];
  /** Colours of selected points, per palette index: the selection's, but highlighted rows stay highlighted. */
  active: string[];
}

/** Palette index of a value of the colour column (without the highlight). */
export function colorSlot(color: PointsColor | null, v: number): number {
  if (!color) return 0;
  if (color.kind === 'numeric') {
    if (!Number.isFinite(v)) return 0;
    const span = color.max - color.min;
    const t = span > 0 ? (v - color.min) / span : 0.5;
    return 1 + Math.max(0, Math.min(NUMERIC_BINS - 1, Math.floor(t * NUMERIC_BINS)));
  }
  const c = color.categories.length;
  return Number.isInteger(v) && v >= 0 && v < c ? v : c;
}

/** Palette and per-point index; points whose index is in `highlight` take the highlight colour. */
export function coloring(points: Pick<AtlasPoints, 'n' | 'color' | 'meta'>, highlight: ReadonlySet<number> | null): Coloring {
  const color = points.meta.color;
  const palette =
    !color || !points.color
      ? [BASE_COLOR]
      : color.kind === 'numeric'
        ? [MISSING_COLOR, ...sequential(NUMERIC_BINS)]
        : [...color.categories.map((_, i) => categoryColor(i)), MISSING_COLOR];
  const hi = palette.length;
  palette.push(HIGHLIGHT_COLOR);
  const z = new Float32Array(points.n);
  const values = color ? points.color : null;
  for (let i = 0; i < points.n; i++) z[i] = values ? colorSlot(color, values[i]!) : 0;
  if (highlight) for (const i of highlight) if (i < points.n) z[i] = hi;
  return { z, palette, active: palette.map((_, i) => (i === hi ? HIGHLIGHT_COLOR : SELECTED_COLOR)) };
}
