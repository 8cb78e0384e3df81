/**
 * Memory soak: does the server's memory grow with each open/close cycle of workspaces?
 *
 * Method: the Plexus server runs in a child process (server/src/main.ts as shipped, kernel on,
 * `--expose-gc` and the bench/probe.ts preload; `PLEXUS_KERNEL_IDLE_MS` short so kernels stop
 * between cycles). W workspaces are created once. One cycle: every workspace is opened by C stock
 * @hocuspocus/provider clients, which publish presence (awareness: user, cell focus), type into a
 * shared notes cell and edit + run a code cell (the kernel starts, runs it, and each client waits
 * for the new output); then every client leaves, and the cycle ends when the server reports no open
 * document (`/api/health` `openDocuments` = 0: the kernels have left too). After cycle 1 and at
 * each checkpoint the server runs a full GC and reports RSS and heapUsed; the figure that matters
 * is the ratio after N cycles / after the first.
 * Run: npx tsx bench/soak.ts [--workspaces=8] [--clients=5] [--cycles=1,5,10,20] [--snapshots]
 * (`--snapshots`: a V8 heap snapshot of the server at each checkpoint, then the kinds of heap node
 * that grew most between the first and the last checkpoint — where to look for a leak; writing a
 * snapshot inflates the RSS of the following checkpoints, so read RSS from a run without it.)
 * Prints figures; asserts nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cellSource, createCell, getCell, insertCellText, readCellRun, readKernelStatus, requestRun, setCellSource, userOrigin } from '@plexus/shared';
import { connectClient, createWorkspace, fmt, machine, mb, printTable, repoRoot, sleep, spawnServer, until, type BenchClient, type ChildServer, type MemoryFigures } from './lib.ts';

const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const W = Number(arg('workspaces', '8'));
const C = Number(arg('clients', '5'));
const checkpoints = arg('cycles', '1,5,10,20').split(',').map(Number).sort((a, b) => a - b);
const snapshots = process.argv.includes('--snapshots');
const N = checkpoints[checkpoints.length - 1]!;

/** Counts and self sizes of heap nodes in a V8 heap snapshot: objects by constructor, the rest by kind. */
function countObjects(file: string): Map<string, { count: number; size: number }> {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8')) as { snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[] };
  const f = snap.snapshot.meta.node_fields;
  const width = f.length;
  const [iType, iName, iSize] = [f.indexOf('type'), f.indexOf('name'), f.indexOf('self_size')];
  const types = snap.snapshot.meta.node_types[0];
  const out = new Map<string, { count: number; size: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + iType]!]!;
    // Objects by constructor; everything else (code, strings, hidden V8 metadata) by kind only.
    const key = type === 'object' || type === 'closure' ? `${type}:${snap.strings[snap.nodes[i + iName]!]}` : type;
    const e = out.get(key) ?? { count: 0, size: 0 };
    e.count++;
    e.size += snap.nodes[i + iSize]!;
    out.set(key, e);
  }
  return out;
}

function growth(firstFile: string, lastFile: string): void {
  const a = countObjects(firstFile);
  const b = countObjects(lastFile);
  const rows = [...b].map(([k, v]) => ({ k, dc: v.count - (a.get(k)?.count ?? 0), ds: v.size - (a.get(k)?.size ?? 0), n: v.count })).sort((x, y) => y.ds - x.ds).slice(0, 15);
  console.log(`\nheap objects that grew most between the first and the last checkpoint (${path.basename(firstFile)} → ${path.basename(lastFile)}):`);
  printTable(['kind:constructor', 'count now', 'count Δ', 'self size Δ KiB'], rows.map((r) => [r.k.slice(0, 60), r.n, r.dc, (r.ds / 1024).toFixed(1)]));
}

async function openDocuments(server: ChildServer): Promise<number> {
  const r = await fetch(`${server.url}/api/health`);
  return ((await r.json()) as { openDocuments: number }).openDocuments;
}

interface Cells {
  notes: string;
  code: string;
}

/** One workspace's part of a cycle: C clients join, present, type, edit + run a cell, leave. */
async function visit(server: ChildServer, ws: string, cells: Cells, cycle: number): Promise<void> {
  const clients: BenchClient[] = Array.from({ length: C }, () => connectClient(server.url, ws, server.token));
  try {
    await Promise.all(clients.map((c) => c.synced));
    await until(() => readKernelStatus(clients[0]!.doc).state !== 'offline', 30_000, 10, 'kernel online');
    clients.forEach((c, i) => {
      const id = `u${i}`;
      c.provider.setAwarenessField('user', { id, name: `User ${i}`, color: '#3366cc', kind: 'person' });
      c.provider.setAwarenessField('focus', { cellId: cells.notes });
      const origin = userOrigin(id, `User ${i}`);
      for (let k = 0; k < 10; k++) insertCellText(c.doc, cells.notes, cellSource(getCell(c.doc, cells.notes)!).length, 'x', origin);
    });
    const a = clients[0]!;
    const origin = userOrigin('u0', 'User 0');
    setCellSource(a.doc, cells.code, `const v = ${cycle};\nv * 2`, origin);
    requestRun(a.doc, cells.code, { id: 'u0', name: 'User 0' }, origin);
    const want = String(cycle * 2);
    const shows = (c: BenchClient) => {
      const r = readCellRun(c.doc, cells.code);
      return r?.state === 'done' && r.outputs.some((o) => o.type === 'text' && o.text === want);
    };
    await until(() => clients.every(shows), 30_000, 10, `output of cycle ${cycle} in ${ws}`);
  } catch (e) {
    console.error(`cycle ${cycle}, ${ws}:`, e, '\nserver log tail:\n' + server.output.slice(-40).join('\n'));
    throw e;
  } finally {
    clients.forEach((c) => c.destroy());
  }
}

async function main(): Promise<void> {
  console.log(`# Memory soak: ${W} workspaces x ${C} clients, kernel on, ${N} open/close cycles (${machine()})`);
  const server = await spawnServer('plexus', { nodeArgs: ['--expose-gc'], env: { PLEXUS_KERNEL: '1', PLEXUS_KERNEL_IDLE_MS: '200', PLEXUS_AGENT: '0' } });
  try {
    const gc = async () => {
      const g = await server.probe('gc');
      if (!g.gcAvailable) throw new Error('gc() is not available in the server process');
      return g.memory;
    };
    const base = await gc();
    // Workspaces and their two cells, created once through a client (the kernel joins and leaves).
    const workspaces: Array<{ ws: string; cells: Cells }> = [];
    for (let i = 0; i < W; i++) {
      const ws = await createWorkspace(server, `soak-${i}`);
      const c = connectClient(server.url, ws, server.token);
      await c.synced;
      const origin = userOrigin('u0', 'User 0');
      const notes = createCell(c.doc, { kind: 'code', source: '// notes\n', author: 'u0' }, origin);
      const code = createCell(c.doc, { kind: 'code', source: 'const v = 0;\nv * 2', author: 'u0' }, origin);
      await until(() => c.provider.unsyncedChanges === 0, 10_000, 5, 'cells stored');
      c.destroy();
      workspaces.push({ ws, cells: { notes, code } });
    }
    const files: string[] = [];
    const points: Array<{ cycle: number; mem: MemoryFigures; ms: number }> = [];
    for (let cycle = 1; cycle <= N; cycle++) {
      const t0 = Date.now();
      await Promise.all(workspaces.map((w) => visit(server, w.ws, w.cells, cycle)));
      for (let open = await openDocuments(server); open > 0; open = await openDocuments(server)) await sleep(50);
      const ms = Date.now() - t0;
      if (checkpoints.includes(cycle)) {
        const mem = await gc();
        points.push({ cycle, mem, ms });
        if (snapshots) files.push((await server.probe('snapshot')).file);
        console.log(`cycle ${cycle}: RSS ${mb(mem.rss)} MiB, heapUsed ${mb(mem.heapUsed)} MiB, external ${mb(mem.external)} MiB (cycle took ${ms} ms)`);
      }
    }
    const first = points[0]!;
    console.log(`\nbaseline before any workspace: RSS ${mb(base.rss)} MiB, heapUsed ${mb(base.heapUsed)} MiB`);
    printTable(
      ['after cycle', 'RSS MiB', 'heapUsed MiB', 'external MiB', 'RSS / cycle 1', 'heapUsed / cycle 1', 'heap growth per cycle KiB'],
      points.map((p) => [
        p.cycle, mb(p.mem.rss), mb(p.mem.heapUsed), mb(p.mem.external), fmt(p.mem.rss / first.mem.rss, 3), fmt(p.mem.heapUsed / first.mem.heapUsed, 3),
        p.cycle > 1 ? ((p.mem.heapUsed - first.mem.heapUsed) / (p.cycle - 1) / 1024).toFixed(1) : '—',
      ]),
    );
    if (files.length > 1) growth(path.join(repoRoot, files[0]!), path.join(repoRoot, files[files.length - 1]!));
    for (const file of files) fs.rmSync(path.join(repoRoot, file), { force: true });
    console.log(`\nload average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    await server.stop();
  }
}

await main();
