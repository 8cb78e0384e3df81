/** Types of agent-process.mjs (see there). */
export function agentEnv(env: NodeJS.ProcessEnv, root: string): { PLEXUS_SERVER_URL: string; PLEXUS_AGENT_TOKEN_FILE: string };
export function superviseAgent(opts: {
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  restartDelayMs?: number;
  maxRestarts?: number;
  log?: (line: string) => void;
  /** What the lines call it (default "agent"; `npm start` also supervises a "kernel process"). */
  name?: string;
}): { stop(signal?: NodeJS.Signals): void };
