/**
 * The Jupyter round trip is lossless: real-world notebooks (nbformat's own test notebooks and a
 * realistic IPython analysis) import with their outputs, ids, metadata and attachments, export
 * identically (valid against the official nbformat 4.5 schema), and re-import to the same notebook.
 */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { nbformatErrors, readFixture } from './nbformat-schema.ts';
import {
  KERNEL_ORIGIN, cellLanguage, createCell, importedOutputsStale, cellSource, displayJupyterOutput, finishExec, fragmentToMarkdown, importNotebook,
  initWorkspace, ipynbToNotebook, isRunnableCell, listCells, markdownToFragment, notebookToHtml, notebookToIpynb, readJupyterRecord,
  notebookSummary, requestRun, runSource, sanitizeHtml, serverOrigin, setCellName, setCellSource, sourceHash, startExec, staleCells, userOrigin,
} from '../src/index.ts';

const load = readFixture;
const FIXTURES = ['nbformat-test4.5.ipynb', 'nbformat-many_tracebacks.ipynb', 'nbformat-test4jupyter_metadata.ipynb', 'plexus-analysis-python.ipynb'];


const o = userOrigin('alice');
const imp = serverOrigin('import-ipynb');

function importInto(nb: unknown, doc = new Y.Doc()): Y.Doc {
  if (!doc.getMap('meta').has('schemaVersion')) initWorkspace(doc, { title: 'Imported' }, o);
  importNotebook(doc, ipynbToNotebook(JSON.parse(JSON.stringify(nb))), 'alice', imp);
  return doc;
}
const exportOf = (doc: Y.Doc): any => JSON.parse(JSON.stringify(notebookToIpynb(doc)));

/** nbformat allows a multiline string as one string or a list of lines: compare as lines. */
const asLines = (s: unknown): string[] => {
  const t = Array.isArray(s) ? s.join('') : String(s);
  return t === '' ? [] : t.split(/(?<=\n)/);
};
function normalised(nb: any): any {
  return { ...nb, cells: nb.cells.map((c: any) => ({ ...c, source: asLines(c.source) })) };
}

describe('Jupyter round trip of real notebooks', () => {
  for (const f of FIXTURES) {
    it(`${f}: export(import(nb)) is the notebook itself (ids added where 4.4 had none), valid nbformat 4.5`, () => {
      const nb = load(f);
      const out = exportOf(importInto(nb));
      expect(nbformatErrors(out)).toEqual([]);
      expect(out.nbformat).toBe(4);
      expect(out.nbformat_minor).toBe(5);
      expect(out.metadata).toEqual(nb.metadata);
      const want = normalised(nb).cells;
      expect(out.cells).toHaveLength(want.length);
      out.cells.forEach((c: any, i: number) => {
        const w = want[i];
        expect(c.id).toMatch(/^[a-zA-Z0-9-_]{1,64}$/);
        if (w.id) expect(c.id).toBe(w.id);
        const { id: _a, ...rest } = c;
        const { id: _b, ...wrest } = w;
        expect(rest, `cell ${i + 1}`).toEqual(wrest);
      });
      expect(new Set(out.cells.map((c: any) => c.id)).size).toBe(out.cells.length);
    });

    it(`${f}: importing the export gives an identical notebook`, () => {
      const first = exportOf(importInto(load(f)));
      const second = exportOf(importInto(first));
      expect(second).toEqual(first);
      const view = (d: Y.Doc) => listCells(d).map((c) => [c.kind, cellSource(c), c.name ?? null, cellLanguage(c), readJupyterRecord(c)]);
      expect(view(importInto(first))).toEqual(view(importInto(second)));
    });
  }

  it('keeps every output type with its cell: streams, execute_result HTML, display_data PNG, errors with tracebacks', () => {
    const doc = importInto(load('plexus-analysis-python.ipynb'));
    const cells = listCells(doc);
    const outputs = cells.map((c) => (readJupyterRecord(c)?.outputs ?? []).map((x: any) => x.output_type));
    expect(outputs.slice(1, 5)).toEqual([['stream', 'stream'], ['execute_result'], ['display_data', 'display_data'], ['error']]);
    const [stdout, stderr] = readJupyterRecord(cells[1]!)!.outputs.map(displayJupyterOutput);
    expect(stdout).toEqual({ kind: 'stream', name: 'stdout', text: 'loaded 3 sessions\ndone\n' });
    expect(stderr).toMatchObject({ kind: 'stream', name: 'stderr' });
    expect(displayJupyterOutput(readJupyterRecord(cells[2]!)!.outputs[0]!)).toMatchObject({ kind: 'mime', mime: 'text/html', executionCount: 2 });
    expect(displayJupyterOutput(readJupyterRecord(cells[3]!)!.outputs[0]!)).toMatchObject({ kind: 'mime', mime: 'image/png' });
    const err = displayJupyterOutput(readJupyterRecord(cells[4]!)!.outputs[0]!);
    expect(err).toMatchObject({ kind: 'error', ename: 'ZeroDivisionError', evalue: 'division by zero' });
    expect(err.kind === 'error' && err.traceback).toContain('----> 1 1/0');
    expect(err.kind === 'error' && err.traceback).not.toContain('\u001b');
    // application/javascript is never chosen: its text/plain is shown instead.
    const js = listCells(importInto(load('nbformat-test4.5.ipynb'))).find((c) => cellSource(c).startsWith('%%javascript'))!;
    expect(displayJupyterOutput(readJupyterRecord(js)!.outputs[0]!)).toMatchObject({ kind: 'mime', mime: 'text/plain' });
  });

  it('Python code stays a Python code cell: editable text, never run, exported as code', () => {
    const doc = importInto(load('plexus-analysis-python.ipynb'));
    const py = listCells(doc)[1]!;
    expect(py.kind).toBe('code');
    expect(cellLanguage(py)).toBe('python');
    expect(cellSource(py)).toContain("import pandas as pd\n");
    expect(isRunnableCell(py)).toBe(false);
    expect(requestRun(doc, py.id, { id: 'alice' }, o)).toBeNull();
    expect(importedOutputsStale(py)).toBe(false);
    expect(staleCells(doc)).not.toContain(py.id);
    setCellSource(doc, py.id, cellSource(py).replace("'done'", "'finished'"), o);
    expect(importedOutputsStale(py)).toBe(true);
    const out = exportOf(doc).cells[1];
    expect(out).toMatchObject({ cell_type: 'code', id: 'setup', execution_count: 1, metadata: { tags: ['parameters'], collapsed: false } });
    expect(out.source.join('')).toContain("print('finished')");
    expect(out.metadata.plexus).toBeUndefined();
  });

  it('%%sql cells (plain, name <<, --save) become named SQL cells and export back faithfully', () => {
    const doc = importInto(load('plexus-analysis-python.ipynb'));
    const sql = listCells(doc).filter((c) => c.kind === 'sql');
    expect(sql.map((c) => [c.name ?? null, cellSource(c)])).toEqual([
      [null, 'SELECT 1 AS one'],
      ['rates', 'SELECT neuron, avg(rate) AS rate\nFROM sessions\nGROUP BY neuron'],
      ['fast', 'SELECT * FROM rates WHERE rate > 2'],
    ]);
    expect(sql.every(isRunnableCell)).toBe(true);
    expect(sql.some(importedOutputsStale)).toBe(false);
    // Renamed and edited: the magic line follows the new name in its own style; the edit is exported.
    setCellName(doc, sql[1]!.id, 'mean_rates', o);
    setCellName(doc, sql[2]!.id, 'faster', o);
    setCellName(doc, sql[0]!.id, 'one', o);
    setCellSource(doc, sql[2]!.id, 'SELECT * FROM rates WHERE rate > 3', o);
    const cells = exportOf(doc).cells.filter((c: any) => c.source[0]?.startsWith('%%sql'));
    expect(cells.map((c: any) => c.source.join(''))).toEqual([
      '%%sql --save one\nSELECT 1 AS one',
      '%%sql mean_rates <<\nSELECT neuron, avg(rate) AS rate\nFROM sessions\nGROUP BY neuron',
      '%%sql --save faster --no-execute\nSELECT * FROM rates WHERE rate > 3',
    ]);
    expect(cells.every((c: any) => c.metadata.plexus === undefined)).toBe(true);
    expect(ipynbToNotebook({ cells: [{ cell_type: 'code', source: '%%sql\nSELECT 1', outputs: [] }] }).cells[0]).toMatchObject({ kind: 'sql', source: 'SELECT 1' });
  });

  it('markdown is kept byte for byte until a person edits it; then the edit is exported', () => {
    const doc = importInto(load('plexus-analysis-python.ipynb'));
    const nb = load('plexus-analysis-python.ipynb');
    const [intro, outro] = listCells(doc).filter((c) => c.kind === 'markdown' && readJupyterRecord(c)?.cellType === 'markdown');
    let out = exportOf(doc);
    expect(out.cells[0].source).toEqual(nb.cells[0].source);
    expect(out.cells[0].attachments).toEqual(nb.cells[0].attachments);
    setCellSource(doc, outro!.id, '## Notes\n\nRewritten by a person.', o);
    out = exportOf(doc);
    expect(out.cells[0].source).toEqual(nb.cells[0].source);
    expect(out.cells.at(-1).source.join('')).toBe('## Notes\n\nRewritten by a person.');
    expect(out.cells.at(-1).id).toBe('outro');
    // A raw cell stays raw while unedited.
    expect(out.cells.find((c: any) => c.id === 'rawcell')).toMatchObject({ cell_type: 'raw', metadata: { format: 'text/restructuredtext' } });
    expect(intro).toBeDefined();
  });

  it('markdown → rich text keeps math: no emphasis from `_` in $…$, newlines inside $$…$$', () => {
    const doc = new Y.Doc();
    const f = doc.getXmlFragment('f');
    const md = 'We fit $z_{3,4}$ and $a_i b_j$ with my_var_name.\n\n$$\n\\begin{aligned}\nz_{3,4} &= x_t \\\\\n- w_{i,j} &= 1\n\\end{aligned}\n$$';
    markdownToFragment(f, md);
    const firstText = (f.get(0) as Y.XmlElement).get(0) as Y.XmlText;
    expect(firstText.toDelta()).toEqual([{ insert: 'We fit $z_{3,4}$ and $a_i b_j$ with my_var_name.' }]);
    expect(f.length).toBe(2);
    expect(fragmentToMarkdown(f)).toBe(md);
    // Text around display math in one paragraph keeps the math's lines.
    const g = new Y.Doc().getXmlFragment('g');
    markdownToFragment(g, 'where\n$$\nx_1 *\ny_2*\n$$\nholds');
    expect(fragmentToMarkdown(g)).toBe('where $$\nx_1 *\ny_2*\n$$ holds');
  });

  it('a cell Plexus ran exports its kernel outputs, not the imported ones', () => {
    const nb = { metadata: { kernelspec: { name: 'plexus', display_name: 'Plexus', language: 'javascript' } }, nbformat: 4, nbformat_minor: 5,
      cells: [{ id: 'js1', cell_type: 'code', metadata: {}, execution_count: 9, source: '1 + 1', outputs: [{ output_type: 'execute_result', execution_count: 9, metadata: {}, data: { 'text/plain': '2' } }] }] };
    const doc = importInto(nb);
    const cell = listCells(doc)[0]!;
    expect(isRunnableCell(cell)).toBe(true);
    expect(exportOf(doc).cells[0].outputs).toEqual(nb.cells[0]!.outputs);
    const src = runSource(cell);
    const run = startExec(doc, cell, { runId: 'r', requestId: null, trigger: 'request', requestedBy: null, count: 1, generation: 1, startedAt: 1, sourceHash: sourceHash(src), source: src, defines: [] }, KERNEL_ORIGIN);
    finishExec(run, { state: 'done', outputs: [{ type: 'text', text: 'two' }] }, KERNEL_ORIGIN);
    const out = exportOf(doc).cells[0];
    expect(out.execution_count).toBe(1);
    expect(out.outputs).toEqual([{ output_type: 'execute_result', execution_count: 1, metadata: {}, data: { 'text/plain': ['two'] } }]);
    expect(out.id).toBe('js1');
  });

  it('carries unknown output types and cell metadata through untouched', () => {
    const weird = { output_type: 'future_output', payload: { a: [1, 2] } };
    const nb = { metadata: { kernelspec: { name: 'ir', display_name: 'R', language: 'R' }, custom: { x: 1 } }, nbformat: 4, nbformat_minor: 5,
      cells: [{ id: 'r1', cell_type: 'code', metadata: { vscode: { languageId: 'r' } }, execution_count: null, source: 'summary(cars)', outputs: [weird] }] };
    const doc = importInto(nb);
    expect(cellLanguage(listCells(doc)[0]!)).toBe('r');
    expect(exportOf(doc)).toEqual({ ...nb, cells: [{ ...nb.cells[0], source: ['summary(cars)'] }] });
    expect(displayJupyterOutput(weird)).toEqual({ kind: 'unknown', outputType: 'future_output' });
  });

  it('Plexus-made notebooks export valid nbformat 4.5 with cell ids', () => {
    const fresh = new Y.Doc();
    initWorkspace(fresh, { title: 'Fresh' }, o);
    createCell(fresh, { kind: 'markdown', source: '# Hi', author: 'a' }, o);
    createCell(fresh, { kind: 'code', source: '1', author: 'a' }, o);
    createCell(fresh, { kind: 'sql', source: 'SELECT 1', author: 'a', name: 'q' }, o);
    const out = exportOf(fresh);
    expect(nbformatErrors(out)).toEqual([]);
    expect(out.cells.map((c: any) => c.id)).toEqual(listCells(fresh).map((c) => c.id));
    expect(out.cells[2].metadata.plexus).toEqual({ kind: 'sql', name: 'q' });
  });

  it('a notebook imported twice still exports unique, valid cell ids', () => {
    const nb = load('nbformat-test4.5.ipynb');
    const doc = importInto(nb, importInto(nb));
    const out = exportOf(doc);
    expect(out.cells).toHaveLength(nb.cells.length * 2);
    expect(new Set(out.cells.map((c: any) => c.id)).size).toBe(out.cells.length);
    expect(out.cells.slice(0, nb.cells.length).map((c: any) => c.id)).toEqual(nb.cells.map((c: any) => c.id));
    expect(nbformatErrors(out)).toEqual([]);
  });

  it('rejects malformed notebooks with a clear error naming the cell, and imports nothing', () => {
    const bad = [
      [{ nbformat: 3, worksheets: [] }, /unsupported nbformat 3/],
      [[], /expected a JSON object/],
      [{ cells: {} }, /no "cells" list/],
      [{ cells: [{ cell_type: 'markdown', source: '# ok' }, { cell_type: 'code', source: 7 }] }, /cell 2 "source" must be a string or a list of strings/],
      [{ cells: [{ cell_type: 'code', source: '', outputs: [{ data: {} }] }] }, /cell 1 output 1 has no "output_type"/],
      [{ cells: [{ cell_type: 'widget', source: '' }] }, /cell 1 has an unknown cell_type "widget"/],
      [{ cells: [{ cell_type: 'code', source: '', outputs: [], execution_count: -1 }] }, /cell 1 "execution_count"/],
    ] as const;
    for (const [nb, msg] of bad) expect(() => ipynbToNotebook(nb)).toThrow(msg);
  });
});

describe('HTML report of an imported notebook', () => {
  it('shows the imported outputs: sanitised HTML, PNG, streams, tracebacks as text, Python labelled', () => {
    const html = notebookToHtml(importInto(load('plexus-analysis-python.ipynb')));
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/onerror=/i);
    expect(html).toContain('<b>bold output</b>');
    expect(html).toContain('<table border="1" class="dataframe">');
    expect(html).toMatch(/<img alt="output" src="data:image\/png;base64,iVBOR/);
    expect(html).toContain('loaded 3 sessions');
    expect(html).toContain('ZeroDivisionError: division by zero');
    expect(html).toContain('----&#62; 1 1/0');
    expect(html).toContain('Python — not runnable in Plexus');
    expect(html).not.toContain('\u001b');
  });

  it('sanitiser keeps tables and text, drops scripts, handlers, styles and links', () => {
    expect(sanitizeHtml('<div onclick="x()"><script>alert(1)</script><style>b{}</style><a href="javascript:x">t</a><td colspan=2>1 &amp; 2 < 3</td></div>'))
      .toBe('<div><a>t</a><td colspan="2">1 &amp; 2 &lt; 3</td></div>');
    expect(sanitizeHtml('<img src="http://evil/x.png"><img src="data:image/png;base64,AAAA">')).toBe('<img><img src="data:image/png;base64,AAAA">');
    expect(sanitizeHtml('<svg onload=alert(1)><circle/></svg>ok<iframe src=x></iframe>')).toBe('ok');
    // Unbalanced markup cannot swallow what follows the output.
    expect(sanitizeHtml('<table><tr><td>1</b></td>')).toBe('<table><tr><td>1</td></tr></table>');
    expect(sanitizeHtml('</div></section>x<br/>')).toBe('x<br>');
  });
});


describe('the agent sees imported cells as they are', () => {
  it('lists Python cells as not runnable, with the outputs they had in Jupyter', () => {
    const doc = importInto(load('plexus-analysis-python.ipynb'));
    const text = notebookSummary(doc, 20_000, { cellSource: 2000, cellOutput: 500 });
    expect(text).toMatch(/\[1\] code \(python, not runnable in Plexus\) id=\S+ state=idle\nimport pandas/);
    expect(text).toContain('→ loaded 3 sessions');
    expect(text).toContain('→ ZeroDivisionError: division by zero');
    expect(text).toContain('→ (image/png image)');
  });
});
