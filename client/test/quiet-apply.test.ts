import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { applyWithoutUpdateEvent, quietTransactions } from '../src/collab/quietApply.ts';

/** A document of `n` cells' worth of maps and texts, as one update. */
function bigUpdate(n: number): Uint8Array {
  const src = new Y.Doc();
  src.transact(() => {
    const cells = src.getMap<Y.Map<unknown>>('cells');
    for (let i = 0; i < n; i++) {
      const m = new Y.Map<unknown>();
      m.set('kind', 'code');
      m.set('source', new Y.Text(`const v${i} = ${i};`));
      cells.set(`c${i}`, m);
    }
  });
  return Y.encodeStateAsUpdate(src);
}

describe('applying a fetched document without an update event', () => {
  it('applies it whole and tells no update listener (so Yjs encodes nothing for it); later changes are reported as before', () => {
    const doc = new Y.Doc();
    const updates: Array<{ origin: unknown; size: number }> = [];
    doc.on('update', (u: Uint8Array, origin: unknown) => updates.push({ origin, size: u.length }));
    let transactions = 0;
    const local: boolean[] = [];
    doc.on('afterTransaction', (tr: Y.Transaction) => (transactions++, local.push(tr.local)));
    const origin = { source: 'fetched' };
    const update = bigUpdate(200);
    applyWithoutUpdateEvent(doc, [update], origin);
    // Not this tab's own change (the schema check of local changes, undo, leave it alone).
    expect(local).toEqual([false]);
    expect(doc.getMap('cells').size).toBe(200);
    expect(String((doc.getMap('cells').get('c7') as Y.Map<unknown>).get('source'))).toBe('const v7 = 7;');
    expect(Y.encodeStateAsUpdate(doc)).toEqual(update);
    expect(updates).toEqual([]);
    expect(transactions).toBe(1);
    // The listener is back: a local edit and a remote one after it are reported.
    doc.transact(() => doc.getMap('cells').delete('c0'), 'me');
    const other = new Y.Doc();
    Y.applyUpdate(other, Y.encodeStateAsUpdate(doc));
    other.getMap('meta').set('title', 'x');
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(other, Y.encodeStateVector(doc)), 'socket');
    expect(updates.map((u) => u.origin)).toEqual(['me', 'socket']);
  });

  it('a change another listener makes while the document is applied is reported (and so sent and stored)', () => {
    const doc = new Y.Doc();
    const origins: unknown[] = [];
    doc.on('update', (_u: Uint8Array, origin: unknown) => origins.push(origin));
    // A reaction to the fetched content, written in its own transaction from an observer.
    doc.getMap('cells').observe(() => {
      if (!doc.getMap('seen').has('cells')) doc.transact(() => doc.getMap('seen').set('cells', true), 'reaction');
    });
    applyWithoutUpdateEvent(doc, [bigUpdate(20)], 'fetched');
    expect(doc.getMap('seen').get('cells')).toBe(true);
    expect(origins).toEqual(['reaction']);
  });

  it('a bad update throws as Y.applyUpdate does, and leaves the listeners in place', () => {
    const doc = new Y.Doc();
    const origins: unknown[] = [];
    doc.on('update', (_u: Uint8Array, origin: unknown) => origins.push(origin));
    expect(() => applyWithoutUpdateEvent(doc, [new Uint8Array([200, 1, 2, 3, 4])], 'fetched')).toThrow();
    doc.getMap('m').set('k', 1);
    expect(origins).toEqual([null]);
  });

  it('until stopped, every transaction of the origin is quiet (a local copy loading), others are reported; after, all are', () => {
    const doc = new Y.Doc();
    const origins: unknown[] = [];
    doc.on('update', (_u: Uint8Array, origin: unknown) => origins.push(origin));
    const copy = { name: 'local copy' };
    const loud = quietTransactions(doc, copy);
    Y.applyUpdate(doc, bigUpdate(5), copy);
    doc.getMap('meta').set('title', 'typed meanwhile');
    doc.transact(() => doc.getMap('meta').set('more', 1), copy);
    expect(origins).toEqual([null]);
    loud();
    loud(); // twice is harmless
    doc.transact(() => doc.getMap('meta').set('after', 1), copy);
    expect(origins).toEqual([null, copy]);
    expect(doc.getMap('cells').size).toBe(5);
  });

  it('listeners added or removed around a quiet transaction are kept as asked', async () => {
    const doc = new Y.Doc();
    const calls: string[] = [];
    const first = () => calls.push('first');
    const gone = () => calls.push('gone');
    doc.on('update', first);
    doc.on('update', gone);
    const copy = { name: 'local copy' };
    const loud = quietTransactions(doc, copy);
    Y.applyUpdate(doc, bigUpdate(3), copy);
    // In the same task, right after it: a new listener is kept along with the others.
    const added = () => calls.push('added');
    doc.on('update', added);
    await Promise.resolve();
    // After it: removing one works as always.
    doc.off('update', gone);
    doc.getMap('meta').set('x', 1);
    expect(calls.sort()).toEqual(['added', 'first']);
    loud();
  });
});
