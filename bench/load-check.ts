/**
 * What the check of a loaded document costs the load, side by side (speed issue, gap 3): one
 * stored workspace (a collected snapshot alone, as an idle workspace is stored: bench/fixtures.ts'
 * notebook, 20 lines per cell, every fifth markdown) loaded again and again through the server's own
 * `DurablePersistence.onLoadDocument` on the same SQLite store, alternating two ways:
 * - `checked before`: by a persistence that wrote or checked that snapshot already (as after a
 *   creation, a fold, or a first load since the process started): the document is not checked again;
 * - `first since start`: by a persistence that has not (a process just restarted): the whole
 *   document is checked against the workspace schema (recovery.ts `diagnose`) before it is served.
 * - `checked before, in parts`: the same snapshot stored in parts (store/split-state.mjs, §41),
 *   which the load applies a part per turn of the event loop.
 * Prints the load's p50 / p90 per way and their ratios.
 *
 *   node --import tsx bench/load-check.ts [--cells=1000,10000] [--rounds=9]
 */
import os from 'node:os';
import path from 'node:path';
import * as Y from 'yjs';
import type { onLoadDocumentPayload } from '@hocuspocus/server';
import { DurablePersistence } from '@plexus/server/collab/persistence';
import { createLogger } from '@plexus/server/log';
import { WorkspaceStore } from '@plexus/server/store/workspace-store';
import { storableState } from '../server/src/store/split-state.mjs';
import { fillNotebook } from './fixtures.ts';
import { fmt, machine, printTable, tmpDir } from './lib.ts';

const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const SIZES = arg('cells', '1000,10000').split(',').map(Number);
const ROUNDS = Number(arg('rounds', '9'));
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

console.log(`Loading a stored workspace, its check or not — ${machine()}; ${ROUNDS} rounds, load average ${load()}`);
const store = new WorkspaceStore(path.join(tmpDir('plexus-bench-load-check-'), 'plexus.db'));
const log = createLogger('warn');
const opts = { compactEvery: 1_000_000, compactIdleMs: 3_600_000 };
const rows: string[][] = [];
try {
  for (const cells of SIZES) {
    const src = new Y.Doc();
    fillNotebook(src, cells, 20, 5);
    const id = `load-check-${cells}`;
    store.create({ id, name: id, state: Y.encodeStateAsUpdate(src) });
    const parts = store.loadParts(id);
    if (!parts.collected || parts.entries.length) throw new Error('expected one collected snapshot alone');
    // One persistence per way, on the same store: the first has this snapshot among those it checked.
    const checkedBefore = new DurablePersistence(store, log, opts);
    checkedBefore.markChecked(id);
    // The same snapshot stored in parts (as the storage worker stores a large one, §41).
    const inParts = `${id}-parts`;
    store.create({ id: inParts, name: inParts, state: new Uint8Array([0, 0]) });
    store.compact(inParts, storableState(Y.encodeStateAsUpdate(src)), 0);
    if (store.loadParts(inParts).snapshot!.length < 2 && cells >= 1000) throw new Error('expected a snapshot in parts');
    checkedBefore.markChecked(inParts);
    const ways = [
      { name: 'checked before', id, persistence: () => checkedBefore, ms: [] as number[] },
      { name: 'first since start', id, persistence: () => new DurablePersistence(store, log, opts), ms: [] as number[] },
      { name: 'checked before, in parts', id: inParts, persistence: () => checkedBefore, ms: [] as number[] },
    ];
    for (let r = 0; r < ROUNDS + 1; r++) {
      for (const way of r % 2 ? [...ways].reverse() : ways) {
        const id = way.id;
        const p = way.persistence();
        const document = new Y.Doc();
        const t = performance.now();
        await p.onLoadDocument({ documentName: id, document, requestHeaders: {} } as unknown as onLoadDocumentPayload);
        const ms = performance.now() - t;
        if (r > 0) way.ms.push(ms); // round 0 warms up
        document.destroy();
      }
    }
    const [a, b] = ways;
    if (checkedBefore.loads.checked !== 0 || checkedBefore.loads.trusted !== 2 * (ROUNDS + 1)) throw new Error(`the checked way checked again: ${JSON.stringify(checkedBefore.loads)}`);
    for (const w of ways) rows.push([String(cells), w.name, fmt(pct(w.ms, 50)), fmt(pct(w.ms, 90))]);
    rows.push([String(cells), 'ratio checked before / first since start', fmt(pct(a!.ms, 50) / pct(b!.ms, 50)), '']);
    rows.push([String(cells), 'ratio in parts / whole (checked before)', fmt(pct(ways[2]!.ms, 50) / pct(a!.ms, 50)), '']);
  }
} finally {
  store.close();
}
printTable(['cells', 'load', 'p50 ms', 'p90 ms'], rows);
console.log(`load average at end ${load()}`);
