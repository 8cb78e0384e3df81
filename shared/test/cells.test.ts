import { beforeEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  agentOrigin, cellFragment, cellSource, cellText, createCell, deleteCell, getCell, insertCellText, listCells, moveCell,
  moveCellBy, neighbourCell, notebookGraphChanges, onlyEditsCellSources, requestRun, roots, setCellKind, setCellName, setCellSource, userOrigin, type CellId, type CellKind, type Origin,
} from '../src/index.ts';
import { cellIds, wrote } from './helpers.ts';

const alice = userOrigin('alice');
let doc: Y.Doc;
/** Creates cells named by their source, so expectations read as the notebook does. */
const add = (source: string, position?: Parameters<typeof createCell>[1]['position'], kind: CellKind = 'code') =>
  createCell(doc, { kind, source, author: 'alice', position }, alice);
const sources = () => listCells(doc).map(cellSource);

beforeEach(() => {
  doc = new Y.Doc();
});

describe('createCell', () => {
  it('appends by default and stores kind, author, name and a typed source', () => {
    const a = add('a');
    const q = createCell(doc, { kind: 'sql', source: 'select 1', author: 'bob', name: 'df' }, alice);
    const m = add('# Notes', undefined, 'markdown');
    expect(cellIds(doc)).toEqual([a, q, m]);
    const sql = getCell(doc, q)!;
    expect(sql).toMatchObject({ id: q, kind: 'sql', author: 'bob', name: 'df' });
    expect(cellText(sql)?.toString()).toBe('select 1');
    // Markdown cells are rich text (tiptap binds to the fragment), code/SQL cells plain Y.Text.
    expect(cellFragment(getCell(doc, m)!)).toBeInstanceOf(Y.XmlFragment);
    expect(cellText(getCell(doc, m)!)).toBeUndefined();
    expect(cellSource(getCell(doc, m)!)).toBe('# Notes');
  });

  it('uses a caller-given id', () => {
    expect(createCell(doc, { kind: 'code', author: 'a', id: 'c_fixed' as CellId }, alice)).toBe('c_fixed');
    expect(getCell(doc, 'c_fixed')?.kind).toBe('code');
  });

  it('places by index, clamping out-of-range indices', () => {
    add('b');
    add('a', { index: 0 });
    add('c', { index: 2 });
    add('first', { index: -5 });
    add('last', { index: 99 });
    add('mid', { index: 2 });
    expect(sources()).toEqual(['first', 'a', 'mid', 'b', 'c', 'last']);
  });

  it('places after/before an anchor; after null is the start, before null the end', () => {
    const b = add('b');
    add('c', { after: b });
    add('a', { before: b });
    add('start', { after: null });
    add('end', { before: null });
    expect(sources()).toEqual(['start', 'a', 'b', 'c', 'end']);
  });

  it('appends when the anchor was deleted (e.g. concurrently), for after and before alike', () => {
    add('a');
    const gone = add('gone');
    add('b');
    deleteCell(doc, gone, alice);
    add('x', { after: gone }); // used to land at the very top: findIndex(-1) + 1 === 0
    add('y', { before: gone });
    add('z', { after: 'c_never_existed' as CellId });
    expect(sources()).toEqual(['a', 'b', 'x', 'y', 'z']);
  });

  it('inserting next to two cells tied on one order key stays next to them', () => {
    // Two replicas inserting at one spot at once can compute the same key; ties sort by id.
    const a = add('a');
    const t1 = add('t1');
    const t2 = add('t2');
    const far = add('c');
    add('d');
    getCell(doc, t2)!.map.set('order', getCell(doc, t1)!.order);
    const [first, second] = listCells(doc).filter((c) => c.id === t1 || c.id === t2);
    // Nothing sorts strictly between tied keys: land just past the tied run, not past every later cell.
    const x = add('x', { after: first!.id });
    expect(cellIds(doc).indexOf(x)).toBe(3);
    const y = add('y', { before: second!.id });
    expect(cellIds(doc).indexOf(y)).toBe(1);
    expect(cellIds(doc).indexOf(a)).toBe(0);
    expect(cellIds(doc).indexOf(far)).toBe(5);
  });
});

describe('deleteCell', () => {
  it('removes the cell once and reports whether it did', () => {
    const a = add('a');
    const b = add('b');
    expect(deleteCell(doc, a, alice)).toBe(true);
    expect(deleteCell(doc, a, alice)).toBe(false);
    expect(getCell(doc, a)).toBeUndefined();
    expect(cellIds(doc)).toEqual([b]);
  });
});

describe('moveCell / moveCellBy / neighbourCell', () => {
  let a: CellId, b: CellId, c: CellId, d: CellId;
  beforeEach(() => {
    [a, b, c, d] = ['a', 'b', 'c', 'd'].map((s) => add(s)) as [CellId, CellId, CellId, CellId];
  });

  it('moves to an index (the final index), after and before an anchor', () => {
    expect(moveCell(doc, a, { index: 2 }, alice)).toBe(true);
    expect(sources()).toEqual(['b', 'c', 'a', 'd']);
    moveCell(doc, d, { after: b }, alice);
    expect(sources()).toEqual(['b', 'd', 'c', 'a']);
    moveCell(doc, b, { before: a }, alice);
    expect(sources()).toEqual(['d', 'c', 'b', 'a']);
    moveCell(doc, a, { after: null }, alice);
    moveCell(doc, d, { before: null }, alice);
    expect(sources()).toEqual(['a', 'c', 'b', 'd']);
  });

  it('rewrites only the moved cell’s order key: same Y.Map, same source, others untouched', () => {
    const keysBefore = listCells(doc).map((x) => [x.id, x.order]);
    const map = getCell(doc, b)!.map;
    moveCell(doc, b, { index: 3 }, alice);
    expect(getCell(doc, b)!.map).toBe(map);
    expect(cellSource(getCell(doc, b)!)).toBe('b');
    const changed = listCells(doc).filter((x) => !keysBefore.some(([id, o]) => id === x.id && o === x.order));
    expect(changed.map((x) => x.id)).toEqual([b]);
  });

  it('moving a cell after or before itself leaves it in place', () => {
    moveCell(doc, b, { after: b }, alice);
    moveCell(doc, c, { before: c }, alice);
    expect(sources()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('appends when the anchor is gone and refuses to move a missing cell', () => {
    deleteCell(doc, d, alice);
    expect(moveCell(doc, a, { after: d }, alice)).toBe(true);
    expect(sources()).toEqual(['b', 'c', 'a']);
    expect(moveCell(doc, d, { index: 0 }, alice)).toBe(false);
    expect(getCell(doc, d)).toBeUndefined(); // a move never resurrects
  });

  it('moveCellBy swaps with the neighbour and refuses at the edges', () => {
    expect(moveCellBy(doc, b, 1, alice)).toBe(true);
    expect(sources()).toEqual(['a', 'c', 'b', 'd']);
    expect(moveCellBy(doc, b, -1, alice)).toBe(true);
    expect(moveCellBy(doc, b, -1, alice)).toBe(true);
    expect(sources()).toEqual(['b', 'a', 'c', 'd']);
    expect(moveCellBy(doc, b, -1, alice)).toBe(false);
    expect(moveCellBy(doc, d, 1, alice)).toBe(false);
    expect(moveCellBy(doc, 'c_missing', 1, alice)).toBe(false);
    expect(sources()).toEqual(['b', 'a', 'c', 'd']);
  });

  it('neighbourCell walks notebook order', () => {
    expect(neighbourCell(doc, b, -1)).toBe(a);
    expect(neighbourCell(doc, b, 1)).toBe(c);
    expect(neighbourCell(doc, a, -1)).toBeUndefined();
    expect(neighbourCell(doc, d, 1)).toBeUndefined();
    expect(neighbourCell(doc, 'c_missing', 1)).toBeUndefined();
    moveCell(doc, a, { index: 3 }, alice);
    expect(neighbourCell(doc, d, 1)).toBe(a);
  });
});

describe('cell content', () => {
  it('setCellSource edits code in place with a small diff (same Y.Text, one small change)', () => {
    const id = add('x = 1\ny = 2\n');
    const text = cellText(getCell(doc, id)!)!;
    const deltas: unknown[] = [];
    text.observe((e) => deltas.push(e.delta));
    expect(setCellSource(doc, id, 'x = 1\ny = 3\n', alice)).toBe(true);
    expect(cellText(getCell(doc, id)!)).toBe(text);
    expect(text.toString()).toBe('x = 1\ny = 3\n');
    expect(deltas).toEqual([[{ retain: 10 }, { delete: 1 }, { insert: '3' }]]);
    expect(setCellSource(doc, 'c_missing', 'x', alice)).toBe(false);
  });

  it('setCellSource on markdown replaces only the blocks that changed', () => {
    const id = add('# Title\n\nfirst\n\nsecond', undefined, 'markdown');
    const frag = cellFragment(getCell(doc, id)!)!;
    const [title, first] = frag.toArray();
    setCellSource(doc, id, '# Title\n\nfirst\n\nsecond, edited', alice);
    expect(cellSource(getCell(doc, id)!)).toBe('# Title\n\nfirst\n\nsecond, edited');
    expect(frag.get(0)).toBe(title);
    expect(frag.get(1)).toBe(first);
  });

  it('insertCellText inserts at a clamped offset, only into code/SQL cells', () => {
    const id = add('ac');
    insertCellText(doc, id, 1, 'b', alice);
    insertCellText(doc, id, 99, '!', alice);
    insertCellText(doc, id, -3, '>', alice);
    expect(cellSource(getCell(doc, id)!)).toBe('>abc!');
    expect(insertCellText(doc, add('text', undefined, 'markdown'), 0, 'x', alice)).toBe(false);
    expect(insertCellText(doc, 'c_missing', 0, 'x', alice)).toBe(false);
  });

  it('setCellName sets and clears the SQL result variable', () => {
    const id = createCell(doc, { kind: 'sql', source: 'select 1', author: 'a' }, alice);
    expect(setCellName(doc, id, 'df', alice)).toBe(true);
    expect(getCell(doc, id)?.name).toBe('df');
    setCellName(doc, id, null, alice);
    expect(getCell(doc, id)?.name).toBeUndefined();
    expect(setCellName(doc, 'c_missing', 'x', alice)).toBe(false);
  });

  it('setCellKind keeps the Y.Text between code and SQL and converts to and from markdown', () => {
    const id = add('# hi');
    const text = cellText(getCell(doc, id)!);
    setCellKind(doc, id, 'sql', alice);
    expect(getCell(doc, id)!.kind).toBe('sql');
    expect(cellText(getCell(doc, id)!)).toBe(text); // concurrent typing in it survives
    setCellKind(doc, id, 'markdown', alice);
    const md = getCell(doc, id)!;
    expect([md.kind, (cellFragment(md)!.get(0) as Y.XmlElement).nodeName, cellSource(md)]).toEqual(['markdown', 'heading', '# hi']);
    setCellKind(doc, id, 'code', alice);
    expect([getCell(doc, id)!.kind, cellText(getCell(doc, id)!)?.toString()]).toEqual(['code', '# hi']);
    expect(setCellKind(doc, 'c_missing', 'sql', alice)).toBe(false);
  });

  it('reads the kind from the source type when a race left them disagreeing, and setCellKind repairs it', () => {
    const id = add('text', undefined, 'markdown');
    getCell(doc, id)!.map.set('kind', 'sql'); // what a code->sql switch racing a conversion can leave
    expect(getCell(doc, id)!.kind).toBe('markdown');
    expect(setCellKind(doc, id, 'markdown', alice)).toBe(true);
    expect(getCell(doc, id)!.map.get('kind')).toBe('markdown');
  });
});

describe('origins', () => {
  // Undo, audit and attribution all key on transaction.origin: every write must carry the one given.
  const cases: Array<[string, (o: Origin, ids: { a: CellId; b: CellId; m: CellId }) => unknown]> = [
    ['createCell', (o) => createCell(doc, { kind: 'code', author: 'x' }, o)],
    ['createCell markdown', (o) => createCell(doc, { kind: 'markdown', source: '# t\n\n- a', author: 'x' }, o)],
    ['deleteCell', (o, { a }) => deleteCell(doc, a, o)],
    ['moveCell', (o, { a }) => moveCell(doc, a, { index: 1 }, o)],
    ['moveCellBy', (o, { a }) => moveCellBy(doc, a, 1, o)],
    ['setCellSource', (o, { a }) => setCellSource(doc, a, 'changed', o)],
    ['setCellSource markdown', (o, { m }) => setCellSource(doc, m, '# new', o)],
    ['insertCellText', (o, { b }) => insertCellText(doc, b, 0, 'x', o)],
    ['setCellName', (o, { b }) => setCellName(doc, b, 'n', o)],
    ['setCellKind', (o, { b }) => setCellKind(doc, b, 'sql', o)],
    ['setCellKind to markdown', (o, { b }) => setCellKind(doc, b, 'markdown', o)],
  ];
  it.each(cases)('%s writes with the given origin (user and agent)', (_name, run) => {
    for (const origin of [userOrigin('bob'), agentOrigin('r1')]) {
      doc = new Y.Doc();
      const ids = { a: add('a'), b: add('b'), m: add('m', undefined, 'markdown') };
      const seen: unknown[] = [];
      doc.on('afterTransaction', (tr: Y.Transaction) => wrote(tr) && seen.push(tr.origin));
      run(origin, ids);
      expect(seen.length).toBeGreaterThan(0); // it did write something...
      expect(seen.every((o) => o === origin)).toBe(true); // ...and only as `origin`
    }
  });
});

describe('onlyEditsCellSources', () => {
  it('is true for typing in plain and rich sources, false for anything else a transaction changes', () => {
    const cells = roots(doc).cells;
    const code = add('x = 1');
    const md = add('Some *notes*', undefined, 'markdown');
    const seen: boolean[] = [];
    doc.on('afterTransaction', (tr: Y.Transaction) => seen.push(onlyEditsCellSources(cells, tr)));
    const last = () => seen[seen.length - 1];
    insertCellText(doc, code, 0, 'y', alice);
    expect(last()).toBe(true);
    const frag = cellFragment(getCell(doc, md)!)!;
    doc.transact(() => (frag.get(0) as Y.XmlElement).insert(0, [new Y.XmlText('more ')]), alice);
    expect(last()).toBe(true);
    doc.transact(() => cellText(getCell(doc, code)!)!.delete(0, 1), alice);
    expect(last()).toBe(true);
    doc.transact(() => {
      insertCellText(doc, code, 0, 'z', alice);
      setCellName(doc, code, 'named', alice);
    }, alice);
    expect(last()).toBe(false); // a key of the cell changed too
    add('new');
    expect(last()).toBe(false);
    deleteCell(doc, code, alice);
    expect(last()).toBe(false);
    doc.transact(() => roots(doc).meta.set('title', 'T'), alice);
    expect(last()).toBe(false);
  });
});

describe('notebookGraphChanges', () => {
  it('names the cells whose source text was edited; anything else about the cells is a change of the cells; the rest is none', () => {
    const code = add('x = 1');
    const sql = createCell(doc, { kind: 'sql', source: 'select 1', author: 'alice', name: 'q' }, alice);
    const md = add('Some *notes*', undefined, 'markdown');
    const seen: Array<'cells' | string[]> = [];
    doc.on('afterTransaction', (tr: Y.Transaction) => {
      const c = notebookGraphChanges(doc, tr);
      seen.push(c === 'cells' ? c : [...c].sort());
    });
    const last = () => seen[seen.length - 1];
    insertCellText(doc, code, 0, 'y', alice);
    expect(last()).toEqual([code]);
    doc.transact(() => {
      insertCellText(doc, code, 0, 'z', alice);
      insertCellText(doc, sql, 0, ' ', alice);
    }, alice);
    expect(last()).toEqual([code, sql].sort());
    // Typing straight into a markdown cell's fragment is its source too (not in the graph: the kernel skips it).
    doc.transact(() => cellFragment(getCell(doc, md)!)!.insert(0, [new Y.XmlText('x')]), alice);
    expect(last()).toEqual([md]);
    // A run request writes the cell's other keys: nothing the graph is built from.
    requestRun(doc, code, { id: 'alice', name: 'Alice' }, alice);
    expect(last()).toEqual([]);
    doc.transact(() => roots(doc).meta.set('title', 'T'), alice);
    expect(last()).toEqual([]);
    setCellSource(doc, sql, 'select 2', alice); // a minimal diff: an edit of its text
    expect(last()).toEqual([sql]);
    for (const change of [
      () => setCellName(doc, sql, 'r', alice),
      () => setCellKind(doc, code, 'markdown', alice),
      () => add('new'),
      () => deleteCell(doc, md, alice),
      () => doc.transact(() => getCell(doc, sql)!.map.set('source', new Y.Text('select 3')), alice),
    ]) {
      const before = seen.length;
      change();
      expect(seen.slice(before)).toContain('cells');
    }
    doc.transact(() => getCell(doc, sql)!.map.set('extra', new Y.Array()), alice);
    expect(last()).toEqual([]); // a key the graph is not built from
    doc.transact(() => (getCell(doc, sql)!.map.get('extra') as Y.Array<number>).push([1]), alice);
    expect(last()).toBe('cells'); // another shared type of a cell: read as a change of the cells
  });
});
