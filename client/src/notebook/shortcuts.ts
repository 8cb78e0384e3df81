/**
 * Notebook keyboard shortcuts. Handled in the capture phase on the notebook so they win over the
 * editors' own keymaps (CodeMirror binds Shift+Alt+↑/↓ to "copy line").
 */
import type { CellKind } from '@plexus/shared';
import { focusedCellId, type NotebookController } from './controller.ts';

export interface ShortcutHelp {
  keys: string;
  what: string;
}

/** Keys bound in code and SQL editors (CodeMirror key names), with their help: one list for both. */
export const EDITOR_RUN_KEYS = [
  { key: 'Mod-Enter', keys: 'Ctrl+Enter', what: 'In a code or SQL cell: run it (and the cells that depend on it)' },
  { key: 'Shift-Enter', keys: 'Shift+Enter', what: 'In a code or SQL cell: run it and go to the next cell' },
] as const;

/** Shown in the `?` help popover. */
export const SHORTCUTS: ShortcutHelp[] = [
  ...EDITOR_RUN_KEYS.map(({ keys, what }) => ({ keys, what })),
  { keys: 'Shift+Alt+↑ / ↓', what: 'Move the current cell up / down' },
  { keys: 'Ctrl+Alt+N', what: 'New code cell below' },
  { keys: 'Ctrl+Alt+M', what: 'New markdown cell below' },
  { keys: 'Ctrl+Alt+Q', what: 'New SQL cell below' },
  { keys: 'Esc', what: 'Leave the editor (select the cell)' },
  { keys: 'Enter', what: 'Edit the selected cell' },
  { keys: '↑ / ↓', what: 'Select the previous / next cell (cell selected, not editing)' },
  { keys: 'Ctrl+Z / Ctrl+Shift+Z', what: 'In an editor: undo / redo your typing in that cell' },
  { keys: 'Ctrl+Z / Ctrl+Shift+Z', what: 'Outside editors: undo / redo your cell changes (add, delete, move, kind)' },
  { keys: 'Ctrl+F', what: 'The browser’s find: in a long notebook, every cell is rendered first so it finds them all' },
  { keys: 'Ctrl+.', what: 'Stop the newest running agent run (Esc never stops the agent)' },
  { keys: 'Ctrl+Alt+P', what: 'Present (editors), stop presenting, or stop / rejoin following the presenter' },
  { keys: '@agent', what: 'In the chat: address the agent (↑ / ↓ and Enter pick, Esc closes the list)' },
  { keys: 'Shift+drag', what: 'In the atlas: brush a rectangle on the map (shared with everyone on release)' },
  { keys: 'Esc / Delete', what: 'In the atlas: cancel the brush you are drawing / clear the shared selection' },
  { keys: '?', what: 'Show this help' },
];

const NEW_CELL_KEYS: Record<string, CellKind> = { KeyN: 'code', KeyM: 'markdown', KeyQ: 'sql' };

/** Handles a keydown in the notebook; returns true when it consumed the event. */
export function handleNotebookKey(e: KeyboardEvent, notebook: NotebookController, canEdit: boolean): boolean {
  const cellId = focusedCellId();
  if (e.key === 'Escape' && cellId) {
    const cell = document.activeElement?.closest<HTMLElement>('[data-testid="cell"]');
    if (cell && cell !== document.activeElement) {
      cell.focus({ preventScroll: true });
      return true;
    }
    return false;
  }
  if (!canEdit) return false;
  if (e.shiftKey && e.altKey && !e.ctrlKey && !e.metaKey && (e.key === 'ArrowUp' || e.key === 'ArrowDown')) {
    if (!cellId) return false;
    notebook.move(cellId, e.key === 'ArrowUp' ? -1 : 1);
    return true;
  }
  if (e.ctrlKey && e.altKey && !e.shiftKey && !e.metaKey && NEW_CELL_KEYS[e.code]) {
    notebook.addCell(NEW_CELL_KEYS[e.code]!, cellId ? { after: cellId } : undefined);
    return true;
  }
  return false;
}
