/**
 * The small markdown subset chat messages render (the agent answers in markdown): fenced code
 * blocks, inline code, **bold**, *italic* / _italic_. Everything else stays text (the message keeps
 * its line breaks, so lists and headings read naturally). Pure: returns spans, never HTML.
 * Tolerates incomplete input while an answer streams: an unclosed fence is a code block so far,
 * unclosed emphasis stays literal.
 */

export type Block = { kind: 'text'; text: string } | { kind: 'code'; lang: string; text: string };
export type Inline = { kind: 'text' | 'bold' | 'italic' | 'code'; text: string };

/** Splits fenced code blocks (```lang … ```) from the rest. */
export function splitBlocks(src: string): Block[] {
  const out: Block[] = [];
  const fence = /(^|\n)```([\w+-]*)[^\n]*\n/g;
  let at = 0;
  for (;;) {
    fence.lastIndex = at;
    const open = fence.exec(src);
    if (!open) break;
    const start = open.index + open[1]!.length;
    const bodyStart = fence.lastIndex;
    const close = src.indexOf('\n```', bodyStart - 1);
    if (start > at) out.push({ kind: 'text', text: src.slice(at, start) });
    if (close < 0) {
      out.push({ kind: 'code', lang: open[2] ?? '', text: src.slice(bodyStart) });
      return out;
    }
    out.push({ kind: 'code', lang: open[2] ?? '', text: src.slice(bodyStart, Math.max(bodyStart, close)) });
    const after = src.indexOf('\n', close + 4);
    at = after < 0 ? src.length : after + 1;
  }
  if (at < src.length) out.push({ kind: 'text', text: src.slice(at) });
  return out;
}

// `code`, then **bold** / __bold__, then *italic* / _italic_ (markers hug non-space text).
const INLINE = /`([^`\n]+)`|\*\*(\S(?:[^*\n]*\S)?)\*\*|__(\S(?:[^_\n]*\S)?)__|(?<![\w*])\*(\S(?:[^*\n]*\S)?)\*(?![\w*])|(?<![\w_])_(\S(?:[^_\n]*\S)?)_(?![\w_])/g;

/** Inline spans of a text block. */
export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let at = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index! > at) out.push({ kind: 'text', text: text.slice(at, m.index) });
    if (m[1] !== undefined) out.push({ kind: 'code', text: m[1] });
    else if (m[2] !== undefined || m[3] !== undefined) out.push({ kind: 'bold', text: (m[2] ?? m[3])! });
    else out.push({ kind: 'italic', text: (m[4] ?? m[5])! });
    at = m.index! + m[0].length;
  }
  if (at < text.length) out.push({ kind: 'text', text: text.slice(at) });
  return out;
}

/** A link the agent writes to something in the workspace: `[cell 3](plexus:cell/<id>)`. */
export type WorkspaceLink = { kind: 'cell' | 'table' | 'view' | 'job'; id: string; label: string };
export type LinkSpan = { kind: 'text'; text: string } | { kind: 'workspace'; link: WorkspaceLink };

/** Splits out workspace links (`[label](plexus:<kind>/<id>)`); the rest stays text. Pure. */
export function splitWorkspaceLinks(text: string): LinkSpan[] {
  const out: LinkSpan[] = [];
  let at = 0;
  for (const m of text.matchAll(/\[([^\]\n]{1,200})\]\(plexus:(cell|table|view|job)\/([^)\s]{1,300})\)/g)) {
    if (m.index! > at) out.push({ kind: 'text', text: text.slice(at, m.index) });
    let id = m[3]!;
    try {
      id = decodeURIComponent(id);
    } catch {
      // not encoded: keep as written
    }
    out.push({ kind: 'workspace', link: { kind: m[2] as WorkspaceLink['kind'], id, label: m[1]! } });
    at = m.index! + m[0].length;
  }
  if (at < text.length) out.push({ kind: 'text', text: text.slice(at) });
  return out;
}

/** A span of text, or a `{{category name}}` placeholder the chat renders as a category card. */
export type PlaceholderSpan = { kind: 'text'; text: string } | { kind: 'placeholder'; name: string; raw: string };

/** Splits out `{{name}}` placeholders (1–100 characters, no braces or line breaks). Pure. */
export function splitPlaceholders(text: string): PlaceholderSpan[] {
  const out: PlaceholderSpan[] = [];
  let at = 0;
  for (const m of text.matchAll(/\{\{([^{}\n]{1,100})\}\}/g)) {
    if (m.index! > at) out.push({ kind: 'text', text: text.slice(at, m.index) });
    out.push({ kind: 'placeholder', name: m[1]!.trim(), raw: m[0] });
    at = m.index! + m[0].length;
  }
  if (at < text.length) out.push({ kind: 'text', text: text.slice(at) });
  return out;
}
