/**
 * What the node's metrics (server/src/ops/metrics.ts) add to each document update, measured in
 * this process with the server's own modules:
 *  - the write-ahead append (`store.append`, SQLite WAL insert) plain and timed into the latency
 *    histogram (`timeAppends`), in interleaved rounds so both see the same machine load;
 *  - a keystroke update applied to a Hocuspocus document with and without the metrics' update
 *    listener (received / relayed counts), interleaved the same way;
 *  - the instrumentation alone in a tight loop: one append observation, one counted update.
 * Run: node --import tsx bench/metrics-overhead.ts. Prints figures; asserts nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as Y from 'yjs';
import { Document, Hocuspocus, type afterLoadDocumentPayload } from '@hocuspocus/server';
import { initWorkspace, serverOrigin } from '@plexus/shared';
import { WorkspaceStore } from '@plexus/server/store/workspace-store';
import { NodeMetrics, timeAppends } from '@plexus/server/ops/metrics';
import { fillNotebook, keystrokeUpdates } from './fixtures.ts';
import { fmt, machine, median, printTable, tmpDir } from './lib.ts';

const ROUNDS = 40;
const PER_ROUND = 250;

/** Mean µs per call of `fn(i)` over `n` calls. */
function perCall(n: number, fn: (i: number) => void): number {
  const t = performance.now();
  for (let i = 0; i < n; i++) fn(i);
  return ((performance.now() - t) * 1000) / n;
}

const hocuspocus = new Hocuspocus({ quiet: true });
const metrics = new NodeMetrics('bench', {
  version: 'bench',
  hocuspocus: () => hocuspocus,
  sockets: () => [],
  ywsPeers: () => 0,
  ywsKinds: () => ({ person: 0, service: 0 }),
  kernelsRunning: () => 0,
  httpInFlight: () => 0,
  accepting: () => true,
  draining: () => false,
});

const dir = tmpDir('plexus-metrics-');
const store = new WorkspaceStore(path.join(dir, 'plexus.db'));
try {
  console.log(`# Metrics overhead per update (${machine()})\n`);
  const doc = new Y.Doc();
  initWorkspace(doc, { title: 'metrics' }, serverOrigin('bench'));
  fillNotebook(doc, 200, 20);
  const state = Y.encodeStateAsUpdate(doc);
  store.create({ id: 'w', name: 'metrics', state });
  const updates = keystrokeUpdates(state, ROUNDS * PER_ROUND * 2);

  // 1. The append, plain and timed, alternating rounds (each round: PER_ROUND appends each).
  const plain = store.append.bind(store);
  timeAppends(store, metrics.onAppend);
  const timed = store.append.bind(store);
  let k = 0;
  const plainRounds: number[] = [];
  const timedRounds: number[] = [];
  perCall(500, () => plain('w', updates[k++ % updates.length]!)); // warm-up
  perCall(500, () => timed('w', updates[k++ % updates.length]!));
  const appendRound = (append: typeof plain, into: number[]) => into.push(perCall(PER_ROUND, () => append('w', updates[k++ % updates.length]!)));
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      appendRound(plain, plainRounds);
      appendRound(timed, timedRounds);
    } else {
      appendRound(timed, timedRounds);
      appendRound(plain, plainRounds);
    }
  }

  // 2. A keystroke applied to a Hocuspocus document, without and with the metrics' listener.
  const apply = (listen: boolean) => {
    const d = new Document('w', {}, { flushDelay: false });
    Y.applyUpdate(d, state);
    if (listen) void metrics.extension.afterLoadDocument!({ documentName: `w${Math.random()}`, document: d } as unknown as afterLoadDocumentPayload);
    return d;
  };
  const bare = apply(false);
  const counted = apply(true);
  const applyBare: number[] = [];
  const applyCounted: number[] = [];
  const origin = { source: 'connection' };
  const noTransaction = null as unknown as Y.Transaction; // the listeners read only the update and origin
  let u = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const from = u;
    const bareRound = () => applyBare.push(perCall(PER_ROUND, (i) => Y.applyUpdate(bare, updates[from + i]!, origin)));
    const countedRound = () => applyCounted.push(perCall(PER_ROUND, (i) => Y.applyUpdate(counted, updates[from + i]!, origin)));
    if (r % 2 === 0) {
      bareRound();
      countedRound();
    } else {
      countedRound();
      bareRound();
    }
    u += PER_ROUND;
  }

  // 3. The instrumentation alone.
  const N = 1_000_000;
  perCall(N, () => metrics.onAppend(0.03, 40)); // warm-up
  const observeUs = median([0, 1, 2].map(() => perCall(N, () => metrics.onAppend(0.03, 40))));
  const update = updates[0]!;
  perCall(N, () => counted.emit('update', [update, origin, counted, noTransaction]));
  const listenerUs = median([0, 1, 2].map(() => perCall(N, () => counted.emit('update', [update, origin, counted, noTransaction])))) -
    median([0, 1, 2].map(() => perCall(N, () => bare.emit('update', [update, origin, bare, noTransaction]))));

  const [p, t] = [median(plainRounds), median(timedRounds)];
  const [a, c] = [median(applyBare), median(applyCounted)];
  printTable(['per update', 'without metrics', 'with metrics', 'added', 'unit'], [
    ['store.append (write-ahead, SQLite)', fmt(p, 2), fmt(t, 2), fmt(t - p, 2), 'µs'],
    ['Y.applyUpdate of a keystroke (Hocuspocus Document)', fmt(a, 2), fmt(c, 2), fmt(c - a, 2), 'µs'],
    ['  instrumentation alone: append observed (timing + histogram)', '', '', fmt(observeUs * 1000, 0), 'ns'],
    ['  instrumentation alone: update counted (received + relayed)', '', '', fmt(listenerUs * 1000, 0), 'ns'],
  ]);
  console.log(`\nMedians of ${ROUNDS} interleaved rounds of ${PER_ROUND} calls; the tight loops: ${N.toLocaleString('en')} calls, median of 3.`);
  const scrapes: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    bytes = (await metrics.render()).length;
    scrapes.push(performance.now() - t0);
  }
  console.log(`One scrape (rendering every metric): ${fmt(median(scrapes), 2)} ms, ${bytes} bytes.`);
} finally {
  store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
