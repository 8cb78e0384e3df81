/**
 * Runs the scripted model from a scenario file, for demos and manual tests:
 *   node --import tsx agent/src/scripted-llm/main.ts --scenario agent/scenarios/hello.json [--port 4560]
 * then point the agent (or any OpenAI client) at OPENAI_BASE_URL=http://127.0.0.1:4560/v1.
 * Effects: listens on a port, prints its URL.
 */
import { parseArgs } from 'node:util';
import { loadScenario } from './scenario.ts';
import { startScriptedLlm } from './server.ts';

const { values } = parseArgs({ options: { scenario: { type: 'string' }, port: { type: 'string', default: '4560' } } });
if (!values.scenario) {
  console.error('usage: main.ts --scenario <file.json> [--port N]');
  process.exit(2);
}
const llm = await startScriptedLlm(loadScenario(values.scenario), Number(values.port));
console.log(`scripted model listening: OPENAI_BASE_URL=${llm.baseURL}`);
