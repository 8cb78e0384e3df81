import { describe, expect, it } from 'vitest';
import type { RoiEdit } from '@plexus/shared';
import { curateRoisCsv, describeEdit } from '../../src/analysis/curated-rois.ts';
import { splitCsv } from '../../src/analysis/result-files.ts';

const CSV = ['id,area_px,is_cell,reason,snr', '1,80,1,,9.5', '2,70,0,"not compact (0.41 < 0.55), odd",2.1', '3,90,1,,7', '4,60,1,,6', ''].join('\n');
const by = { by: 'u_ada', name: 'Ada', at: 1 };
const rows = (csv: string) => {
  const [head, ...rest] = csv.trim().split('\n').map(splitCsv);
  return rest.map((r) => Object.fromEntries(head!.map((h, i) => [h, r[i]])));
};

describe('curateRoisCsv', () => {
  it('applies deletes, merges and reclassifications, keeping every row and the pipeline’s own decision', () => {
    const edits: Record<string, RoiEdit> = { 1: { action: 'delete', ...by }, 2: { action: 'classify', cell: true, ...by }, 3: { action: 'merge', into: 4, ...by } };
    const out = rows(curateRoisCsv(CSV, edits));
    expect(out.map((r) => [r.id, r.is_cell, r.pipeline_is_cell, r.edit])).toEqual([
      ['1', '0', '1', 'deleted by Ada'],
      ['2', '1', '0', 'marked a cell by Ada'],
      ['3', '0', '1', 'merged into 4 by Ada'],
      ['4', '1', '1', ''],
    ]);
    // Quoted fields survive (the comma inside the reason).
    expect(out[1]!.reason).toBe('not compact (0.41 < 0.55), odd');
  });

  it('without edits adds the columns and changes nothing else; curating again gives the same table', () => {
    const once = curateRoisCsv(CSV, {});
    expect(rows(once).map((r) => r.is_cell)).toEqual(['1', '0', '1', '1']);
    const edits: Record<string, RoiEdit> = { 4: { action: 'classify', cell: false, ...by } };
    expect(curateRoisCsv(curateRoisCsv(CSV, edits), edits)).toBe(curateRoisCsv(CSV, edits));
  });

  it('quotes names with line breaks of any kind (a carriage return unquoted breaks the import)', () => {
    const out = curateRoisCsv(CSV, { 4: { action: 'delete', by: 'u_eve', name: 'Eve\r9', at: 1 } });
    expect(out).toContain('"deleted by Eve\r9"');
    expect(out.split('\n').filter(Boolean)).toHaveLength(5);
  });

  it('refuses a table without the columns it needs', () => {
    expect(() => curateRoisCsv('a,b\n1,2\n', {})).toThrow(/no id or is_cell/);
    expect(describeEdit({ action: 'classify', cell: false, by: 'agent', at: 1 })).toBe('marked not a cell by agent');
  });
});
