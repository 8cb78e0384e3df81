/**
 * Restore as a change: makes the live document's notebook (one cell, or all of it) and viewer
 * match a checkpoint through ordinary minimal edits with the restorer's origin — text diffs in
 * code and SQL cells, changed blocks only in markdown, keys set only where they differ, cells
 * re-created under their old ids or removed. Nothing is replaced wholesale, so what other people
 * type meanwhile merges in, connected clients keep their editors, and the restorer's undo manager
 * takes the whole restore back as one step.
 *
 * What a restore does not bring back: run results (outputs are the kernel's: restored cells whose
 * source changed become stale and re-run as usual), the chat, agent runs, analyses, tables, atlas
 * maps, and the records only the server writes (an imported Jupyter cell's original JSON).
 * Pure module.
 */
import * as Y from 'yjs';
import { cellFragment, cellText, getCell, listCells, type CellView } from '../cells.ts';
import { fragmentToMarkdown, updateFragmentMarkdown } from '../markdown.ts';
import type { Origin } from '../origin.ts';
import { roots } from '../schema.ts';
import { applyTextDiff } from '../text-diff.ts';
import { readViewerState, replaceViewerState } from '../viewer/state-doc.ts';
import { jsonEqual } from '../json.ts';

export type RestoreScope = { what: 'all' } | { what: 'notebook' } | { what: 'viewer' } | { what: 'cell'; id: string };

export interface RestoreResult {
  cellsAdded: string[];
  cellsRemoved: string[];
  cellsChanged: string[];
  viewer: boolean;
}

/** Keys of a cell a person writes (and a restore sets) besides its source. */
const PLAIN_KEYS = ['kind', 'order', 'name', 'tags'] as const;

/** The checkpoint's cell as a new Y.Map for the live document (same id, author and creation time; no run results). */
function recreate(cell: CellView): Y.Map<unknown> {
  const map = new Y.Map<unknown>();
  map.set('id', cell.id);
  for (const k of ['kind', 'order', 'author', 'created', 'name', 'tags'] as const) {
    const v = cell.map.get(k);
    if (v !== undefined) map.set(k, v);
  }
  const src = cell.map.get('source');
  if (src instanceof Y.Text || src instanceof Y.XmlFragment) map.set('source', src.clone());
  return map;
}

/** Makes `live` read as `past` (both the same cell id); returns whether anything changed. */
function restoreCell(live: CellView, past: CellView): boolean {
  let changed = false;
  for (const k of PLAIN_KEYS) {
    const want = past.map.get(k);
    if (jsonEqual(live.map.get(k) as never, want as never)) continue;
    if (want === undefined) live.map.delete(k);
    else live.map.set(k, want);
    changed = true;
  }
  const pastText = cellText(past);
  const pastFrag = cellFragment(past);
  const liveText = cellText(live);
  const liveFrag = cellFragment(live);
  if (pastText && liveText) {
    if (applyTextDiff(liveText, pastText.toString()) > 0) changed = true;
  } else if (pastFrag && liveFrag) {
    if (updateFragmentMarkdown(liveFrag, fragmentToMarkdown(pastFrag))) changed = true;
  } else if (pastText || pastFrag) {
    // The kind of content changed (markdown ↔ code): the old source comes back as it was.
    live.map.set('source', (pastText ?? pastFrag)!.clone());
    changed = true;
  }
  return changed;
}

/**
 * Restores `scope` of the checkpoint document `past` into `doc` in one transaction with `origin`.
 * A cell restore of a cell the checkpoint does not have removes it; of a cell the live document
 * lost re-creates it.
 */
export function restoreCheckpoint(doc: Y.Doc, past: Y.Doc, scope: RestoreScope, origin: Origin): RestoreResult {
  const result: RestoreResult = { cellsAdded: [], cellsRemoved: [], cellsChanged: [], viewer: false };
  doc.transact(() => {
    const cells = roots(doc).cells;
    if (scope.what === 'all' || scope.what === 'notebook' || scope.what === 'cell') {
      const wanted = scope.what === 'cell' ? [getCell(past, scope.id)].filter((c): c is CellView => !!c) : listCells(past);
      for (const p of wanted) {
        const live = getCell(doc, p.id);
        if (!live) {
          cells.set(p.id, recreate(p));
          result.cellsAdded.push(p.id);
        } else if (restoreCell(live, p)) result.cellsChanged.push(p.id);
      }
      const keep = new Set<string>(wanted.map((c) => c.id));
      const extra: string[] = scope.what === 'cell' ? (keep.has(scope.id) ? [] : [scope.id].filter((id) => getCell(doc, id))) : listCells(doc).map((c) => c.id).filter((id) => !keep.has(id));
      for (const id of extra) {
        cells.delete(id);
        result.cellsRemoved.push(id);
      }
    }
    if (scope.what === 'all' || scope.what === 'viewer') {
      const want = readViewerState(past);
      if (!jsonEqual(readViewerState(doc), want)) {
        replaceViewerState(doc, want, origin);
        result.viewer = true;
      }
    }
  }, origin);
  return result;
}
