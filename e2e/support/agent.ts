/**
 * The agent for browser tests: the scripted OpenAI-compatible model (in the test process) and the
 * real agent process (`agent/src/main.ts`, as `npm start` runs it) joined to the e2e server with
 * the service token the server wrote into its data directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startScriptedLlm, type ScriptedLlm } from '../../agent/src/scripted-llm/server.ts';
import { loadScenario } from '../../agent/src/scripted-llm/scenario.ts';
import type { Page } from '@playwright/test';
import { expect } from './plexus.ts';
import { REPO_ROOT, readState } from './server.ts';

export interface AgentProcess {
  llm: ScriptedLlm;
  proc: ChildProcess;
  log: () => string;
  stop(): Promise<void>;
}

/** Starts the scripted model with `scenario` (a file under agent/scenarios) and the agent process. */
export async function startAgentProcess(scenario: string, env: Record<string, string> = {}): Promise<AgentProcess> {
  const state = readState();
  const llm = await startScriptedLlm(loadScenario(path.join(REPO_ROOT, 'agent/scenarios', scenario)));
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'agent/src/main.ts')], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      PLEXUS_SERVER_URL: state.url,
      PLEXUS_AGENT_TOKEN_FILE: path.join(state.dataDir, 'agent.token'),
      OPENAI_API_KEY: 'scripted',
      OPENAI_BASE_URL: llm.baseURL,
      PLEXUS_AGENT_MODEL: 'scripted',
      PLEXUS_AGENT_POLL_MS: '200',
      PLEXUS_AGENT_LEAVE_AFTER_MS: '1000',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  proc.stderr!.on('data', (d) => (log += d));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  if (!fs.existsSync(path.join(state.dataDir, 'agent.token'))) throw new Error('the e2e server wrote no agent.token');
  return {
    llm, proc,
    log: () => log,
    stop: async () => {
      proc.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
      await llm.close();
    },
  };
}

/** Asks the agent in the chat (typing "@ag", picking the mention), as a person does; returns the run id. */
export async function askAgent(page: Page, text: string): Promise<string> {
  const input = page.getByTestId('chat-input');
  await input.click();
  await page.keyboard.type('@ag');
  await expect(page.getByTestId('mention-option')).toHaveText(/@agent/);
  await page.keyboard.press('Enter');
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
  await expect(input).toHaveText('');
  const msg = page.getByTestId('chat-message').filter({ hasText: text }).last();
  return (await msg.getAttribute('data-run-id'))!;
}

/** The agent's answer message of a run. */
export const agentAnswer = (page: Page, runId: string) => page.locator(`[data-testid="chat-message"][data-run-id="${runId}"]`).filter({ has: page.getByTestId('agent-run') }).last();
