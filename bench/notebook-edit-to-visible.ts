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
 *   npx tsx bench/notebook-edit-to-visible.ts [--rounds=8] [--servers=plexus,plexus-no-ahead]
 * With several server kinds (bench/lib.ts), each has its own workspace and browser page, and every
 * round runs the chains on each in turn; ratios are to the first. The edit storm runs on the first.
 */
import os from 'node:os';
import * as Y from 'yjs';
import { createCell, listCells, readCellRun, requestRun, setCellSource, userOrigin } from '@plexus/shared';
import { clientDir, launchChromium, openWorkspacePage, outputShown } from './browser.ts';
import { connectClient, createWorkspace, fmt, machine, printTable, sleep, spawnServer, summarize, until, type ServerKind } from './lib.ts';

const ROUNDS = Number(process.argv.find((a) => a.startsWith('--rounds='))?.split('=')[1] ?? 8);
/** Server kinds (bench/lib.ts) measured side by side; the first is the one the ratios divide by. */
const SERVERS = (process.argv.find((a) => a.startsWith('--servers='))?.split('=')[1] ?? 'plexus').split(',') as Array<Exclude<ServerKind, 'static'>>;
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

interface Side {
  kind: Exclude<ServerKind, 'static'>;
  server: Awaited<ReturnType<typeof spawnServer>>;
  a: ReturnType<typeof connectClient>;
  chains: { code: string[]; sql: string[] };
  page: Awaited<ReturnType<typeof openWorkspacePage>>;
}

async function openSide(kind: Exclude<ServerKind, 'static'>, browser: Awaited<ReturnType<typeof launchChromium>>): Promise<Side> {
  const server = await spawnServer(kind, { env: { PLEXUS_CLIENT_DIR: clientDir() } });
  const ws = await createWorkspace(server, 'Notebook latency');
  const a = connectClient(server.url, ws, server.token);
  await a.synced;
  const chains = { code: makeChain(a.doc, 'code'), sql: makeChain(a.doc, 'sql') };
  await until(() => a.provider.unsyncedChanges === 0, 20_000, 5, 'cells stored');
  const page = await openWorkspacePage(browser, server.url, ws, server.token, { id: 'u_bench_b', name: 'B' });
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="cell"]').length >= n, 2 * N, { timeout: 30_000 });
  return { kind, server, a, chains, page };
}

/** One chain run on one side: edit the root in A, until B's page shows the last cell's new output (ms). */
async function chainOnce(side: Side, kind: 'code' | 'sql', value: number): Promise<number> {
  const ids = side.chains[kind];
  const seen = outputShown(side.page, ids[N - 1]!, { is: String(value + N - 1) }).then((o) => o.at);
  const t0 = Date.now();
  setCellSource(side.a.doc, ids[0]!, rootSource(kind, value), origin);
  requestRun(side.a.doc, ids[0]!, who, origin);
  return (await seen) - t0;
}

async function main() {
  const browser = await launchChromium();
  const sides: Side[] = [];
  try {
    for (const kind of SERVERS) sides.push(await openSide(kind, browser));
    const samples = new Map<string, number[]>();
    // Round 0 warms each kernel (runtimes start, values are created); it is not counted. Each
    // round runs on every server in turn (the first one alternates), so drifting load hits them alike.
    for (let r = 0; r <= ROUNDS; r++) {
      const order = r % 2 ? [...sides].reverse() : sides;
      for (const side of order) {
        for (const kind of ['code', 'sql'] as const) {
          const ms = await chainOnce(side, kind, 1000 + r + (kind === 'sql' ? 500 : 0));
          if (r > 0) samples.set(`${side.kind}/${kind}`, [...(samples.get(`${side.kind}/${kind}`) ?? []), ms]);
        }
      }
    }
    const rows: Array<Array<string | number>> = [];
    for (const side of sides) {
      for (const kind of ['code', 'sql'] as const) {
        const s = summarize(samples.get(`${side.kind}/${kind}`)!);
        const base = summarize(samples.get(`${sides[0]!.kind}/${kind}`)!);
        rows.push([side.kind, kind === 'code' ? 'JS chain (100 cells)' : 'SQL chain (100 cells)', s.n, fmt(s.p50, 0), fmt(s.p95, 0), fmt(s.max, 0), fmt(s.p50 / N, 1), fmt(s.p50 / base.p50, 2)]);
      }
    }
    console.log(`\nEdit root in client A → last output visible in browser B (${machine()}; load ${os.loadavg()[0]!.toFixed(1)} at the end)`);
    printTable(['server', 'chain', 'runs', 'p50 ms', 'p95 ms', 'max ms', 'p50 per cell ms', `p50 / ${sides[0]!.kind}`], rows);

    const { a, page, chains } = sides[0]!;
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
  } finally {
    await browser.close();
    for (const side of sides) {
      side.a.destroy();
      await side.server.stop();
    }
  }
}

await main();
