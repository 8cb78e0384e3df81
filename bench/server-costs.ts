/**
 * Micro-costs of what the Plexus server adds to Hocuspocus on the hot paths, measured in this
 * process with the server's own modules (to attribute the end-to-end figures):
 *  - per keystroke: validateHocuspocusFrame (full Y.decodeUpdate) and the synchronous
 *    write-ahead `store.append` (SQLite WAL insert) that runs before the update is applied,
 *    back to back and paced like typing, with and without SQLite's automatic WAL checkpoints;
 *  - per awareness message: AwarenessGuard.check with many connections on a document;
 *  - periodically: compaction of a 1,000-cell workspace (encodeStateAsUpdate + snapshot write +
 *    log delete), which runs on the event loop every `compactEvery` (1000) entries, 5 s after
 *    the last edit and before unload. Sync step 2 for a joining client encodes the same state;
 *  - at load: Y.applyUpdate of the stored state, with and without an 'update' listener.
 * Run: npx tsx bench/server-costs.ts. Prints figures; asserts nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as Y from 'yjs';
import { initWorkspace, serverOrigin } from '@plexus/shared';
import { WorkspaceStore } from '@plexus/server/store/workspace-store';
import { validateHocuspocusFrame } from '@plexus/server/collab/validate';
import { AwarenessGuard } from '@plexus/server/collab/awareness-guard';
import { fillNotebook, keystrokeUpdates } from './fixtures.ts';
import { fmt, machine, printTable, summarize, tmpDir } from './lib.ts';

function frame(name: string, update: Uint8Array): Uint8Array {
  const out: number[] = [];
  const uint = (n: number) => {
    while (n > 0x7f) {
      out.push((n & 0x7f) | 0x80);
      n = Math.floor(n / 128);
    }
    out.push(n);
  };
  const bytes = (b: Uint8Array) => {
    uint(b.length);
    out.push(...b);
  };
  bytes(new TextEncoder().encode(name));
  uint(0); // Sync
  uint(2); // Update
  bytes(update);
  return Uint8Array.from(out);
}

function time(fn: () => void, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    fn();
    out.push(performance.now() - t);
  }
  return out;
}

const dir = tmpDir('plexus-costs-');
const store = new WorkspaceStore(path.join(dir, 'plexus.db'));
try {
  console.log(`# Server micro-costs (${machine()})\n`);
  const doc = new Y.Doc();
  initWorkspace(doc, { title: 'costs' }, serverOrigin('bench'));
  fillNotebook(doc, 1000, 20);
  const state = Y.encodeStateAsUpdate(doc);
  store.create({ id: 'w_costs', name: 'costs', state });
  const updates = keystrokeUpdates(state, 6000);
  const frames = updates.map((u) => frame('w_costs', u));

  const rows: Array<Array<string | number>> = [];
  const add = (what: string, xs: number[], unit: 'us' | 'ms' = 'us') => {
    const s = summarize(xs);
    const k = unit === 'us' ? 1000 : 1;
    rows.push([what, s.n, fmt(s.p50 * k, unit === 'us' ? 1 : 2), fmt(s.p99 * k, unit === 'us' ? 1 : 2), fmt(s.max * k, unit === 'us' ? 1 : 2), unit]);
  };

  let i = 0;
  add('validateHocuspocusFrame (keystroke)', time(() => validateHocuspocusFrame(frames[i++ % frames.length]!), 6000));
  i = 0;
  const appendTimes = time(() => store.append('w_costs', updates[i++]!), 6000);
  add('store.append (keystroke), back to back', appendTimes);
  const slow = appendTimes.filter((t) => t > 1);
  // Paced like typing: the same call 5 ms apart costs more (cold caches, a fresh WAL frame each time).
  const paced: number[] = [];
  for (let k = 0; k < 400; k++) {
    await new Promise((r) => setTimeout(r, 5));
    const t = performance.now();
    store.append('w_costs', updates[k]!);
    paced.push(performance.now() - t);
  }
  add('store.append (keystroke), 5 ms apart', paced);
  // WAL frames (pages) written per append, and the same appends with automatic checkpoints off.
  const probe = new WorkspaceStore(path.join(dir, 'wal-probe.db'));
  probe.db.pragma('wal_autocheckpoint = 0');
  probe.create({ id: 'w_costs', name: 'costs', state });
  i = 0;
  const noCheckpoint = time(() => probe.append('w_costs', updates[i++]!), 6000);
  const walFrames = (probe.db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>)[0]!.log;
  probe.close();
  add('store.append, back to back, wal_autocheckpoint=0', noCheckpoint);
  const slowNoCheckpoint = noCheckpoint.filter((t) => t > 1);

  // Awareness: a connection renewing its presence on a document with `n` connections.
  for (const n of [20, 100, 400]) {
    const guard = new AwarenessGuard();
    const clocks = new Map<number, number>();
    const entry = (c: number) => [{ clientId: c + 1, clock: (clocks.get(c + 1) ?? 0) + 1, state: { user: { name: `u${c}`, role: 'editor' } } }];
    for (let c = 0; c < n; c++) guard.check('w', { ownerKey: `s${c}`, role: 'editor' }, entry(c), (id) => clocks.get(id));
    let c = 0;
    add(`AwarenessGuard.check (${n} connections on the doc)`, time(() => {
      const k = c++ % n;
      guard.check('w', { ownerKey: `s${k}`, role: 'editor' }, entry(k), (id) => clocks.get(id));
      clocks.set(k + 1, (clocks.get(k + 1) ?? 0) + 1);
    }, 5000));
  }

  // Compaction of the 1000-cell workspace after 1000 log entries (as DurablePersistence.compact).
  const live = new Y.Doc();
  Y.applyUpdate(live, state);
  updates.forEach((u) => Y.applyUpdate(live, u));
  const compactions: number[] = [];
  for (let r = 0; r < 8; r++) {
    const t = performance.now();
    const upto = store.maxLogId('w_costs');
    store.compact('w_costs', Y.encodeStateAsUpdate(live), upto);
    compactions.push(performance.now() - t);
    for (const u of updates.slice(0, 1000)) store.append('w_costs', u); // refill the log (not timed)
  }
  add('compaction: encodeStateAsUpdate + store.compact (1000-cell ws)', compactions, 'ms');
  add('  of which encodeStateAsUpdate (also sync step 2 for a joining client)', time(() => Y.encodeStateAsUpdate(live), 8), 'ms');

  // Loading: applying the stored state into the document. Hocuspocus' Document listens to
  // 'update' from its constructor, so Yjs also encodes the whole loaded state as an update event.
  const applyInto = (listen: boolean) => () => {
    const d = new Y.Doc();
    if (listen) d.on('update', () => undefined);
    Y.applyUpdate(d, state);
  };
  time(applyInto(false), 3); // warm-up
  time(applyInto(true), 3);
  add('load: Y.applyUpdate(1000-cell state), no update listener', time(applyInto(false), 8), 'ms');
  add("load: the same into a doc with an 'update' listener (Hocuspocus' Document)", time(applyInto(true), 8), 'ms');

  printTable(['operation', 'n', 'p50', 'p99', 'max', 'unit'], rows);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  console.log(
    `\nstore.append over 1 ms: ${slow.length} of ${appendTimes.length} (${fmt(sum(slow), 0)} ms in all) with the default WAL auto-checkpoint, ` +
      `${slowNoCheckpoint.length} (${fmt(sum(slowNoCheckpoint), 0)} ms) without: the stalls are WAL checkpoints, run inside an append on the event loop.`,
  );
  console.log(`WAL frames per keystroke append: ${fmt(walFrames / noCheckpoint.length, 2)} pages of 4 KiB for a ~${fmt(sum(updates.map((u) => u.byteLength)) / updates.length, 0)}-byte update.`);
} finally {
  store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
