/**
 * What the agent adds between a model token arriving and it being visible in another person's
 * browser replica, at 100 tokens/s: the scripted model timestamps each 4-character token as it
 * writes it to the stream; a Chromium page on the workspace timestamps each growth of the answer's
 * Y.Text in its replica. Both clocks are this machine's (epoch ms from performance.timeOrigin).
 * Run with the answer batched as shipped (one write per 16 ms at most) and unbatched (every token
 * written at once), and count the agent's Yjs updates per second. Aim: p99 under 50 ms.
 * Run: npx tsx bench/agent-stream.ts [--tokens=1200]
 */
import os from 'node:os';
import { chromium } from '@playwright/test';
import * as Y from 'yjs';
import { getRun, postMessage, requestAgentRun, userOrigin } from '@plexus/shared';
import { loadAgentConfig } from '../agent/src/config.ts';
import { Model } from '../agent/src/llm/model.ts';
import { WorkspacePeer } from '../agent/src/peer/workspace-peer.ts';
import { startScriptedLlm } from '../agent/src/scripted-llm/server.ts';
import { TokenSigner } from '../server/src/auth/tokens.ts';
import { BENCH_SECRET, connectClient, createWorkspace, fmt, machine, printTable, sleep, spawnServer, summarize, until } from './lib.ts';

const TOKENS = Number(process.argv.find((a) => a.startsWith('--tokens='))?.split('=')[1] ?? 1200);
const alice = { id: 'alice', name: 'Alice' };
const origin = userOrigin('alice', 'Alice');
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');

console.log(`agent answer streaming, model token → visible in another browser — ${machine()}, load ${load()}`);
const server = await spawnServer('plexus', { env: { PLEXUS_KERNEL: '0', PLEXUS_CLIENT_DIR: new URL('../client/dist', import.meta.url).pathname } });
const browser = await chromium.launch({
  executablePath: process.env.PLEXUS_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const rows: Array<Array<string | number>> = [];
try {
  for (const interval of [16, 0]) {
    const ws = await createWorkspace(server, `agent-stream-${interval}`);
    const a = connectClient(server.url, ws, server.token);
    await a.synced;
    const sent: Array<{ end: number; at: number }> = [];
    let total = 0;
    // Each token differs so its position in the answer is unambiguous.
    const text = Array.from({ length: TOKENS }, (_, i) => (i % 10 === 9 ? 'tok\n' : 'tok ')).join('');
    const llm = await startScriptedLlm({ turns: [{ repeat: true, text, chunkSize: 4, delayMs: 10 }] }, 0, {
      onText: (t, at) => {
        total += t.length;
        sent.push({ end: total, at });
      },
    });
    const config = loadAgentConfig({ PLEXUS_SERVER_URL: server.url, OPENAI_API_KEY: 'k', OPENAI_BASE_URL: llm.baseURL, PLEXUS_AGENT_STREAM_INTERVAL_MS: String(interval) });
    const token = new TokenSigner(Buffer.from(BENCH_SECRET)).sign({ ws: '*', role: 'service', sub: 'service:agent', ttlSeconds: 3600 });
    const peer = new WorkspacePeer(ws, config, new Model({ apiKey: 'k', baseURL: llm.baseURL, model: 'scripted', maxTokensPerTurn: 100_000, timeoutMs: 120_000 }), () => token, () => {});
    await peer.start();
    let agentUpdates = 0;
    peer.doc.on('afterTransaction', (tr: Y.Transaction) => {
      if ((tr.origin as { kind?: string } | null)?.kind === 'agent' && tr.changed.size > 0) agentUpdates++;
    });

    const page = await browser.newPage();
    await page.goto(`${server.url}/w/${ws}?token=${server.token}`);
    await page.waitForFunction(() => (window as any).__plexus?.doc, null, { timeout: 60_000 });
    // The page records (length, time) each time an agent answer grows in its replica.
    // (A string: tsx would wrap named functions in a helper the page does not have.)
    await page.evaluate(`(() => {
      const w = window;
      const doc = w.__plexus.doc;
      w.__growth = [];
      const chat = doc.getArray('chat');
      function watch(m) {
        const author = m.get('author');
        if (!author || author.kind !== 'agent') return;
        const t = m.get('text');
        t.observe(() => w.__growth.push([t.length, performance.timeOrigin + performance.now()]));
      }
      chat.toArray().forEach(watch);
      chat.observe((e) => e.changes.added.forEach((item) => item.content.getContent().forEach(watch)));
    })()`);
    await sleep(500);
    const started = performance.now();
    let runId = '';
    a.doc.transact(() => {
      const messageId = postMessage(a.doc, { author: { ...alice, kind: 'person' }, text: '@agent stream' }, origin);
      runId = requestAgentRun(a.doc, { by: alice, messageId, text: 'stream' }, origin);
    }, origin);
    await until(() => getRun(a.doc, runId)?.status === 'done', 120_000, 20, 'the run to end');
    const seconds = (performance.now() - started) / 1000;
    await sleep(300);
    const growth = (await page.evaluate(() => (window as any).__growth)) as Array<[number, number]>;
    const lat: number[] = [];
    let g = 0;
    for (const s of sent) {
      while (g < growth.length && growth[g]![0] < s.end) g++;
      if (g < growth.length) lat.push(growth[g]![1] - s.at);
    }
    const st = summarize(Float64Array.from(lat));
    rows.push([interval ? `batched (≤1 write / ${interval} ms)` : 'every token at once', lat.length, fmt(st.p50), fmt(st.p95), fmt(st.p99), fmt(st.max), fmt(agentUpdates / seconds, 0), load()]);
    await page.close();
    await peer.close();
    await llm.close();
    a.destroy();
  }
  printTable(['answer writes', 'tokens', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'agent updates/s', 'load'], rows);
} finally {
  await browser.close();
  await server.stop();
}
