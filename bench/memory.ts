/**
 * Server memory per open, idle workspace of 1,000 cells.
 *
 * Method: the Plexus server runs in a child process (server/src/main.ts as shipped, started with
 * --expose-gc and the bench/probe.ts preload); memory is read inside that process after a full GC,
 * so the clients in this process are not counted and nothing has to be subtracted.
 *   1. Fixture: an in-process server on a temp data dir creates one workspace of 1,000 code cells
 *      (20 lines each, small outputs) with `workspaces.create({ fill })`, duplicates it K-1 times,
 *      and K empty workspaces; then it stops.
 *   2. A fresh server on that data dir: baseline after GC; then one idle stock
 *      @hocuspocus/provider client per workspace opens workspaces one by one; at checkpoints the
 *      server runs a full GC and reports RSS, heapUsed and external (+ArrayBuffers).
 *      Per workspace = (checkpoint - baseline) / workspaces open.
 *   3. The same with K *empty* workspaces: the cost of a connection + an empty document, so the
 *      content's share is the difference.
 *   4. For reference, the heap of K plain Y.Docs holding the same state in this process.
 * With --servers=plexus,plexus-shadow,plexus-kernel-socket each runs on the same fixture, one after
 * the other: Plexus as shipped, with its update pre-check off (a shadow replica per open workspace,
 * as before it), and with its in-server kernel a socket peer keeping a replica (as before it served
 * the live document).
 * Run: npx tsx bench/memory.ts [--k=20] [--servers=plexus]
 * Prints figures; asserts nothing.
 */
import path from 'node:path';
import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import * as Y from 'yjs';
import { loadConfig } from '@plexus/server/config';
import { startServer } from '@plexus/server/app';
import { fillNotebook } from './fixtures.ts';
import { BENCH_SECRET, connectClient, fmt, machine, mb, printTable, sleep, spawnServer, tmpDir, type BenchClient, type MemoryFigures } from './lib.ts';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const K = Number(arg('k') ?? 20);
type PlexusKind = 'plexus' | 'plexus-shadow' | 'plexus-kernel-socket';
const SERVERS = (arg('servers') ?? 'plexus').split(',') as PlexusKind[];

async function buildFixture(): Promise<{ dir: string; full: string[]; empty: string[]; state: Uint8Array }> {
  const dir = tmpDir('plexus-mem-');
  const server = await startServer(
    loadConfig({ PLEXUS_LOG_LEVEL: 'warn' } as NodeJS.ProcessEnv, { port: 0, host: '127.0.0.1', dataDir: dir, seedDemo: false, secret: BENCH_SECRET, clientDir: path.join(dir, 'none') }),
  );
  try {
    const first = (await server.workspaces.create({ name: 'mem-0', fill: (doc) => fillNotebook(doc, 1000, 20) })).id;
    const full = [first];
    for (let i = 1; i < K; i++) full.push((await server.workspaces.duplicate(first, `mem-${i}`)).id);
    const empty: string[] = [];
    for (let i = 0; i < K; i++) empty.push((await server.workspaces.create({ name: `empty-${i}` })).id);
    return { dir, full, empty, state: (await server.store.load(first)).update! };
  } finally {
    await server.close();
  }
}

interface Point {
  open: number;
  mem: MemoryFigures;
}

async function measure(kind: PlexusKind, dir: string, ids: string[], checkpoints: number[]): Promise<{ base: MemoryFigures; points: Point[] }> {
  const server = await spawnServer(kind, { dataDir: dir, nodeArgs: ['--expose-gc'] });
  const clients: BenchClient[] = [];
  try {
    await sleep(500);
    const g = await server.probe('gc');
    if (!g.gcAvailable) throw new Error('gc() is not available in the server process');
    const base = g.memory;
    const points: Point[] = [];
    for (let i = 0; i < ids.length; i++) {
      const c = connectClient(server.url, ids[i]!, server.token);
      clients.push(c);
      await c.synced;
      if (checkpoints.includes(i + 1)) {
        await sleep(500); // idle: let the load settle
        points.push({ open: i + 1, mem: (await server.probe('gc')).memory });
      }
    }
    return { base, points };
  } finally {
    clients.forEach((c) => c.destroy());
    await server.stop();
  }
}

function docHeap(state: Uint8Array, k: number): number {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const heap = () => {
    for (let i = 0; i < 3; i++) gc();
    return process.memoryUsage().heapUsed;
  };
  const before = heap();
  const docs = Array.from({ length: k }, () => {
    const d = new Y.Doc();
    Y.applyUpdate(d, state);
    return d;
  });
  const after = heap();
  docs.forEach((d) => d.destroy());
  return (after - before) / k;
}

async function main(): Promise<void> {
  console.log(`# Server memory per open idle workspace (${machine()})`);
  console.log('# method: server in a child process (--expose-gc); memory read inside it after a full GC; clients in this process are not counted\n');
  const f = await buildFixture();
  console.log(`fixture: ${K} workspaces of 1000 code cells x 20 lines + outputs (state ${(f.state.byteLength / 1024).toFixed(0)} KiB each), ${K} empty workspaces`);
  const checkpoints = [1, 5, 10, K].filter((c, i, a) => c <= K && a.indexOf(c) === i);
  const plain = docHeap(f.state, Math.min(K, 10));
  const summary: Array<[string, number, number]> = [];
  for (const kind of SERVERS) {
    const full = await measure(kind, f.dir, f.full, checkpoints);
    const empty = await measure(kind, f.dir, f.empty, [K]);

    const row = (label: string, base: MemoryFigures, p: Point) => [
      label, p.open, mb(p.mem.rss), mb(p.mem.heapUsed), mb(p.mem.external),
      mb((p.mem.rss - base.rss) / p.open), mb((p.mem.heapUsed - base.heapUsed) / p.open), mb((p.mem.external - base.external) / p.open),
    ];
    console.log(`\n## ${kind}\nbaseline (no workspace open): RSS ${mb(full.base.rss)} MiB, heapUsed ${mb(full.base.heapUsed)} MiB, external ${mb(full.base.external)} MiB`);
    printTable(
      ['workspaces', 'open', 'RSS MiB', 'heapUsed MiB', 'external MiB', 'RSS / ws MiB', 'heapUsed / ws MiB', 'external / ws MiB'],
      [...full.points.map((p) => row('1000 cells', full.base, p)), ...empty.points.map((p) => row('empty', empty.base, p))],
    );
    const last = full.points[full.points.length - 1]!;
    const lastEmpty = empty.points[0]!;
    const perWs = (last.mem.heapUsed - full.base.heapUsed) / last.open;
    const perEmpty = (lastEmpty.mem.heapUsed - empty.base.heapUsed) / lastEmpty.open;
    const rssPerWs = (last.mem.rss - full.base.rss) / last.open;
    summary.push([kind, perWs, rssPerWs]);
    console.log(
      `\nper open idle 1000-cell workspace: heapUsed ${mb(perWs)} MiB, RSS ${mb(rssPerWs)} MiB; ` +
        `of which connection + empty document ${mb(perEmpty)} MiB heap; a plain Y.Doc with the same state holds ${mb(plain)} MiB of heap ` +
        `(server / plain Y.Doc = ${fmt(perWs / plain)})`,
    );
  }
  console.log('\n## Per open idle 1000-cell workspace (aim: heap ≤ 1.3× a plain Y.Doc)');
  printTable(['server', 'heapUsed / ws MiB', 'RSS / ws MiB', 'plain Y.Doc MiB', 'heap / plain Y.Doc'], summary.map(([k, h, r]) => [k, mb(h), mb(r), mb(plain), fmt(h / plain)]));
  fs.rmSync(f.dir, { recursive: true, force: true });
}

await main();
