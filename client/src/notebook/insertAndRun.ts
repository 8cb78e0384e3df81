/** Inserting a prepared cell for the local person: below the focused cell (or at the end), run, scrolled into view. */
import { createCell, listCells, requestRun, type CellId, type PresenceState } from '@plexus/shared';
import type { WorkspaceSession } from '../collab/session.ts';
import { requesterOf } from './run/requester.ts';
import { revealCell } from './reveal.ts';

/** Inserts a cell below the focused cell (or at the end), runs it and scrolls it into view. Returns its id. */
export function insertCellBelowFocusAndRun(session: WorkspaceSession, cell: { kind: 'sql'; name?: string; source: string } | { kind: 'code'; source: string }): string {
  const focused = (session.awareness.getLocalState() as PresenceState | null)?.focus?.cellId ?? null;
  const cells = listCells(session.doc);
  const after = focused && cells.some((c) => c.id === focused) ? { after: focused as CellId } : undefined;
  session.undoManager.stopCapturing();
  const id = createCell(session.doc, { ...cell, author: session.origin.userId, position: after }, session.origin);
  requestRun(session.doc, id, requesterOf(session), session.origin);
  revealCell(id);
  return id;
}
