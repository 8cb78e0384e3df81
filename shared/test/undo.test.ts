import { beforeEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  agentOrigin, cellSource, createCell, createUserUndoManager, deleteCell, getCell, getTitle, initWorkspace, insertCellText,
  listMessages, moveCell, postMessage, serverOrigin, setCellSource, setTitle, userOrigin, type CellId,
} from '../src/index.ts';
import { cellIds, syncPair } from './helpers.ts';

// Two replicas, A and B, each with its own person. Only A has an undo manager: whatever B does
// (concurrently or not) must survive A's undo.
let A: Y.Doc, B: Y.Doc, um: Y.UndoManager;
const alice = userOrigin('alice');
const bob = userOrigin('bob');
const src = (doc: Y.Doc) => cellIds(doc).map((id) => cellSource(getCell(doc, id)!));
const code = (doc: Y.Doc, source: string, origin = alice, position?: { index: number }) =>
  createCell(doc, { kind: 'code', source, author: origin.userId, position }, origin);
/** Undo one step of A's and propagate; checks both replicas agree afterwards. */
function undoA() {
  expect(um.undo()).not.toBeNull();
  syncPair(A, B);
  expect(src(B)).toEqual(src(A));
}

let c1: CellId, c2: CellId, c3: CellId;
beforeEach(() => {
  A = new Y.Doc();
  B = new Y.Doc();
  initWorkspace(A, { title: 'Lab' }, serverOrigin('create'));
  [c1, c2, c3] = ['one', 'two', 'three'].map((s) => code(A, s, bob)) as [CellId, CellId, CellId];
  syncPair(A, B);
  um = createUserUndoManager(A, alice);
});

describe('createUserUndoManager', () => {
  it('undoes A’s cell creation but keeps B’s concurrent one', () => {
    code(A, 'by A');
    code(B, 'by B');
    syncPair(A, B);
    undoA();
    expect(src(A)).toEqual(['one', 'two', 'three', 'by B']);
  });

  it('restores a cell A deleted, with its source and place, while B’s concurrent edits elsewhere stay', () => {
    deleteCell(A, c2, alice);
    setCellSource(B, c3, 'three, edited by B', bob);
    code(B, 'new by B');
    syncPair(A, B);
    expect(src(A)).toEqual(['one', 'three, edited by B', 'new by B']);
    undoA();
    expect(src(A)).toEqual(['one', 'two', 'three, edited by B', 'new by B']);
  });

  it('undoes A’s move and keeps B’s concurrent move of another cell', () => {
    moveCell(A, c1, { index: 2 }, alice); // two three one
    moveCell(B, c3, { index: 0 }, bob); // three one two
    syncPair(A, B);
    expect(src(A)).toEqual(['three', 'two', 'one']);
    undoA();
    expect(src(A)).toEqual(['three', 'one', 'two']); // c1 back in front of c2; c3 stays where B put it
  });

  it('undoes A’s text edit in a cell while B’s concurrent keystrokes in the same cell survive', () => {
    setCellSource(A, c1, 'ONE = 1', alice);
    insertCellText(B, c1, 3, '!', bob); // "one!" on B, in text A replaced
    insertCellText(B, c2, 0, '>', bob);
    syncPair(A, B);
    undoA();
    expect(src(A)).toEqual(['one!', '>two', 'three']);
  });

  it('steps back one action at a time and redoes', () => {
    code(A, 'x');
    um.stopCapturing(); // edits within captureTimeout (500 ms) would merge into one step
    moveCell(A, c3, { index: 0 }, alice);
    um.stopCapturing();
    deleteCell(A, c1, alice);
    undoA();
    expect(src(A)).toEqual(['three', 'one', 'two', 'x']);
    undoA();
    expect(src(A)).toEqual(['one', 'two', 'three', 'x']);
    undoA();
    expect(src(A)).toEqual(['one', 'two', 'three']);
    expect(um.undo()).toBeNull();
    um.redo();
    um.redo();
    syncPair(A, B);
    expect(src(B)).toEqual(['three', 'one', 'two', 'x']);
  });

  it('never captures B’s changes, even after they arrive on A', () => {
    code(B, 'by B');
    deleteCell(B, c1, bob);
    moveCell(B, c3, { index: 0 }, bob);
    syncPair(A, B);
    expect(um.undoStack).toHaveLength(0);
    expect(um.undo()).toBeNull();
    expect(src(A)).toEqual(['three', 'two', 'by B']);
  });

  it('ignores agent and server edits made on A’s own replica', () => {
    // The agent acts through A's process in some setups: its edits belong to the run, not to Alice.
    createCell(A, { kind: 'markdown', source: '# agent notes', author: 'agent' }, agentOrigin('r1'));
    code(A, 'by Alice');
    setTitle(A, 'Renamed by server', serverOrigin('rename'));
    undoA();
    expect(src(A)).toEqual(['one', 'two', 'three', '# agent notes']);
    expect(getTitle(A)).toBe('Renamed by server');
  });

  it('tracks extra origins (an editor binding’s) alongside the user’s', () => {
    const binding = { name: 'codemirror binding' };
    um.destroy();
    um = createUserUndoManager(A, alice, [binding]);
    A.transact(() => insertCellText(A, c1, 0, '#', bob), binding); // nested: the outer origin counts
    undoA();
    expect(src(A)).toEqual(['one', 'two', 'three']);
  });

  it('undoes chat posts and title changes too', () => {
    postMessage(A, { author: { id: 'alice', name: 'Alice', kind: 'person' }, text: 'oops' }, alice);
    um.stopCapturing();
    setTitle(A, 'Typo', alice);
    postMessage(B, { author: { id: 'bob', name: 'Bob', kind: 'person' }, text: 'hello' }, bob);
    syncPair(A, B);
    undoA();
    expect(getTitle(A)).toBe('Lab');
    undoA();
    expect(listMessages(A).map((m) => m.text)).toEqual(['hello']);
    expect(listMessages(B).map((m) => m.text)).toEqual(['hello']);
    expect(getTitle(B)).toBe('Lab');
  });
});
