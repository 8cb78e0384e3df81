/**
 * What a notebook at rest costs every replica, with runs settled when they end (runs.ts,
 * finishExec) against runs left as maps (the way before): the same notebook (bench/fixtures.ts,
 * 20 lines per cell, every fifth cell markdown, a small output per code cell) built both ways,
 * then, alternating, per size: Yjs structs and bytes of the whole state, the time to encode it (a
 * server answering `…/state`, a sync step 2) and to apply it into a fresh document (a browser
 * opening it, a server loading it), p50 over rounds.
 *
 *   node --import tsx bench/doc-at-rest.ts [--cells=1000,10000] [--rounds=7]
 */
import os from 'node:os';
import * as Y from 'yjs';
import { fillNotebook } from './fixtures.ts';
import { fmt, machine, median, printTable } from './lib.ts';

const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const SIZES = arg('cells', '1000,10000').split(',').map(Number);
const ROUNDS = Number(arg('rounds', '7'));

const ways = [
  { name: 'runs settled (now)', settleRuns: true },
  { name: 'runs as maps (before)', settleRuns: false },
];

console.log(`Notebook at rest — ${machine()}; ${ROUNDS} rounds, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
for (const cells of SIZES) {
  const built = ways.map((w) => {
    const doc = new Y.Doc();
    fillNotebook(doc, cells, 20, 5, { settleRuns: w.settleRuns });
    const state = Y.encodeStateAsUpdate(doc);
    return { ...w, doc, state, structs: Y.decodeUpdate(state).structs.length, encode: [] as number[], apply: [] as number[] };
  });
  for (let r = 0; r <= ROUNDS; r++) {
    for (const b of r % 2 ? [...built].reverse() : built) {
      let t = performance.now();
      Y.encodeStateAsUpdate(b.doc);
      const enc = performance.now() - t;
      t = performance.now();
      Y.applyUpdate(new Y.Doc(), b.state);
      const app = performance.now() - t;
      if (r > 0) {
        b.encode.push(enc);
        b.apply.push(app);
      }
    }
  }
  const base = built[1]!;
  console.log(`\n${cells.toLocaleString('en')} cells`);
  printTable(
    ['runs', 'structs', 'MiB', 'encode p50 ms', 'apply p50 ms', 'apply / before'],
    built.map((b) => [b.name, b.structs.toLocaleString('en'), fmt(b.state.length / 1048576, 1), fmt(median(b.encode), 0), fmt(median(b.apply), 0), fmt(median(b.apply) / median(base.apply), 2)]),
  );
}
