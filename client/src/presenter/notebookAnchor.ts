/**
 * The notebook anchor in this page: read where the notebook is scrolled to (top visible cell and
 * the fraction of it scrolled past) and scroll to someone else's anchor. The rules are
 * `anchorIn` / `scrollTopFor` in @plexus/shared; this file only measures the DOM. Effects: reads
 * layout, sets the scroll position, has the notebook render down to an anchor's cell.
 */
import { anchorIn, scrollTopFor, type CellBox, type NotebookAnchor } from '@plexus/shared';
import { revealCell } from '../notebook/reveal.ts';

const CELL_SELECTOR = '[data-testid="cell"]';

/** A cell's box in the scrolled content of `scroller` (px from the content's top). */
function boxOf(scroller: HTMLElement, el: HTMLElement): CellBox {
  const r = el.getBoundingClientRect();
  const top = r.top - scroller.getBoundingClientRect().top + scroller.scrollTop;
  return { id: el.dataset.cellId ?? '', top, height: r.height };
}

/** Where `scroller` is: measures only the cells the binary search visits. */
export function readAnchor(scroller: HTMLElement): NotebookAnchor | null {
  const cells = scroller.querySelectorAll<HTMLElement>(CELL_SELECTOR);
  return anchorIn(cells.length, (i) => boxOf(scroller, cells[i]!), scroller.scrollTop);
}

/** The scroll position of `anchor` in this page, or null while its cell is not rendered here. */
export function anchorScrollTop(scroller: HTMLElement, anchor: NotebookAnchor): number | null {
  const el = scroller.querySelector<HTMLElement>(`${CELL_SELECTOR}[data-cell-id="${CSS.escape(anchor.cellId)}"]`);
  if (!el) return null;
  const max = scroller.scrollHeight - scroller.clientHeight;
  return Math.max(0, Math.min(max, Math.round(scrollTopFor(anchor, boxOf(scroller, el)))));
}

/**
 * Scrolls `scroller` so `anchor` is at the top (if it is not there already). A cell further down
 * than the notebook has rendered is rendered first (the caller applies the anchor again for a few
 * frames).
 */
export function scrollToAnchor(scroller: HTMLElement, anchor: NotebookAnchor): void {
  const top = anchorScrollTop(scroller, anchor);
  if (top === null) return revealCell(anchor.cellId, { scroll: false });
  if (Math.abs(scroller.scrollTop - top) > 1) scroller.scrollTop = top;
}
