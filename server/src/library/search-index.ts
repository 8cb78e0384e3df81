/**
 * BM25 retrieval over a workspace's library passages, with MiniSearch.
 *
 * Library: `minisearch` 7.2.0 (MIT, no dependencies): an in-memory full-text index with BM25+
 * ranking, field boosts, prefix and fuzzy matching, and incremental add/remove, maintained since
 * 2018. A workspace's library is a few hundred passages, so an in-memory index per workspace is
 * built in milliseconds and needs no service; `lunr` cannot remove documents, `flexsearch` does
 * not rank by BM25.
 *
 * The index is kept in step with its sources incrementally: `sync` is given every source (a stored
 * document, or a note cell with its current text) with a version, and adds, replaces or removes
 * only those whose version changed. Pure module (CPU only).
 */
import MiniSearch from 'minisearch';
import type { Passage } from './passages.ts';
import type { LibraryPassage } from '@plexus/shared';

/** A search result: the shared API type. */
export type LibraryHit = LibraryPassage;

/** One thing the index holds passages of. */
export interface LibrarySource {
  /** Unique per source: the document id, or `cell:<id>`. */
  key: string;
  /** Changes whenever the passages may have changed. */
  version: string;
  docId: string;
  docName: string;
  cellId?: string;
  /** The passages (computed only when the version changed). */
  passages: () => Passage[];
}

interface Indexed {
  id: number;
  key: string;
  docId: string;
  docName: string;
  cellId?: string;
  heading: string;
  text: string;
}

/** Words too common to say anything about a passage. */
const STOP_WORDS = new Set(
  ('a an and are as at be but by can do does for from has have how i if in into is it its of on or should so than that the their then there '
    + 'these this those to was we what when where which while who why will with would you your about after before between use used using').split(' '),
);

/** Lower case, accents and Greek Δ folded ("ΔF/F" and "dF/F" meet), stop words dropped. */
export function processTerm(term: string): string | null {
  const t = term
    .toLowerCase()
    .replace(/δ/g, 'd')
    .normalize('NFKD')
    .replace(/\p{M}/gu, '');
  if (!t || STOP_WORDS.has(t)) return null;
  return t;
}

export const HEADING_BOOST = 2;

export class LibrarySearchIndex {
  private readonly ms = new MiniSearch<Indexed>({
    fields: ['heading', 'text'],
    storeFields: [],
    processTerm,
    searchOptions: {
      boost: { heading: HEADING_BOOST },
      // Prefix and fuzzy (a fifth of the term's length) matching, but not on short terms, where
      // they match nearly everything ("r" would prefix-match every word starting with r).
      prefix: (term) => term.length >= 4,
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
      combineWith: 'OR',
    },
  });
  private readonly byKey = new Map<string, { version: string; passages: Indexed[] }>();
  private readonly byId = new Map<number, Indexed>();
  private nextId = 1;

  /** Number of passages held. */
  get size(): number {
    return this.byId.size;
  }

  /** Brings the index in step with `sources` (the complete current list). Returns what changed. */
  sync(sources: LibrarySource[]): { added: number; removed: number } {
    let added = 0;
    let removed = 0;
    const live = new Set<string>();
    for (const s of sources) {
      live.add(s.key);
      const had = this.byKey.get(s.key);
      if (had && had.version === s.version) continue;
      if (had) removed += this.drop(s.key);
      const passages = s.passages().map((p) => ({ id: this.nextId++, key: s.key, docId: s.docId, docName: s.docName, ...(s.cellId ? { cellId: s.cellId } : {}), heading: p.heading, text: p.text }));
      this.ms.addAll(passages);
      for (const p of passages) this.byId.set(p.id, p);
      this.byKey.set(s.key, { version: s.version, passages });
      added += passages.length;
    }
    for (const key of [...this.byKey.keys()]) if (!live.has(key)) removed += this.drop(key);
    return { added, removed };
  }

  private drop(key: string): number {
    const had = this.byKey.get(key);
    if (!had) return 0;
    this.ms.removeAll(had.passages);
    for (const p of had.passages) this.byId.delete(p.id);
    this.byKey.delete(key);
    return had.passages.length;
  }

  /** The best `limit` passages for `query`, best first. */
  search(query: string, limit: number): LibraryHit[] {
    if (!query.trim() || this.byId.size === 0) return [];
    return this.ms
      .search(query)
      .slice(0, limit)
      .flatMap((r) => {
        const p = this.byId.get(r.id as number);
        if (!p) return [];
        return [{ docId: p.docId, docName: p.docName, heading: p.heading, text: p.text, score: Math.round(r.score * 1000) / 1000, ...(p.cellId ? { cellId: p.cellId } : {}) }];
      });
  }
}
