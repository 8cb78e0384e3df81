/**
 * The workspace's method library: documents (markdown, plain text, PDF) the server has indexed
 * for the agent's retrieval, listed in the `library` root so everyone sees what the agent can
 * cite, and markdown cells tagged `note`, which are part of the library as they stand.
 * The server writes entries (uploads, the notes shipped with Plexus); people may remove them.
 * Pure module.
 */
import * as Y from 'yjs';
import type { Origin } from '../origin.ts';
import { roots } from '../schema.ts';
import { getCell, listCells } from '../cells.ts';
import type { CellId } from '../ids.ts';

export type LibraryFormat = 'md' | 'txt' | 'pdf';

export interface LibraryDoc {
  id: string;
  /** The file name people see and citations name ("motion-correction.md"). */
  name: string;
  format: LibraryFormat;
  chars: number;
  /** Passages the index holds for it. */
  passages: number;
  bytes: number;
  /** Null for the notes shipped with Plexus. */
  uploadedBy: { id: string; name?: string } | null;
  builtin: boolean;
  created: number;
}

/** A passage of the library as the server's search returns it (`GET …/library/search`). */
export interface LibraryPassage {
  docId: string;
  /** What citations name: the file name ("neuropil.md"), or a note cell's first heading / "note cell 3". */
  docName: string;
  heading: string;
  text: string;
  score: number;
  /** Set for passages of markdown cells tagged as notes. */
  cellId?: string;
}

/** The tag that makes a markdown cell a library note. */
export const NOTE_TAG = 'note';
export const MAX_TAGS = 20;

/** Every library document, by name. */
export function listLibrary(doc: Y.Doc): LibraryDoc[] {
  const out: LibraryDoc[] = [];
  roots(doc).library.forEach((v) => {
    if (v && typeof v === 'object' && typeof (v as LibraryDoc).id === 'string') out.push(v as LibraryDoc);
  });
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** Server: lists an indexed document. */
export function registerLibraryDoc(doc: Y.Doc, entry: LibraryDoc, origin: Origin): void {
  doc.transact(() => roots(doc).library.set(entry.id, { ...entry }), origin);
}

/** Removes a document from the library. Returns false when it was not there. */
export function removeLibraryDoc(doc: Y.Doc, id: string, origin: Origin): boolean {
  if (!roots(doc).library.has(id)) return false;
  doc.transact(() => roots(doc).library.delete(id), origin);
  return true;
}

/** A cell's tags. */
export function cellTags(doc: Y.Doc, id: CellId | string): string[] {
  const v = getCell(doc, id)?.map.get('tags');
  return Array.isArray(v) ? v.filter((t): t is string => typeof t === 'string') : [];
}

/** Replaces a cell's tags (lower-case words, letters, digits, `_` and `-`). */
export function setCellTags(doc: Y.Doc, id: CellId | string, tags: string[], origin: Origin): boolean {
  const cell = getCell(doc, id);
  if (!cell) return false;
  const clean = [...new Set(tags.map((t) => t.trim().toLowerCase()).filter((t) => /^[\w-]{1,40}$/.test(t)))].slice(0, MAX_TAGS);
  doc.transact(() => (clean.length ? cell.map.set('tags', clean) : cell.map.delete('tags')), origin);
  return true;
}

/** The markdown cells tagged as notes: part of the library. */
export function noteCells(doc: Y.Doc): Array<{ id: CellId; index: number }> {
  return listCells(doc)
    .map((c, index) => ({ c, index }))
    .filter(({ c }) => c.kind === 'markdown' && cellTags(doc, c.id).includes(NOTE_TAG))
    .map(({ c, index }) => ({ id: c.id, index }));
}

/**
 * The name a note cell is cited by: its first markdown heading (inline markup dropped), else
 * "note cell <n>" with n its position in the notebook, from 1.
 */
export function noteCellName(markdown: string, index: number): string {
  const m = /^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$/m.exec(markdown);
  const h = m?.[1]?.replace(/[*_`]+/g, '').trim();
  return h ? h.slice(0, 200) : `note cell ${index + 1}`;
}
