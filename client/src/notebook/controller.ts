/**
 * Notebook actions and the little shared machinery of the cell list: the mount scheduler,
 * measured heights and focus handles of mounted editors. Every document write goes through the
 * @plexus/shared helpers with the session's user origin (so structural undo sees it).
 */
import { createContext, useContext } from 'react';
import {
  createCell,
  deleteCell,
  moveCellBy,
  neighbourCell,
  newCellId,
  requestRun,
  setCellKind,
  setCellName,
  type CellId,
  type CellKind,
  type CellPosition,
} from '@plexus/shared';
import type { WorkspaceSession } from '../collab/session.ts';
import type { MountScheduler } from './mountScheduler.ts';
import { requesterOf } from './run/requester.ts';
import { revealCell } from './reveal.ts';

export interface EditorHandle {
  /** false: this editor could not take the focus (already destroyed; the one replacing it will). */
  focus(): boolean | void;
}

export class NotebookController {
  /** Body heights of cells that have been rendered with a real editor (px). */
  readonly heights = new Map<string, number>();
  private handles = new Map<string, EditorHandle>();
  /** A cell whose editor should take focus as soon as it mounts (new cells, moved cells). */
  private pendingFocus: string | null = null;

  constructor(
    readonly session: WorkspaceSession,
    readonly scheduler: MountScheduler,
  ) {}

  private get doc() {
    return this.session.doc;
  }
  private get origin() {
    return this.session.origin;
  }

  registerEditor(cellId: string, handle: EditorHandle): () => void {
    this.handles.set(cellId, handle);
    if (this.pendingFocus === cellId) {
      // Synchronously, within the commit that mounted the editor: keys typed right after the
      // click that created the cell must land in it, not on the button.
      if (handle.focus() !== false) this.pendingFocus = null;
    }
    return () => {
      if (this.handles.get(cellId) === handle) this.handles.delete(cellId);
    };
  }

  /** Focuses a cell's editor, rendering the notebook down to it and mounting the editor first if needed. */
  focusCell(cellId: string): void {
    const h = this.handles.get(cellId);
    if (h) h.focus();
    else {
      this.pendingFocus = cellId;
      // Rendered already: mount its editor now; not rendered yet: with its editor when it is.
      if (cellElement(cellId)) this.scheduler.pin(cellId, true);
      else this.scheduler.mountEagerly(cellId);
    }
    revealCell(cellId);
  }

  /** Makes the next structural change its own undo step (one click, one undo). */
  private step(): void {
    this.session.undoManager.stopCapturing();
  }

  addCell(kind: CellKind, position?: CellPosition): string {
    const id = newCellId();
    this.pendingFocus = id;
    this.scheduler.mountEagerly(id);
    this.step();
    createCell(this.doc, { id, kind, author: this.session.origin.userId, position }, this.origin);
    // Below the cells rendered so far (added at the end of a long notebook): render down to it.
    revealCell(id);
    return id;
  }

  deleteCell(cellId: string): void {
    const next = neighbourCell(this.doc, cellId, 1) ?? neighbourCell(this.doc, cellId, -1);
    this.step();
    deleteCell(this.doc, cellId, this.origin);
    if (next) requestAnimationFrame(() => cellElement(next)?.focus({ preventScroll: true }));
  }

  move(cellId: string, delta: -1 | 1): void {
    const el = cellElement(cellId);
    const active = document.activeElement;
    const inEditor = !!(el && active && el.contains(active) && active !== el);
    this.step();
    if (!moveCellBy(this.doc, cellId, delta, this.origin)) return;
    // React may move the DOM node of the focused cell, which blurs it: give the focus back.
    requestAnimationFrame(() => {
      const now = cellElement(cellId);
      if (!now) return;
      if (inEditor && !now.contains(document.activeElement)) this.handles.get(cellId)?.focus();
      else if (!inEditor) now.focus({ preventScroll: true });
      now.scrollIntoView({ block: 'nearest' });
    });
  }

  /** Asks the kernel to run a cell (and its dependents). */
  run(cellId: string): void {
    requestRun(this.doc, cellId, requesterOf(this.session), this.origin);
  }

  /** Runs a cell and moves to the next one, adding a code cell when it was the last (Shift+Enter). */
  runAndAdvance(cellId: string): void {
    this.run(cellId);
    const next = neighbourCell(this.doc, cellId, 1);
    if (next) this.focusCell(next);
    else this.addCell('code', { after: cellId as CellId });
  }

  /** Renames an SQL cell (the variable other cells read its result by). */
  setName(cellId: string, name: string): void {
    setCellName(this.doc, cellId, name.trim() || null, this.origin);
  }

  setKind(cellId: string, kind: CellKind): void {
    this.step();
    setCellKind(this.doc, cellId, kind, this.origin);
  }
}

export const cellElement = (cellId: string): HTMLElement | null =>
  document.querySelector<HTMLElement>(`[data-testid="cell"][data-cell-id="${CSS.escape(cellId)}"]`);

/** The cell that holds the keyboard focus (editor or the cell itself), if any. */
export function focusedCellId(): CellId | null {
  const el = document.activeElement?.closest<HTMLElement>('[data-testid="cell"]');
  return (el?.dataset.cellId as CellId | undefined) ?? null;
}

export const NotebookContext = createContext<NotebookController | null>(null);

export function useNotebook(): NotebookController {
  const c = useContext(NotebookContext);
  if (!c) throw new Error('useNotebook outside the notebook');
  return c;
}
