/**
 * History in the document: what a transaction changed (for attribution), comparing two states,
 * and restore as a change — minimal edits that merge with concurrent typing and that the
 * restorer's undo manager takes back in one step.
 */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import * as S from '../src/index.ts';

const alice = S.userOrigin('u_alice', 'Alice');
const bob = S.userOrigin('u_bob', 'Bob');
const server = S.serverOrigin('test');

const copy = (doc: Y.Doc): Y.Doc => {
  const d = new Y.Doc();
  Y.applyUpdate(d, Y.encodeStateAsUpdate(doc));
  return d;
};
/** Sends everything `from` has that `to` lacks. */
const sync = (from: Y.Doc, to: Y.Doc) => Y.applyUpdate(to, Y.encodeStateAsUpdate(from, Y.encodeStateVector(to)));
const sources = (doc: Y.Doc) => Object.fromEntries(S.listCells(doc).map((c) => [c.id, S.cellSource(c)]));
const execInfo = (cellId: string) => ({ runId: `r_${cellId}`, requestId: null, trigger: 'request' as const, requestedBy: null, count: 1, generation: 1, startedAt: 1, sourceHash: 'h', source: 'x', defines: [] });

function notebook() {
  const doc = new Y.Doc();
  S.initWorkspace(doc, { title: 'T' }, server);
  const intro = S.createCell(doc, { kind: 'markdown', source: '# Intro\n\nFirst paragraph.\n\nSecond paragraph.', author: 'u_alice', id: 'c_md' as S.CellId }, alice);
  const code = S.createCell(doc, { kind: 'code', source: 'const a = 1;\nconst b = 2;\n', author: 'u_alice', id: 'c_code' as S.CellId }, alice);
  const sql = S.createCell(doc, { kind: 'sql', source: 'SELECT 1', name: 'one', author: 'u_alice', id: 'c_sql' as S.CellId }, alice);
  S.setCamera(doc, { position: [1, 2, 3] }, alice);
  return { doc, intro, code, sql };
}

describe('restore as a change', () => {
  it('brings back sources, removed cells and the viewer; removes cells added since; keeps concurrent typing; one undo takes it back', () => {
    const { doc: a } = notebook();
    const b = copy(a);
    const checkpoint = copy(a);

    // After the checkpoint: Alice rewrites a line, deletes the SQL cell, adds a cell, moves the camera, edits markdown.
    S.setCellSource(a, 'c_code', 'const a = 100;\nconst b = 2;\n', alice);
    S.deleteCell(a, 'c_sql', alice);
    const added = S.createCell(a, { kind: 'code', source: 'added later', author: 'u_alice' }, alice);
    S.setCamera(a, { position: [9, 9, 9] }, alice);
    S.setCellSource(a, 'c_md', '# Intro\n\nFirst paragraph, changed.\n\nSecond paragraph.', alice);
    sync(a, b);

    // Bob types at the end of the code cell while Alice restores (neither has the other's change yet).
    S.insertCellText(b, 'c_code', S.cellSource(S.getCell(b, 'c_code')!).length, '// Bob was here\n', bob);
    const undo = S.createUserUndoManager(a, alice);
    undo.stopCapturing();
    const r = S.restoreCheckpoint(a, checkpoint, { what: 'all' }, alice);
    expect(r.cellsAdded).toEqual(['c_sql']);
    expect(r.cellsRemoved).toEqual([added]);
    expect(r.cellsChanged.sort()).toEqual(['c_code', 'c_md']);
    expect(r.viewer).toBe(true);
    sync(a, b);
    sync(b, a);

    for (const d of [a, b]) {
      expect(sources(d)).toEqual({ ...sources(checkpoint), c_code: 'const a = 1;\nconst b = 2;\n// Bob was here\n' });
      expect(S.readCamera(d).position).toEqual([1, 2, 3]);
      expect(S.getCell(d, 'c_sql')!.name).toBe('one');
      expect(S.listCells(d).map((c) => c.id)).toEqual(['c_md', 'c_code', 'c_sql']);
      expect(S.checkDocument(d)).toEqual([]);
    }

    // One undo by Alice: her pre-restore state comes back, Bob's typing stays.
    undo.undo();
    sync(a, b);
    expect(sources(a)).toEqual({ c_md: '# Intro\n\nFirst paragraph, changed.\n\nSecond paragraph.', c_code: 'const a = 100;\nconst b = 2;\n// Bob was here\n', [added]: 'added later' });
    expect(S.readCamera(a).position).toEqual([9, 9, 9]);
    expect(sources(b)).toEqual(sources(a));
  });

  it('restores the minimum: an unchanged block of markdown keeps its identity, a text edit touches only what differs', () => {
    const { doc } = notebook();
    const checkpoint = copy(doc);
    S.setCellSource(doc, 'c_md', '# Intro\n\nFirst paragraph.\n\nSecond paragraph, changed.', alice);
    const frag = S.cellFragment(S.getCell(doc, 'c_md')!)!;
    const firstBlocks = frag.toArray().slice(0, 2);
    let inserted = 0;
    let deleted = 0;
    const text = S.cellText(S.getCell(doc, 'c_code')!)!;
    S.setCellSource(doc, 'c_code', 'const a = 1;\nconst b = 3;\n', alice);
    text.observe((e) => e.delta.forEach((d) => { if (typeof d.insert === 'string') inserted += d.insert.length; if (d.delete) deleted += d.delete; }));
    S.restoreCheckpoint(doc, checkpoint, { what: 'notebook' }, alice);
    expect(sources(doc)).toEqual(sources(checkpoint));
    expect(frag.toArray().slice(0, 2)).toEqual(firstBlocks);
    expect(inserted).toBe(1);
    expect(deleted).toBe(1);
  });

  it('restores one cell (and only it); a cell the checkpoint lacks is removed, a lost one re-created with its author', () => {
    const { doc } = notebook();
    const checkpoint = copy(doc);
    S.setCellSource(doc, 'c_code', 'changed', alice);
    S.setCellSource(doc, 'c_sql', 'SELECT 2', alice);
    S.restoreCheckpoint(doc, checkpoint, { what: 'cell', id: 'c_code' }, bob);
    expect(S.cellSource(S.getCell(doc, 'c_code')!)).toBe('const a = 1;\nconst b = 2;\n');
    expect(S.cellSource(S.getCell(doc, 'c_sql')!)).toBe('SELECT 2');
    S.deleteCell(doc, 'c_sql', alice);
    const r = S.restoreCheckpoint(doc, checkpoint, { what: 'cell', id: 'c_sql' }, bob);
    expect(r.cellsAdded).toEqual(['c_sql']);
    expect(S.getCell(doc, 'c_sql')).toMatchObject({ author: 'u_alice', kind: 'sql', name: 'one' });
    const later = S.createCell(doc, { kind: 'code', source: 'x', author: 'u_bob' }, bob);
    expect(S.restoreCheckpoint(doc, checkpoint, { what: 'cell', id: later }, bob).cellsRemoved).toEqual([later]);
    // Markdown ↔ code: the old kind and source come back.
    S.setCellKind(doc, 'c_md', 'code', alice);
    S.restoreCheckpoint(doc, checkpoint, { what: 'cell', id: 'c_md' }, alice);
    expect(S.getCell(doc, 'c_md')!.kind).toBe('markdown');
    expect(S.cellSource(S.getCell(doc, 'c_md')!)).toBe(S.cellSource(S.getCell(checkpoint, 'c_md')!));
    expect(S.checkDocument(doc)).toEqual([]);
  });

  it('a restore by a person passes the schema the server enforces (no run results written)', () => {
    const { doc } = notebook();
    const cell = S.getCell(doc, 'c_code')!;
    const run = S.startExec(doc, cell, execInfo('c_code'), S.KERNEL_ORIGIN);
    S.finishExec(run, { state: 'done', outputs: [{ type: 'text', text: '3' }] }, S.KERNEL_ORIGIN);
    const checkpoint = copy(doc);
    S.deleteCell(doc, 'c_code', alice);
    const live = copy(doc);
    const before = Y.encodeStateVector(live);
    S.restoreCheckpoint(live, checkpoint, { what: 'all' }, alice);
    const update = Y.encodeStateAsUpdate(live, before);
    // As the server checks it: applied to a replica of the document, every transaction checked for a person.
    const replica = copy(doc);
    const violations: S.Violation[] = [];
    replica.on('afterTransaction', (tr: Y.Transaction) => violations.push(...S.checkTransaction(tr, 'person')));
    Y.applyUpdate(replica, update);
    expect(violations).toEqual([]);
    expect(S.cellSource(S.getCell(replica, 'c_code')!)).toBe('const a = 1;\nconst b = 2;\n');
    expect(S.readOutputs(S.getCell(live, 'c_code')!)).toEqual([]);
  });
});

describe('what a transaction changed', () => {
  it('names cells added, edited, run and removed, messages, camera and layers, tables and the title', () => {
    const { doc } = notebook();
    const seen: Array<{ origin: unknown; summary: S.ChangeSummary }> = [];
    const off = S.observeChanges(doc, (tr, summary) => seen.push({ origin: tr.origin, summary }));
    const id = S.createCell(doc, { kind: 'code', source: 'x', author: 'u_bob' }, bob);
    S.setCellSource(doc, 'c_code', 'y', alice);
    const run = S.startExec(doc, S.getCell(doc, 'c_code')!, execInfo('c_code'), S.KERNEL_ORIGIN);
    S.pushOutputs(run, [{ type: 'text', text: 'y' }], S.KERNEL_ORIGIN);
    S.postMessage(doc, { author: { id: 'u_bob', name: 'Bob', kind: 'person' }, text: 'hello' }, bob);
    S.setCamera(doc, { position: [5, 5, 5] }, alice);
    S.addLayer(doc, { name: 'img', type: 'image', source: 'precomputed://x' }, alice);
    S.setTitle(doc, 'New title', alice);
    S.deleteCell(doc, 'c_sql', bob);
    S.putCheckpoint(doc, { id: 'cp', label: 'x', kind: 'named', by: { id: 'u', kind: 'person' }, at: 1, bytes: 1, cells: 1 }, server);
    off();
    S.setTitle(doc, 'after detaching', alice);
    const summaries = seen.map((s) => S.describeSummary(s.summary));
    expect(summaries).toEqual([
      'added 1 cell',
      'edited 1 cell',
      'ran 1 cell',
      'ran 1 cell',
      'posted 1 message',
      'moved the camera',
      'changed 1 viewer setting',
      'changed the workspace title',
      'removed 1 cell',
    ]);
    expect(seen[0]!.summary.cellsAdded).toEqual([id]);
    expect(seen[0]!.origin).toBe(bob);
    expect(seen[2]!.origin).toBe(S.KERNEL_ORIGIN);
    expect(seen[6]!.summary.viewer).toEqual(['img']);
  });

  it('merges a stretch of changes: a cell added then removed is neither; an added cell is not also "edited"', () => {
    const m = S.emptySummary();
    S.mergeSummary(m, { ...S.emptySummary(), cellsAdded: ['c1', 'c2'], messages: 1 });
    S.mergeSummary(m, { ...S.emptySummary(), cellsEdited: ['c1', 'c3'], cellsRun: ['c2'] });
    S.mergeSummary(m, { ...S.emptySummary(), cellsRemoved: ['c2'], messages: 2 });
    expect(m).toMatchObject({ cellsAdded: ['c1'], cellsRemoved: [], cellsEdited: ['c3'], cellsRun: [], messages: 3 });
    expect(S.readSummary(JSON.parse(JSON.stringify(m)))).toEqual(m);
    expect(S.readSummary({ cellsAdded: 'nope', messages: -3 })).toEqual(S.emptySummary());
  });

  it('merges any sequence as merging every list in full each time would (its shortcuts change nothing)', () => {
    // The merge as it was before it skipped work for summaries that add and remove no cell.
    const reference = (into: S.ChangeSummary, more: S.ChangeSummary): S.ChangeSummary => {
      for (const k of ['cellsAdded', 'cellsRemoved', 'cellsEdited', 'cellsRun', 'viewer', 'atlas', 'tables', 'workspace', 'runs', 'jobs'] as const)
        for (const n of more[k]) if (into[k].length < S.MAX_SUMMARY_NAMES && !into[k].includes(n)) into[k].push(n);
      into.messages += more.messages;
      into.messagesEdited += more.messagesEdited;
      const gone = into.cellsAdded.filter((id) => into.cellsRemoved.includes(id));
      const drop = (l: string[]) => l.filter((id) => !gone.includes(id));
      if (gone.length) [into.cellsAdded, into.cellsRemoved, into.cellsEdited, into.cellsRun] = [drop(into.cellsAdded), drop(into.cellsRemoved), drop(into.cellsEdited), drop(into.cellsRun)];
      into.cellsEdited = into.cellsEdited.filter((id) => !into.cellsAdded.includes(id));
      return into;
    };
    let seed = 7;
    const rand = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const ids = (n: number) => Array.from({ length: rand(n) }, () => `c${rand(6)}`);
    for (let round = 0; round < 200; round++) {
      const fast = S.emptySummary();
      const slow = S.emptySummary();
      for (let i = 0; i < 12; i++) {
        // Mostly edits of cells already edited (keystrokes), sometimes adds, removes and runs.
        const more = { ...S.emptySummary(), cellsEdited: ids(2), cellsRun: ids(2), messages: rand(2) };
        if (rand(4) === 0) more.cellsAdded = ids(3);
        if (rand(4) === 0) more.cellsRemoved = ids(3);
        S.mergeSummary(fast, structuredClone(more));
        reference(slow, structuredClone(more));
        expect(fast).toEqual(slow);
      }
    }
  });
});

describe('comparing two states', () => {
  it('lists added, removed, changed, moved and re-run cells in order, and viewer keys and layers', () => {
    const { doc } = notebook();
    const older = copy(doc);
    S.setCellSource(doc, 'c_code', 'const a = 2;', alice);
    S.deleteCell(doc, 'c_md', alice);
    S.createCell(doc, { kind: 'code', source: 'new', author: 'u_alice', id: 'c_new' as S.CellId, position: { index: 0 } }, alice);
    S.moveCell(doc, 'c_sql', { index: 0 }, alice);
    const run = S.startExec(doc, S.getCell(doc, 'c_sql')!, execInfo('c_sql'), S.KERNEL_ORIGIN);
    S.finishExec(run, { state: 'done', outputs: [{ type: 'text', text: '1' }] }, S.KERNEL_ORIGIN);
    S.setCamera(doc, { position: [0, 0, 0] }, alice);
    S.addLayer(doc, { name: 'img', type: 'image', source: 'precomputed://x' }, alice);
    const d = S.compareDocs(older, doc);
    expect(d.cells.map((c) => [c.id, c.status])).toEqual([
      ['c_md', 'removed'],
      ['c_sql', 'changed'],
      ['c_new', 'added'],
      ['c_code', 'changed'],
    ]);
    const sql = d.cells.find((c) => c.id === 'c_sql')!;
    expect(sql).toMatchObject({ sourceChanged: false, outputsChanged: true, stateAfter: 'done' });
    expect(sql.moved).toBe(true);
    expect(d.cells.find((c) => c.id === 'c_code')).toMatchObject({ before: 'const a = 1;\nconst b = 2;\n', after: 'const a = 2;', sourceChanged: true });
    expect(d.viewer.map((v) => v.key)).toEqual(['position', 'layer img']);
    expect(d.counts).toEqual({ added: 1, removed: 1, changed: 2, same: 0 });
    expect(S.compareDocs(doc, copy(doc)).counts).toEqual({ added: 0, removed: 0, changed: 0, same: 3 });
  });
});
