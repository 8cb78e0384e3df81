/**
 * The agent process (`npm start` runs it beside the server). Without OPENAI_API_KEY it says how to
 * enable it and exits: the rest of Plexus works without it and the UI shows the agent as offline.
 * Effects: network, process signals.
 */
import { loadAgentConfig } from './config.ts';
import { Model } from './llm/model.ts';
import { Supervisor } from './peer/supervisor.ts';

const config = loadAgentConfig();
const log = (msg: string, extra?: Record<string, unknown>) => process.stderr.write(`[agent] ${msg}${extra ? ' ' + JSON.stringify(extra) : ''}\n`);

if (!config.apiKey) {
  log('offline: set OPENAI_API_KEY (and OPENAI_BASE_URL for another OpenAI-compatible endpoint, PLEXUS_AGENT_MODEL for the model) and restart to enable the agent');
  process.exit(0);
}

const model = new Model({ apiKey: config.apiKey, baseURL: config.baseURL, model: config.model, maxTokensPerTurn: config.maxTokensPerTurn, timeoutMs: config.requestTimeoutMs });
const supervisor = new Supervisor(config, model, log);
supervisor.start();
log(`online: model ${config.model}${config.baseURL ? ` at ${config.baseURL}` : ''}, server ${config.serverUrl}`);

let stopping = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    void supervisor.stop().finally(() => process.exit(0));
  });
}
