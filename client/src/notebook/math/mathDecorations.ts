/**
 * A tiptap extension that shows math in markdown cells rendered with KaTeX: each `$…$` / `$$…$$`
 * span of a text block is hidden and followed by its rendering, except while the caret or the
 * selection touches it (then the TeX source is shown for editing). Decorations only: the document
 * (and so the shared Y.XmlFragment) is never changed. Images a Jupyter notebook attached to the
 * cell (`![alt](attachment:name.png)`) are shown the same way, from the cell's imported attachments.
 */
import { Extension } from '@tiptap/core';
import { Plugin, PluginKey, type EditorState } from '@tiptap/pm/state';
import { Decoration, DecorationSet } from '@tiptap/pm/view';
import { findMath, imageDataUrl, isJsonObject, type JsonObject } from '@plexus/shared';
import { renderMath } from './katex.ts';

const key = new PluginKey<DecorationSet>('plexusMath');

/** `![alt](attachment:name)` spans of a block's text. */
function findAttachments(text: string): Array<{ from: number; to: number; alt: string; name: string }> {
  return [...text.matchAll(/!\[([^\]]*)\]\(attachment:([^)\s]+)\)/g)].map((m) => ({ from: m.index ?? 0, to: (m.index ?? 0) + m[0].length, alt: m[1]!, name: m[2]! }));
}

/** A data: URL for an attachment's image (the first image MIME type of its bundle). */
function attachmentUrl(attachments: JsonObject | null, name: string): string | null {
  const bundle = attachments?.[name] ?? attachments?.[decodeURIComponent(name)];
  if (!isJsonObject(bundle)) return null;
  for (const [mime, v] of Object.entries(bundle)) {
    const data = Array.isArray(v) ? v.join('') : typeof v === 'string' ? v : null;
    const url = data !== null && mime.startsWith('image/') ? imageDataUrl(mime, data) : null;
    if (url) return url;
  }
  return null;
}

function decorations(state: EditorState, editing: () => boolean, attachments: () => JsonObject | null): DecorationSet {
  const decos: Decoration[] = [];
  const { from: selFrom, to: selTo } = state.selection;
  state.doc.descendants((node, pos) => {
    if (!node.isTextblock) return true;
    if (node.type.name === 'codeBlock') return false;
    // One character per leaf (hard breaks): offsets in this text are offsets in the block.
    const text = node.textBetween(0, node.content.size, undefined, '\ufffc');
    for (const a of findAttachments(text)) {
      const url = attachmentUrl(attachments(), a.name);
      const from = pos + 1 + a.from;
      const to = pos + 1 + a.to;
      if (!url || (editing() && selFrom <= to && selTo >= from)) continue;
      decos.push(Decoration.inline(from, to, { class: 'math-source' }));
      decos.push(
        Decoration.widget(
          to,
          () => {
            const img = document.createElement('img');
            img.className = 'md-attachment';
            img.dataset.testid = 'md-attachment';
            img.alt = a.alt;
            img.src = url;
            return img;
          },
          { side: -1, key: `a:${a.name}`, ignoreSelection: true },
        ),
      );
    }
    for (const m of findMath(text)) {
      const from = pos + 1 + m.from;
      const to = pos + 1 + m.to;
      if (editing() && selFrom <= to && selTo >= from) continue; // being edited: show the source
      decos.push(Decoration.inline(from, to, { class: 'math-source' }));
      decos.push(
        Decoration.widget(
          to,
          () => {
            const el = document.createElement(m.display ? 'div' : 'span');
            el.className = m.display ? 'math-render math-display' : 'math-render';
            el.dataset.testid = 'math';
            el.setAttribute('contenteditable', 'false');
            renderMath(el, m.tex, m.display);
            return el;
          },
          { side: -1, key: `${m.display ? 'd' : 'i'}:${m.tex}`, ignoreSelection: true },
        ),
      );
    }
    return false;
  });
  return DecorationSet.create(state.doc, decos);
}

export const MathDecorations = Extension.create<{ attachments: JsonObject | null }, { focused: boolean }>({
  name: 'plexusMath',
  addOptions() {
    return { attachments: null };
  },
  addStorage() {
    return { focused: false };
  },
  // Focus changes are not transactions: recompute so the caret's span shows its source only while
  // the editor has focus.
  onFocus() {
    this.storage.focused = true;
    this.editor.view.dispatch(this.editor.state.tr.setMeta(key, true));
  },
  onBlur() {
    this.storage.focused = false;
    this.editor.view.dispatch(this.editor.state.tr.setMeta(key, true));
  },
  addProseMirrorPlugins() {
    const editor = this.editor;
    const storage = this.storage;
    const editable = () => editor.isEditable && storage.focused;
    const attachments = () => this.options.attachments;
    return [
      new Plugin<DecorationSet>({
        key,
        state: {
          init: (_, state) => decorations(state, editable, attachments),
          apply: (tr, old, _prev, state) => (tr.docChanged || tr.selectionSet || tr.getMeta(key) ? decorations(state, editable, attachments) : old.map(tr.mapping, tr.doc)),
        },
        props: { decorations: (state) => key.getState(state) },
      }),
    ];
  },
});
