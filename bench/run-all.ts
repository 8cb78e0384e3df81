/**
 * Runs every benchmark in sequence, each in its own process (fresh heap, no JIT carry-over), and
 * prints their figures. Each benchmark is bounded to about two minutes; the whole run takes ~8.
 * Run: npm run bench   (or: npx tsx bench/run-all.ts [--only=name,name])
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { machine, repoRoot } from './lib.ts';

const BENCHES: Array<{ name: string; args: string[]; what: string }> = [
  { name: 'latency', args: ['bench/keystroke-latency.ts'], what: 'keystroke latency, 2/20/100 stock clients, Plexus vs bare Hocuspocus' },
  { name: 'saturation', args: ['bench/keystroke-latency.ts', '--counts=200,400', '--rounds=1', '--keystrokes=150', '--label=saturation'], what: 'keystroke latency, 200/400 stock clients' },
  { name: 'saturation-light', args: ['bench/keystroke-latency.ts', '--light', '--counts=100,200,400', '--rounds=2', '--keystrokes=150', '--label=saturation-light'], what: 'keystroke latency, 100/200/400 light receivers (server fan-out)' },
  { name: 'cold-load', args: ['bench/cold-load.ts'], what: 'cold load of a 1,000-cell workspace, with 1k/10k/100k log entries' },
  { name: 'memory', args: ['bench/memory.ts'], what: 'server memory per open idle 1,000-cell workspace' },
  { name: 'soak', args: ['bench/soak.ts', '--workspaces=8', '--clients=5', '--cycles=1,10,30'], what: 'server memory (RSS, heap after GC) after 1 vs N open/close cycles of 8 workspaces x 5 clients, kernel on' },
  { name: 'viewer-latency', args: ['bench/viewer-latency.ts'], what: 'viewer change (LUT, camera, follow) from one browser to another' },
  { name: 'presenter', args: ['bench/presenter.ts', '--counts=100,300', '--rounds=2', '--changes=300', '--interval=25', '--naive=30,90', '--naive-changes=20', '--naive-interval=300'], what: 'presenter mode: one presenter → 100/300 light followers (latency, server CPU and awareness entries per change), and followers that re-publish (quadratic)' },
  { name: 'notebook', args: ['bench/notebook-edit-to-visible.ts'], what: 'notebook: edit a 100-cell JS / SQL chain root in a Node client → last output visible in a browser; 10 edits/s storm' },
  { name: 'server-costs', args: ['bench/server-costs.ts'], what: 'micro-costs of the Plexus hot paths' },
  { name: 'schema-check', args: ['bench/schema-check.ts'], what: 'document schema enforcement: cost per keystroke / new cell / chat message, and per load' },
  { name: 'volumes', args: ['bench/volume-serving.ts'], what: 'volume chunk serving, Plexus /volumes vs a plain Node static file server; demo dataset generation time' },
  { name: 'agent-stream', args: ['bench/agent-stream.ts'], what: 'agent: model token → visible in another browser, 100 tokens/s, batched vs unbatched' },
  { name: 'agent-typing', args: ['bench/agent-typing.ts', '--seconds=60', '--pause=10'], what: 'agent: five typists in the cell the agent rewrites at ~200 tokens/s; lost/duplicated characters' },
  { name: 'agent-stop', args: ['bench/agent-stop.ts'], what: 'agent: Stop pressed → run stopped, while streaming and during a tool call' },
  { name: 'agent-tasks', args: ['bench/agent-tasks.ts'], what: 'agent: 13 analysis tasks over the demo recording, as verified plans vs one tool loop (plumbing with the scripted model; success with a real one)' },
  { name: 'kernel', args: ['bench/kernel.ts'], what: 'kernel: 100-cell chain edit-to-visible (JS, SQL), per-cell overhead, superseding, SQL over 1M-row Parquet vs plain DuckDB' },
  { name: 'atlas-projection', args: ['bench/atlas-projection.ts'], what: 'atlas: map coordinates for 10k / 100k rows — PCA and UMAP of numbers, TF-IDF + SVD of short texts' },
  { name: 'atlas-render', args: ['bench/atlas-render.ts'], what: 'atlas: first render and pan/zoom frame times of 10k / 100k / 1M points in Chromium (software WebGL here), CPU ns per point (needs the built client; ~6 min)' },
  { name: 'atlas-brush', args: ['bench/atlas-brush.ts'], what: "atlas: brush ~100k of 200k points in one browser → a dependent SQL cell's output in another, with phases (needs the built client)" },
  { name: 'history', args: ['bench/history.ts'], what: 'checkpoints of a 1,000-cell workspace: take, store, list, load, compare; journal cost per update' },
  { name: 'postgres-appends', args: ['bench/postgres-appends.ts'], what: 'Postgres storage: write-ahead appends per second and latency with 1/8/32 writers, group commit vs one commit per update, beside SQLite' },
  { name: 'metrics-overhead', args: ['bench/metrics-overhead.ts'], what: "the node's metrics: cost per document update with and without them, and a scrape" },
  { name: 'cluster', args: ['bench/cluster.ts'], what: 'several nodes (Redis, Postgres, 3 child nodes): keystroke to a reader on the same vs another node, 1,000 light clients over 3 nodes, per-update costs and sizing' },
  { name: 'atlas-agent-tokens', args: ['bench/atlas-agent-tokens.ts'], what: 'atlas: orchestrator and sub-agent prompt tokens for a five-cluster exploration, with and without analyzer sub-agents (scripted model)' },
];

const only = process.argv.find((a) => a.startsWith('--only='))?.split('=')[1]?.split(',');
const tsx = path.join(repoRoot, 'node_modules/.bin/tsx');

console.log(`Plexus benchmarks — ${machine()}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
const failed: string[] = [];
for (const b of BENCHES) {
  if (only && !only.includes(b.name)) continue;
  console.log(`\n======== ${b.name}: ${b.what}\n$ npx tsx ${b.args.join(' ')}\n`);
  const started = Date.now();
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(tsx, b.args, { cwd: repoRoot, stdio: 'inherit' });
    child.on('exit', (c) => resolve(c));
  });
  console.log(`\n(${b.name}: ${((Date.now() - started) / 1000).toFixed(0)} s, exit ${code})`);
  if (code !== 0) failed.push(b.name);
}
if (failed.length) {
  console.log(`\nfailed: ${failed.join(', ')}`);
  process.exitCode = 1;
}
