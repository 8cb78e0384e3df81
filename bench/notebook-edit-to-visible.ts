/// <reference lib="dom" />
/**
 * Notebook edit-to-visible latency in a browser, against the server as shipped (kernel on):
 * a stock Hocuspocus client A (Node) edits the root of a 100-cell chain of trivial cells and
 * requests a run; measured until the last cell's new output is in browser B's DOM (the app's
 * rendered output, not just its Y.Doc). One JavaScript chain (`a1 = r`, `a2 = a1 + 1`, …) and one
 * SQL chain (`s1: SELECT r AS v`, `s2: SELECT v + 1 AS v FROM s1`, …). Both clocks are this
 * machine's (Date.now in Node, performance.timeOrigin + now in the page).
 * Then the root is edited and re-run 10×/s for 5 s: after every transaction A receives, it counts
 * the cells running (must never exceed 1) and records each cell's exec records (run id → final
 * state): runs per cell and how many were superseded (cancelled); B must end on the last edit's
 * output.
 * (bench/kernel.ts, on the kernel branch, measures the same chains with two Node clients.)
 *
 *   npx tsx bench/notebook-edit-to-visible.ts [--rounds=8]
 */
import * as Y from 'yjs';
import { createCell, listCells, readCellRun, requestRun, setCellSource, userOrigin } from '@plexus/shared';
import { clientDir, launchChromium, openWorkspacePage, outputShown } from './browser.ts';
import { connectClient, createWorkspace, fmt, machine, printTable, sleep, spawnServer, summarize, until } from './lib.ts';

const ROUNDS = Number(process.argv.find((a) => a.startsWith('--rounds='))?.split('=')[1] ?? 8);
const N = 100;
const who = { id: 'bench', name: 'Bench' };
const origin = userOrigin('bench', 'Bench');

function makeChain(doc: Y.Doc, kind: 'code' | 'sql'): string[] {
  const ids: string[] = [];
  for (let i = 1; i <= N; i++) {
    if (kind === 'code') ids.push(createCell(doc, { kind, author: 'bench', source: i === 1 ? 'const a1 = 0;' : `const a${i} = a${i - 1} + 1;${i === N ? `\na${i}` : ''}` }, origin));
    else ids.push(createCell(doc, { kind, author: 'bench', name: `s${i}`, source: i === 1 ? 'SELECT 0 AS v' : `SELECT v + 1 AS v FROM s${i - 1}` }, origin));
  }
  return ids;
}

const rootSource = (kind: 'code' | 'sql', r: number) => (kind === 'code' ? `const a1 = ${r};` : `SELECT ${r} AS v`);

async function main() {
  const server = await spawnServer('plexus', { env: { PLEXUS_CLIENT_DIR: clientDir() } });
  const browser = await launchChromium();
  try {
    const ws = await createWorkspace(server, 'Notebook latency');
    const a = connectClient(server.url, ws, server.token);
    await a.synced;
    const chains = { code: makeChain(a.doc, 'code'), sql: makeChain(a.doc, 'sql') };
    await until(() => a.provider.unsyncedChanges === 0, 20_000, 5, 'cells stored');
    const page = await openWorkspacePage(browser, server.url, ws, server.token, { id: 'u_bench_b', name: 'B' });
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="cell"]').length >= n, 2 * N, { timeout: 30_000 });

    const rows: Array<Array<string | number>> = [];
    for (const kind of ['code', 'sql'] as const) {
      const ids = chains[kind];
      const last = ids[N - 1]!;
      const samples: number[] = [];
      // Round 0 warms the kernel (runtimes start, values are created); it is not counted.
      for (let r = 0; r <= ROUNDS; r++) {
        const value = 1000 + r + (kind === 'sql' ? 500 : 0);
        const seen = outputShown(page, last, { is: String(value + N - 1) }).then((o) => o.at);
        const t0 = Date.now();
        setCellSource(a.doc, ids[0]!, rootSource(kind, value), origin);
        requestRun(a.doc, ids[0]!, who, origin);
        const t1 = await seen;
        if (r > 0) samples.push(t1 - t0);
      }
      const s = summarize(samples);
      rows.push([kind === 'code' ? 'JS chain (100 cells)' : 'SQL chain (100 cells)', samples.length, fmt(s.p50, 0), fmt(s.p95, 0), fmt(s.max, 0), fmt(s.p50 / N, 1)]);
    }
    console.log(`\nEdit root in client A → last output visible in browser B (${machine()})`);
    printTable(['chain', 'runs', 'p50 ms', 'p95 ms', 'max ms', 'p50 per cell ms'], rows);

    // Edit storm: root edited and re-run 10×/s for 5 s.
    const ids = chains.code;
    const runs = new Map<string, Map<string, string>>();
    let maxRunning = 0;
    const chainSet = new Set(ids);
    const watch = () => {
      let running = 0;
      for (const c of listCells(a.doc)) {
        if (!chainSet.has(c.id)) continue;
        const v = readCellRun(a.doc, c);
        if (v?.exec) {
          const m = runs.get(c.id) ?? new Map<string, string>();
          m.set(v.exec.runId, v.exec.state);
          runs.set(c.id, m);
          if (v.exec.state === 'running') running++;
        }
      }
      maxRunning = Math.max(maxRunning, running);
    };
    a.doc.on('afterTransaction', watch);
    const start = Date.now();
    let r = 0;
    while (Date.now() - start < 5000) {
      r++;
      setCellSource(a.doc, ids[0]!, rootSource('code', 5000 + r), origin);
      requestRun(a.doc, ids[0]!, who, origin);
      await sleep(100);
    }
    const final = String(5000 + r + N - 1);
    await outputShown(page, ids[N - 1]!, { is: final });
    a.doc.off('afterTransaction', watch);
    const chainRuns = ids.map((id) => runs.get(id) ?? new Map());
    const perCell = chainRuns.map((m) => m.size);
    const cancelled = chainRuns.reduce((n, m) => n + [...m.values()].filter((s) => s === 'cancelled').length, 0);
    const done = chainRuns.reduce((n, m) => n + [...m.values()].filter((s) => s === 'done').length, 0);
    console.log(`\nRoot edited + run 10×/s for 5 s (${r} edits) on the 100-cell JS chain`);
    printTable(
      ['edits', 'max cells running at once', 'runs per cell (min / median / max)', 'runs seen done', 'runs seen cancelled (superseded)', 'B shows last edit'],
      [[r, maxRunning, `${Math.min(...perCell)} / ${[...perCell].sort((x, y) => x - y)[N >> 1]} / ${Math.max(...perCell)}`, done, cancelled, 'yes']],
    );
    if (maxRunning > 1) process.exitCode = 1;
    a.destroy();
  } finally {
    await browser.close();
    await server.stop();
  }
}

await main();
