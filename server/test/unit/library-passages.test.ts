/**
 * The library's passages: markdown split at headings with heading paths (fences and setext
 * headings understood), long sections split at paragraph boundaries within the limit, tiny ones
 * merged; plain text grouped by paragraphs; PDF text per page; what uploads are refused for.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PASSAGE_CHARS, markdownPassages, pdfPassages, splitLong, textPassages, PAGE_BREAK } from '../../src/library/passages.ts';
import { LibraryError, checkContent, formatFromName } from '../../src/library/formats.ts';
import { builtinNotes } from '../../src/library/builtins.ts';

const para = (word: string, n: number) => Array.from({ length: n }, (_, i) => `${word}${i}`).join(' ') + '.';

describe('markdown passages', () => {
  it('one passage per section, named by its heading path', () => {
    const md = [
      '# Neuropil',
      '',
      '## Annulus',
      '',
      para('ring', 40),
      '',
      '## Subtraction',
      '',
      para('coefficient', 30),
      '',
      '### Estimating r',
      '',
      para('vessel', 40),
      '',
      '## Checks',
      '',
      para('check', 40),
    ].join('\n');
    const ps = markdownPassages(md);
    expect(ps.map((p) => p.heading)).toEqual(['Neuropil > Annulus', 'Neuropil > Subtraction', 'Neuropil > Subtraction > Estimating r', 'Neuropil > Checks']);
    expect(ps[1]!.text).toContain('coefficient0');
    expect(ps[1]!.text).not.toContain('vessel0');
    expect(ps[2]!.text.startsWith('vessel0')).toBe(true);
  });

  it('a heading inside a code fence is text; setext headings and inline markup in headings are understood', () => {
    const md = ['Title', '=====', '', para('intro', 40), '', '```', '# not a heading', '```', '', 'The **Method**', '---', '', para('body', 40)].join('\n');
    const ps = markdownPassages(md);
    expect(ps.map((p) => p.heading)).toEqual(['Title', 'Title > The Method']);
    expect(ps[0]!.text).toContain('# not a heading');
  });

  it('long sections split at paragraph boundaries, every piece within the limit and under its heading', () => {
    const paragraphs = Array.from({ length: 12 }, (_, i) => para(`p${i}w`, 30));
    const ps = markdownPassages(`# Doc\n\n## Long\n\n${paragraphs.join('\n\n')}`);
    expect(ps.length).toBeGreaterThan(1);
    for (const p of ps) {
      expect(p.heading).toBe('Doc > Long');
      expect(p.text.length).toBeLessThanOrEqual(MAX_PASSAGE_CHARS);
    }
    // No paragraph was cut: each piece is whole paragraphs.
    for (const p of ps) for (const piece of p.text.split('\n\n')) expect(paragraphs).toContain(piece);
    expect(ps.map((p) => p.text).join('\n\n')).toBe(paragraphs.join('\n\n'));
  });

  it('one paragraph longer than the limit splits at sentences, then words', () => {
    const sentences = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} talks about baseline drift.`).join(' ');
    const pieces = splitLong(sentences, 300);
    expect(pieces.length).toBeGreaterThan(3);
    for (const p of pieces) {
      expect(p.length).toBeLessThanOrEqual(300);
      expect(p.endsWith('.')).toBe(true);
    }
    const word = 'x'.repeat(700);
    expect(splitLong(word, 300).map((p) => p.length)).toEqual([300, 300, 100]);
  });

  it('tiny sections merge into a neighbour, keeping their heading as a line of text', () => {
    const md = ['# Doc', '', '## Big', '', para('big', 60), '', '## Tiny', '', 'Just one line.', '', '## Other', '', para('other', 60)].join('\n');
    const ps = markdownPassages(md);
    expect(ps.map((p) => p.heading)).toEqual(['Doc > Big', 'Doc > Other']);
    expect(ps[0]!.text).toContain('Tiny:\nJust one line.');
  });

  it('the shipped notes split into their sections', () => {
    const notes = builtinNotes();
    expect(notes.map((n) => n.name)).toEqual(['deconvolution.md', 'dff.md', 'motion-correction.md', 'neuropil.md', 'roi-detection.md', 'statistics-pitfalls.md']);
    const neuropil = notes.find((n) => n.name === 'neuropil.md')!;
    expect(neuropil.passages.map((p) => p.heading)).toContain('Neuropil contamination and its correction > Subtraction with a coefficient r');
    for (const n of notes) for (const p of n.passages) expect(p.text.length).toBeLessThanOrEqual(MAX_PASSAGE_CHARS);
  });
});

describe('plain text and PDF passages', () => {
  it('plain text: paragraphs grouped up to the limit, never cut inside a paragraph', () => {
    const paragraphs = Array.from({ length: 20 }, (_, i) => para(`t${i}x`, 25));
    const ps = textPassages(paragraphs.join('\r\n\r\n'));
    expect(ps.length).toBeGreaterThan(1);
    expect(ps.every((p) => p.heading === '' && p.text.length <= MAX_PASSAGE_CHARS)).toBe(true);
    expect(ps.map((p) => p.text).join('\n\n')).toBe(paragraphs.join('\n\n'));
    expect(textPassages('  \n\n ')).toEqual([]);
  });

  it('PDF text: passages per page, headed with the page; short pages join their neighbour', () => {
    const text = [para('first', 60), 'short page', para('third', 60)].join(PAGE_BREAK);
    const ps = pdfPassages(text);
    expect(ps.map((p) => p.heading)).toEqual(['pages 1–2', 'page 3']);
    expect(ps[0]!.text).toContain('short page');
  });
});

describe('what the library accepts', () => {
  const refused = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(LibraryError);
      expect((e as LibraryError).status).toBe(400);
      return (e as LibraryError).message;
    }
    throw new Error('not refused');
  };
  it('by extension', () => {
    expect(formatFromName('Motion.MD')).toBe('md');
    expect(formatFromName('notes.markdown')).toBe('md');
    expect(formatFromName('a.txt')).toBe('txt');
    expect(formatFromName('paper.pdf')).toBe('pdf');
    expect(refused(() => formatFromName('setup.exe'))).toMatch(/markdown \(\.md\), plain text \(\.txt\) and PDF/);
    expect(refused(() => formatFromName('../etc/passwd.txt'))).toMatch(/not a plain file name/);
    expect(refused(() => formatFromName('README'))).toMatch(/the library takes/);
  });
  it('by content', () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    expect(checkContent('a.md', 'md', enc('\ufeff# Title\n\ntext'))).toBe('# Title\n\ntext');
    expect(checkContent('a.pdf', 'pdf', enc('%PDF-1.7\n…'))).toBeNull();
    expect(refused(() => checkContent('a.pdf', 'pdf', enc('<html>not a pdf</html>')))).toMatch(/not a PDF/);
    expect(refused(() => checkContent('a.txt', 'txt', new Uint8Array([0xff, 0xfe, 0x41, 0x00])))).toMatch(/not UTF-8/);
    expect(refused(() => checkContent('a.txt', 'txt', enc('abc\0def')))).toMatch(/binary/);
    expect(refused(() => checkContent('a.md', 'md', new Uint8Array()))).toMatch(/empty/);
  });
});
