import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as Y from 'yjs';
import { WorkspaceStore, WorkspaceNotFoundError, mergeInTree, snapshotFileOf } from '../../src/store/workspace-store.ts';
import { keystrokes } from '../fixtures/keystrokes.ts';
import { folded, rewrites } from '../fixtures/rewrites.ts';
import { foldUpdates } from '../../src/store/log-compaction.mjs';
import { isStateParts } from '@plexus/shared/state-parts';

const tmp = () => new WorkspaceStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-store-')), 'p.db'));

describe('WorkspaceStore', () => {
  it('log + snapshot load equals the document; compaction folds exactly the entries it covers', () => {
    const s = tmp();
    const base = new Y.Doc();
    s.create({ id: 'w', name: 'W', state: Y.encodeStateAsUpdate(base) });
    const { doc, updates } = keystrokes(500);
    updates.slice(0, 300).forEach((u) => s.append('w', u));
    const upto = s.maxLogId('w');
    const partial = new Y.Doc();
    updates.slice(0, 300).forEach((u) => Y.applyUpdate(partial, u));
    updates.slice(300).forEach((u) => s.append('w', u));
    expect(s.compact('w', Y.encodeStateAsUpdate(partial), upto)).toBe(300);
    expect(s.logLength('w')).toBe(200);
    const loaded = new Y.Doc();
    Y.applyUpdate(loaded, s.load('w').update!);
    expect(loaded.getText('t').toString()).toBe(doc.getText('t').toString());
    // An older snapshot never replaces a newer one.
    expect(s.compact('w', Y.encodeStateAsUpdate(base), upto - 10)).toBe(0);
    s.close();
  });

  it('compaction keeps what the document holds, not what was deleted: an output rewritten 100 times folds to one; the log head stays', async () => {
    for (const background of [false, true]) {
      const s = new WorkspaceStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-store-')), 'p.db'), { background });
      const { state, updates, final } = rewrites(100);
      s.create({ id: 'w', name: 'W', state });
      expect(s.logHead('w')).toBe(0);
      updates.slice(0, 50).forEach((u) => s.append('w', u));
      expect(s.logHead('w')).toBe(50);
      expect(await s.compactInBackground('w')).toBe(50);
      expect(s.logHead('w')).toBe(50); // folding keeps the number of the last change
      updates.slice(50).forEach((u) => s.append('w', u));
      expect(s.logHead('w')).toBe(100);
      expect(await s.compactInBackground('w')).toBe(50);
      expect(s.logHead('w')).toBe(100);
      const parts = s.loadParts('w');
      expect(parts.entries).toHaveLength(0);
      // A merge kept all 100 outputs of 10 KB (over 1 MB); the live document holds one.
      expect(folded(parts.snapshot!)).toEqual({ small: true, output: final, text: 'kept' });
      s.close();
    }
  });

  it('says whether a snapshot is collected: every snapshot it writes is; one stored before it said so is unknown until its next fold', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-store-')), 'p.db');
    const { state, updates } = rewrites(4);
    // A database of an earlier Plexus: its snapshots table has no such column (a merged snapshot).
    const old = new WorkspaceStore(file);
    old.create({ id: 'w', name: 'W', state });
    old.close();
    const raw = new Database(snapshotFileOf(file));
    raw.exec('CREATE TABLE s2 (ws TEXT PRIMARY KEY, upto INTEGER NOT NULL, data BLOB NOT NULL); INSERT INTO s2 SELECT ws, upto, data FROM snapshots; DROP TABLE snapshots; ALTER TABLE s2 RENAME TO snapshots;');
    raw.close();
    for (const background of [false, true]) {
      const s = new WorkspaceStore(file, { background });
      expect(s.loadParts('w')).toMatchObject({ collected: false, entries: [] });
      updates.forEach((u) => s.append('w', u));
      expect(s.loadParts('w').collected).toBe(false);
      // Folded inline, then on the worker.
      expect(await s.compactInBackground('w')).toBe(4);
      expect(s.loadParts('w')).toMatchObject({ collected: true, entries: [] });
      s.create({ id: 'c', name: 'C', state });
      expect(s.loadParts('c').collected).toBe(true);
      s.snapshotFromMemory('c', state);
      expect(s.loadParts('c').collected).toBe(true);
      s.delete('c');
      s.close();
      // Unknown again for the next pass, as if written before.
      const again = new Database(snapshotFileOf(file));
      again.exec('UPDATE snapshots SET collected = 0');
      again.close();
    }
  });

  it('stores a state larger than a part in parts — folded by compaction, and one created or stored whole once the worker has run — and loads them in the order they apply', async () => {
    for (const background of [false, true]) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-store-'));
      const s = new WorkspaceStore(path.join(dir, 'p.db'), { background, snapshotPartStructs: 50 });
      const raw = new Database(snapshotFileOf(path.join(dir, 'p.db')), { readonly: true });
      const stored = (ws: string) => new Uint8Array((raw.prepare('SELECT data FROM snapshots WHERE ws = ?').get(ws) as { data: Buffer }).data);
      const expectLoads = (ws: string, doc: Y.Doc, parts: number) => {
        const loaded = s.loadParts(ws);
        expect(loaded.snapshot!.length).toBe(parts);
        const into = new Y.Doc();
        for (const p of loaded.snapshot!) {
          Y.applyUpdate(into, p);
          expect(into.store.pendingStructs).toBeNull();
        }
        expect(into.getText('t').toString()).toBe(doc.getText('t').toString());
        expect(Y.decodeUpdate(s.load(ws).update!).structs.length).toBeGreaterThan(0);
      };
      const { doc, updates } = keystrokes(400);
      // Folded from the log: stored in parts.
      s.create({ id: 'w', name: 'W', state: Y.encodeStateAsUpdate(new Y.Doc()) });
      updates.forEach((u) => s.append('w', u));
      expect(await s.compactInBackground('w')).toBe(400);
      expect(isStateParts(stored('w'))).toBe(true);
      expectLoads('w', doc, Math.ceil(Y.decodeUpdate(Y.encodeStateAsUpdate(doc)).structs.length / 50));
      // Created large: stored whole, then in parts once background work has run (a fold with
      // nothing to fold cuts it too, which is what the worker's own request does after creation).
      s.create({ id: 'big', name: 'Big', state: Y.encodeStateAsUpdate(doc) });
      expect(isStateParts(stored('big'))).toBe(false);
      await new Promise((resolve) => setImmediate(resolve));
      expect(await s.compactInBackground('big')).toBe(0);
      expect(isStateParts(stored('big'))).toBe(true);
      expectLoads('big', doc, s.loadParts('w').snapshot!.length);
      // Stored whole from memory (a dirty document): whole until the next background fold.
      const edited = new Y.Doc();
      Y.applyUpdate(edited, Y.encodeStateAsUpdate(doc));
      edited.once('update', (u: Uint8Array) => s.append('w', u));
      edited.getText('t').insert(0, 'x');
      expect(s.snapshotFromMemory('w', Y.encodeStateAsUpdate(edited))).toBe(1);
      expect(s.loadParts('w').snapshot).toHaveLength(1);
      expect(await s.compactInBackground('w')).toBe(0);
      expect(isStateParts(stored('w'))).toBe(true);
      expectLoads('w', edited, s.loadParts('w').snapshot!.length);
      raw.close();
      s.close();
    }
    // Parts off: whole.
    const whole = new WorkspaceStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-store-')), 'p.db'), { snapshotPartStructs: 0 });
    whole.create({ id: 'w', name: 'W', state: Y.encodeStateAsUpdate(new Y.Doc()) });
    keystrokes(400).updates.forEach((u) => whole.append('w', u));
    expect(await whole.compactInBackground('w')).toBe(400);
    expect(whole.loadParts('w').snapshot).toHaveLength(1);
    whole.close();
  });

  it('foldUpdates keeps what cannot be integrated yet (an entry whose predecessor is missing) until it can', () => {
    const { doc, updates } = keystrokes(20);
    // Entry 10 is missing: 11..19 wait in Yjs' pending structs, and must survive the fold.
    const state = foldUpdates([...updates.slice(0, 10), ...updates.slice(11)]);
    const later = new Y.Doc();
    Y.applyUpdate(later, state);
    expect(later.getText('t').toString()).not.toBe(doc.getText('t').toString());
    Y.applyUpdate(later, updates[10]!);
    expect(later.getText('t').toString()).toBe(doc.getText('t').toString());
  });

  it('mergeInTree equals a flat merge', () => {
    const { updates } = keystrokes(2000);
    const a = new Y.Doc();
    Y.applyUpdate(a, mergeInTree(updates)!);
    const b = new Y.Doc();
    Y.applyUpdate(b, Y.mergeUpdates(updates));
    expect(a.getText('t').toString()).toBe(b.getText('t').toString());
  });

  it('skips log entries corrupted on disk instead of refusing the workspace', () => {
    const s = tmp();
    s.create({ id: 'w', name: 'W', state: Y.encodeStateAsUpdate(new Y.Doc()) });
    const { updates } = keystrokes(10);
    updates.forEach((u) => s.append('w', u));
    s.db.prepare('UPDATE log SET data = ? WHERE seq = (SELECT MAX(seq) FROM log)').run(Buffer.from([1, 2, 3, 255, 255]));
    const d = new Y.Doc();
    Y.applyUpdate(d, s.load('w').update!);
    expect(d.getText('t').length).toBe(9);
    expect(s.corruptEntriesSkipped).toBe(1);
  });

  it('unknown workspaces are an error, deleted ones leave nothing behind', () => {
    const s = tmp();
    expect(() => s.load('nope')).toThrow(WorkspaceNotFoundError);
    s.create({ id: 'w', name: 'W', state: Y.encodeStateAsUpdate(new Y.Doc()) });
    s.append('w', keystrokes(3).updates[0]!);
    expect(s.delete('w')).toBe(true);
    expect(s.list()).toEqual([]);
    expect((s.db.prepare('SELECT COUNT(*) AS n FROM log').get() as { n: number }).n).toBe(0);
    expect((s.db.prepare('SELECT COUNT(*) AS n FROM snapshots').get() as { n: number }).n).toBe(0);
  });
});

