/**
 * CodeMirror 6 editor for code and SQL cells, bound to the cell's Y.Text with y-codemirror.next.
 * Each editor has its own Y.UndoManager scoped to its Y.Text and tracking only this binding's
 * origin, so Ctrl+Z undoes this browser's typing in this cell and nothing else. Ctrl+Enter runs
 * the cell, Shift+Enter runs it and moves on (editors only); the line of an error output is marked.
 */
import { EDITOR_RUN_KEYS } from './shortcuts.ts';
import { useEffect, useLayoutEffect, useRef } from 'react';
import * as Y from 'yjs';
import { Compartment, EditorState, Prec } from '@codemirror/state';
import { drawSelection, dropCursor, EditorView, highlightActiveLine, keymap, lineNumbers } from '@codemirror/view';
import { defaultKeymap, indentWithTab } from '@codemirror/commands';
import { bracketMatching, defaultHighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { javascript } from '@codemirror/lang-javascript';
import { sql } from '@codemirror/lang-sql';
import { yCollab, yUndoManagerKeymap } from 'y-codemirror.next';
import { useSession } from '../collab/context.tsx';
import { clearCodeCaret } from '../collab/caretAwareness.ts';
import { setFocus } from '../collab/presenceIndex.ts';
import { useNotebook } from './controller.ts';
import { errorLineExtension, setErrorLine } from './run/errorLine.ts';

/** Highlighting: SQL, JavaScript, or none for code Plexus does not run (imported Python, R, …). */
const language = (kind: 'code' | 'sql', foreign: string | null) => (kind === 'sql' ? sql() : foreign ? [] : javascript());

const theme = EditorView.theme({
  '&': { fontSize: '13px', backgroundColor: 'transparent' },
  '&.cm-focused': { outline: 'none' },
  '.cm-content': { fontFamily: 'var(--font-mono)', padding: '6px 0' },
  '.cm-gutters': { backgroundColor: 'transparent', border: 'none', color: 'var(--text-faint)' },
  '.cm-lineNumbers .cm-gutterElement': { minWidth: '2.2em', padding: '0 6px 0 2px' },
  '.cm-activeLine': { backgroundColor: 'transparent' },
  '&.cm-focused .cm-activeLine': { backgroundColor: 'var(--active-line)' },
  '.cm-scroller': { fontFamily: 'var(--font-mono)', lineHeight: '1.5' },
});

interface Props {
  cellId: string;
  ytext: Y.Text;
  kind: 'code' | 'sql';
  /** The language of code Plexus does not run (null: JavaScript or SQL). */
  language?: string | null;
  readOnly: boolean;
  /** Line (1-based) the cell's current error points at, if any. */
  errorLine?: number | null;
}

export function CodeEditor({ cellId, ytext, kind, language: foreign = null, readOnly, errorLine = null }: Props) {
  const session = useSession();
  const notebook = useNotebook();
  const host = useRef<HTMLDivElement>(null);
  const viewRef = useRef<EditorView | null>(null);
  const lang = useRef(new Compartment());
  const kindRef = useRef(kind);
  kindRef.current = kind;
  const foreignRef = useRef(foreign);
  foreignRef.current = foreign;

  // Layout effect: the editor exists in the same frame as its cell, so the mount scheduler's
  // time budget counts the real cost and the cell never flashes empty.
  useLayoutEffect(() => {
    const { awareness } = session;
    // Empty tracked set: yCollab adds its own binding origin, and only that is undoable here.
    const undoManager = new Y.UndoManager(ytext, { trackedOrigins: new Set() });
    const view = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: ytext.toString(),
        extensions: [
          lineNumbers(),
          // Long lines wrap: no sideways scrolling that would carry the code under the line numbers.
          EditorView.lineWrapping,
          drawSelection(),
          dropCursor(),
          highlightActiveLine(),
          indentOnInput(),
          bracketMatching(),
          syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
          lang.current.of(language(kindRef.current, foreignRef.current)),
          // Above the default keymap (Enter would insert a newline first).
          Prec.highest(
            keymap.of(
              readOnly || foreignRef.current
                ? []
                : [
                    { key: EDITOR_RUN_KEYS[0].key, run: () => (notebook.run(cellId), true) },
                    { key: EDITOR_RUN_KEYS[1].key, run: () => (notebook.runAndAdvance(cellId), true) },
                  ],
            ),
          ),
          keymap.of([...yUndoManagerKeymap, ...defaultKeymap, indentWithTab]),
          errorLineExtension,
          EditorState.readOnly.of(readOnly),
          EditorView.editable.of(!readOnly),
          EditorView.contentAttributes.of({ 'aria-label': kind === 'sql' ? 'SQL cell' : foreignRef.current ? `${foreignRef.current} code cell` : 'Code cell' }),
          yCollab(ytext, awareness, { undoManager }),
          EditorView.domEventHandlers({
            focus: () => {
              setFocus(awareness, { panel: 'notebook', cellId });
            },
            blur: () => {
              clearCodeCaret(awareness, ytext);
            },
          }),
          theme,
        ],
      }),
    });
    viewRef.current = view;
    const unregister = notebook.registerEditor(cellId, { focus: () => view.focus() });
    return () => {
      unregister();
      clearCodeCaret(awareness, ytext);
      view.destroy();
      undoManager.destroy();
      viewRef.current = null;
    };
    // `kind` is applied through the compartment below; recreating would lose focus and history.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [ytext, readOnly, session, notebook, cellId]);

  useEffect(() => {
    viewRef.current?.dispatch({ effects: lang.current.reconfigure(language(kind, foreign)) });
  }, [kind, foreign]);

  useEffect(() => {
    if (viewRef.current) setErrorLine(viewRef.current, errorLine);
  }, [errorLine, ytext, readOnly]);

  return <div className="code-editor" ref={host} />;
}
