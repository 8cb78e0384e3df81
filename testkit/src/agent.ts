/**
 * Integration harness for the agent: a real Plexus server with its kernel, a stock Hocuspocus
 * client playing a person, the scripted OpenAI-compatible model, and the real agent peer (real
 * `openai` client, real tools) joined to the workspace with a service token.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import type * as Y from 'yjs';
import { getRun, postMessage, requestAgentRun, setSetting, userOrigin, type RunView } from '@plexus/shared';
import { client, kernelSuite, newWorkspace } from './kernel.ts';
import type { PlexusServer } from '@plexus/server/app';
import type { ServerConfig } from '@plexus/server/config';
import { waitFor } from './wait.ts';
import { loadAgentConfig, type AgentConfig } from '../../agent/src/config.ts';
import { Model } from '../../agent/src/llm/model.ts';
import { WorkspacePeer } from '../../agent/src/peer/workspace-peer.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../agent/src/scripted-llm/server.ts';
import type { Scenario } from '../../agent/src/scripted-llm/scenario.ts';

export const alice = { id: 'alice', name: 'Alice' };
export const aliceOrigin = userOrigin('alice', 'Alice');

/** What the agent harness needs of a server: its URL and its token signer (an in-process PlexusServer, or a child server's URL with a signer of its secret). */
export type AgentHost = Pick<PlexusServer, 'url' | 'signer'>;

export function agentToken(server: Pick<PlexusServer, 'signer'>): string {
  return server.signer.sign({ ws: '*', role: 'service', sub: 'service:agent', name: 'Plexus agent', ttlSeconds: 3600 });
}

export interface AgentUnderTest {
  llm: ScriptedLlm;
  peer: WorkspacePeer;
  config: AgentConfig;
  close(): Promise<void>;
}

export interface AgentOptions {
  /**
   * Awaited before each model request (its JSON body) is passed on to the scripted model: a test
   * holds a request until another one has arrived, so "two runs at once" is a state, not a timing.
   */
  holdModelRequest?: (body: string) => Promise<void>;
}

/** Starts the scripted model and an agent peer in workspace `ws`. */
export async function startAgent(server: AgentHost, ws: string, scenario: Scenario, env: Record<string, string> = {}, opts: AgentOptions = {}): Promise<AgentUnderTest> {
  const llm = await startScriptedLlm(scenario);
  const gate = opts.holdModelRequest ? await holdingProxy(llm.baseURL, opts.holdModelRequest) : null;
  const baseURL = gate?.baseURL ?? llm.baseURL;
  const config = loadAgentConfig({ PLEXUS_SERVER_URL: server.url, OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: baseURL, PLEXUS_AGENT_MODEL: 'scripted', ...env });
  const model = new Model({ apiKey: 'test-key', baseURL, model: config.model, maxTokensPerTurn: 1000, timeoutMs: 30_000 });
  const token = agentToken(server);
  const peer = new WorkspacePeer(ws, config, model, () => token, () => {});
  await peer.start();
  return {
    llm, peer, config,
    close: async () => {
      await peer.close();
      await gate?.close();
      await llm.close();
    },
  };
}

/** An HTTP proxy to `target` (`http://host:port/v1`) that awaits `hold(body)` before forwarding each request; responses stream through. */
export async function holdingProxy(target: string, hold: (body: string) => Promise<void>): Promise<{ baseURL: string; close(): Promise<void> }> {
  const t = new URL(target);
  const proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      await hold(body.toString('utf8'));
      const out = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: { ...req.headers, host: t.host } }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      out.on('error', () => res.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const { port } = proxy.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}${t.pathname}`,
    close: () => new Promise<void>((r) => {
      proxy.closeAllConnections();
      proxy.close(() => r());
    }),
  };
}

/** Alice asks the agent (a chat message and a queued run, in one transaction). Returns the run id. */
export function ask(doc: Y.Doc, text: string, who = alice, origin = aliceOrigin): string {
  let runId = '';
  doc.transact(() => {
    const messageId = postMessage(doc, { author: { ...who, kind: 'person' }, text: `@agent ${text}` }, origin);
    runId = requestAgentRun(doc, { by: who, messageId, text }, origin);
    const m = doc.getArray<Y.Map<unknown>>('chat').get(doc.getArray('chat').length - 1);
    m.set('runId', runId);
  }, origin);
  return runId;
}

export const ended = (r: RunView | null) => !!r && (r.status === 'done' || r.status === 'stopped' || r.status === 'error');

/** Waits for the run to end (as Alice's replica sees it). */
export function waitRunEnd(doc: Y.Doc, runId: string, timeout = 90_000): Promise<RunView> {
  return waitFor(() => {
    const r = getRun(doc, runId);
    return ended(r) ? r : null;
  }, { timeout, message: `run ${runId} to end`, interval: 5 }) as Promise<RunView>;
}

/**
 * One server with its kernel for a test file, workspaces with Alice connected in a chosen agent
 * mode, and the agent under test (closed after each test).
 */
export function agentSuite(overrides: Partial<ServerConfig> = {}) {
  const ctx = kernelSuite(overrides);
  const suite = {
    ctx,
    agent: undefined as AgentUnderTest | undefined,
    async workspace(mode: 'direct' | 'propose' = 'direct') {
      const ws = await newWorkspace(ctx.server);
      const a = await client(ctx.server, ws, ctx.clients);
      setSetting(a.doc, 'agentMode', mode, aliceOrigin);
      return { ws, a };
    },
    async start(ws: string, scenario: Scenario, env: Record<string, string> = {}, opts: AgentOptions = {}): Promise<AgentUnderTest> {
      suite.agent = await startAgent(ctx.server, ws, scenario, env, opts);
      return suite.agent;
    },
  };
  afterEach(async () => {
    await suite.agent?.close();
    suite.agent = undefined;
  });
  return suite;
}
