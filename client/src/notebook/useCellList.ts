/**
 * The notebook's structure (which cells, in which order, of which kind) as stable React data.
 * Subscribes with one observeDeep on the cells root but ignores text edits inside cells, which
 * are the vast majority of events: typing never re-renders the list.
 */
import { useMemo, useRef } from 'react';
import * as Y from 'yjs';
import { cellSourceType, listCells, roots, type CellId, type CellKind, type CellView } from '@plexus/shared';
import { useYVersion } from '../collab/useY.ts';

export interface CellItem {
  id: CellId;
  kind: CellKind;
  name?: string;
  /** The live cell map (changes identity when a deleted cell is restored by undo). */
  map: Y.Map<unknown>;
  /** The source type (Y.Text or Y.XmlFragment); replaced when the kind changes to/from markdown. */
  source: unknown;
  view: CellView;
}

const STRUCTURAL_KEYS = ['id', 'kind', 'order', 'source', 'name'];

/** True when a batch of events changes the structure (not just text inside a cell). */
function isStructural(cellsRoot: Y.Map<unknown>, events: Array<Y.YEvent<any>>): boolean {
  for (const e of events) {
    if (e.target === cellsRoot) return true;
    if (e.target instanceof Y.Map && e.target.parent === cellsRoot) {
      for (const k of (e as Y.YMapEvent<unknown>).keysChanged) if (STRUCTURAL_KEYS.includes(k)) return true;
    }
  }
  return false;
}

export function useCellList(doc: Y.Doc): CellItem[] {
  const cellsRoot = roots(doc).cells as Y.Map<unknown>;
  const version = useYVersion(cellsRoot, true, (events) => isStructural(cellsRoot, events));
  const prev = useRef(new Map<string, CellItem>());
  return useMemo(() => {
    const next = new Map<string, CellItem>();
    const items = listCells(doc).map((view) => {
      const source = cellSourceType(view);
      const old = prev.current.get(view.id);
      // Reuse the previous object when nothing visible changed, so memoised cells skip rendering.
      const item =
        old && old.map === view.map && old.kind === view.kind && old.source === source && old.name === view.name
          ? old
          : { id: view.id, kind: view.kind, name: view.name, map: view.map, source, view };
      next.set(view.id, item);
      return item;
    });
    prev.current = next;
    return items;
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [doc, version]);
}
