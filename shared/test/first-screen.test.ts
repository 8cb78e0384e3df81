/**
 * The first screen (shared/src/notebook/first-screen.ts): the notebook's first cells in order, as
 * bounded plain text, with outputs as short text or a label; imported foreign-language cells keep
 * their language.
 */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  FIRST_SCREEN_MAX_CELLS, KERNEL_ORIGIN, createCell, getCell, moveCell, readFirstScreen, recordExec, runSource, setCellLanguage, sourceHash,
  userOrigin, type CellOutput,
} from '../src/index.ts';

const alice = userOrigin('alice');

function ran(doc: Y.Doc, id: string, outputs: CellOutput[], state: 'done' | 'error' = 'done'): void {
  const cell = getCell(doc, id)!;
  const src = runSource(cell);
  const info = { runId: `r_${id}`, requestId: null, trigger: 'request' as const, requestedBy: null, count: 1, generation: 1, startedAt: Date.now(), sourceHash: sourceHash(src), source: src, defines: [] };
  recordExec(doc, cell, info, { state, outputs }, KERNEL_ORIGIN);
}

describe('readFirstScreen', () => {
  it('reads the first cells in notebook order, with the total, never more than asked', () => {
    const doc = new Y.Doc();
    const ids = Array.from({ length: 12 }, (_, i) => createCell(doc, { kind: 'code', source: `x${i} = ${i}`, author: 'a' }, alice));
    // Order is the notebook's, not insertion order.
    moveCell(doc, ids[11]!, { index: 0 }, alice);
    const fs = readFirstScreen(doc, { cells: 5 });
    expect(fs.total).toBe(12);
    expect(fs.cells.map((c) => c.source)).toEqual(['x11 = 11', 'x0 = 0', 'x1 = 1', 'x2 = 2', 'x3 = 3']);
    expect(fs.cells[0]).toEqual({ id: ids[11], kind: 'code', source: 'x11 = 11', outputs: [] });
    expect(readFirstScreen(doc, { cells: 100_000 }).cells).toHaveLength(12);
    expect(readFirstScreen(doc, { cells: -3 }).cells).toHaveLength(0);
    expect(readFirstScreen(new Y.Doc())).toEqual({ total: 0, cells: [] });
  });

  it('caps the number of cells and the text it carries', () => {
    const doc = new Y.Doc();
    for (let i = 0; i < FIRST_SCREEN_MAX_CELLS + 20; i++) createCell(doc, { kind: 'code', source: 'y', author: 'a' }, alice);
    expect(readFirstScreen(doc, { cells: 10_000 }).cells).toHaveLength(FIRST_SCREEN_MAX_CELLS);
    const big = new Y.Doc();
    createCell(big, { kind: 'code', source: 'a'.repeat(9000), author: 'a' }, alice);
    const [cell] = readFirstScreen(big, { sourceChars: 100 }).cells;
    expect(cell!.source).toBe('a'.repeat(100));
    expect(cell!.truncated).toBe(true);
  });

  it('markdown as its markdown text, SQL with its name, outputs as text or a label', () => {
    const doc = new Y.Doc();
    createCell(doc, { kind: 'markdown', source: '# Traces\n\nOne *line*.', author: 'a' }, alice);
    const sql = createCell(doc, { kind: 'sql', source: 'SELECT 1 AS v', name: 'ones', author: 'a' }, alice);
    const code = createCell(doc, { kind: 'code', source: 'print()', author: 'a' }, alice);
    const bad = createCell(doc, { kind: 'code', source: 'boom()', author: 'a' }, alice);
    ran(doc, sql, [{ type: 'table', columns: [{ name: 'v', type: 'INTEGER' }], rows: [{ v: 1 }], totalRows: 1 }]);
    ran(doc, code, [
      { type: 'stream', name: 'stdout', text: 'hello\n' },
      { type: 'stream', name: 'stderr', text: 'warn '.repeat(1000) },
      { type: 'text', text: '42' },
      { type: 'chart', format: 'vega-lite', spec: {} },
      { type: 'image', mime: 'image/png', data: 'AAAA' },
    ]);
    ran(doc, bad, [{ type: 'error', name: 'ReferenceError', message: 'boom is not defined' }], 'error');
    const [md, s, c, e] = readFirstScreen(doc, { outputChars: 20, outputs: 4 }).cells;
    expect(md).toMatchObject({ kind: 'markdown', source: '# Traces\n\nOne *line*.' });
    expect(s).toMatchObject({ kind: 'sql', name: 'ones', outputs: [{ kind: 'label', text: 'table, 1 row × 1 column' }] });
    expect(c!.outputs).toEqual([
      { kind: 'text', text: 'hello\n', stream: 'stdout' },
      { kind: 'text', text: `${'warn '.repeat(4)}…`, stream: 'stderr' },
      { kind: 'text', text: '42' },
      { kind: 'label', text: 'chart' },
    ]);
    expect(e!.outputs).toEqual([{ kind: 'error', text: 'ReferenceError: boom…' }]);
  });

  it('code in a language Plexus does not run keeps its language', () => {
    const doc = new Y.Doc();
    const py = createCell(doc, { kind: 'code', source: 'import numpy as np', author: 'a' }, alice);
    setCellLanguage(doc, getCell(doc, py)!, 'python', alice);
    expect(readFirstScreen(doc).cells[0]).toEqual({ id: py, kind: 'code', language: 'python', source: 'import numpy as np', outputs: [] });
  });
});
