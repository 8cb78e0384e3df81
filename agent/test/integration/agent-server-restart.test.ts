/**
 * The agent survives the server being killed mid-run: its provider reconnects, the answer it kept
 * streaming meanwhile reaches the restarted server, and the run ends normally.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { getRun, listMessages } from '@plexus/shared';
import { TokenSigner } from '../../../server/src/auth/tokens.ts';
import { api, hocuspocusClient, startChildServer, tmpDir, waitFor, type ChildServer, type HpClient } from '@plexus/testkit';
import { ask, waitRunEnd } from '@plexus/testkit/agent';
import { loadAgentConfig } from '../../src/config.ts';
import { Model } from '../../src/llm/model.ts';
import { WorkspacePeer } from '../../src/peer/workspace-peer.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../src/scripted-llm/server.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('agent and server restarts', () => {
  it('a run streaming while the server is killed and restarted finishes, and the server has the whole answer', async () => {
    const dataDir = tmpDir();
    let server: ChildServer = await startChildServer(dataDir);
    const port = server.port;
    cleanups.push(() => server.kill());
    const ws = (await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name: 'restart' })).json.workspace.id as string;
    const alice: HpClient = hocuspocusClient(server.url, ws, server.ownerToken, { reconnect: true });
    cleanups.push(() => alice.destroy());
    await alice.synced;
    const llm: ScriptedLlm = await startScriptedLlm({ turns: [{ text: 'tick '.repeat(120), chunkSize: 5, delayMs: 25 }] });
    cleanups.push(() => llm.close());
    const config = loadAgentConfig({ PLEXUS_SERVER_URL: server.url, OPENAI_API_KEY: 'k', OPENAI_BASE_URL: llm.baseURL });
    const signer = new TokenSigner(Buffer.from('test-secret-0123456789abcdef'));
    const token = signer.sign({ ws: '*', role: 'service', sub: 'service:agent', name: 'Plexus agent', ttlSeconds: 3600 });
    const peer = new WorkspacePeer(ws, config, new Model({ apiKey: 'k', baseURL: llm.baseURL, model: 'scripted', maxTokensPerTurn: 1000, timeoutMs: 30_000 }), () => token, () => {});
    cleanups.push(() => peer.close());
    await peer.start();
    const runId = ask(alice.doc, 'count');
    await waitFor(() => ((listMessages(alice.doc).find((m) => m.id === getRun(alice.doc, runId)?.replyId)?.text.length ?? 0) > 30 ? true : null), { timeout: 60_000 });
    const closesBefore = alice.closes.length;
    await server.kill('SIGKILL');
    // Restart once the peers have seen the connection drop (a state, not 400 ms).
    await waitFor(() => alice.closes.length > closesBefore, { message: 'Alice saw the server go' });
    server = await startChildServer(dataDir, { PORT: String(port) });
    const run = await waitRunEnd(alice.doc, runId, 30_000);
    expect(run.status).toBe('done');
    const answer = 'tick '.repeat(120);
    await waitFor(() => (listMessages(alice.doc).find((m) => m.id === run.replyId)?.text === answer ? true : null), { timeout: 60_000, message: 'the whole answer on Alice' });
    // A fresh client of the restarted server reads the whole answer: it reached the server's store.
    const fresh = hocuspocusClient(server.url, ws, server.ownerToken);
    cleanups.push(() => fresh.destroy());
    await fresh.synced;
    await waitFor(() => (listMessages(fresh.doc).find((m) => m.id === run.replyId)?.text === answer ? true : null), { timeout: 60_000, message: 'the whole answer on the server' });
    expect(getRun(fresh.doc, runId)!.status).toBe('done');
  }, 60_000);
});
