/**
 * Row selection in a data preview — click selects one row, Shift+click a range from the last
 * plain click, Ctrl/Cmd+click toggles one — and what is published in awareness as
 * `dataSelection` for the agent (offsets capped, a few rows' values). Pure.
 */
import type { DataSelection, Json } from '@plexus/shared';

export interface RowSelection {
  rows: ReadonlySet<number>;
  /** Where a Shift+click range starts. */
  anchor: number | null;
}

export const EMPTY_SELECTION: RowSelection = { rows: new Set(), anchor: null };
/** Most row offsets published. */
export const MAX_SELECTED_OFFSETS = 200;
/** Most rows whose values are published. */
export const MAX_SELECTED_VALUES = 10;

export function clickRow(sel: RowSelection, row: number, mods: { shiftKey: boolean; ctrlKey: boolean; metaKey: boolean }): RowSelection {
  if (mods.shiftKey && sel.anchor !== null) {
    const rows = new Set(mods.ctrlKey || mods.metaKey ? sel.rows : []);
    const [lo, hi] = sel.anchor <= row ? [sel.anchor, row] : [row, sel.anchor];
    for (let r = lo; r <= hi; r++) rows.add(r);
    return { rows, anchor: sel.anchor };
  }
  if (mods.ctrlKey || mods.metaKey) {
    const rows = new Set(sel.rows);
    if (rows.has(row)) rows.delete(row);
    else rows.add(row);
    return { rows, anchor: row };
  }
  if (sel.rows.size === 1 && sel.rows.has(row)) return EMPTY_SELECTION;
  return { rows: new Set([row]), anchor: row };
}

/** The awareness value for a selection (null when nothing is selected). `known` holds rows already fetched, by offset. */
export function selectionField(table: string, sel: RowSelection, known: ReadonlyMap<number, Record<string, Json>>): DataSelection | null {
  if (sel.rows.size === 0) return null;
  const rows = [...sel.rows].sort((a, b) => a - b).slice(0, MAX_SELECTED_OFFSETS);
  const values = rows.flatMap((r) => (known.has(r) ? [known.get(r)!] : [])).slice(0, MAX_SELECTED_VALUES);
  return { table, rows, values };
}
