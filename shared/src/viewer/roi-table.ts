/**
 * Tables of ROIs: which columns of an uploaded table hold a position (and a label), and the point
 * a row centres the view on. Pure module.
 */
import type { Json } from '../json.ts';

export interface RoiColumns {
  x: string;
  y: string;
  z?: string;
  label?: string;
}

const X = ['x', 'centroid_x', 'center_x', 'centre_x', 'cx', 'x_px', 'xc', 'pos_x', 'position_x'];
const Y = X.map((n) => n.replace('x', 'y'));
const Z = X.map((n) => n.replace('x', 'z'));
const LABEL = ['label', 'name', 'roi', 'roi_id', 'id', 'cell', 'neuron'];

function pick(columns: string[], wanted: string[]): string | undefined {
  const lower = new Map(columns.map((c) => [c.toLowerCase(), c]));
  for (const w of wanted) {
    const c = lower.get(w);
    if (c !== undefined) return c;
  }
  return undefined;
}

/** The position (and label) columns of a table, or null when it has no x and y. */
export function roiColumns(columns: ReadonlyArray<{ name: string; type?: string }>): RoiColumns | null {
  const names = columns.map((c) => c.name);
  const x = pick(names, X);
  const y = pick(names, Y);
  if (!x || !y) return null;
  const out: RoiColumns = { x, y };
  const z = pick(names, Z);
  if (z) out.z = z;
  const label = pick(names, LABEL);
  if (label) out.label = label;
  return out;
}

/** The centre of a row (`null` entries keep the viewer's current coordinate), or null when not numeric. */
export function roiRowCentre(row: Record<string, Json | unknown>, cols: RoiColumns): Array<number | null> | null {
  const num = (v: unknown): number | null => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null);
  const x = num(row[cols.x]);
  const y = num(row[cols.y]);
  if (x === null || y === null) return null;
  const z = cols.z ? num(row[cols.z]) : null;
  return z === null ? [x, y, null] : [x, y, z];
}
