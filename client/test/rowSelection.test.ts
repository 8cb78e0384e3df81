import { describe, expect, it } from 'vitest';
import { clickRow, EMPTY_SELECTION, selectionField } from '../src/data/rowSelection.ts';

const none = { shiftKey: false, ctrlKey: false, metaKey: false };
const rows = (s: { rows: ReadonlySet<number> }) => [...s.rows].sort((a, b) => a - b);

describe('row selection', () => {
  it('click, shift-click range, ctrl-click toggle', () => {
    let s = clickRow(EMPTY_SELECTION, 3, none);
    expect(rows(s)).toEqual([3]);
    s = clickRow(s, 6, { ...none, shiftKey: true });
    expect(rows(s)).toEqual([3, 4, 5, 6]);
    s = clickRow(s, 1, { ...none, shiftKey: true });
    expect(rows(s)).toEqual([1, 2, 3]);
    s = clickRow(s, 2, { ...none, ctrlKey: true });
    expect(rows(s)).toEqual([1, 3]);
    s = clickRow(s, 9, { ...none, metaKey: true });
    expect(rows(s)).toEqual([1, 3, 9]);
    s = clickRow(s, 4, none);
    expect(rows(s)).toEqual([4]);
    expect(rows(clickRow(s, 4, none))).toEqual([]);
  });
  it('publishes at most 200 offsets and 10 rows of values', () => {
    let s = clickRow(EMPTY_SELECTION, 0, none);
    s = clickRow(s, 499, { ...none, shiftKey: true });
    const known = new Map(Array.from({ length: 50 }, (_, i) => [i, { id: i }] as const));
    const f = selectionField('t', s, known)!;
    expect(f.rows).toHaveLength(200);
    expect(f.values).toHaveLength(10);
    expect(f.values![0]).toEqual({ id: 0 });
    expect(selectionField('t', EMPTY_SELECTION, known)).toBeNull();
  });
});
