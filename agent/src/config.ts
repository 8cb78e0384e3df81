/** Agent configuration from environment variables, with defaults. Effects: reads env. */
import path from 'node:path';
import type { QuotaLimits } from './peer/quota.ts';
import { DEFAULT_PORT } from '@plexus/shared';
import type { RunLimits } from './run/agent-run.ts';

export interface AgentConfig {
  serverUrl: string;
  /** A service token, or the file the server writes it to (`<data dir>/agent.token`). */
  token?: string;
  tokenFile: string;
  apiKey: string | null;
  baseURL?: string;
  model: string;
  /** The router's model (a small, fast one); null: the main model routes too. */
  fastModel: string | null;
  /** Every request takes this route, without asking the router (PLEXUS_AGENT_ROUTE; benchmarks, or a workspace that only plans). */
  forceRoute: 'question' | 'analysis' | 'action' | null;
  name: string;
  color: string;
  maxTokensPerTurn: number;
  requestTimeoutMs: number;
  /** Runs one workspace works on at once; more wait in the queue. */
  maxConcurrentRuns: number;
  /** How often the list of open workspaces is polled (ms). */
  pollMs: number;
  /** A workspace nobody is in any more is left after this long (ms). */
  leaveAfterMs: number;
  /** Queued runs older than this when the agent comes online are failed, not started (ms). */
  maxQueueAgeMs: number;
  /** Requests and model tokens per hour, per person and per workspace (0: no limit). */
  quota: QuotaLimits;
  /** Where the quota ledger is kept between restarts. */
  quotaFile: string;
  /** How long the workspace's agent lease lasts unless renewed (one runner per workspace). */
  leaseMs: number;
  /** How often the lease is renewed, or asked for on standby (default: a third of leaseMs). */
  leasePollMs?: number;
  limits: RunLimits;
}

function num(env: NodeJS.ProcessEnv, name: string, dflt: number): number {
  const v = env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got "${v}"`);
  return n;
}

function routeOf(v: string | undefined): AgentConfig['forceRoute'] {
  if (!v) return null;
  if (v === 'question' || v === 'analysis' || v === 'action') return v;
  throw new Error(`PLEXUS_AGENT_ROUTE must be question, analysis or action, got "${v}"`);
}

export function loadAgentConfig(env: NodeJS.ProcessEnv = process.env): AgentConfig {
  const port = num(env, 'PORT', DEFAULT_PORT);
  const host = env.HOST && env.HOST !== '0.0.0.0' ? env.HOST : '127.0.0.1';
  return {
    serverUrl: (env.PLEXUS_SERVER_URL || `http://${host}:${port}`).replace(/\/$/, ''),
    token: env.PLEXUS_AGENT_TOKEN || undefined,
    tokenFile: env.PLEXUS_AGENT_TOKEN_FILE || path.join(path.resolve(env.PLEXUS_DATA_DIR ?? './data'), 'agent.token'),
    apiKey: env.OPENAI_API_KEY || null,
    baseURL: env.OPENAI_BASE_URL || undefined,
    model: env.PLEXUS_AGENT_MODEL || 'gpt-4o-mini',
    fastModel: env.PLEXUS_AGENT_FAST_MODEL || null,
    forceRoute: routeOf(env.PLEXUS_AGENT_ROUTE),
    name: env.PLEXUS_AGENT_NAME || 'Plexus agent',
    color: env.PLEXUS_AGENT_COLOR || '#7c3aed',
    maxTokensPerTurn: num(env, 'PLEXUS_AGENT_MAX_TOKENS_PER_TURN', 4096),
    requestTimeoutMs: num(env, 'PLEXUS_AGENT_REQUEST_TIMEOUT_MS', 120_000),
    maxConcurrentRuns: Math.max(1, num(env, 'PLEXUS_AGENT_CONCURRENT_RUNS', 3)),
    pollMs: num(env, 'PLEXUS_AGENT_POLL_MS', 1000),
    leaveAfterMs: num(env, 'PLEXUS_AGENT_LEAVE_AFTER_MS', 60_000),
    maxQueueAgeMs: num(env, 'PLEXUS_AGENT_MAX_QUEUE_AGE_MS', 30 * 60_000),
    leaseMs: Math.max(1000, num(env, 'PLEXUS_AGENT_LEASE_MS', 15_000)),
    quota: {
      requestsPerHourPerPerson: num(env, 'PLEXUS_AGENT_REQUESTS_PER_HOUR_PERSON', 30),
      requestsPerHourPerWorkspace: num(env, 'PLEXUS_AGENT_REQUESTS_PER_HOUR_WORKSPACE', 150),
      tokensPerHourPerPerson: num(env, 'PLEXUS_AGENT_TOKENS_PER_HOUR_PERSON', 1_000_000),
      tokensPerHourPerWorkspace: num(env, 'PLEXUS_AGENT_TOKENS_PER_HOUR_WORKSPACE', 4_000_000),
    },
    quotaFile: env.PLEXUS_AGENT_QUOTA_FILE || path.join(path.resolve(env.PLEXUS_DATA_DIR ?? './data'), 'agent-usage.json'),
    leasePollMs: num(env, 'PLEXUS_AGENT_LEASE_POLL_MS', 0) || undefined,
    limits: {
      maxSteps: Math.max(1, num(env, 'PLEXUS_AGENT_MAX_STEPS', 30)),
      maxTokens: num(env, 'PLEXUS_AGENT_MAX_TOKENS', 400_000),
      maxRunMs: num(env, 'PLEXUS_AGENT_MAX_RUN_SECONDS', 600) * 1000,
      wrapUpSteps: 3,
      toolResultChars: 12_000,
      maxRunWaitMs: num(env, 'PLEXUS_AGENT_MAX_CELL_WAIT_SECONDS', 120) * 1000,
      decisionWaitMs: num(env, 'PLEXUS_AGENT_DECISION_WAIT_SECONDS', 180) * 1000,
      typing: { pieceChars: Math.max(1, num(env, 'PLEXUS_AGENT_TYPING_CHARS', 24)), pauseMs: num(env, 'PLEXUS_AGENT_TYPING_PAUSE_MS', 0) },
      allowedSourcePrefixes: (env.PLEXUS_AGENT_SOURCE_PREFIXES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
      streamIntervalMs: num(env, 'PLEXUS_AGENT_STREAM_INTERVAL_MS', 16),
      maxParallelSteps: Math.max(1, num(env, 'PLEXUS_AGENT_PARALLEL_STEPS', 2)),
      maxStepTurns: Math.max(2, num(env, 'PLEXUS_AGENT_STEP_TURNS', 8)),
    },
  };
}
