/**
 * The event loop never waits on a storage lock: snapshots live in their own database file, so a
 * compaction writing one (the worker's connection holding that file's write lock) does not stop
 * the server's thread from appending to the log. Also: databases in the older one-file layout are
 * migrated, and a crash between a compaction's snapshot and the drop of its log entries loses
 * and duplicates nothing.
 */
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as Y from 'yjs';
import { WorkspaceStore, snapshotFileOf } from '../../src/store/workspace-store.ts';
import { compactFromLog } from '../../src/store/log-compaction.mjs';

const dir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-locks-'));

function typing(n: number): { text: string; updates: Uint8Array[] } {
  const doc = new Y.Doc();
  const updates: Uint8Array[] = [];
  doc.on('update', (u: Uint8Array) => updates.push(u));
  for (let i = 0; i < n; i++) doc.getText('t').insert(i, String.fromCharCode(97 + (i % 26)));
  return { text: doc.getText('t').toString(), updates };
}

const textOf = (s: WorkspaceStore, ws: string) => {
  const d = new Y.Doc();
  const u = s.load(ws).update;
  if (u) Y.applyUpdate(d, u);
  return d.getText('t').toString();
};

describe('storage locks', () => {
  it('appends go through while another connection holds the snapshot database’s write lock; the compaction waiting on it finishes after', async () => {
    const file = path.join(dir(), 'plexus.db');
    const s = new WorkspaceStore(file, { background: true });
    s.create({ id: 'w', name: 'W', state: Y.encodeStateAsUpdate(new Y.Doc()) });
    const { text, updates } = typing(400);
    updates.slice(0, 200).forEach((u) => s.append('w', u));
    // A writer holds the snapshot file's lock (as the worker does while it writes a snapshot).
    const holder = new Database(snapshotFileOf(file));
    holder.pragma('busy_timeout = 0');
    holder.exec('BEGIN IMMEDIATE');
    const compaction = s.compactInBackground('w');
    // No append waits for it: with the old single file each would wait out the 5 s busy timeout and fail.
    const appendBusy = new Database(file);
    appendBusy.pragma('busy_timeout = 0');
    updates.slice(200).forEach((u) => s.append('w', u));
    expect((appendBusy.prepare('SELECT COUNT(*) AS n FROM log WHERE ws = ?').get('w') as { n: number }).n).toBe(400);
    holder.exec('COMMIT');
    holder.close();
    const folded = await compaction;
    expect(folded).toBeGreaterThanOrEqual(200);
    expect(s.logLength('w')).toBe(400 - folded);
    expect((appendBusy.prepare('SELECT COUNT(*) AS n FROM log WHERE ws = ?').get('w') as { n: number }).n).toBe(400 - folded);
    appendBusy.close();
    expect(textOf(s, 'w')).toBe(text);
    // The snapshot is in the file that was locked, and nowhere else.
    expect(s.db.prepare("SELECT name FROM main.sqlite_master WHERE name = 'snapshots'").get()).toBeUndefined();
    const snaps = new Database(snapshotFileOf(file), { readonly: true });
    expect(snaps.prepare('SELECT ws, upto FROM snapshots').all()).toEqual([{ ws: 'w', upto: folded }]);
    snaps.close();
    s.close();
    const again = new WorkspaceStore(file);
    expect(textOf(again, 'w')).toBe(text);
    again.close();
  });

  it('a crash between a snapshot and the drop of the entries it holds: loads skip them, the next compaction drops them', () => {
    const file = path.join(dir(), 'plexus.db');
    const s = new WorkspaceStore(file);
    s.create({ id: 'w', name: 'W', state: Y.encodeStateAsUpdate(new Y.Doc()) });
    const { text, updates } = typing(300);
    updates.forEach((u) => s.append('w', u));
    // The worker's half of a compaction, without the log writer's half.
    expect(compactFromLog(s.db, 'w')).toEqual({ folded: 300, upto: 300 });
    expect((s.db.prepare('SELECT COUNT(*) AS n FROM log').get() as { n: number }).n).toBe(300);
    expect(s.logLength('w')).toBe(0);
    s.close();
    const after = new WorkspaceStore(file);
    expect(textOf(after, 'w')).toBe(text);
    const more = typing(310).updates.slice(300);
    more.forEach((u) => after.append('w', u));
    expect(after.compactLog('w')).toBe(10);
    expect((after.db.prepare('SELECT COUNT(*) AS n FROM log').get() as { n: number }).n).toBe(0);
    after.close();
  });

  it('a database in the one-file layout (snapshots beside the log) opens with every workspace intact', () => {
    const file = path.join(dir(), 'plexus.db');
    const { text, updates } = typing(120);
    const old = new Database(file);
    old.exec(`
      CREATE TABLE workspaces (id TEXT PRIMARY KEY, name TEXT NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL, epoch TEXT NOT NULL);
      CREATE TABLE log (ws TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (ws, seq)) WITHOUT ROWID;
      CREATE TABLE snapshots (ws TEXT PRIMARY KEY, upto INTEGER NOT NULL, data BLOB NOT NULL);`);
    old.prepare('INSERT INTO workspaces VALUES (?, ?, 1, 1, ?)').run('w', 'W', 'e1');
    old.prepare('INSERT INTO snapshots VALUES (?, ?, ?)').run('w', 100, Buffer.from(Y.mergeUpdates(updates.slice(0, 100))));
    updates.slice(100).forEach((u, i) => old.prepare('INSERT INTO log VALUES (?, ?, ?)').run('w', 101 + i, Buffer.from(u)));
    old.prepare('INSERT INTO snapshots VALUES (?, ?, ?)').run('gone', 0, Buffer.from(Y.encodeStateAsUpdate(new Y.Doc())));
    old.close();
    const s = new WorkspaceStore(file);
    expect(textOf(s, 'w')).toBe(text);
    expect(s.db.prepare("SELECT name FROM main.sqlite_master WHERE name = 'snapshots'").get()).toBeUndefined();
    expect((s.db.prepare('SELECT ws FROM snap.snapshots').all() as Array<{ ws: string }>).map((r) => r.ws)).toEqual(['w']);
    expect(s.append('w', typing(121).updates[120]!)).toBe(121);
    s.close();
  });
});
