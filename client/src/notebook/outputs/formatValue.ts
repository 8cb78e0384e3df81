/**
 * How table cells show values: fractions at 6 significant digits (1.0089480392156858 → 1.00895),
 * very large or small magnitudes in exponent form, integers and text as they are. The full value
 * stays in the cell's title and is what copying a selection of cells gives. Pure.
 */
import type { Json } from '@plexus/shared';

/** The full value as text (what copy gives). */
export const rawText = (v: Json | undefined): string => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** The value as shown. */
export function displayText(v: Json | undefined): string {
  if (typeof v !== 'number' || !Number.isFinite(v)) return rawText(v);
  const a = Math.abs(v);
  if (Number.isInteger(v) && a < 1e15) return rawText(v);
  if (a !== 0 && (a < 1e-4 || a >= 1e15)) return v.toExponential(4).replace(/\.?0+e/, 'e');
  return String(Number(v.toPrecision(6)));
}

/** Whether the shown text differs from the value (then the title carries the full value). */
export const isRounded = (v: Json | undefined): boolean => displayText(v) !== rawText(v);
