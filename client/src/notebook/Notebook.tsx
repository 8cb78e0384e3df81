/**
 * The notebook panel: the cells in `listCells` order, each a cheap placeholder until the mount
 * scheduler gives it a real editor, plus the add bar at the end. Cells are rendered from the top
 * as they come near the viewport (what opening costs grows with what is on screen, not with the
 * notebook: a 10,000-cell notebook does not build 10,000 cells' DOM in the background, a long task
 * after another while people type); reveal.ts renders down to a cell wanted further on.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { Cell, loadMarkdownEditor } from './Cell.tsx';
import { InsertBar } from './InsertBar.tsx';
import { MountScheduler } from './mountScheduler.ts';
import { NotebookContext, NotebookController, cellElement } from './controller.ts';
import { setCellRevealer, type RevealOptions } from './reveal.ts';
import { handleNotebookKey } from './shortcuts.ts';
import { useCellList } from './useCellList.ts';
import { useAgentUi } from '../agent/agentUi.ts';
import { usePresenterNotebook } from '../presenter/usePresenter.ts';

/** Cells rendered in the first commit; more follow, a chunk per frame, while the end of the rendered ones is near the viewport. */
const FIRST_CHUNK = 60;
/** Cells at the top whose editors come with the notebook's first render (mountScheduler.ts, mountFirst). */
const FIRST_EDITORS = 3;
const CHUNK = 60;
/** Cells rendered a frame once the browser's find has been opened (all of them come, without one long freeze). */
const FIND_CHUNK = 250;
/** How near (px, below the viewport) the end of the rendered cells must come for more to be rendered. */
const GROW_MARGIN_PX = 1500;
/**
 * `localStorage['plexus.renderAll'] = '1'`: every cell rendered in the background after the first
 * ones, 150 per idle moment, as the page did before (bench/browser-load.ts `render-all`).
 */
const RENDER_ALL_KEY = 'plexus.renderAll';
const renderAll = (): boolean => {
  try {
    return localStorage.getItem(RENDER_ALL_KEY) === '1';
  } catch {
    return false;
  }
};
/** Height reserved per not-yet-rendered cell, so the scrollbar is roughly right meanwhile. */
const PENDING_CELL_PX = 110;

export function Notebook() {
  const session = useSession();
  const canEdit = useCanEdit();
  const cells = useCellList(session.doc);
  const scrollRef = useRef<HTMLDivElement>(null);
  const [controller, setController] = useState<NotebookController | null>(null);
  // Presenter mode: the presenter's scroll position is published from here, followers scroll here.
  usePresenterNotebook(scrollRef);
  // Rendering from the top as the cells come near: a thousand cells would make the first commit
  // (and the style and layout of ~15k new elements) delay the cells on screen, and rendering all
  // the rest in the background would keep the page busy for seconds. The top first; a chunk more
  // whenever the space standing in for the rest comes within GROW_MARGIN_PX of the viewport (the
  // observer is made anew after each chunk, and reports at once whether it still is).
  const [limit, setLimit] = useState(FIRST_CHUNK);
  const pendingRef = useRef<HTMLDivElement>(null);
  const more = cells.length > limit;
  useEffect(() => {
    const root = scrollRef.current;
    const spacer = pendingRef.current;
    if (!controller || !more || !root || !spacer) return;
    if (renderAll()) {
      const h = requestIdleCallback(() => setLimit((l) => l + 150), { timeout: 300 });
      return () => cancelIdleCallback(h);
    }
    const io = new IntersectionObserver((records) => {
      if (records.some((r) => r.isIntersecting)) setLimit((l) => l + CHUNK);
    }, { root, rootMargin: `0px 0px ${GROW_MARGIN_PX}px 0px` });
    io.observe(spacer);
    return () => io.disconnect();
  }, [controller, limit, more]);
  const shown = more ? cells.slice(0, limit) : cells;

  // The browser's own find (Ctrl+F / Cmd+F) searches the page: the first time someone opens it,
  // every cell is rendered, so it finds text in cells not scrolled to yet (the keys go on to the
  // browser as always; one an editor took for its own search is left to it). The rest comes
  // FIND_CHUNK cells a frame, so the page keeps answering meanwhile.
  const [findAll, setFindAll] = useState(false);
  useEffect(() => {
    if (!more || findAll) return;
    const onKey = (e: KeyboardEvent) => {
      if (!e.defaultPrevented && (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'f') setFindAll(true);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [more, findAll]);
  useEffect(() => {
    if (!findAll || !more) return;
    const frame = requestAnimationFrame(() => setLimit((l) => l + FIND_CHUNK));
    return () => cancelAnimationFrame(frame);
  }, [findAll, more, limit]);

  // A cell wanted further down (reveal.ts): render down to it, then scroll it into view.
  const cellsRef = useRef(cells);
  cellsRef.current = cells;
  const wanted = useRef<{ cellId: string; opts: RevealOptions; list: typeof cells } | null>(null);
  const [revealTick, setRevealTick] = useState(0);
  useEffect(() => setCellRevealer((cellId, opts) => {
    wanted.current = { cellId, opts, list: cellsRef.current };
    setRevealTick((t) => t + 1);
  }), []);
  useLayoutEffect(() => {
    const w = wanted.current;
    if (!w) return;
    const at = cellsRef.current.findIndex((c) => c.id === w.cellId);
    if (at === -1) {
      // Not in the list yet (created in the same turn): the list's next version has it. Still
      // missing after the list changed (a cell removed meanwhile): forget it.
      if (cellsRef.current !== w.list) wanted.current = null;
      return;
    }
    if (at >= limit) return setLimit(at + 1 + FIRST_CHUNK);
    wanted.current = null;
    if (w.opts.scroll !== false) cellElement(w.cellId)?.scrollIntoView({ block: w.opts.scroll ?? 'nearest' });
  }, [cells, limit, revealTick]);

  // The markdown editor's code, asked for once the notebook is there: a cell added a moment later
  // then mounts its editor at once and takes the keys typed right after the click.
  useEffect(() => {
    if (controller) void loadMarkdownEditor().catch(() => {});
  }, [controller]);

  // The scheduler observes cells relative to the scroll container, so it is created once that
  // exists (a synchronous second render, before the first paint).
  useLayoutEffect(() => {
    const scheduler = new MountScheduler(scrollRef.current!, 800);
    scheduler.mountFirst(cellsRef.current.slice(0, FIRST_EDITORS).map((c) => c.id));
    setController(new NotebookController(session, scheduler));
    return () => scheduler.destroy();
  }, [session]);

  // Chat buttons (a suggested "focus cell", an accepted new cell) bring a cell into view.
  const focusRequest = useAgentUi((s) => s.focusCell);
  useEffect(() => {
    if (controller && focusRequest) controller.focusCell(focusRequest.target);
  }, [controller, focusRequest]);

  useEffect(() => {
    const el = scrollRef.current;
    if (!el || !controller) return;
    const onKey = (e: KeyboardEvent) => {
      if (handleNotebookKey(e, controller, canEdit)) {
        e.preventDefault();
        e.stopPropagation();
      }
    };
    el.addEventListener('keydown', onKey, true);
    return () => el.removeEventListener('keydown', onKey, true);
  }, [controller, canEdit]);

  return (
    <div className="notebook-scroll" ref={scrollRef} data-testid="notebook">
      <div className="notebook">
        {controller && (
          <NotebookContext.Provider value={controller}>
            {shown.map((item, i) => (
              <Cell key={item.id} item={item} index={i} count={cells.length} canEdit={canEdit} />
            ))}
            {shown.length < cells.length && <div className="notebook-pending" ref={pendingRef} style={{ height: (cells.length - shown.length) * PENDING_CELL_PX }} />}
            {cells.length === 0 && (
              <div className="notebook-empty">
                {canEdit ? 'This notebook is empty. Add a first cell:' : 'This notebook is empty.'}
              </div>
            )}
            {canEdit && shown.length === cells.length && <InsertBar />}
          </NotebookContext.Provider>
        )}
      </div>
    </div>
  );
}
