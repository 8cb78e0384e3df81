/**
 * The kernel's own cost per cell of a reactive chain, with no server and no network: a
 * WorkspaceKernel on an in-memory document with the real sandboxed runtimes runs a chain of N
 * trivial cells (JS, or SQL cells each reading the previous one's table) after its root is edited,
 * R rounds. Prints wall time per chain (p50, p95) and CPU time of this process (the kernel's
 * thread: scheduling, graph, compile, document writes) and of the runtime children per cell —
 * CPU time, not wall time, so the figures mean something on a busy machine too.
 * `--others=N` puts N more cells in the notebook first (code cells of 20 lines that no chain cell
 * reads, every fifth markdown), as a long notebook around a short chain: what an edit and a run of
 * the chain cost as the notebook grows. `--moves=K` then moves the shared viewer's camera K times (a
 * change that is no run request, as a person navigating the viewer makes many) and prints what
 * each costs this process until the kernel has looked at it.
 * Run: node --import tsx bench/kernel-chain-cpu.ts [--cells=100] [--rounds=10] [--kind=js|sql] [--others=0] [--moves=0] [--sql-threads=2] [--sql-adaptive=1|0] [--plain-runs=1|0]
 */
import fs from 'node:fs';
import * as Y from 'yjs';
import { createCell, readCamera, readCellRun, requestRun, setCamera, setCellSource, userOrigin } from '@plexus/shared';
import { WorkspaceKernel } from '@plexus/server/kernel/workspace-kernel';
import { createLogger } from '@plexus/server/log';
import { tmpDir } from '@plexus/testkit';
import { unrelatedCells } from './fixtures.ts';

const arg = (name: string, def: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def;
const cells = Number(arg('cells', '100'));
const rounds = Number(arg('rounds', '10'));
const others = Number(arg('others', '0'));
const moves = Number(arg('moves', '0'));
const kind = arg('kind', 'js') as 'js' | 'sql';
const ahead = arg('ahead', '1') !== '0';
const sqlThreads = Number(arg('sql-threads', '2'));
const plainRuns = arg('plain-runs', '1') !== '0';
const sqlAdaptive = arg('sql-adaptive', '1') !== '0';
const origin = userOrigin('bench', 'Bench');
const who = { id: 'bench', name: 'Bench' };

/** CPU ms of the children of this process (their /proc stat), summed. */
function childrenCpuMs(): number {
  let ticks = 0;
  for (const pid of fs.readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // gone
    }
  }
  return ticks * 10;
}

const doc = new Y.Doc();
const dir = tmpDir();
for (const sub of ['scratch', 'results', 'tables']) fs.mkdirSync(`${dir}/${sub}`, { recursive: true });
const kernel = new WorkspaceKernel({
  workspaceId: 'w_bench', doc, dir, tablesDir: `${dir}/tables`, log: createLogger('silent'),
  runAhead: ahead,
  plainRuns,
  limits: { timeoutMs: 30_000, memoryMb: 512, sqlMemoryMb: 512, sqlThreads, sqlAdaptiveThreads: sqlAdaptive, sqlRowsToJs: 10_000, maxFrameBytes: 64 << 20 },
});
kernel.begin();
unrelatedCells(doc, others, origin);
const ids: string[] = [];
for (let i = 0; i < cells; i++) {
  const src = kind === 'js' ? (i === 0 ? 'const v0 = 0;' : `const v${i} = v${i - 1} + 1;`) : i === 0 ? 'select 0 as v' : `select v + 1 as v from t${i - 1}`;
  ids.push(createCell(doc, { kind: kind === 'js' ? 'code' : 'sql', source: src, author: 'bench', ...(kind === 'sql' ? { name: `t${i}` } : {}) }, origin));
}
const last = ids[ids.length - 1]!;
const done = (runId: string | undefined) => new Promise<void>((resolve) => {
  const check = () => {
    const r = readCellRun(doc, last);
    if (r?.state === 'done' && r.exec?.runId !== runId) {
      doc.off('afterTransaction', check);
      resolve();
    }
  };
  doc.on('afterTransaction', check);
});
const walls: number[] = [];
const selfCpu: number[] = [];
const childCpu: number[] = [];
for (let r = 0; r <= rounds; r++) {
  const before = readCellRun(doc, last)?.exec?.runId;
  const cpu0 = process.cpuUsage();
  const child0 = childrenCpuMs();
  const t0 = performance.now();
  const finished = done(before);
  setCellSource(doc, ids[0]!, kind === 'js' ? `const v0 = ${r};` : `select ${r} as v`, origin);
  requestRun(doc, ids[0]!, who, origin);
  await finished;
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (r === 0) continue; // warm-up: runtimes start
  walls.push(wall);
  selfCpu.push((cpu.user + cpu.system) / 1000);
  childCpu.push(childrenCpuMs() - child0);
}
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const ms = (x: number) => x.toFixed(1);
console.log(`kernel chain, ${kind}, ${cells} cells${others ? ` after ${others} other cells` : ''}, ${ahead ? 'trivial cells sent ahead' : 'one round trip per cell'}, ${rounds} rounds, DuckDB threads ${sqlThreads}${sqlAdaptive ? ' (small queries on one)' : ' (every query)'}, ${plainRuns ? 'plain runs' : 'runs as maps'}, load ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
console.log(`  wall per chain   p50 ${ms(q(walls, 0.5))} ms   p95 ${ms(q(walls, 0.95))} ms   per cell p50 ${(q(walls, 0.5) / cells).toFixed(3)} ms`);
console.log(`  kernel CPU/chain p50 ${ms(q(selfCpu, 0.5))} ms   per cell ${(q(selfCpu, 0.5) / cells).toFixed(3)} ms`);
console.log(`  runtime CPU/chain p50 ${ms(q(childCpu, 0.5))} ms   per cell ${(q(childCpu, 0.5) / cells).toFixed(3)} ms`);
console.log('  runner batches', JSON.stringify({ js: (kernel as any).js.stats, sql: (kernel as any).sql.stats }));
if (moves) {
  const moveMs: number[] = [];
  for (let i = 0; i < moves; i++) {
    const t0 = performance.now();
    setCamera(doc, { ...readCamera(doc), position: [i, i, i] }, origin);
    // The kernel's tick runs on setImmediate: two turns and it has run.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    moveMs.push(performance.now() - t0);
  }
  console.log(`  a camera move until the kernel has looked at it: p50 ${q(moveMs, 0.5).toFixed(2)} ms   p95 ${q(moveMs, 0.95).toFixed(2)} ms (${moves} moves)`);
}
await kernel.stop();
process.exit(0);
