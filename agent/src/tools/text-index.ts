/**
 * Full-text search over a map's rows (the atlas's `text_search`): a MiniSearch index (BM25 with
 * prefix and fuzzy matching — maintained, MIT, no native code) of a table's text columns, keyed by
 * row number, and the ranked hits as the tool returns them. Pure.
 */
import MiniSearch from 'minisearch';

export interface TextIndex {
  index: MiniSearch;
  fields: string[];
}

export interface TextHit {
  row: number;
  cluster: unknown;
  score: number;
  snippet: string;
}

/** Indexes rows (`__row`, `__cluster` and the `fields`). */
export function buildTextIndex(rows: Array<Record<string, unknown>>, fields: string[]): TextIndex {
  const index = new MiniSearch({ idField: '__row', fields, storeFields: ['__cluster', ...fields], searchOptions: { prefix: true, fuzzy: 0.2 } });
  index.addAll(rows);
  return { index, fields };
}

/** The best `limit` rows for `query`, best first. */
export function searchText(idx: TextIndex, query: string, limit = 10): TextHit[] {
  return idx.index
    .search(query)
    .slice(0, limit)
    .map((h) => ({
      row: Number(h.id),
      cluster: h.__cluster,
      score: Math.round(h.score * 100) / 100,
      snippet: idx.fields.map((f) => String(h[f] ?? '')).join(' · ').slice(0, 200),
    }));
}
