/**
 * A workspace whose stored state breaks the document schema (written here straight into the
 * store, as older data or a bug would have) never locks people out: its owner sees what is wrong
 * and repairs it in the page, keeping every valid part; an editor is told to ask the owner.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import * as Y from 'yjs';
import { createCell, initWorkspace, serverOrigin, userOrigin } from '@plexus/shared';
import { snapshotFileOf } from '@plexus/server/store/workspace-store';
import { ALICE, BOB, cellTexts, expect, test, waitLive } from '../support/plexus.ts';
import { readState } from '../support/server.ts';

test('the owner repairs a workspace that breaks the schema; an editor is told to ask the owner', async ({ plexus, actor }) => {
  // A stored workspace with one good cell and one entry that is not a cell at all.
  const id = `w_recover${Date.now().toString(36)}`;
  const doc = new Y.Doc();
  initWorkspace(doc, { title: 'Needs recovery' }, serverOrigin('test'));
  const cellId = createCell(doc, { kind: 'code', source: 'kept = 1', author: 'alice' }, userOrigin('alice'));
  doc.getMap('cells').set('c_broken', 'not a cell');
  const file = path.join(readState().dataDir, 'plexus.db');
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  // Snapshots live in their own file beside the log (the store attaches it as `snap`).
  db.prepare('ATTACH DATABASE ? AS snap').run(snapshotFileOf(file));
  const now = Date.now();
  db.prepare('INSERT INTO workspaces (id, name, created, updated, epoch) VALUES (?, ?, ?, ?, ?)').run(id, 'Needs recovery', now, now, 'e_test');
  db.prepare('INSERT INTO snap.snapshots (ws, upto, data) VALUES (?, 0, ?)').run(id, Buffer.from(Y.encodeStateAsUpdate(doc)));
  db.close();

  const editor = await plexus.share(id, 'editor');
  const bob = await actor(BOB);
  await bob.page.goto(`${plexus.url}/w/${id}?token=${encodeURIComponent(editor.token)}`);
  await expect(bob.page.getByTestId('session-problem')).toContainText('needs to be recovered by its owner');
  await expect(bob.page.getByTestId('recovery')).toHaveCount(0);

  const alice = await actor(ALICE);
  await alice.page.goto(`${plexus.url}/w/${id}?token=${encodeURIComponent(plexus.ownerToken)}`);
  await expect(alice.page.getByTestId('recovery-problem')).toContainText('do not match the workspace document schema');
  await alice.page.getByText('1 problem found').click();
  await expect(alice.page.getByTestId('recovery')).toContainText('cells/c_broken');
  await expect(alice.page.getByTestId('recover-last-good')).toHaveCount(0); // the snapshot itself is bad: no earlier good version
  await alice.page.getByTestId('recover-repair').click();
  await waitLive(alice.page);
  // Live means synced; the cell's editor renders right after (a busy machine shows the gap).
  await expect.poll(() => cellTexts(alice.page, cellId)).toEqual({ dom: 'kept = 1', y: 'kept = 1' });

  // Bob's page loads it too once he reloads.
  await bob.page.reload();
  await waitLive(bob.page);
  await expect.poll(() => cellTexts(bob.page, cellId)).toEqual({ dom: 'kept = 1', y: 'kept = 1' });
});
