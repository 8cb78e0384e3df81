/**
 * The notebook's first cells as the server read them (`GET /api/workspaces/:id/first-screen`),
 * shown while the document still syncs: text only, read-only, in the cells' own frames, so the
 * page has something to read at once and the real cells take their places when the document is
 * there (speed issue, gap 3). Outputs are short text or a label; nothing is rendered as HTML.
 */
import { createContext, useContext, useLayoutEffect } from 'react';
import { languageLabel, type FirstScreen, type FirstScreenCell } from '@plexus/shared';
import { KIND_LABEL } from './CellToolbar.tsx';

/** The first screen of the workspace being opened, once it has come (null before, or without one). */
export const FirstScreenContext = createContext<FirstScreen | null>(null);

export const useFirstScreen = (): FirstScreen | null => useContext(FirstScreenContext);

const KIND_SHORT: Record<FirstScreenCell['kind'], string> = { markdown: 'md', code: 'js', sql: 'sql' };

function FirstScreenCellView({ cell, index, total }: { cell: FirstScreenCell; index: number; total: number }) {
  // Markdown blocks are separated by blank lines in the source but not on screen (as CellPlaceholder).
  const text = cell.kind === 'markdown' ? cell.source.replace(/\n\s*\n/g, '\n') : cell.source;
  return (
    <section
      className={`cell cell-${cell.kind} is-first-screen`}
      data-testid="first-screen-cell"
      data-cell-id={cell.id}
      aria-label={`${KIND_LABEL[cell.kind]} cell ${index + 1} of ${total} (loading)`}
    >
      <div className="cell-gutter" title={KIND_LABEL[cell.kind]}>
        <span className="cell-kind-tag">{cell.language ? (cell.language === 'python' ? 'py' : cell.language.slice(0, 3)) : KIND_SHORT[cell.kind]}</span>
        <span className="cell-index">{index + 1}</span>
      </div>
      <div className="cell-main">
        {cell.language && <div className="cell-head cell-foreign">{languageLabel(cell.language)} — not runnable in Plexus</div>}
        {cell.kind === 'sql' && cell.name && <div className="cell-head first-screen-name">{cell.name}</div>}
        <pre className={`cell-preview cell-preview-${cell.kind}`}>
          {text || ' '}
          {cell.truncated ? '\n…' : ''}
        </pre>
        {cell.outputs.length > 0 && (
          <div className="first-screen-outputs">
            {cell.outputs.map((o, i) => (
              <pre key={i} className={`first-screen-output is-${o.kind}${o.kind === 'text' && o.stream === 'stderr' ? ' is-stderr' : ''}`}>
                {o.text}
              </pre>
            ))}
          </div>
        )}
      </div>
    </section>
  );
}

export function FirstScreenView({ screen }: { screen: FirstScreen }) {
  // A mark for measurements (DevTools, bench/browser-load.ts): when the first cells were shown.
  // (index.html may have drawn it, and marked it, before the bundle ran.)
  useLayoutEffect(() => {
    if (screen.cells.length && !performance.getEntriesByName('plexus:first-screen').length) performance.mark('plexus:first-screen');
  }, [screen]);
  return (
    <div className="notebook-scroll" data-testid="first-screen" aria-busy="true">
      <div className="notebook">
        <p className="first-screen-note" role="status">
          {screen.total > screen.cells.length
            ? `Showing the first ${screen.cells.length} of ${screen.total} cells while the workspace loads…`
            : 'Showing the notebook while the workspace loads…'}
        </p>
        {screen.cells.map((c, i) => (
          <FirstScreenCellView key={c.id} cell={c} index={i} total={screen.total} />
        ))}
        {screen.cells.length === 0 && <div className="notebook-empty">This notebook is empty.</div>}
      </div>
    </div>
  );
}
