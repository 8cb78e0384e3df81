/**
 * What enforcing the document schema costs the server, side by side with the same work without
 * it, in one run: each incoming update is applied to the shadow replica (as before) and, with the
 * schema on, the transaction's added and deleted items are checked against the schema and the
 * sender's rights (shared doc-schema/check.ts). Three kinds of update on a 1,000-cell workspace:
 * keystrokes in a code cell, new cells, chat messages. Then the whole-document check every load
 * runs (checkDocument), for the same workspace. Alternates A/B per update so that both see the
 * same machine state.
 * Then the server's whole decision per incoming update, both ways side by side (collab/shadow.ts):
 * the shadow way (apply to the shadow replica and check the transaction there, then apply to the
 * live document) against the pre-check way (decode, `precheckUpdate` against the live document,
 * then apply to it) — the second apply it saves, and the replica it does not keep.
 * Run: npx tsx bench/schema-check.ts. Prints figures; asserts nothing.
 */
import * as Y from 'yjs';
import { checkDocument, checkTransaction, createCell, decodeForPrecheck, initWorkspace, postMessage, precheckUpdate, serverOrigin, userOrigin, type CellId } from '@plexus/shared';
import { fillNotebook, keystrokeUpdates } from './fixtures.ts';
import { fmt, machine, printTable, summarize } from './lib.ts';

const doc = new Y.Doc();
initWorkspace(doc, { title: 'schema' }, serverOrigin('bench'));
fillNotebook(doc, 1000, 20);
const state = Y.encodeStateAsUpdate(doc);

/** Updates made by another replica, relative to `state`, one per call of `make`. */
function updatesOf(n: number, make: (d: Y.Doc, i: number) => void): Uint8Array[] {
  const d = new Y.Doc();
  Y.applyUpdate(d, state);
  const out: Uint8Array[] = [];
  d.on('update', (u: Uint8Array) => out.push(u));
  for (let i = 0; i < n; i++) make(d, i);
  return out;
}

const me = userOrigin('u_bench', 'Bench');
const kinds: Array<[string, Uint8Array[]]> = [
  ['keystroke in a code cell', keystrokeUpdates(state, 4000)],
  ['new code cell', updatesOf(1000, (d, i) => createCell(d, { kind: 'code', source: `x${i} = ${i}`, author: 'u_bench', id: `c_new${i}` as CellId }, me))],
  ['chat message', updatesOf(1000, (d, i) => postMessage(d, { author: { id: 'u_bench', name: 'Bench', kind: 'person' }, text: `message ${i}` }, me))],
];

function replica(): Y.Doc {
  const d = new Y.Doc();
  Y.applyUpdate(d, state);
  return d;
}

console.log(`# Document schema enforcement: cost per update (${machine()})\n`);
const rows: Array<Array<string | number>> = [];
for (const [what, updates] of kinds) {
  const plain = replica();
  const checked = replica();
  let violations = 0;
  checked.on('afterTransaction', (tr: Y.Transaction) => (violations += checkTransaction(tr, 'person').length));
  const a: number[] = [];
  const b: number[] = [];
  for (const u of updates) {
    let t = performance.now();
    Y.applyUpdate(plain, u, 'remote');
    a.push(performance.now() - t);
    t = performance.now();
    Y.applyUpdate(checked, u, 'remote');
    b.push(performance.now() - t);
  }
  if (violations) throw new Error(`${violations} violations in legitimate updates`);
  const sa = summarize(a);
  const sb = summarize(b);
  rows.push([what, sa.n, fmt(sa.p50 * 1000, 1), fmt(sb.p50 * 1000, 1), fmt(sb.p50 / sa.p50, 2), fmt(sa.p99 * 1000, 1), fmt(sb.p99 * 1000, 1), fmt((sb.mean - sa.mean) * 1000, 1)]);
}
printTable(['update', 'n', 'apply p50 µs', 'apply+check p50 µs', 'ratio p50', 'apply p99 µs', 'apply+check p99 µs', 'added mean µs'], rows);

console.log('\n## Deciding an incoming update and applying it: shadow way vs pre-check way (same updates, alternating)\n');
const ways: Array<Array<string | number>> = [];
for (const [what, updates] of kinds) {
  const shadow = replica();
  const liveA = replica();
  const liveB = replica();
  let violations = 0;
  shadow.on('afterTransaction', (tr: Y.Transaction) => (violations += checkTransaction(tr, 'person').length));
  let declined = 0;
  const a: number[] = [];
  const b: number[] = [];
  for (const u of updates) {
    let t = performance.now();
    Y.applyUpdate(shadow, u, 'remote');
    Y.applyUpdate(liveA, u, 'remote');
    a.push(performance.now() - t);
    t = performance.now();
    if (!precheckUpdate(liveB, decodeForPrecheck(u), 'person').ok) declined++;
    Y.applyUpdate(liveB, u, 'remote');
    b.push(performance.now() - t);
  }
  if (violations) throw new Error(`${violations} violations in legitimate updates`);
  const sa = summarize(a);
  const sb = summarize(b);
  ways.push([what, sa.n, declined, fmt(sa.p50 * 1000, 1), fmt(sb.p50 * 1000, 1), fmt(sb.p50 / sa.p50, 2), fmt(sa.p99 * 1000, 1), fmt(sb.p99 * 1000, 1), fmt(sb.mean / sa.mean, 2)]);
}
printTable(['update', 'n', 'left to the shadow', 'shadow way p50 µs', 'pre-check way p50 µs', 'ratio p50', 'shadow way p99 µs', 'pre-check way p99 µs', 'ratio mean'], ways);

const loads: number[] = [];
for (let i = 0; i < 20; i++) {
  const d = replica();
  const t = performance.now();
  const v = checkDocument(d);
  loads.push(performance.now() - t);
  if (v.length) throw new Error('the benchmark workspace is invalid');
}
const applyTimes: number[] = [];
for (let i = 0; i < 20; i++) {
  const t = performance.now();
  replica();
  applyTimes.push(performance.now() - t);
}
const sl = summarize(loads);
const sa = summarize(applyTimes);
console.log(`\ncheckDocument at load, 1,000 cells × 20 lines (${(state.byteLength / 1024).toFixed(0)} KiB): p50 ${fmt(sl.p50, 2)} ms (applying the stored state: p50 ${fmt(sa.p50, 2)} ms; ratio ${fmt(sl.p50 / sa.p50, 2)})`);
