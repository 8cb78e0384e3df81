import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { fragmentToMarkdown, markdownToFragment, updateFragmentMarkdown } from '../src/index.ts';
import { syncPair } from './helpers.ts';

/** A fragment in a document of its own, filled from `md`. */
function frag(md: string, doc = new Y.Doc()): Y.XmlFragment {
  const f = doc.getXmlFragment('f');
  markdownToFragment(f, md);
  return f;
}

/** The tree as tiptap's ProseMirror schema would see it: node names, attributes, text deltas. */
type Node = { name: string; attrs?: Record<string, unknown>; children?: Node[]; delta?: unknown };
function tree(n: Y.XmlElement | Y.XmlText | Y.XmlHook): Node {
  if (n instanceof Y.XmlText) return { name: '#text', delta: n.toDelta() };
  if (!(n instanceof Y.XmlElement)) return { name: '?' };
  const attrs = n.getAttributes();
  return { name: n.nodeName, ...(Object.keys(attrs).length ? { attrs } : {}), ...(n.length ? { children: n.toArray().map(tree) } : {}) };
}
const blocks = (md: string) => frag(md).toArray().map(tree);
const para = (...delta: unknown[]): Node => ({ name: 'paragraph', children: [{ name: '#text', delta }] });

describe('markdown -> fragment: tiptap StarterKit vocabulary', () => {
  it('headings carry a numeric level', () => {
    expect(blocks('# One\n\n### Three')).toEqual([
      { name: 'heading', attrs: { level: 1 }, children: [{ name: '#text', delta: [{ insert: 'One' }] }] },
      { name: 'heading', attrs: { level: 3 }, children: [{ name: '#text', delta: [{ insert: 'Three' }] }] },
    ]);
    // ProseMirror compares attrs strictly: "2" would not be heading level 2.
    expect(typeof (frag('## Two').get(0) as Y.XmlElement).getAttribute('level')).toBe('number');
  });

  it('marks are XmlText format attributes {bold:{}}, {italic:{}}, {code:{}}', () => {
    expect(blocks('Some **bold**, *it*, _it2_ and `x = 1`.')).toEqual([
      para(
        { insert: 'Some ' },
        { insert: 'bold', attributes: { bold: {} } },
        { insert: ', ' },
        { insert: 'it', attributes: { italic: {} } },
        { insert: ', ' },
        { insert: 'it2', attributes: { italic: {} } },
        { insert: ' and ' },
        { insert: 'x = 1', attributes: { code: {} } },
        { insert: '.' },
      ),
    ]);
  });

  it('bullet and ordered lists hold listItems holding paragraphs', () => {
    const item = (t: string) => ({ name: 'listItem', children: [para({ insert: t })] });
    expect(blocks('- a\n- b\n\n1. one\n2. two')).toEqual([
      { name: 'bulletList', children: [item('a'), item('b')] },
      { name: 'orderedList', children: [item('one'), item('two')] },
    ]);
  });

  it('code fences become codeBlock with a language and raw, unformatted text', () => {
    expect(blocks('```python\nx = **not bold**\n\ny = 2\n```')).toEqual([
      { name: 'codeBlock', attrs: { language: 'python' }, children: [{ name: '#text', delta: [{ insert: 'x = **not bold**\n\ny = 2' }] }] },
    ]);
    expect(blocks('```\nplain\n```')[0]).toEqual({ name: 'codeBlock', children: [{ name: '#text', delta: [{ insert: 'plain' }] }] });
  });

  it('blockquote holds a paragraph; --- is a horizontalRule', () => {
    expect(blocks('> quoted *words*\n\n---')).toEqual([
      { name: 'blockquote', children: [para({ insert: 'quoted ' }, { insert: 'words', attributes: { italic: {} } })] },
      { name: 'horizontalRule' },
    ]);
  });

  it('an empty text is one empty paragraph (what tiptap shows for an empty doc)', () => {
    expect(blocks('')).toEqual([{ name: 'paragraph', children: [{ name: '#text', delta: [] }] }]);
    expect(fragmentToMarkdown(frag(''))).toBe('');
  });

  it('keeps underscores inside words literal (identifiers are common in notebooks)', () => {
    // Used to italicise "var", which read back as "my*var*name".
    expect(blocks('use my_var_name and __init__ here')).toEqual([para({ insert: 'use my_var_name and __init__ here' })]);
  });
});

describe('round trips', () => {
  it.each([
    ['headings', '# H1\n\n## H2\n\n###### H6'],
    ['paragraphs', 'first paragraph\n\nsecond paragraph'],
    ['marks', 'a **bold** b *italic* c `code` d'],
    ['marks in a heading', '## The **main** `result`'],
    ['bullet list', '- one\n- two **bold**\n- three'],
    ['ordered list', '1. one\n2. two\n3. three'],
    ['code fence with language', '```ts\nconst x: number = 1;\n\nconsole.log(x);\n```'],
    ['code fence without language', '```\nraw *text*\n```'],
    ['blockquote', '> a quote'],
    ['horizontal rule', 'above\n\n---\n\nbelow'],
    ['everything', '# Report\n\nIntro with *emphasis*.\n\n- a\n- b\n\n1. x\n\n```sql\nselect 1\n```\n\n> note\n\n---\n\nend'],
    ['identifiers', 'call my_func_name(snake_case)'],
  ])('%s', (_name, md) => {
    expect(fragmentToMarkdown(frag(md))).toBe(md);
  });

  it('normalises equivalent syntax to one form, which then round-trips', () => {
    const cases: Array<[string, string]> = [
      ['_it_', '*it*'],
      ['* a\n+ b', '- a\n- b'],
      ['3) x', '1. x'],
      ['line one\nline two', 'line one line two'],
      ['> a\n> b', '> a b'],
      ['a\r\n\r\nb', 'a\n\nb'],
    ];
    for (const [input, normal] of cases) {
      expect(fragmentToMarkdown(frag(input))).toBe(normal);
      expect(fragmentToMarkdown(frag(normal))).toBe(normal);
    }
  });
});

describe('updateFragmentMarkdown', () => {
  it('changes nothing when the markdown is the same, and keeps unchanged blocks', () => {
    const f = frag('# T\n\none\n\ntwo\n\nthree');
    const before = f.toArray();
    expect(updateFragmentMarkdown(f, '# T\n\none\n\ntwo\n\nthree')).toBe(false);
    expect(updateFragmentMarkdown(f, '# T\n\none\n\nTWO\n\nthree')).toBe(true);
    expect(fragmentToMarkdown(f)).toBe('# T\n\none\n\nTWO\n\nthree');
    const after = f.toArray();
    expect([after[0], after[1], after[3]]).toEqual([before[0], before[1], before[3]]); // same Yjs objects
    expect(after[2]).not.toBe(before[2]);
  });

  it('inserts and removes blocks anywhere', () => {
    const f = frag('a\n\nb');
    updateFragmentMarkdown(f, '# new\n\na\n\nmid\n\nb\n\n- end');
    expect(fragmentToMarkdown(f)).toBe('# new\n\na\n\nmid\n\nb\n\n- end');
    updateFragmentMarkdown(f, 'b');
    expect(fragmentToMarkdown(f)).toBe('b');
    updateFragmentMarkdown(f, '');
    expect(fragmentToMarkdown(f)).toBe('');
  });

  it('lets concurrent edits of different blocks merge instead of duplicating the text', () => {
    const a = new Y.Doc();
    const b = new Y.Doc();
    const fa = frag('p1\n\np2\n\np3', a);
    syncPair(a, b);
    const fb = b.getXmlFragment('f');
    updateFragmentMarkdown(fa, 'p1 by A\n\np2\n\np3');
    updateFragmentMarkdown(fb, 'p1\n\np2\n\np3 by B');
    syncPair(a, b);
    // A full rebuild gave "p1 by A\n\np2\n\np3\n\np1\n\np2\n\np3 by B".
    expect(fragmentToMarkdown(fa)).toBe('p1 by A\n\np2\n\np3 by B');
    expect(fragmentToMarkdown(fb)).toBe(fragmentToMarkdown(fa));
  });

  it('keeps formatting and attributes in the blocks it adds', () => {
    const f = frag('x');
    updateFragmentMarkdown(f, 'x\n\n## **B**\n\n```js\n1\n```');
    expect(f.toArray().slice(1).map(tree)).toEqual([
      { name: 'heading', attrs: { level: 2 }, children: [{ name: '#text', delta: [{ insert: 'B', attributes: { bold: {} } }] }] },
      { name: 'codeBlock', attrs: { language: 'js' }, children: [{ name: '#text', delta: [{ insert: '1' }] }] },
    ]);
  });
});
