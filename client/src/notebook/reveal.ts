/**
 * Bringing a cell into view when it may not be rendered yet. The notebook renders its cells from
 * the top as they come near the viewport (Notebook.tsx): a 10,000-cell notebook opens with only
 * its first screen in the page. Whatever wants a cell further down (focus moves, a cell added at
 * the end, a chat or library link, a presenter's anchor) asks the notebook to render up to it
 * first; it is scrolled into view (unless `scroll` is false) once it is in the page.
 * Effects: DOM (scrolling), the notebook's rendering.
 */
import { cellElement } from './controller.ts';

export interface RevealOptions {
  /** Where to scroll it (default 'nearest'); false: only render it (the caller positions it). */
  scroll?: ScrollLogicalPosition | false;
}

type Revealer = (cellId: string, opts: RevealOptions) => void;
let revealer: Revealer | null = null;

/** The mounted notebook takes the reveals (one notebook per page); returns its unregistration. */
export function setCellRevealer(r: Revealer): () => void {
  revealer = r;
  return () => {
    if (revealer === r) revealer = null;
  };
}

/** Renders the notebook down to `cellId` if needed, and scrolls the cell into view once it is in the page. */
export function revealCell(cellId: string, opts: RevealOptions = {}): void {
  const el = cellElement(cellId);
  if (el) {
    if (opts.scroll !== false) el.scrollIntoView({ block: opts.scroll ?? 'nearest' });
    return;
  }
  revealer?.(cellId, opts);
}
