/**
 * Integration harness for the agent: a real Plexus server with its kernel, a stock Hocuspocus
 * client playing a person, the scripted OpenAI-compatible model, and the real agent peer (real
 * `openai` client, real tools) joined to the workspace with a service token.
 */
import { afterEach } from 'vitest';
import type * as Y from 'yjs';
import { getRun, postMessage, requestAgentRun, setSetting, userOrigin, type RunView } from '@plexus/shared';
import { client, kernelSuite, newWorkspace } from './kernel.ts';
import type { PlexusServer } from '@plexus/server/app';
import { waitFor } from './wait.ts';
import { loadAgentConfig, type AgentConfig } from '../../agent/src/config.ts';
import { Model } from '../../agent/src/llm/model.ts';
import { WorkspacePeer } from '../../agent/src/peer/workspace-peer.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../agent/src/scripted-llm/server.ts';
import type { Scenario } from '../../agent/src/scripted-llm/scenario.ts';

export const alice = { id: 'alice', name: 'Alice' };
export const aliceOrigin = userOrigin('alice', 'Alice');

export function agentToken(server: PlexusServer): string {
  return server.signer.sign({ ws: '*', role: 'service', sub: 'service:agent', name: 'Plexus agent', ttlSeconds: 3600 });
}

export interface AgentUnderTest {
  llm: ScriptedLlm;
  peer: WorkspacePeer;
  config: AgentConfig;
  close(): Promise<void>;
}

/** Starts the scripted model and an agent peer in workspace `ws`. */
export async function startAgent(server: PlexusServer, ws: string, scenario: Scenario, env: Record<string, string> = {}): Promise<AgentUnderTest> {
  const llm = await startScriptedLlm(scenario);
  const config = loadAgentConfig({ PLEXUS_SERVER_URL: server.url, OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: llm.baseURL, PLEXUS_AGENT_MODEL: 'scripted', ...env });
  const model = new Model({ apiKey: 'test-key', baseURL: llm.baseURL, model: config.model, maxTokensPerTurn: 1000, timeoutMs: 30_000 });
  const token = agentToken(server);
  const peer = new WorkspacePeer(ws, config, model, () => token, () => {});
  await peer.start();
  return {
    llm, peer, config,
    close: async () => {
      await peer.close();
      await llm.close();
    },
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
export function waitRunEnd(doc: Y.Doc, runId: string, timeout = 30_000): Promise<RunView> {
  return waitFor(() => {
    const r = getRun(doc, runId);
    return ended(r) ? r : null;
  }, { timeout, message: `run ${runId} to end`, interval: 5 }) as Promise<RunView>;
}

/**
 * One server with its kernel for a test file, workspaces with Alice connected in a chosen agent
 * mode, and the agent under test (closed after each test).
 */
export function agentSuite() {
  const ctx = kernelSuite();
  const suite = {
    ctx,
    agent: undefined as AgentUnderTest | undefined,
    async workspace(mode: 'direct' | 'propose' = 'direct') {
      const ws = await newWorkspace(ctx.server);
      const a = await client(ctx.server, ws, ctx.clients);
      setSetting(a.doc, 'agentMode', mode, aliceOrigin);
      return { ws, a };
    },
    async start(ws: string, scenario: Scenario, env: Record<string, string> = {}): Promise<AgentUnderTest> {
      suite.agent = await startAgent(ctx.server, ws, scenario, env);
      return suite.agent;
    },
  };
  afterEach(async () => {
    await suite.agent?.close();
    suite.agent = undefined;
  });
  return suite;
}
