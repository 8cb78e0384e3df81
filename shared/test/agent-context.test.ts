/** Prompt context stays under its caps whatever the size of the notebook, chat and data registry. */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  buildContext, createCell, DEFAULT_CONTEXT_CAPS, initWorkspace, postMessage, registerTable, serverOrigin, userOrigin,
  askerSummary, notebookSummary, chatSummary, type PresenceState,
} from '../src/index.ts';

const o = userOrigin('alice', 'Alice');

function hugeDoc(cells: number, messages: number, cellChars: number): Y.Doc {
  const doc = new Y.Doc();
  initWorkspace(doc, { title: 'Huge' }, serverOrigin('test'));
  for (let i = 0; i < cells; i++) createCell(doc, { kind: i % 3 === 0 ? 'sql' : 'code', source: `// cell ${i}\n` + 'x'.repeat(cellChars), author: 'alice' }, o);
  for (let i = 0; i < messages; i++) postMessage(doc, { author: { id: 'alice', name: 'Alice', kind: 'person' }, text: `message ${i} ` + 'y'.repeat(3000) }, o);
  for (let i = 0; i < 200; i++)
    registerTable(doc, { name: `t${i}`, fileName: `t${i}.csv`, format: 'csv', columns: Array.from({ length: 40 }, (_, j) => ({ name: `col_${j}`, type: 'DOUBLE' })), rows: 1000, bytes: 1, storedBytes: 1, uploadedBy: { id: 'alice' }, created: 0 }, serverOrigin('test'));
  return doc;
}

describe('agent context', () => {
  it('stays under the total cap with 1,000 cells, 500 long messages and 200 wide tables', () => {
    const doc = hugeDoc(1000, 500, 5000);
    const ctx = buildContext(doc, null);
    expect(ctx.length).toBeLessThanOrEqual(DEFAULT_CONTEXT_CAPS.total);
    expect(ctx).toContain('## Notebook');
    expect(ctx).toContain('## Recent chat');
    expect(ctx).toContain('message 499');
    expect(notebookSummary(doc, 9000, DEFAULT_CONTEXT_CAPS).length).toBeLessThanOrEqual(9000);
  }, 60_000);
  it('each section keeps its own cap, with custom caps too', () => {
    const doc = hugeDoc(300, 100, 2000);
    const caps = { total: 8000, notebook: 3000, chat: 1000, data: 500 };
    const ctx = buildContext(doc, null, { caps });
    expect(ctx.length).toBeLessThanOrEqual(8000);
    expect(chatSummary(doc, { ...DEFAULT_CONTEXT_CAPS, ...caps }).length).toBeLessThanOrEqual(1000);
  });
  it('a small notebook is shown whole, with sources', () => {
    const doc = new Y.Doc();
    createCell(doc, { kind: 'code', source: 'const a = 1;', author: 'alice' }, o);
    expect(buildContext(doc, null)).toContain('const a = 1;');
  });
  it('the asker section carries focus, selected text, viewer region and selected rows, capped', () => {
    const doc = new Y.Doc();
    const id = createCell(doc, { kind: 'code', source: 'const threshold = 0.5;\nconst big = ' + 'z'.repeat(10_000), author: 'alice' }, o);
    const text = doc.getMap<Y.Map<unknown>>('cells').get(id)!.get('source') as Y.Text;
    const rel = (i: number) => Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(text, i));
    const state: PresenceState = {
      user: { id: 'alice', name: 'Alice', color: '#000', role: 'editor', kind: 'person' },
      focus: { panel: 'notebook', cellId: id },
      cursor: { anchor: rel(6), head: rel(21) },
      viewer: { mode: 'shared', camera: { position: [10, 20, 5], crossSectionScale: 0.7 }, selectedLayer: { layer: 'movie' } },
      dataSelection: { table: 'rois', rows: Array.from({ length: 300 }, (_, i) => i), values: [{ id: 1, snr: 3.2 }] },
    };
    const s = askerSummary(doc, state, 3000);
    expect(s).toContain(`Focused cell: [0] code id=${id}`);
    expect(s).toContain('threshold = 0.5');
    expect(s).toContain('position=[10,20,5]');
    expect(s).toContain('Selected layer: movie');
    expect(s).toContain('Selected rows of table rois: 0, 1, 2');
    expect(s).toContain('(+250 more)');
    expect(s).toContain('"snr":3.2');
    // A huge selection is cut.
    const all: PresenceState = { ...state, cursor: { anchor: rel(0), head: rel(text.length) } };
    expect(askerSummary(doc, all, 3000).length).toBeLessThanOrEqual(3000);
  });
});
