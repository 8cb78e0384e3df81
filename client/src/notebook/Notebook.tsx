/**
 * The notebook panel: every cell in `listCells` order, each a cheap placeholder until the mount
 * scheduler gives it a real editor, plus the add bar at the end.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { Cell, loadMarkdownEditor } from './Cell.tsx';
import { InsertBar } from './InsertBar.tsx';
import { MountScheduler } from './mountScheduler.ts';
import { NotebookContext, NotebookController } from './controller.ts';
import { handleNotebookKey } from './shortcuts.ts';
import { useCellList } from './useCellList.ts';
import { useAgentUi } from '../agent/agentUi.ts';
import { usePresenterNotebook } from '../presenter/usePresenter.ts';

/** Cells rendered in the first commit; the rest follow in idle-time chunks. */
const FIRST_CHUNK = 60;
const CHUNK = 150;
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
  // Progressive rendering: a thousand cells would make the first commit (and the style and
  // layout of ~15k new elements) delay the cells on screen. Render the top first, then the rest
  // when the browser is idle — after the visible editors have mounted.
  const [limit, setLimit] = useState(FIRST_CHUNK);
  useEffect(() => {
    if (!controller || limit >= cells.length) return;
    const grow = () => setLimit((l) => l + CHUNK);
    if (typeof requestIdleCallback === 'function') {
      const h = requestIdleCallback(grow, { timeout: 300 });
      return () => cancelIdleCallback(h);
    }
    const h = setTimeout(grow, 50);
    return () => clearTimeout(h);
  }, [controller, limit, cells.length]);
  const shown = limit >= cells.length ? cells : cells.slice(0, limit);

  // The markdown editor's code, asked for once the notebook is there: a cell added a moment later
  // then mounts its editor at once and takes the keys typed right after the click.
  useEffect(() => {
    if (controller) void loadMarkdownEditor().catch(() => {});
  }, [controller]);

  // The scheduler observes cells relative to the scroll container, so it is created once that
  // exists (a synchronous second render, before the first paint).
  useLayoutEffect(() => {
    const scheduler = new MountScheduler(scrollRef.current!, 800);
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
            {shown.length < cells.length && <div className="notebook-pending" style={{ height: (cells.length - shown.length) * PENDING_CELL_PX }} />}
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
