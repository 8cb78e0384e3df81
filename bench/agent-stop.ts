/**
 * Stop latency: from a person writing the Stop signal to their replica showing the run as
 * stopped, through the real server, with the real agent peer and `openai` client against the
 * scripted model — while the model streams, and while a tool call waits for a cell that takes long.
 * Aim: under 500 ms. Run: npx tsx bench/agent-stop.ts [--rounds=20]
 */
import os from 'node:os';
import { createCell, getRun, postMessage, requestAgentRun, requestInterrupt, requestRunStop, userOrigin, type RunView } from '@plexus/shared';
import type * as Y from 'yjs';
import { loadAgentConfig } from '../agent/src/config.ts';
import { Model } from '../agent/src/llm/model.ts';
import { WorkspacePeer } from '../agent/src/peer/workspace-peer.ts';
import { startScriptedLlm } from '../agent/src/scripted-llm/server.ts';
import { TokenSigner } from '../server/src/auth/tokens.ts';
import { BENCH_SECRET, connectClient, createWorkspace, fmt, machine, printTable, sleep, spawnServer, summarize, until } from './lib.ts';

const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.split('=')[1] ?? 20);
const alice = { id: 'alice', name: 'Alice' };
const origin = userOrigin('alice', 'Alice');

function ask(doc: Y.Doc, text: string): string {
  let runId = '';
  doc.transact(() => {
    const messageId = postMessage(doc, { author: { ...alice, kind: 'person' }, text }, origin);
    runId = requestAgentRun(doc, { by: alice, messageId, text }, origin);
  }, origin);
  return runId;
}

console.log(`agent Stop latency — ${machine()}, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
const server = await spawnServer('plexus', { env: { PLEXUS_KERNEL: '1', PLEXUS_CELL_TIMEOUT_MS: '60000' } });
const ws = await createWorkspace(server, 'agent-stop');
const a = connectClient(server.url, ws, server.token);
await a.synced;
const slow = createCell(a.doc, { kind: 'code', source: 'await new Promise((r) => setTimeout(r, 20000)); 1', author: 'alice' }, origin);
const llm = await startScriptedLlm({
  turns: [
    { match: { lastUserContains: 'stream' }, repeat: true, text: 'streaming '.repeat(2000), chunkSize: 4, delayMs: 10 },
    { match: { lastUserContains: 'wait' }, repeat: true, toolCalls: [{ name: 'run_cell', arguments: { cell_id: slow, timeout_s: 120 } }] },
  ],
});
try {
  const config = loadAgentConfig({ PLEXUS_SERVER_URL: server.url, OPENAI_API_KEY: 'k', OPENAI_BASE_URL: llm.baseURL });
  const token = new TokenSigner(Buffer.from(BENCH_SECRET)).sign({ ws: '*', role: 'service', sub: 'service:agent', ttlSeconds: 3600 });
  const peer = new WorkspacePeer(ws, config, new Model({ apiKey: 'k', baseURL: llm.baseURL, model: 'scripted', maxTokensPerTurn: 1000, timeoutMs: 60_000 }), () => token, () => {});
  await peer.start();
  const results: Record<string, number[]> = { 'while streaming': [], 'during a tool call (run_cell waiting)': [] };
  for (let i = 0; i < rounds; i++) {
    for (const kind of ['stream', 'wait'] as const) {
      const runId = ask(a.doc, kind === 'stream' ? 'stream please' : `wait for ${slow}`);
      if (kind === 'stream') await until(() => getRun(a.doc, runId)?.status === 'running', 20_000);
      else await until(() => getRun(a.doc, runId)?.activity[0]?.status === 'running', 20_000, 5, 'run_cell to wait');
      await sleep(150 + Math.random() * 100);
      const t0 = performance.now();
      requestRunStop(a.doc, runId, alice, origin);
      let seen: RunView | null = null;
      await until(() => (seen = getRun(a.doc, runId)) !== null && seen.status === 'stopped', 10_000, 1, 'stopped');
      results[kind === 'stream' ? 'while streaming' : 'during a tool call (run_cell waiting)']!.push(performance.now() - t0);
      if (kind === 'wait') requestInterrupt(a.doc, alice, origin);
      await sleep(100);
    }
  }
  printTable(['Stop pressed →', 'n', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'], Object.entries(results).map(([k, v]) => {
    const s = summarize(Float64Array.from(v));
    return [k, v.length, fmt(s.p50), fmt(s.p95), fmt(s.p99), fmt(s.max)];
  }));
  console.log(`aborted model streams: ${llm.requests.filter((r) => r.aborted).length} of ${results['while streaming']!.length} stops while streaming`);
  await peer.close();
} finally {
  a.destroy();
  await llm.close();
  await server.stop();
}
