/**
 * One notebook cell: the chrome (kind gutter, toolbar, presence badges, insert bar) around either
 * the real editor or a cheap placeholder, as decided by the mount scheduler.
 */
import { lazy, memo, Suspense, useLayoutEffect, useRef, useState, type FocusEvent, type KeyboardEvent } from 'react';
import * as Y from 'yjs';
import { cellLanguage, isRunnableCell, languageLabel, readJupyterRecord, type CellKind } from '@plexus/shared';
import { useSession } from '../collab/context.tsx';
import { setFocus, usePeersOnCell } from '../collab/presenceIndex.ts';
import { CellPlaceholder, usePreview } from './CellPlaceholder.tsx';
import { CodeEditor } from './CodeEditor.tsx';
import { InsertBar } from './InsertBar.tsx';
import { CellToolbar, KIND_LABEL } from './CellToolbar.tsx';
import { useNotebook } from './controller.ts';
import type { CellItem } from './useCellList.ts';
import { useCellRun } from './run/useCellRun.ts';
import { CellRunBar } from './run/CellRunBar.tsx';
import { SqlNameInput } from './run/SqlNameInput.tsx';
import { CellOutputs } from './outputs/CellOutputs.tsx';
import { ImportedCellOutputs } from './outputs/JupyterOutputs.tsx';
import { useIsPresenterFocus } from '../presenter/usePresenter.ts';

const KIND_SHORT: Record<CellKind, string> = { markdown: 'md', code: 'js', sql: 'sql' };

/**
 * The markdown editor (tiptap and ProseMirror: a quarter of the code the page would otherwise
 * start with) comes as its own chunk, asked for once the notebook has rendered (Notebook.tsx) or
 * when a markdown cell mounts one first; the cell shows its preview meanwhile, as before it mounts.
 */
export const loadMarkdownEditor = () => import('./MarkdownEditor.tsx');
const MarkdownEditor = lazy(() => loadMarkdownEditor().then((m) => ({ default: m.MarkdownEditor })));

/** A markdown cell's preview while its editor's code is still loading. */
function MarkdownLoading({ item, height }: { item: CellItem; height: number | undefined }) {
  const preview = usePreview(item, height, true)!;
  return <CellPlaceholder kind={item.kind} preview={preview} />;
}

interface Props {
  item: CellItem;
  index: number;
  count: number;
  canEdit: boolean;
}

export const Cell = memo(function Cell({ item, index, count, canEdit }: Props) {
  const session = useSession();
  const notebook = useNotebook();
  const rootRef = useRef<HTMLElement>(null);
  const bodyRef = useRef<HTMLDivElement>(null);
  const [mounted, setMounted] = useState(() => notebook.scheduler.startsMounted(item.id));
  const peers = usePeersOnCell(session.awareness, item.id);
  const presenterHere = useIsPresenterFocus(item.id);
  // Imported code in a language Plexus does not run (Python, R, …): editable text, never run,
  // shown with the outputs it had in Jupyter.
  const runnable = isRunnableCell(item.view);
  const foreign = item.kind === 'code' && !runnable ? cellLanguage(item.view) : null;
  const imported = readJupyterRecord(item.view);
  const run = useCellRun(session.doc, item.id, item.map, runnable);
  const error = run.stale ? undefined : run.outputs.find((o) => o.type === 'error');
  const errorLine = error?.type === 'error' ? (error.line ?? null) : null;

  useLayoutEffect(() => {
    const el = rootRef.current!;
    notebook.scheduler.observe(item.id, el, setMounted);
    return () => notebook.scheduler.unobserve(item.id, el);
  }, [notebook, item.id]);

  // Remember the editor's real height so the placeholder keeps it when the editor unmounts.
  useLayoutEffect(() => {
    if (!mounted || !bodyRef.current) return;
    const body = bodyRef.current;
    const ro = new ResizeObserver(() => {
      if (body.offsetHeight > 0) notebook.heights.set(item.id, body.offsetHeight);
    });
    ro.observe(body);
    return () => ro.disconnect();
  }, [mounted, notebook, item.id]);

  const onFocus = () => {
    setFocus(session.awareness, { panel: 'notebook', cellId: item.id });
    notebook.scheduler.pin(item.id, true);
  };
  const onBlur = (e: FocusEvent) => {
    if (!rootRef.current?.contains(e.relatedTarget as Node | null)) notebook.scheduler.pin(item.id, false);
  };
  // Command mode (focus on the cell, not in its editor): Enter edits, arrows walk the cells.
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.target !== rootRef.current) return;
    if (e.key === 'Enter') {
      e.preventDefault();
      notebook.focusCell(item.id);
    } else if ((e.key === 'ArrowDown' || e.key === 'ArrowUp') && !e.altKey && !e.ctrlKey && !e.metaKey) {
      const sib = (e.key === 'ArrowDown' ? rootRef.current.nextElementSibling : rootRef.current.previousElementSibling) as HTMLElement | null;
      if (sib?.dataset.testid === 'cell') {
        e.preventDefault();
        sib.focus();
        sib.scrollIntoView({ block: 'nearest' });
      }
    }
  };

  const preview = usePreview(item, notebook.heights.get(item.id), !mounted);
  const source = item.source;
  let body;
  if (preview) body = <CellPlaceholder kind={item.kind} preview={preview} />;
  else if (item.kind === 'markdown' && source instanceof Y.XmlFragment)
    body = (
      <Suspense fallback={<MarkdownLoading item={item} height={notebook.heights.get(item.id)} />}>
        <MarkdownEditor cellId={item.id} fragment={source} readOnly={!canEdit} attachments={imported?.attachments ?? null} />
      </Suspense>
    );
  else if (item.kind !== 'markdown' && source instanceof Y.Text)
    body = <CodeEditor cellId={item.id} ytext={source} kind={item.kind} language={foreign} readOnly={!canEdit} errorLine={errorLine} />;
  else body = <div className="cell-broken">This cell’s content could not be read.</div>;

  return (
    <section
      ref={rootRef}
      className={`cell cell-${item.kind}${mounted ? ' is-mounted' : ''}${presenterHere ? ' is-presenter-focus' : ''}`}
      // Off-screen placeholders skip layout, paint and hit-testing entirely (a thousand cells
      // otherwise cost ~100 ms per keystroke); the intrinsic size keeps the scrollbar exact.
      style={preview ? { contentVisibility: 'auto', containIntrinsicSize: `auto ${preview.height + 2}px` } : undefined}
      data-testid="cell"
      data-cell-id={item.id}
      data-kind={item.kind}
      data-language={foreign ?? undefined}
      data-presenter-focus={presenterHere ? 'true' : undefined}
      tabIndex={-1}
      aria-label={`${KIND_LABEL[item.kind]} cell ${index + 1} of ${count}`}
      onFocus={onFocus}
      onBlur={onBlur}
      onKeyDown={onKeyDown}
    >
      <div className="cell-gutter" title={KIND_LABEL[item.kind]}>
        <span className="cell-kind-tag">{foreign ? (foreign === 'python' ? 'py' : foreign.slice(0, 3)) : KIND_SHORT[item.kind]}</span>
        <span className="cell-index">{index + 1}</span>
      </div>
      <div className="cell-main">
        <CellToolbar
          cellId={item.id}
          kind={item.kind}
          peers={peers}
          canEdit={canEdit}
          showKind={mounted}
          isFirst={index === 0}
          isLast={index === count - 1}
        />
        {foreign !== null && (
          <div className="cell-head cell-foreign" data-testid="cell-not-runnable">
            {imported && imported.executionCount !== null && <span className="muted">[{imported.executionCount}]</span>} {languageLabel(foreign)} — not runnable in Plexus
          </div>
        )}
        {runnable && (
          <div className="cell-head">
            <CellRunBar cellId={item.id} run={run} canEdit={canEdit} />
            {item.kind === 'sql' && <SqlNameInput cellId={item.id} name={item.name} canEdit={canEdit} />}
          </div>
        )}
        <div className="cell-body" ref={bodyRef}>
          {body}
        </div>
        {runnable && run.exec && <CellOutputs outputs={run.outputs} stale={run.stale} />}
        {item.kind !== 'markdown' && !run.exec && imported && (
          <ImportedCellOutputs view={item.view} text={source instanceof Y.Text ? source : null} outputs={imported.outputs} />
        )}
      </div>
      {canEdit && mounted && <InsertBar after={item.id} />}
    </section>
  );
});
