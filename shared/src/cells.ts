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
import { markdownToFragment, fragmentToMarkdown, updateFragmentMarkdown } from './markdown.ts';

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

/**
 * The kind a cell really has. `kind` and `source` are two keys of the cell map, and a code<->SQL
 * switch writes only `kind`: racing it against a conversion to/from markdown can converge to kind
 * 'sql' with a rich-text source (or 'markdown' with a Y.Text). The source's type is what editors
 * bind to, so it decides; every replica computes the same answer from the same state.
 */
function effectiveKind(kind: CellKind, source: unknown): CellKind {
  if (source instanceof Y.XmlFragment) return 'markdown';
  if (source instanceof Y.Text && kind === 'markdown') return 'code';
  return kind;
}

/** Order of a cell whose `order` key is missing (see readCell): the first key, a valid one to insert around. */
const NO_ORDER = 'a0';

/**
 * Reads a cell. Only `id` is sure to be there: undo racing a concurrent overwrite can leave a key
 * with no value (Yjs' UndoManager removes its own write and finds the one before it superseded),
 * so a cell without `order` sorts near the top, and one without `kind` takes it from its source.
 */
function readCell(map: Y.Map<unknown>): CellView | null {
  const id = map.get('id');
  const rawKind = map.get('kind');
  const rawOrder = map.get('order');
  if (typeof id !== 'string') return null;
  const order = typeof rawOrder === 'string' ? rawOrder : NO_ORDER;
  const source = map.get('source');
  const kind = effectiveKind(isCellKind(rawKind) ? rawKind : source instanceof Y.XmlFragment ? 'markdown' : 'code', source);
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

/** The shared type holding the cell's source (Y.Text or Y.XmlFragment), to bind an editor to. */
export function cellSourceType(cell: CellView): Y.Text | Y.XmlFragment | undefined {
  const s = cell.map.get('source');
  return s instanceof Y.Text || s instanceof Y.XmlFragment ? s : undefined;
}

/**
 * What a transaction changed of what the notebook's dependency graph is built from: `'cells'`
 * when cells were added, removed, re-kinded or renamed, a source replaced, or a cell's other
 * shared types edited (read as a change of the cells); otherwise the ids of the cells whose
 * source text was edited (none: the graph's inputs are as they were).
 */
export function notebookGraphChanges(doc: Y.Doc, tr: Y.Transaction): 'cells' | Set<string> {
  const cells = roots(doc).cells;
  const edited = new Set<string>();
  for (const [type, keys] of tr.changed) {
    if ((type as unknown) === cells) return 'cells';
    const item = type._item;
    const parent = item?.parent;
    if (type instanceof Y.Map && parent === cells && (keys.has('source') || keys.has('name') || keys.has('kind'))) return 'cells';
    if (!(type instanceof Y.Map) && parent instanceof Y.Map && parent._item?.parent === cells) {
      const id = parent.get('id'); // as readCell has it
      // A source edit; any other shared type of a cell counts as a change of the cells.
      if (item!.parentSub !== 'source' || typeof id !== 'string') return 'cells';
      edited.add(id);
    }
  }
  return edited;
}

/**
 * Whether a transaction only edited the contents of cell sources — typing, in plain or rich text —
 * and changed no cell, key, root or request. `cells` is the document's cells root.
 */
export function onlyEditsCellSources(cells: object, tr: Y.Transaction): boolean {
  if (tr.changed.size === 0) return false;
  for (const type of tr.changed.keys()) if (!insideCellSource(type, cells)) return false;
  return true;
}

function insideCellSource(type: { _item: Y.Item | null }, cells: object): boolean {
  let t = type;
  for (let depth = 0; depth < 80; depth++) {
    const item = t._item;
    if (!item) return false; // a root
    const parent = item.parent as { _item: Y.Item | null } | null;
    if (!parent) return false;
    if (parent instanceof Y.Map && parent._item?.parent === cells) return item.parentSub === 'source';
    t = parent;
  }
  return false;
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

/** Gives a cell that lost its source (an undo race) an empty one of its kind. Call inside a transaction. */
function giveSource(cell: CellView): void {
  cell.map.set('source', cell.kind === 'markdown' ? new Y.XmlFragment() : new Y.Text());
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
  else {
    const anchor = 'after' in pos ? pos.after : pos.before;
    const at = anchor === null ? -1 : cells.findIndex((c) => c.id === anchor);
    if (anchor === null) i = 'after' in pos ? 0 : cells.length;
    else if (at < 0) i = cells.length; // anchor not found (deleted concurrently): append
    else i = 'after' in pos ? at + 1 : at;
  }
  const before = i > 0 ? cells[i - 1]!.order : null;
  const after = i < cells.length ? cells[i]!.order : null;
  if (before !== null && before === after) {
    // The neighbours are tied (same key, ordered by id): no key sorts strictly between them, and
    // orderKeyBetween(k, k) would land after *every* key of k's integer part, far from here. Land
    // just outside the tied run instead, on the anchor's side: before it for `before`, else after.
    if ('before' in pos) {
      let j = i - 1;
      while (j >= 0 && cells[j]!.order === before) j--;
      return orderKeyBetween(j >= 0 ? cells[j]!.order : null, before);
    }
    let j = i;
    while (j < cells.length && cells[j]!.order === before) j++;
    return orderKeyBetween(before, j < cells.length ? cells[j]!.order : null);
  }
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
    done = true;
    // Before or after itself is where it already is (the cell is not among `others`, so this
    // would otherwise read as a deleted anchor and append it).
    if (('after' in to && to.after === id) || ('before' in to && to.before === id)) return;
    const others = listCells(doc).filter((c) => c.id !== id);
    cell.map.set('order', orderKeyFor(others, to));
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
 * the cell survives). For markdown cells only the top-level blocks whose markdown differs are
 * replaced (concurrent edits of other blocks survive).
 */
export function setCellSource(doc: Y.Doc, id: CellId | string, text: string, origin: Origin): boolean {
  const cell = getCell(doc, id);
  if (!cell) return false;
  doc.transact(() => {
    if (!cellText(cell) && !cellFragment(cell)) giveSource(cell);
    const t = cellText(cell);
    if (t) {
      applyTextDiff(t, text);
      return;
    }
    const f = cellFragment(cell);
    // Only the blocks that changed are replaced: rebuilding the whole fragment made two concurrent
    // edits of one markdown cell converge to both full copies of it, one after the other.
    if (f) updateFragmentMarkdown(f, text);
  }, origin);
  return true;
}

/** Inserts text at an offset of a code/SQL cell (what a keystroke does). */
export function insertCellText(doc: Y.Doc, id: CellId | string, index: number, text: string, origin: Origin): boolean {
  const cell = getCell(doc, id);
  if (!cell || cell.kind === 'markdown') return false;
  doc.transact(() => {
    // A code or SQL cell that lost its source to an undo race gets an empty one to type into.
    if (!cellText(cell) && !cellFragment(cell)) giveSource(cell);
    const t = cellText(cell);
    if (t) t.insert(Math.max(0, Math.min(t.length, index)), text);
  }, origin);
  return cellText(cell) !== undefined;
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
  if (cell.kind === kind) {
    // Already that kind by its source (see effectiveKind); repair a stale or missing `kind` (or a
    // missing source) if a race left one.
    const missing = !cellText(cell) && !cellFragment(cell);
    if (cell.map.get('kind') !== kind || missing)
      doc.transact(() => {
        cell.map.set('kind', kind);
        if (missing) giveSource(cell);
      }, origin);
    return true;
  }
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
