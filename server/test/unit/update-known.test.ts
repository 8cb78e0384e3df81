/**
 * `documentHasUpdate` answers what Yjs' own `snapshotContainsUpdate(snapshot(doc), update)` answers
 * (the lease fence and viewers' writes rely on it), over generated documents and updates: a
 * replica that went its own way (inserts, deletions of text the document still has or already
 * deleted, map writes), its whole state, its diff, each of its updates, the document's own state,
 * an empty update; the document itself collecting garbage as the server's does.
 */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { mulberry32 } from '@plexus/shared';
import { documentHasUpdate } from '../../src/collab/update-known.ts';

function randomEdits(doc: Y.Doc, rand: () => number, n: number): void {
  const text = doc.getText('t');
  const map = doc.getMap('m');
  for (let k = 0; k < n; k++) {
    const r = rand();
    if (r < 0.45 || text.length === 0) text.insert(Math.floor(rand() * (text.length + 1)), 'abcdefgh'.slice(0, 1 + Math.floor(rand() * 8)));
    else if (r < 0.8) {
      const at = Math.floor(rand() * text.length);
      text.delete(at, Math.min(text.length - at, 1 + Math.floor(rand() * 6)));
    } else map.set(`k${Math.floor(rand() * 4)}`, Math.floor(rand() * 100));
  }
}

describe('documentHasUpdate', () => {
  it('answers as Y.snapshotContainsUpdate does, on generated documents and updates', () => {
    const answers = { true: 0, false: 0 };
    for (let seed = 1; seed <= 60; seed++) {
      const rand = mulberry32(seed);
      const live = new Y.Doc(); // gc on, as the server's documents
      randomEdits(live, rand, 30);
      const replica = new Y.Doc({ gc: rand() < 0.5 });
      Y.applyUpdate(replica, Y.encodeStateAsUpdate(live));
      const replicaUpdates: Uint8Array[] = [];
      replica.on('update', (u: Uint8Array) => replicaUpdates.push(u));
      randomEdits(replica, rand, 1 + Math.floor(rand() * 6));
      // The document goes on too: some of what the replica deletes is deleted here already.
      randomEdits(live, rand, Math.floor(rand() * 6));
      for (const u of replicaUpdates.slice(0, Math.floor(rand() * replicaUpdates.length))) Y.applyUpdate(live, u);
      const candidates = [
        ...replicaUpdates,
        Y.encodeStateAsUpdate(replica),
        Y.encodeStateAsUpdate(replica, Y.encodeStateVector(live)),
        Y.encodeStateAsUpdate(live),
        Y.encodeStateAsUpdate(new Y.Doc()),
      ];
      const snap = Y.snapshot(live);
      for (const u of candidates) {
        const expected = Y.snapshotContainsUpdate(snap, u);
        expect(documentHasUpdate(live, u), `seed ${seed}`).toBe(expected);
        answers[String(expected) as 'true' | 'false']++;
      }
    }
    // Both answers were asked for often (the generator is not one-sided).
    expect(answers.true).toBeGreaterThan(50);
    expect(answers.false).toBeGreaterThan(50);
  });

  it('a deletion of part of a range the document deleted only partly is news', () => {
    const live = new Y.Doc();
    live.getText('t').insert(0, 'abcdefgh');
    const replica = new Y.Doc();
    Y.applyUpdate(replica, Y.encodeStateAsUpdate(live));
    live.getText('t').delete(2, 2); // "cd"
    const updates: Uint8Array[] = [];
    replica.on('update', (u: Uint8Array) => updates.push(u));
    replica.getText('t').delete(1, 4); // "bcde": b and e are still in the document
    expect(documentHasUpdate(live, updates[0]!)).toBe(false);
    replica.getText('t').insert(0, 'x');
    const again = new Y.Doc();
    Y.applyUpdate(again, Y.encodeStateAsUpdate(live));
    again.getText('t').delete(2, 1); // "e", now at 2 of "abefgh"
    const del = Y.encodeStateAsUpdate(again, Y.encodeStateVector(live));
    Y.applyUpdate(live, del);
    expect(documentHasUpdate(live, del)).toBe(true);
    expect(documentHasUpdate(live, updates[1]!)).toBe(false); // the replica's insert
  });
});
