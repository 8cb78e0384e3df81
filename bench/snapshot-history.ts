/**
 * What a workspace's stored snapshot costs after it has been lived in, with the log folded the way
 * compaction folds it now (`foldUpdates`: applied into a document, deleted content collected)
 * against the way before (`Y.mergeUpdates`, which keeps every deleted character and every
 * replaced output). Per size, one notebook (bench/fixtures.ts: 20 lines per cell, every fifth cell
 * markdown) lives through `--sessions` sessions; in each, the kernel runs every code cell again
 * (its outputs replaced, the run settled as the kernel writes it) and someone types 1,000
 * keystrokes. The log is folded every 1,000 entries and at the end of each session (an idle
 * workspace, an unload), both ways from the same entries. Printed: the stored snapshot at the end
 * (bytes), loading it (applying it into a fresh document, as the server does; p50 over rounds),
 * the fold's time (all folds summed; and the first, onto a snapshot with no history yet, where a
 * merge is at its cheapest), and the document's own encoded size for reference.
 *
 *   node --import tsx bench/snapshot-history.ts [--cells=1000,5000] [--sessions=10] [--rounds=5]
 */
import os from 'node:os';
import * as Y from 'yjs';
import { KERNEL_ORIGIN, finishExec, listCells, startExec } from '@plexus/shared';
import { foldUpdates, mergeInTree } from '../server/src/store/log-compaction.mjs';
import { fillNotebook, keystrokeUpdates } from './fixtures.ts';
import { fmt, machine, median, printTable } from './lib.ts';

const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const SIZES = arg('cells', '1000,5000').split(',').map(Number);
const SESSIONS = Number(arg('sessions', '10'));
const ROUNDS = Number(arg('rounds', '5'));
const COMPACT_EVERY = 1000;

const ways = [
  { name: 'collected (now)', fold: (snap: Uint8Array, entries: Uint8Array[]) => foldUpdates([snap, ...entries]) },
  { name: 'merged (before)', fold: (snap: Uint8Array, entries: Uint8Array[]) => Y.mergeUpdates([snap, mergeInTree(entries)!]) },
];

/** Runs every code cell again: a new run with a new output, settled when it ends (runs.ts). */
function rerunAll(doc: Y.Doc, session: number): void {
  let n = 0;
  for (const cell of listCells(doc)) {
    if (cell.kind !== 'code') continue;
    const run = startExec(doc, cell, { runId: `k_${session}_${n}`, requestId: null, trigger: 'run-all', requestedBy: null, count: n, generation: session, startedAt: 0, sourceHash: '', source: '', defines: [] }, KERNEL_ORIGIN);
    finishExec(run, { state: 'done', outputs: [{ type: 'text', text: `Out[${n}] session ${session}: Array(${(n * 37) % 500}) [${n}, ${n + 1}, ${n + 2}, …]` }] }, KERNEL_ORIGIN);
    n++;
  }
}

console.log(`Stored snapshot after ${SESSIONS} sessions — ${machine()}; ${ROUNDS} rounds, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
for (const cells of SIZES) {
  const live = new Y.Doc();
  fillNotebook(live, cells, 20, 5);
  const first = Y.encodeStateAsUpdate(live);
  const folds = ways.map((w) => ({ ...w, snapshot: first, foldMs: 0, firstFoldMs: 0, folds: 0 }));
  let entries: Uint8Array[] = [];
  let turn = 0;
  const foldNow = () => {
    if (!entries.length) return;
    // Both ways from the same entries, alternating which goes first.
    for (const f of turn++ % 2 ? [...folds].reverse() : folds) {
      const t = performance.now();
      f.snapshot = f.fold(f.snapshot, entries);
      f.foldMs += performance.now() - t;
      if (f.folds++ === 0) f.firstFoldMs = performance.now() - t;
    }
    entries = [];
  };
  live.on('update', (u: Uint8Array) => {
    entries.push(u);
    if (entries.length >= COMPACT_EVERY) foldNow();
  });
  for (let s = 1; s <= SESSIONS; s++) {
    rerunAll(live, s);
    // Someone types (on a copy, then applied here as their updates arrive).
    for (const u of keystrokeUpdates(Y.encodeStateAsUpdate(live), 1000, s)) Y.applyUpdate(live, u);
    foldNow(); // idle / unload
  }
  const own = Y.encodeStateAsUpdate(live).byteLength;
  const loads = folds.map(() => [] as number[]);
  for (let r = 0; r <= ROUNDS; r++) {
    folds.forEach((f, i) => {
      const t = performance.now();
      const doc = new Y.Doc();
      Y.applyUpdate(doc, f.snapshot);
      if (r > 0) loads[i]!.push(performance.now() - t); // round 0 warms up
      if (r === ROUNDS && Y.encodeStateAsUpdate(doc).byteLength !== own) throw new Error(`${f.name}: the folded snapshot does not load to the document`);
      doc.destroy();
    });
  }
  console.log(`\n${cells} cells, ${SESSIONS} sessions (${folds[0]!.folds} folds); the document itself encodes to ${fmt(own / 1024, 0)} KiB`);
  printTable(
    ['fold', 'snapshot KiB', 'load p50 ms', 'all folds ms', 'first fold ms'],
    folds.map((f, i) => [f.name, fmt(f.snapshot.byteLength / 1024, 0), fmt(median(loads[i]!), 1), fmt(f.foldMs, 0), fmt(f.firstFoldMs, 0)]),
  );
  const [now, before] = folds;
  console.log(`now / before: snapshot ${fmt(now!.snapshot.byteLength / before!.snapshot.byteLength, 2)}×, load ${fmt(median(loads[0]!) / median(loads[1]!), 2)}×, folding ${fmt(now!.foldMs / before!.foldMs, 2)}×`);
}
