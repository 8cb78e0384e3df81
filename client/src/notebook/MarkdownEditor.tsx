/**
 * tiptap editor for markdown cells, bound to the cell's Y.XmlFragment. StarterKit's own history
 * is off (undo goes through Yjs: the Collaboration extension's undo manager tracks only this
 * editor's binding). Remote carets come from CollaborationCaret, fed a view of the awareness
 * in which its `cursor` field is `tiptapCursor` (see collab/caretAwareness.ts).
 */
import { useEffect, useMemo } from 'react';
import type * as Y from 'yjs';
import type { JsonObject } from '@plexus/shared';
import { EditorContent, useEditor } from '@tiptap/react';
import StarterKit from '@tiptap/starter-kit';
import Collaboration from '@tiptap/extension-collaboration';
import CollaborationCaret from '@tiptap/extension-collaboration-caret';
import { useSession } from '../collab/context.tsx';
import { tiptapCaretAwareness } from '../collab/caretAwareness.ts';
import { setFocus } from '../collab/presenceIndex.ts';
import { useNotebook } from './controller.ts';
import { MathDecorations } from './math/mathDecorations.ts';

/** A remote caret: a coloured bar with the person's name above it. */
function renderCaret(user: Record<string, any>): HTMLElement {
  const caret = document.createElement('span');
  caret.className = 'remote-caret';
  caret.style.borderColor = user.color;
  const label = document.createElement('span');
  label.className = 'remote-caret-label';
  label.style.backgroundColor = user.color;
  label.textContent = String(user.name ?? 'Someone');
  caret.append(label);
  return caret;
}

function renderSelection(user: Record<string, any>) {
  const c = typeof user.color === 'string' && /^#[0-9a-f]{6}$/i.test(user.color) ? user.color : '#888888';
  return { style: `background-color: ${c}33`, class: 'remote-selection' };
}

interface Props {
  cellId: string;
  fragment: Y.XmlFragment;
  readOnly: boolean;
  /** Images a Jupyter notebook attached to this cell (mime bundles by file name). */
  attachments?: JsonObject | null;
}

export function MarkdownEditor({ cellId, fragment, readOnly, attachments = null }: Props) {
  const session = useSession();
  const notebook = useNotebook();
  const caretAwareness = useMemo(() => tiptapCaretAwareness(session.awareness, fragment), [session, fragment]);

  const editor = useEditor(
    {
      extensions: [
        // trailingNode would append a paragraph to the shared document on mount (also for viewers,
        // and twice when two people open the cell at once): keep the document as people wrote it.
        StarterKit.configure({ undoRedo: false, trailingNode: false, link: { openOnClick: false } }),
        Collaboration.configure({ fragment }),
        // $…$ and $$…$$ shown rendered with KaTeX (decorations only; the text stays as written).
        MathDecorations.configure({ attachments }),
        CollaborationCaret.configure({
          provider: { awareness: caretAwareness },
          user: {},
          render: renderCaret,
          selectionRender: renderSelection,
        }),
      ],
      editable: !readOnly,
      immediatelyRender: true,
      // The cell renders nothing from the editor state: no React work per keystroke.
      shouldRerenderOnTransaction: false,
      editorProps: { attributes: { 'aria-label': 'Markdown cell', spellcheck: 'true' } },
      onFocus: () => setFocus(session.awareness, { panel: 'notebook', cellId }),
    },
    [fragment, caretAwareness, attachments],
  );

  useEffect(() => {
    if (editor && editor.isEditable === readOnly) editor.setEditable(!readOnly, false);
  }, [editor, readOnly]);

  useEffect(() => {
    if (!editor) return;
    // An editor useEditor has already replaced (its options changed while it mounted) says so:
    // the focus waits for the one that replaces it.
    return notebook.registerEditor(cellId, { focus: () => !editor.isDestroyed && editor.commands.focus() });
  }, [editor, notebook, cellId]);

  return <EditorContent editor={editor} className="md-editor" />;
}
