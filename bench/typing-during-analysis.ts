/**
 * Five people type at 5 characters/s each in one code cell (keystroke → visible in the four other
 * typists' replicas), first with nothing else running, then while a calcium analysis job of a
 * 512² × 3,000-frame recording uses both cores (its process runs at nice 10, PLEXUS_JOB_NICE).
 * Prints p50/p95/p99/max of both runs side by side, the ratio of the p99s, and where the job was
 * when typing stopped (it must still have been running). Effects: a child server, temp files, CPU.
 * Run: node --import tsx bench/typing-during-analysis.ts [--seconds=30] [--frames=3000]
 */
import os from 'node:os';
import path from 'node:path';
import { cellSource, createCell, getCell, readJob, userOrigin } from '@plexus/shared';
import type * as Y from 'yjs';
import { writeDemoDataset } from '../server/src/volumes/demo/demo-dataset.ts';
import { api } from '@plexus/testkit';
import { connectClient, createWorkspace, fmt, machine, printTable, sleep, spawnServer, summarize, tmpDir, until, type BenchClient, type ChildServer } from './lib.ts';

const arg = (name: string, dflt: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const SECONDS = arg('seconds', 30);
const FRAMES = arg('frames', 3000);
const TYPISTS = 5;
const LETTERS = ['α', 'β', 'γ', 'δ', 'ε'];
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');
const count = (s: string, ch: string) => s.split(ch).length - 1;

async function typing(server: ChildServer<'plexus'>, ws: string): Promise<number[]> {
  const typists: BenchClient[] = [];
  for (let k = 0; k < TYPISTS; k++) {
    const c = connectClient(server.url, ws, server.token);
    await c.synced;
    typists.push(c);
  }
  const origins = typists.map((_, k) => userOrigin(`typist${k}`));
  const cellId = createCell(typists[0]!.doc, { kind: 'code', source: LETTERS.map((_, k) => `// typist ${k}: `).join('\n') + '\n', author: 'typist0' }, origins[0]!);
  await until(() => typists.every((t) => getCell(t.doc, cellId) !== undefined), 10_000);
  const sentAt: number[][] = typists.map(() => []);
  const seenBy: number[][][] = typists.map(() => typists.map(() => []));
  typists.forEach((t, r) =>
    t.doc.on('update', () => {
      const now = performance.now();
      const text = cellSource(getCell(t.doc, cellId)!);
      for (let k = 0; k < TYPISTS; k++) {
        if (k === r) continue;
        const list = seenBy[k]![r]!;
        const have = count(text, LETTERS[k]!);
        while (list.length < have) list.push(now);
      }
    }),
  );
  const started = performance.now();
  await Promise.all(
    typists.map(async (t, k) => {
      await sleep(k * 37);
      while (performance.now() - started < SECONDS * 1000) {
        const text = cellSource(getCell(t.doc, cellId)!);
        const end = text.indexOf('\n', text.indexOf(`// typist ${k}: `));
        sentAt[k]!.push(performance.now());
        const ytext = getCell(t.doc, cellId)!.map.get('source') as Y.Text;
        t.doc.transact(() => ytext.insert(end, LETTERS[k]!), origins[k]!);
        await sleep(200 + (Math.random() - 0.5) * 40);
      }
    }),
  );
  await sleep(1000);
  const latencies: number[] = [];
  for (let k = 0; k < TYPISTS; k++)
    for (let r = 0; r < TYPISTS; r++) {
      if (r === k) continue;
      sentAt[k]!.forEach((t0, n) => {
        const seen = seenBy[k]![r]![n];
        if (seen !== undefined) latencies.push(seen - t0);
      });
    }
  typists.forEach((t) => t.destroy());
  return latencies;
}

const dataDir = tmpDir('plexus-bench-analysis-');
console.log(`generating a ${FRAMES}-frame 512² recording…`);
await writeDemoDataset(path.join(dataDir, 'volumes', 'calcium-demo'), { params: { width: 512, height: 512, frames: FRAMES, neurons: 200, seed: 1 } });
console.log(`five typists, ${SECONDS} s per run, with and without a calcium analysis — ${machine()}, load ${load()}`);
const server = await spawnServer('plexus', { dataDir, env: { PLEXUS_KERNEL: '1' } });
try {
  const rows: Array<Array<string | number>> = [];
  const quietWs = await createWorkspace(server, 'typing-quiet');
  const quiet = await typing(server, quietWs);
  const q = summarize(Float64Array.from(quiet));
  rows.push(['no analysis', quiet.length, fmt(q.p50), fmt(q.p95), fmt(q.p99), fmt(q.max), '—', load()]);
  const ws = await createWorkspace(server, 'typing-analysis');
  const watcher = connectClient(server.url, ws, server.token);
  await watcher.synced;
  const started = await api(server.url, server.token, 'POST', `/api/workspaces/${ws}/jobs`, { kind: 'calcium', dataset: 'calcium-demo', layer: 'movie' });
  if (started.status !== 201) throw new Error(`could not start the job: ${JSON.stringify(started.json)}`);
  const job = started.json.job as string;
  await until(() => readJob(watcher.doc, job)?.progress?.stage === 'registration', 120_000);
  const busy = await typing(server, ws);
  const j = readJob(watcher.doc, job)!;
  const b = summarize(Float64Array.from(busy));
  rows.push(['calcium job running (nice 10)', busy.length, fmt(b.p50), fmt(b.p95), fmt(b.p99), fmt(b.max), `${j.status}: ${j.progress?.stage ?? ''} ${j.progress?.done ?? ''}/${j.progress?.total ?? ''}`, load()]);
  printTable(['run', 'deliveries', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'job when typing stopped', 'load'], rows);
  console.log(`typists' p99 during the analysis / without: ${fmt(b.p99 / q.p99)}; stalls over 50 ms: ${busy.filter((x) => x > 50).length} of ${busy.length}`);
  watcher.destroy();
} finally {
  await server.stop();
}
