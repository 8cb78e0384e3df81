import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  KERNEL_ORIGIN, createCell, finishExec, getCell, initWorkspace, ipynbToCells, listCells, cellSource, notebookToHtml, notebookToIpynb,
  runSource, sourceHash, startExec, userOrigin,
} from '../src/index.ts';

const o = userOrigin('alice');

function sample(): Y.Doc {
  const doc = new Y.Doc();
  initWorkspace(doc, { title: 'Spikes <analysis>' }, o);
  createCell(doc, { kind: 'markdown', source: '# Title\n\nSome **bold** text', author: 'a' }, o);
  const js = createCell(doc, { kind: 'code', source: 'const x = "<script>alert(1)</script>";\nx', author: 'a' }, o);
  createCell(doc, { kind: 'sql', source: 'SELECT 1 AS one', author: 'a', name: 'q' }, o);
  const cell = getCell(doc, js)!;
  const src = runSource(cell);
  const run = startExec(doc, cell, { runId: 'r1', requestId: null, trigger: 'request', requestedBy: null, count: 3, generation: 1, startedAt: 1, sourceHash: sourceHash(src), source: src, defines: ['x'] }, KERNEL_ORIGIN);
  finishExec(run, {
    state: 'done',
    outputs: [
      { type: 'stream', name: 'stdout', text: 'hello\nworld\n' },
      { type: 'table', columns: [{ name: 'a', type: 'number' }], rows: [{ a: 1 }, { a: 2 }], totalRows: 10 },
      { type: 'error', name: 'TypeError', message: 'bad <thing>', line: 2 },
    ],
  }, KERNEL_ORIGIN);
  return doc;
}

describe('ipynb', () => {
  it('round-trips cells: kinds, sources and SQL names (state → ipynb → doc → state)', () => {
    const doc = sample();
    const nb = JSON.parse(JSON.stringify(notebookToIpynb(doc)));
    expect(nb.nbformat).toBe(4);
    const cells = ipynbToCells(nb);
    const copy = new Y.Doc();
    for (const c of cells) createCell(copy, { kind: c.kind, source: c.source, author: 'b', ...(c.name ? { name: c.name } : {}) }, o);
    const view = (d: Y.Doc) => listCells(d).map((c) => [c.kind, cellSource(c), c.name ?? null]);
    expect(view(copy)).toEqual(view(doc));
  });
  it('exports outputs as nbformat outputs', () => {
    const nb = notebookToIpynb(sample()) as { cells: Array<{ outputs?: any[]; execution_count?: number }> };
    const code = nb.cells[1]!;
    expect(code.execution_count).toBe(3);
    expect(code.outputs!.map((x) => x.output_type)).toEqual(['stream', 'execute_result', 'error']);
    expect(code.outputs![0].text).toEqual(['hello\n', 'world\n']);
    expect(code.outputs![1].data['text/html'].join('')).toContain('<caption>2 of 10 rows</caption>');
    expect(code.outputs![2]).toMatchObject({ ename: 'TypeError', evalue: 'bad <thing>' });
  });
  it('imports Python code as a Python code cell (kept as code, not run), %%sql as SQL', () => {
    const cells = ipynbToCells({
      metadata: { kernelspec: { language: 'python' } },
      cells: [
        { cell_type: 'markdown', source: ['# Hi\n', 'there'] },
        { cell_type: 'code', source: 'import numpy as np\nnp.zeros(3)', outputs: [] },
        { cell_type: 'code', source: '%%sql\nSELECT 1', outputs: [] },
      ],
    });
    expect(cells.map((c) => [c.kind, c.language ?? null])).toEqual([['markdown', null], ['code', 'python'], ['sql', 'sql']]);
    expect(cells[1]!.source).toBe('import numpy as np\nnp.zeros(3)');
    expect(cells[2]!.source).toBe('SELECT 1');
    expect(() => ipynbToCells({ nope: 1 })).toThrow(/not a Jupyter notebook/);
  });
});

describe('HTML report', () => {
  it('is one escaped document with markdown, sources and outputs, and no script', () => {
    const html = notebookToHtml(sample());
    expect(html).toContain('<title>Spikes &#60;analysis&#62;</title>');
    expect(html).toContain('<h1>Title</h1>');
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain('<caption>2 of 10 rows</caption>');
    expect(html).toContain('TypeError: bad &#60;thing&#62; (line 2)');
    expect(html).toContain('[3] JavaScript · done');
    expect(html).toContain('SQL → q');
  });
});
