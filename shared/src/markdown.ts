/**
 * Markdown <-> Y.XmlFragment in the node vocabulary of tiptap's StarterKit (paragraph, heading,
 * bulletList, orderedList, listItem, codeBlock, blockquote, horizontalRule; marks bold, italic,
 * code). Used to seed, import and read markdown cells outside the browser (server, agent, tests).
 * It covers the common subset, not all of CommonMark. Pure module.
 */
import * as Y from 'yjs';

type Attrs = Record<string, unknown>;

function inlineToText(xmlText: Y.XmlText, line: string): void {
  // **bold**, *italic* / _italic_, `code`. As in CommonMark, `_` only delimits at word boundaries:
  // `my_var_name` is an identifier, not "my" + italic "var" + "name" (which renders as my*var*name).
  // Math (`$…$`, `$$…$$`, as Jupyter writes it) and backslash escapes are kept verbatim: `z_{3,4}`
  // inside math is a subscript, never emphasis.
  const re = /(\\[\\`*_$]|\$\$[\s\S]+?\$\$|(?<![\\$])\$(?=[^\s$])[^$\n]*?[^\s\\$]\$(?!\$)|(?<![\\$])\$[^\s$]\$(?!\$)|\*\*[^*]+\*\*|`[^`]+`|\*[^*\s][^*]*\*|(?<![\p{L}\p{N}_])_[^_\s][^_]*_(?![\p{L}\p{N}_]))/gu;
  let last = 0;
  let pos = xmlText.length;
  const push = (s: string, attrs?: Attrs) => {
    if (!s) return;
    xmlText.insert(pos, s, attrs ?? {});
    pos += s.length;
  };
  for (const m of line.matchAll(re)) {
    push(line.slice(last, m.index));
    const tok = m[0];
    if (tok.startsWith('$') || tok.startsWith('\\')) push(tok);
    else if (tok.startsWith('**')) push(tok.slice(2, -2), { bold: {} });
    else if (tok.startsWith('`')) push(tok.slice(1, -1), { code: {} });
    else push(tok.slice(1, -1), { italic: {} });
    last = (m.index ?? 0) + tok.length;
  }
  push(line.slice(last));
}

function paragraph(text: string, name = 'paragraph', attrs?: Attrs): Y.XmlElement {
  const el = new Y.XmlElement(name);
  // y-tiptap stores node attributes as plain JSON values (numbers stay numbers).
  if (attrs) for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v as never);
  const t = new Y.XmlText();
  el.insert(0, [t]);
  return Object.assign(el, { __pendingText: text });
}

/** `$$` fences on a line (escaped `\$` not counted). */
const countMathFences = (line: string): number => (line.replace(/\\\$/g, '').match(/\$\$/g) ?? []).length;

/** Whether line `i` leaves a `$$` display-math block open that a later line of the cell closes. */
function opensMath(line: string, lines: string[], i: number): boolean {
  if (countMathFences(line) % 2 === 0) return false;
  for (let j = i + 1; j < lines.length; j++) if (countMathFences(lines[j]!) % 2 === 1) return true;
  return false;
}

/** Fills an (empty) fragment from markdown text. The fragment must already be in a document. */
export function markdownToFragment(frag: Y.XmlFragment, markdown: string): void {
  const blocks: Y.XmlElement[] = [];
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; ) {
    const line = lines[i]!;
    const fence = /^```(\S*)\s*$/.exec(line);
    if (fence) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !/^```\s*$/.test(lines[i]!)) body.push(lines[i++]!);
      i++;
      const el = new Y.XmlElement('codeBlock');
      if (fence[1]) el.setAttribute('language', fence[1]);
      const t = new Y.XmlText();
      el.insert(0, [t]);
      blocks.push(Object.assign(el, { __pendingText: body.join('\n'), __raw: true }));
      continue;
    }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      blocks.push(paragraph(h[2]!, 'heading', { level: h[1]!.length }));
      i++;
      continue;
    }
    if (/^(-{3,}|\*{3,})\s*$/.test(line)) {
      blocks.push(new Y.XmlElement('horizontalRule'));
      i++;
      continue;
    }
    const list = /^(\s*)([-*+]|\d+[.)])\s+/.exec(line);
    if (list) {
      const ordered = /\d/.test(list[2]!);
      const el = new Y.XmlElement(ordered ? 'orderedList' : 'bulletList');
      const items: Y.XmlElement[] = [];
      while (i < lines.length) {
        const m = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]!);
        if (!m || /\d/.test(m[2]!) !== ordered) break;
        const li = new Y.XmlElement('listItem');
        const p = paragraph(m[3]!);
        li.insert(0, [p]);
        items.push(Object.assign(li, { __child: p }));
        i++;
      }
      el.insert(0, items);
      blocks.push(Object.assign(el, { __items: items }));
      continue;
    }
    if (line.startsWith('>')) {
      const body: string[] = [];
      while (i < lines.length && lines[i]!.startsWith('>')) body.push(lines[i++]!.replace(/^>\s?/, ''));
      const el = new Y.XmlElement('blockquote');
      const p = paragraph(body.join(' '));
      el.insert(0, [p]);
      blocks.push(Object.assign(el, { __child: p }));
      continue;
    }
    if (line.trim() === '') {
      i++;
      continue;
    }
    // A paragraph; inside display math (`$$` … `$$`, closed later in the cell) lines keep their
    // newlines and nothing ends the paragraph (a `- b` line there is math, not a list).
    let para = line;
    let inMath = opensMath(line, lines, i);
    i++;
    while (i < lines.length && (inMath || (lines[i]!.trim() !== '' && !/^(#{1,6}\s|```|>|\s*([-*+]|\d+[.)])\s)/.test(lines[i]!)))) {
      para += (inMath ? '\n' : ' ') + lines[i]!;
      inMath = inMath ? countMathFences(lines[i]!) % 2 === 0 : opensMath(lines[i]!, lines, i);
      i++;
    }
    blocks.push(paragraph(para));
  }
  if (blocks.length === 0) blocks.push(paragraph(''));
  frag.insert(frag.length, blocks);
  // Text can only be filled once the elements are integrated into the document.
  const fill = (el: Y.XmlElement & { __pendingText?: string; __raw?: boolean; __child?: Y.XmlElement; __items?: Y.XmlElement[] }) => {
    if (el.__pendingText !== undefined) {
      const t = el.get(0) as Y.XmlText;
      if (el.__raw) t.insert(0, el.__pendingText);
      else inlineToText(t, el.__pendingText);
    }
    if (el.__child) fill(el.__child);
    if (el.__items) el.__items.forEach(fill);
  };
  blocks.forEach(fill);
}

function inlineToMarkdown(t: Y.XmlText): string {
  let out = '';
  for (const op of t.toDelta() as Array<{ insert: unknown; attributes?: Attrs }>) {
    if (typeof op.insert !== 'string') continue;
    const a = op.attributes ?? {};
    let s = op.insert;
    if (a.code) s = '`' + s + '`';
    if (a.italic) s = '*' + s + '*';
    if (a.bold) s = '**' + s + '**';
    out += s;
  }
  return out;
}

function blockText(el: Y.XmlElement): string {
  let s = '';
  for (const child of el.toArray()) {
    if (child instanceof Y.XmlText) s += inlineToMarkdown(child);
    else if (child instanceof Y.XmlElement) s += child.nodeName === 'hardBreak' ? '\n' : blockText(child);
  }
  return s;
}

function blockToMarkdown(el: Y.XmlElement): string {
  switch (el.nodeName) {
    case 'heading': {
      const level = Number(el.getAttribute('level') ?? 1) || 1;
      return '#'.repeat(Math.min(6, level)) + ' ' + blockText(el);
    }
    case 'codeBlock': {
      const lang = el.getAttribute('language');
      const raw = el.toArray().map((c) => (c instanceof Y.XmlText ? c.toString() : '')).join('');
      return '```' + (typeof lang === 'string' ? lang : '') + '\n' + raw + '\n```';
    }
    case 'bulletList':
    case 'orderedList':
      return el
        .toArray()
        .map((li, i) => {
          const body = li instanceof Y.XmlElement ? li.toArray().map((c) => (c instanceof Y.XmlElement ? blockText(c) : '')).join(' ') : '';
          return (el.nodeName === 'orderedList' ? `${i + 1}. ` : '- ') + body;
        })
        .join('\n');
    case 'blockquote':
      return el
        .toArray()
        .map((c) => (c instanceof Y.XmlElement ? '> ' + blockText(c) : ''))
        .join('\n');
    case 'horizontalRule':
      return '---';
    default:
      return blockText(el);
  }
}

function nodeToMarkdown(n: Y.XmlElement | Y.XmlText | Y.XmlHook): string {
  return n instanceof Y.XmlElement ? blockToMarkdown(n) : n instanceof Y.XmlText ? n.toString() : '';
}

/** Renders a fragment back to markdown text (the subset `markdownToFragment` writes). */
export function fragmentToMarkdown(frag: Y.XmlFragment): string {
  return frag.toArray().map(nodeToMarkdown).join('\n\n');
}

/**
 * Makes an (integrated) fragment read as `markdown`, replacing only the top-level blocks whose
 * markdown differs: blocks kept untouched keep their Yjs identity, so concurrent edits to them (and
 * cursors in them) survive. Returns true when it changed the fragment.
 */
export function updateFragmentMarkdown(frag: Y.XmlFragment, markdown: string): boolean {
  const scratch = new Y.Doc().getXmlFragment('scratch');
  markdownToFragment(scratch, markdown);
  const next = scratch.toArray();
  const want = next.map(nodeToMarkdown);
  const have = frag.toArray().map(nodeToMarkdown);
  let head = 0;
  while (head < have.length && head < want.length && have[head] === want[head]) head++;
  let tail = 0;
  while (tail < have.length - head && tail < want.length - head && have[have.length - 1 - tail] === want[want.length - 1 - tail]) tail++;
  if (head === have.length && head === want.length) return false;
  if (have.length - head - tail > 0) frag.delete(head, have.length - head - tail);
  const added = next.slice(head, want.length - tail).flatMap((n) => (n instanceof Y.XmlHook ? [] : [n.clone()]));
  if (added.length > 0) frag.insert(head, added);
  return true;
}

/** A math span in a block's text: `$…$` (inline) or `$$…$$` (display), as Jupyter's markdown writes it. */
export interface MathSpan {
  from: number;
  to: number;
  tex: string;
  display: boolean;
}

/**
 * The math spans of a block's text (the same rules `markdownToFragment` uses to keep math verbatim):
 * `$$…$$` may span lines; `$…$` stays on one line, does not start or end with a space, and `\$`
 * is a literal dollar.
 */
export function findMath(text: string): MathSpan[] {
  const re = /\\[\\$]|\$\$([\s\S]+?)\$\$|(?<![\\$])\$(?=[^\s$])([^$\n]*?[^\s\\$])\$(?!\$)|(?<![\\$])\$([^\s$])\$(?!\$)/g;
  const out: MathSpan[] = [];
  for (const m of text.matchAll(re)) {
    if (m[0].startsWith('\\')) continue;
    const from = m.index ?? 0;
    const display = m[1] !== undefined;
    out.push({ from, to: from + m[0].length, tex: (m[1] ?? m[2] ?? m[3] ?? '').trim(), display });
  }
  return out;
}
