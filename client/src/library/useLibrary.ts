/**
 * The method library as React data: the documents of the document's `library` root and the
 * markdown cells tagged as notes (re-read when cells are added, removed or re-tagged, not on
 * every keystroke). Effects: Yjs observers.
 */
import { useMemo } from 'react';
import * as Y from 'yjs';
import { cellSource, getCell, listLibrary, noteCellName, noteCells, roots, type LibraryDoc } from '@plexus/shared';
import { useYVersion } from '../collab/useY.ts';

export function useLibraryDocs(doc: Y.Doc): LibraryDoc[] {
  const v = useYVersion(roots(doc).library);
  return useMemo(() => listLibrary(doc), [doc, v]);
}

export interface NoteCellItem {
  id: string;
  index: number;
  /** Its first heading, else "note cell <n>" (what the agent cites). */
  name: string;
}

export function useNoteCells(doc: Y.Doc): NoteCellItem[] {
  const cells = roots(doc).cells;
  // Cells added or removed, or a key of a cell changed (its tags among them); text edits are not.
  const v = useYVersion(cells, true, (events) => events.some((e) => e.target === cells || (e.target instanceof Y.Map && e.target.parent === cells)));
  return useMemo(
    () =>
      noteCells(doc).map(({ id, index }) => {
        const cell = getCell(doc, id);
        return { id, index, name: noteCellName(cell ? cellSource(cell) : '', index) };
      }),
    [doc, v],
  );
}
