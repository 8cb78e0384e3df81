/**
 * The agent of a benchmark in its own process, as in production (`npm start` runs the agent
 * beside the server): the scripted model and a WorkspacePeer for one workspace. Reads a JSON job
 * on stdin ({serverUrl, workspace, token, scenario, env}), prints `ready`, and on the line `stats`
 * prints the Yjs clock of its replica (characters and items it inserted), on `stop` closes.
 */
import readline from 'node:readline';
import * as Y from 'yjs';
import { loadAgentConfig } from '../agent/src/config.ts';
import { Model } from '../agent/src/llm/model.ts';
import { WorkspacePeer } from '../agent/src/peer/workspace-peer.ts';
import { startScriptedLlm } from '../agent/src/scripted-llm/server.ts';
import type { Scenario } from '../agent/src/scripted-llm/scenario.ts';

const lines = readline.createInterface({ input: process.stdin });
const it = lines[Symbol.asyncIterator]();
const job = JSON.parse((await it.next()).value as string) as { serverUrl: string; workspace: string; token: string; scenario: Scenario; env: Record<string, string> };
const llm = await startScriptedLlm(job.scenario);
const config = loadAgentConfig({ PLEXUS_SERVER_URL: job.serverUrl, OPENAI_API_KEY: 'k', OPENAI_BASE_URL: llm.baseURL, ...job.env });
const peer = new WorkspacePeer(job.workspace, config, new Model({ apiKey: 'k', baseURL: llm.baseURL, model: 'scripted', maxTokensPerTurn: 1000, timeoutMs: 60_000 }), () => job.token, () => {});
await peer.start();
console.log('ready');
for (;;) {
  const next = await it.next();
  if (next.done || next.value === 'stop') break;
  if (next.value === 'stats') console.log(JSON.stringify({ clock: Y.decodeStateVector(Y.encodeStateVector(peer.doc)).get(peer.doc.clientID) ?? 0 }));
}
await peer.close();
await llm.close();
process.exit(0);
