/**
 * Notebook cells. Cells live in the `cells` Y.Map keyed by stable id; each cell is a Y.Map holding
 * its kind, a fractional order key, its author and its source (Y.Text for code and SQL,
 * Y.XmlFragment for markdown, bound to tiptap). Order is a key on the cell, never the position in
 * an array, so concurrent moves cannot duplicate a cell and move-versus-delete cannot resurrect one.
 * Pure module.
 */
import * as Y from 'yjs';
import { newCellId, type CellId } from './ids.ts';
import { compareOrder, orderKeyBetween } from './order.ts';
import type { Origin } from './origin.ts';
import { roots } from './schema.ts';
import { applyTextDiff } from './text-diff.ts';
import { markdownToFragment, fragmentToMarkdown } from './markdown.ts';

export const CELL_KINDS = ['markdown', 'code', 'sql'] as const;
export type CellKind = (typeof CELL_KINDS)[number];
/** True when `k` names a cell kind. */
export const isCellKind = (k: unknown): k is CellKind => (CELL_KINDS as readonly unknown[]).includes(k);

/** A plain snapshot of a cell, for reading (the live Y.Map is `map`). */
export interface CellView {
  id: CellId;
  kind: CellKind;
  order: string;
  author: string;
  created: number;
  /** SQL cells: the variable their result is bound to. */
  name?: string;
  map: Y.Map<unknown>;
}

/** Where to insert a new cell. */
export type CellPosition = { after: CellId | null } | { before: CellId | null } | { index: number };

function readCell(map: Y.Map<unknown>): CellView | null {
  const id = map.get('id');
  const kind = map.get('kind');
  const order = map.get('order');
  if (typeof id !== 'string' || !isCellKind(kind) || typeof order !== 'string') return null;
  const name = map.get('name');
  return {
    id: id as CellId,
    kind,
    order,
    author: String(map.get('author') ?? ''),
    created: Number(map.get('created') ?? 0),
    name: typeof name === 'string' ? name : undefined,
    map,
  };
}

/** All cells in notebook order. */
export function listCells(doc: Y.Doc): CellView[] {
  const out: CellView[] = [];
  roots(doc).cells.forEach((map) => {
    const c = map instanceof Y.Map ? readCell(map) : null;
    if (c) out.push(c);
  });
  return out.sort(compareOrder);
}

/** One cell, or undefined if it does not exist (or was deleted). */
export function getCell(doc: Y.Doc, id: CellId | string): CellView | undefined {
  const map = roots(doc).cells.get(id);
  return map instanceof Y.Map ? (readCell(map) ?? undefined) : undefined;
}

/** The cell's source as a Y.Text (code and SQL cells). */
export function cellText(cell: CellView): Y.Text | undefined {
  const s = cell.map.get('source');
  return s instanceof Y.Text ? s : undefined;
}

/** The cell's rich text (markdown cells). */
export function cellFragment(cell: CellView): Y.XmlFragment | undefined {
  const s = cell.map.get('source');
  return s instanceof Y.XmlFragment ? s : undefined;
}

/** The cell's source as plain text (markdown cells rendered to markdown). */
export function cellSource(cell: CellView): string {
  const t = cellText(cell);
  if (t) return t.toString();
  const f = cellFragment(cell);
  return f ? fragmentToMarkdown(f) : '';
}

function orderKeyFor(cells: CellView[], pos: CellPosition): string {
  let i: number;
  if ('index' in pos) i = Math.max(0, Math.min(cells.length, pos.index));
  else if ('after' in pos) i = pos.after === null ? 0 : cells.findIndex((c) => c.id === pos.after) + 1;
  else i = pos.before === null ? cells.length : cells.findIndex((c) => c.id === pos.before);
  if (i < 0) i = cells.length; // anchor not found (deleted concurrently): append
  const before = i > 0 ? cells[i - 1]!.order : null;
  const after = i < cells.length ? cells[i]!.order : null;
  return orderKeyBetween(before, after);
}

export interface CreateCellInput {
  kind: CellKind;
  source?: string;
  position?: CellPosition;
  author: string;
  id?: CellId;
  name?: string;
}

/** Creates a cell and returns its id. Default position: end of the notebook. */
export function createCell(doc: Y.Doc, input: CreateCellInput, origin: Origin): CellId {
  const id = input.id ?? newCellId();
  doc.transact(() => {
    const cells = listCells(doc);
    const map = new Y.Map<unknown>();
    map.set('id', id);
    map.set('kind', input.kind);
    map.set('order', orderKeyFor(cells, input.position ?? { index: cells.length }));
    map.set('author', input.author);
    map.set('created', Date.now());
    if (input.name !== undefined) map.set('name', input.name);
    if (input.kind === 'markdown') {
      const frag = new Y.XmlFragment();
      map.set('source', frag);
      roots(doc).cells.set(id, map);
      if (input.source) markdownToFragment(frag, input.source);
    } else {
      map.set('source', new Y.Text(input.source ?? ''));
      roots(doc).cells.set(id, map);
    }
  }, origin);
  return id;
}

/** Deletes a cell. Returns false if it was already gone. */
export function deleteCell(doc: Y.Doc, id: CellId | string, origin: Origin): boolean {
  let done = false;
  doc.transact(() => {
    const cells = roots(doc).cells;
    if (cells.has(id)) {
      cells.delete(id);
      done = true;
    }
  }, origin);
  return done;
}

/**
 * Moves a cell by rewriting only its order key. Concurrent moves of one cell converge to one
 * position (last writer wins); a move of a concurrently deleted cell does nothing.
 */
export function moveCell(doc: Y.Doc, id: CellId | string, to: CellPosition, origin: Origin): boolean {
  let done = false;
  doc.transact(() => {
    const cell = getCell(doc, id);
    if (!cell) return;
    const others = listCells(doc).filter((c) => c.id !== id);
    cell.map.set('order', orderKeyFor(others, to));
    done = true;
  }, origin);
  return done;
}

/** Moves a cell one place up (delta -1) or down (+1). */
export function moveCellBy(doc: Y.Doc, id: CellId | string, delta: -1 | 1, origin: Origin): boolean {
  const cells = listCells(doc);
  const i = cells.findIndex((c) => c.id === id);
  if (i < 0) return false;
  const j = i + delta;
  if (j < 0 || j >= cells.length) return false;
  return moveCell(doc, id, { index: j }, origin);
}

/**
 * Replaces a code/SQL cell's source with `text` as a minimal diff (concurrent typing elsewhere in
 * the cell survives). For markdown cells the fragment is rebuilt only if the text differs.
 */
export function setCellSource(doc: Y.Doc, id: CellId | string, text: string, origin: Origin): boolean {
  const cell = getCell(doc, id);
  if (!cell) return false;
  doc.transact(() => {
    const t = cellText(cell);
    if (t) {
      applyTextDiff(t, text);
      return;
    }
    const f = cellFragment(cell);
    if (f && fragmentToMarkdown(f) !== text) {
      f.delete(0, f.length);
      markdownToFragment(f, text);
    }
  }, origin);
  return true;
}

/** Inserts text at an offset of a code/SQL cell (what a keystroke does). */
export function insertCellText(doc: Y.Doc, id: CellId | string, index: number, text: string, origin: Origin): boolean {
  const cell = getCell(doc, id);
  const t = cell && cellText(cell);
  if (!t) return false;
  doc.transact(() => t.insert(Math.max(0, Math.min(t.length, index)), text), origin);
  return true;
}

/** Sets the variable name of an SQL cell (its result is bound to it). */
export function setCellName(doc: Y.Doc, id: CellId | string, name: string | null, origin: Origin): boolean {
  const cell = getCell(doc, id);
  if (!cell) return false;
  doc.transact(() => (name === null ? cell.map.delete('name') : cell.map.set('name', name)), origin);
  return true;
}

/**
 * Changes a cell's kind between code and SQL (both Y.Text: the text is kept). Markdown is a
 * different content type: converting to or from it creates the new source from the old text.
 */
export function setCellKind(doc: Y.Doc, id: CellId | string, kind: CellKind, origin: Origin): boolean {
  const cell = getCell(doc, id);
  if (!cell) return false;
  if (cell.kind === kind) return true;
  doc.transact(() => {
    const text = cellSource(cell);
    const textual = (k: CellKind) => k !== 'markdown';
    if (textual(cell.kind) && textual(kind)) {
      cell.map.set('kind', kind);
      return;
    }
    cell.map.set('kind', kind);
    if (kind === 'markdown') {
      const frag = new Y.XmlFragment();
      cell.map.set('source', frag);
      markdownToFragment(frag, text);
    } else {
      cell.map.set('source', new Y.Text(text));
    }
  }, origin);
  return true;
}

/** Id of the cell before/after `id` in notebook order (for keyboard navigation). */
export function neighbourCell(doc: Y.Doc, id: CellId | string, delta: -1 | 1): CellId | undefined {
  const cells = listCells(doc);
  const i = cells.findIndex((c) => c.id === id);
  return i < 0 ? undefined : cells[i + delta]?.id;
}
