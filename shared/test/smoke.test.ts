import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { createCell, listCells, cellSource, userOrigin, initWorkspace, serverOrigin, getTitle } from '../src/index.ts';

describe('shared smoke', () => {
  it('creates cells in order and reads markdown back', () => {
    const doc = new Y.Doc();
    initWorkspace(doc, { title: 'T' }, serverOrigin('test'));
    const o = userOrigin('u1');
    const a = createCell(doc, { kind: 'code', source: 'x = 1', author: 'u1' }, o);
    const b = createCell(doc, { kind: 'markdown', source: '# Title\n\nSome **bold** text\n\n- a\n- b', author: 'u1', position: { before: a } }, o);
    const cells = listCells(doc);
    expect(cells.map((c) => c.id)).toEqual([b, a]);
    expect(cellSource(cells[0]!)).toBe('# Title\n\nSome **bold** text\n\n- a\n- b');
    expect(getTitle(doc)).toBe('T');
  });
});
