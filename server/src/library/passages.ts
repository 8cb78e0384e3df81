/**
 * Splits library documents into the passages the index holds and the agent cites: markdown at its
 * headings (each passage carries its heading path, "Neuropil contamination > Subtraction with a
 * coefficient r"), plain text by paragraphs, PDF text page by page ("page 3"). Sections longer
 * than MAX_PASSAGE_CHARS are split at paragraph boundaries (then sentences, then words); sections
 * shorter than MIN_PASSAGE_CHARS are merged into a neighbour of the same document.
 * Written by hand rather than with a markdown parser: headings and fences are all it needs, and
 * the markdown here is people's notes and cells (shared/src/markdown.ts writes ATX headings).
 * Pure module.
 */

export interface Passage {
  /** Heading path ("Title > Section"), "page 3" for PDFs, '' for plain text. */
  heading: string;
  text: string;
}

export const MAX_PASSAGE_CHARS = 1200;
export const MIN_PASSAGE_CHARS = 200;

/** The text of a PDF as stored: pages separated by form feeds (page numbers survive). */
export const PAGE_BREAK = '\f';

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;

/** Inline markdown left out of a heading's name (emphasis, code, links). */
function plainHeading(s: string): string {
  return s
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

interface Section {
  path: string[];
  lines: string[];
}

/** Splits text longer than `max` at paragraph, then sentence, then word boundaries. */
export function splitLong(text: string, max = MAX_PASSAGE_CHARS): string[] {
  if (text.length <= max) return [text];
  const out: string[] = [];
  let cur = '';
  const flush = () => {
    if (cur.trim()) out.push(cur.trim());
    cur = '';
  };
  const add = (piece: string, sep: string) => {
    if (!cur) cur = piece;
    else if (cur.length + sep.length + piece.length <= max) cur += sep + piece;
    else {
      flush();
      cur = piece;
    }
  };
  for (const para of text.split(/\n[ \t]*\n+/)) {
    if (para.length <= max) {
      add(para, '\n\n');
      continue;
    }
    // One paragraph longer than a passage: by sentences, and a sentence too long by words.
    for (const sentence of para.split(/(?<=[.!?])\s+(?=\S)/)) {
      if (sentence.length <= max) {
        add(sentence, ' ');
        continue;
      }
      for (const word of sentence.split(/\s+/)) {
        if (word.length <= max) add(word, ' ');
        else for (let i = 0; i < word.length; i += max) add(word.slice(i, i + max), ' ');
      }
    }
  }
  flush();
  return out;
}

/**
 * Merges passages shorter than `min` with the previous one when the result stays within `max`.
 * The merged passage takes the heading of the longer part; the other part's heading is kept as a
 * line of the text, so its words still count.
 */
function mergeTiny(passages: Passage[], min: number, max: number, label: (p: Passage) => string): Passage[] {
  const out: Passage[] = [];
  const labelled = (p: Passage, kept: string) => (p.heading !== kept && label(p) ? `${label(p)}\n${p.text}` : p.text);
  for (const p of passages) {
    const prev = out[out.length - 1];
    if (prev && (p.text.length < min || prev.text.length < min) && prev.text.length + p.text.length + 2 <= max) {
      const heading = p.text.length > prev.text.length ? p.heading : prev.heading;
      out[out.length - 1] = { heading, text: `${labelled(prev, heading)}\n\n${labelled(p, heading)}` };
    } else out.push(p);
  }
  return out;
}

/** Markdown: a passage per section (heading path + text), long ones split, tiny ones merged. */
export function markdownPassages(markdown: string, opts: { max?: number; min?: number } = {}): Passage[] {
  const max = opts.max ?? MAX_PASSAGE_CHARS;
  const min = opts.min ?? MIN_PASSAGE_CHARS;
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const sections: Section[] = [];
  const stack: Array<{ level: number; name: string }> = [];
  let cur: Section = { path: [], lines: [] };
  let fence: string | null = null;
  const open = (level: number, name: string) => {
    sections.push(cur);
    while (stack.length && stack[stack.length - 1]!.level >= level) stack.pop();
    stack.push({ level, name });
    cur = { path: stack.map((s) => s.name), lines: [] };
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const f = FENCE.exec(line);
    if (fence) {
      if (f && f[1]!.startsWith(fence)) fence = null;
      cur.lines.push(line);
      continue;
    }
    if (f) {
      fence = f[1]!;
      cur.lines.push(line);
      continue;
    }
    const atx = ATX.exec(line);
    if (atx) {
      const name = plainHeading(atx[2] ?? '');
      if (name) {
        open(atx[1]!.length, name);
        continue;
      }
    }
    // Setext headings: a line of text underlined with === (level 1) or --- (level 2).
    const next = lines[i + 1];
    if (next !== undefined && /^ {0,3}(=+|-+)[ \t]*$/.test(next) && line.trim() && !/^\s*([-*+]|\d+[.)])\s/.test(line) && (cur.lines.length === 0 || !cur.lines[cur.lines.length - 1]!.trim())) {
      open(next.trim().startsWith('=') ? 1 : 2, plainHeading(line));
      i++;
      continue;
    }
    cur.lines.push(line);
  }
  sections.push(cur);
  const passages: Passage[] = [];
  for (const s of sections) {
    const text = s.lines.join('\n').replace(/\n{3,}/g, '\n\n').trim();
    if (!text) continue;
    const heading = s.path.join(' > ');
    for (const piece of splitLong(text, max)) passages.push({ heading, text: piece });
  }
  // A merged section keeps its own heading line in the text, so its words still count.
  return mergeTiny(passages, min, max, (p) => (p.heading ? `${p.heading.split(' > ').pop()}:` : ''));
}

/** Plain text: paragraphs grouped into passages of at most `max` characters. */
export function textPassages(text: string, opts: { max?: number; heading?: string } = {}): Passage[] {
  const max = opts.max ?? MAX_PASSAGE_CHARS;
  const clean = text.replace(/\r\n?/g, '\n').replace(/[ \t]+\n/g, '\n').trim();
  if (!clean) return [];
  return splitLong(clean, max).map((t) => ({ heading: opts.heading ?? '', text: t }));
}

/** PDF text (pages separated by PAGE_BREAK): each page's paragraphs grouped, headed "page N". */
export function pdfPassages(text: string, opts: { max?: number; min?: number } = {}): Passage[] {
  const max = opts.max ?? MAX_PASSAGE_CHARS;
  const min = opts.min ?? MIN_PASSAGE_CHARS;
  const out: Passage[] = [];
  text.split(PAGE_BREAK).forEach((page, i) => out.push(...textPassages(page, { max, heading: `page ${i + 1}` })));
  // A short page joins the previous one: "page 3" then names both pages.
  const merged: Passage[] = [];
  for (const p of out) {
    const prev = merged[merged.length - 1];
    if (prev && (p.text.length < min || prev.text.length < min) && prev.text.length + p.text.length + 2 <= max && p.heading !== prev.heading) {
      const first = prev.heading.replace(/^pages? /, '').split('–')[0];
      merged[merged.length - 1] = { heading: `pages ${first}–${p.heading.replace(/^page /, '')}`, text: `${prev.text}\n\n${p.text}` };
    } else merged.push(p);
  }
  return merged;
}

export type PassageFormat = 'md' | 'txt' | 'pdf';

/** The passages of a document's text in its format. */
export function passagesOf(format: PassageFormat, text: string): Passage[] {
  if (format === 'md') return markdownPassages(text);
  if (format === 'pdf') return pdfPassages(text);
  return textPassages(text);
}
