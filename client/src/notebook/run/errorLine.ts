/**
 * CodeMirror extension that marks the line an error output points at (a red line background),
 * driven by `setErrorLine(view, line | null)`. Pure CodeMirror state; no document writes.
 */
import { StateEffect, StateField, type Extension } from '@codemirror/state';
import { Decoration, EditorView, type DecorationSet } from '@codemirror/view';

const setLine = StateEffect.define<number | null>();
const mark = Decoration.line({ class: 'cm-error-line', attributes: { 'data-testid': 'editor-error-line' } });

const field = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(deco, tr) {
    let next = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (!e.is(setLine)) continue;
      const n = e.value;
      next = n !== null && n >= 1 && n <= tr.state.doc.lines ? Decoration.set([mark.range(tr.state.doc.line(n).from)]) : Decoration.none;
    }
    return next;
  },
  provide: (f) => EditorView.decorations.from(f),
});

export const errorLineExtension: Extension = field;

/** Marks line `line` (1-based) of the editor, or clears the mark with null. */
export function setErrorLine(view: EditorView, line: number | null): void {
  view.dispatch({ effects: setLine.of(line) });
}
