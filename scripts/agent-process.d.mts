/** Types of agent-process.mjs (see there). */
export function agentEnv(env: NodeJS.ProcessEnv, root: string): { PLEXUS_SERVER_URL: string; PLEXUS_AGENT_TOKEN_FILE: string };
/** The agent's nice level: `PLEXUS_AGENT_NICE` (0–19), default 10. */
export function agentNice(env?: NodeJS.ProcessEnv): number;
/** `node <args>` at nice level `nice`, through nice(1) when there is one. */
export function nodeCommand(args: string[], nice?: number): { command: string; args: string[] };
export function superviseAgent(opts: {
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  restartDelayMs?: number;
  maxRestarts?: number;
  log?: (line: string) => void;
  /** What the lines call it (default "agent"; `npm start` also supervises a "kernel process"). */
  name?: string;
  /** Nice level of the process (0, the default: the caller's). */
  nice?: number;
}): { stop(signal?: NodeJS.Signals): void };
