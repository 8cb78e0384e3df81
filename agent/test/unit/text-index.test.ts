/** The atlas's text search ranks rows the way people expect: exact words first, then prefixes and near misses; row numbers and clusters come back. */
import { describe, expect, it } from 'vitest';
import { buildTextIndex, searchText } from '../../src/tools/text-index.ts';

const rows = [
  { __row: 0, __cluster: 0, title: 'Calcium imaging of cortical neurons', notes: 'two-photon, GCaMP6f' },
  { __row: 1, __cluster: 0, title: 'Calcium transients in dendrites', notes: 'calcium calcium spikes' },
  { __row: 2, __cluster: 1, title: 'Electrophysiology of interneurons', notes: 'patch clamp' },
  { __row: 3, __cluster: 1, title: 'Voltage recordings in slices', notes: 'a long note on many other things that mentions calcium once among them' },
  { __row: 4, __cluster: 2, title: 'Behaviour in mice', notes: 'running wheel' },
];

describe('text search over a map', () => {
  const idx = buildTextIndex(rows, ['title', 'notes']);

  it('ranks rows by how much they are about the words (BM25), best first, with row and cluster', () => {
    const hits = searchText(idx, 'calcium');
    expect(hits.map((h) => h.row)).toEqual([1, 0, 3]);
    expect(hits[0]).toMatchObject({ row: 1, cluster: 0 });
    expect(hits[0]!.snippet).toContain('Calcium transients in dendrites');
    expect(hits[0]!.score).toBeGreaterThan(hits[2]!.score);
  });

  it('finds prefixes and near misses, and nothing for unrelated words', () => {
    expect(searchText(idx, 'electro').map((h) => h.row)).toEqual([2]);
    expect(searchText(idx, 'behavior').map((h) => h.row)).toEqual([4]);
    expect(searchText(idx, 'zebrafish')).toEqual([]);
  });

  it('a query of several words prefers rows that have more of them; the limit holds', () => {
    expect(searchText(idx, 'calcium imaging')[0]!.row).toBe(0);
    expect(searchText(idx, 'calcium', 1)).toHaveLength(1);
  });
});
