/** Server configuration from environment variables, with embedded defaults. Effects: reads env. */
import path from 'node:path';
import { DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_PORT } from '@plexus/shared';
import type { DemoOptions } from './volumes/demo/demo-dataset.ts';
import type { EmbeddingsConfig } from './atlas/embeddings.ts';
import { loadOpsConfig, type OpsConfig } from './ops/ops-config.ts';
import { loadClusterConfig, type ClusterConfig } from './cluster/cluster-config.ts';
import { PART_STRUCTS } from './store/split-state.mjs';

export interface ServerConfig {
  port: number;
  host: string;
  dataDir: string;
  /** `PLEXUS_DATABASE_URL`: store everything in this Postgres database (store/open-storage.ts); null: SQLite in dataDir. */
  databaseUrl: string | null;
  /** HMAC secret for tokens; when undefined a key is generated into dataDir/secret.key. */
  secret?: string;
  maxMessageBytes: number;
  /** Base URL printed in links (defaults to http://localhost:PORT). */
  publicUrl?: string;
  /** Lifetime of share links, days. */
  shareLinkDays: number;
  /** Lifetime of the local owner token printed at start, days. */
  ownerTokenDays: number;
  /** Directory of the built client (served at /). */
  clientDir: string;
  /** Seed a demo workspace when the store is empty. */
  seedDemo: boolean;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Log entries since the last snapshot that trigger compaction. */
  compactEvery: number;
  /** Idle time after the last update before a snapshot is written (ms). */
  compactIdleMs: number;
  /**
   * A snapshot of more Yjs structs than this is stored in parts, which a load applies with turns of
   * the event loop in between (store/split-state.mjs); 0 stores every snapshot whole.
   */
  snapshotPartStructs: number;
  /**
   * Structs per part when a validation replica is built from a live document, a part per turn
   * (collab/shadow.ts); 0 builds it in one turn, as before. Default `snapshotPartStructs` (no
   * variable of its own: benchmarks set it to compare).
   */
  replicaPartStructs?: number;
  /** Entries of a document's roots (cells) a load's schema check does per turn (collab/recovery.ts); 0: in one turn. Default 200 (benchmarks set it to compare). */
  loadCheckStep?: number;
  /** Structs per part when the state a browser fetches while opening is encoded a step per turn (http/opening-reads.ts); 0: in one turn. Default `snapshotPartStructs`. */
  openingPartStructs?: number;
  /**
   * Accept ordinary updates by the pre-check, without a shadow replica (collab/shadow.ts); off
   * (`PLEXUS_UPDATE_PRECHECK=0`) every update is decided on a shadow kept for each open workspace,
   * as before: a switch for benchmarks and for ruling the pre-check out.
   */
  updatePrecheck: boolean;
  /** An automatic checkpoint at most this often while a workspace changes (ms; 0 turns them off). */
  checkpointActivityMs: number;
  /** Serve /volumes without a token. */
  publicVolumes: boolean;
  /** Origins allowed to read /volumes cross-origin (`*` = any); empty = same origin only. */
  volumesCorsOrigins: string[];
  /** Most voxels one sampling request (histogram, trace) may read. */
  maxSampleVoxels: number;
  /** Size and layout of the generated demo dataset (tests make it small; not an env variable). */
  demoData?: DemoOptions;
  /** Start a kernel peer for each open workspace. */
  kernel: boolean;
  /**
   * Kernels run in processes of their own (`PLEXUS_KERNEL=external`, `npm run kernel`, possibly on
   * other machines sharing the data directory): this server starts none, and serves them the
   * workspace list, one kernel lease per workspace, and the calls cells make (samples, jobs).
   */
  externalKernels: boolean;
  /**
   * In-server kernels serve the live document itself (kernel/manager.ts); off
   * (`PLEXUS_KERNEL_IN_PLACE=0`) each connects to this server over a socket and keeps a replica,
   * as before: a switch for benchmarks and for ruling the in-place kernel out.
   */
  kernelInPlace: boolean;
  /**
   * Chains of trivial JavaScript cells go to the runner as one batch (workspace-kernel.ts,
   * sendAhead); off (`PLEXUS_KERNEL_AHEAD=0`): one round trip per cell, the benchmarks' baseline.
   */
  kernelRunAhead: boolean;
  /**
   * A fast cell's run is written whole, as one plain value (runs.ts, recordExec), and a run written
   * while it ran becomes one when it ends (finishExec); off (`PLEXUS_KERNEL_PLAIN_RUNS=0`): every
   * run stays a map of its keys and outputs, the benchmarks' baseline.
   */
  kernelPlainRuns: boolean;
  /** Time limit of one cell (ms), JavaScript and SQL. */
  cellTimeoutMs: number;
  /** Memory of a workspace's JavaScript runtime (MB of heap; ArrayBuffers are bounded by the address space). */
  cellMemoryMb: number;
  /** Analysis jobs (calcium): heap of the job process, wall-clock limit, nice level, jobs at once. */
  jobMemoryMb: number;
  jobTimeoutMs: number;
  jobNice: number;
  jobConcurrency: number;
  /** DuckDB's memory limit per workspace (MB). */
  sqlMemoryMb: number;
  /** DuckDB's threads per workspace. */
  sqlThreads: number;
  /** Read SQL results a chunk per call into DuckDB, as its reader does (benchmarks' baseline; default: all in the query's call). */
  sqlChunkHops: boolean;
  /** Small SQL queries on one DuckDB thread, the rest on sqlThreads (default; false: every query on sqlThreads). */
  sqlAdaptiveThreads: boolean;
  /** Rows of an SQL result given to JavaScript cells as the cell's value. */
  sqlRowsToJs: number;
  /** A kernel with no one else connected and nothing to do stops after this long (ms). */
  kernelIdleMs: number;
  /** Largest upload (bytes, after decompression for .gz files). */
  uploadMaxBytes: number;
  /** Time limit for validating and storing one upload (ms). */
  uploadTimeoutMs: number;
  /** Largest TIFF recording upload (bytes); it is imported as a dataset by a job under the job limits. */
  recordingMaxBytes: number;
  /** Time limit of one read-only data query, table description or histogram over HTTP (ms). */
  dataQueryTimeoutMs: number;
  /** Write the agent's service token to `<dataDir>/agent.token` at start (`npm start` runs the agent). */
  agent: boolean;
  /** The agent's name, in its token (`PLEXUS_AGENT_NAME`, as the agent reads it): the server stamps it on its presence. */
  agentName?: string;
  /** The OpenAI-compatible embedding service of embeddings maps (`PLEXUS_EMBEDDINGS_URL`, …); null: none, text maps are TF-IDF only. */
  embeddings: EmbeddingsConfig | null;
  /** Running as a node: its id, the SIGTERM drain's bound, the `/metrics` token (ops/ops-config.ts). */
  ops: OpsConfig;
  /** A WebSocket that sends nothing for this long is closed (Hocuspocus' `timeout`; 4408). */
  connectionTimeoutMs: number;
  /** One of several nodes (`PLEXUS_REDIS_URL`; cluster/cluster-config.ts); null: the only one. */
  cluster: ClusterConfig | null;
}

/**
 * Where this process keeps scratch files it alone uses (job work folders, uploads waiting for an
 * import) and clears at start: the data dir itself for a single server; with several nodes sharing
 * the data dir, `<dataDir>/nodes/<node id>` — a starting node must not clear another's work.
 */
export function nodeScratchDir(config: Pick<ServerConfig, 'dataDir' | 'cluster' | 'ops'>): string {
  return config.cluster ? path.join(config.dataDir, 'nodes', config.ops.nodeId) : config.dataDir;
}

function int(v: string | undefined, dflt: number, name: string): number {
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got "${v}"`);
  return n;
}

/** The agent's endpoint when OPENAI_BASE_URL is not set (the `openai` client's default). */
const OPENAI_URL = 'https://api.openai.com/v1';

/**
 * The embedding service, when PLEXUS_EMBEDDINGS_URL names one. Its key is PLEXUS_EMBEDDINGS_KEY or,
 * when the service is on the agent's endpoint (same origin as OPENAI_BASE_URL, or OpenAI's), the
 * agent's OPENAI_API_KEY — never sent to another host. No key: requests go without one (local
 * services).
 */
function embeddingsConfig(env: NodeJS.ProcessEnv): EmbeddingsConfig | null {
  const raw = env.PLEXUS_EMBEDDINGS_URL?.trim();
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`PLEXUS_EMBEDDINGS_URL must be the base URL of an OpenAI-compatible API (e.g. ${OPENAI_URL}), got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`PLEXUS_EMBEDDINGS_URL must be an http(s) URL, got "${url.protocol}"`);
  if (url.username || url.password) throw new Error('PLEXUS_EMBEDDINGS_URL must not hold credentials: put the key in PLEXUS_EMBEDDINGS_KEY');
  const origin = (u: string) => {
    try {
      return new URL(u).origin;
    } catch {
      return null;
    }
  };
  const agentKey = origin(env.OPENAI_BASE_URL || OPENAI_URL) === url.origin ? env.OPENAI_API_KEY : undefined;
  return {
    baseURL: raw.replace(/\/+$/, ''),
    model: env.PLEXUS_EMBEDDINGS_MODEL?.trim() || 'text-embedding-3-small',
    apiKey: env.PLEXUS_EMBEDDINGS_KEY || agentKey || null,
    batchSize: Math.min(2048, Math.max(1, int(env.PLEXUS_EMBEDDINGS_BATCH, 128, 'PLEXUS_EMBEDDINGS_BATCH'))),
    maxInputChars: Math.max(1, int(env.PLEXUS_EMBEDDINGS_MAX_CHARS, 8000, 'PLEXUS_EMBEDDINGS_MAX_CHARS')),
    timeoutMs: Math.max(1, int(env.PLEXUS_EMBEDDINGS_TIMEOUT_MS, 60_000, 'PLEXUS_EMBEDDINGS_TIMEOUT_MS')),
    maxRows: int(env.PLEXUS_EMBEDDINGS_MAX_ROWS, 50_000, 'PLEXUS_EMBEDDINGS_MAX_ROWS'),
  };
}

/** `PLEXUS_DATABASE_URL`, checked: a `postgres://` or `postgresql://` URL, or unset. */
function databaseUrl(raw: string | undefined): string | null {
  const v = raw?.trim();
  if (!v) return null;
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new Error('PLEXUS_DATABASE_URL must be a Postgres URL (postgres://user:password@host:5432/database)');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new Error(`PLEXUS_DATABASE_URL must be a postgres:// URL, got "${url.protocol}"`);
  return v;
}

/** Reads the configuration from `env` (process.env by default). Throws a clear error on bad values. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<ServerConfig> = {}): ServerConfig {
  const here = path.dirname(new URL(import.meta.url).pathname);
  const level = (env.PLEXUS_LOG_LEVEL ?? 'info') as ServerConfig['logLevel'];
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(level)) throw new Error(`PLEXUS_LOG_LEVEL "${level}" is not one of debug, info, warn, error, silent`);
  return {
    port: int(env.PORT, DEFAULT_PORT, 'PORT'),
    host: env.HOST ?? '127.0.0.1',
    dataDir: path.resolve(env.PLEXUS_DATA_DIR ?? './data'),
    databaseUrl: databaseUrl(env.PLEXUS_DATABASE_URL),
    secret: env.PLEXUS_SECRET || undefined,
    maxMessageBytes: int(env.PLEXUS_MAX_MESSAGE_BYTES, DEFAULT_MAX_MESSAGE_BYTES, 'PLEXUS_MAX_MESSAGE_BYTES'),
    publicUrl: env.PLEXUS_PUBLIC_URL || undefined,
    shareLinkDays: int(env.PLEXUS_SHARE_LINK_DAYS, 30, 'PLEXUS_SHARE_LINK_DAYS'),
    ownerTokenDays: int(env.PLEXUS_OWNER_TOKEN_DAYS, 365, 'PLEXUS_OWNER_TOKEN_DAYS'),
    clientDir: path.resolve(env.PLEXUS_CLIENT_DIR ?? path.join(here, '../../client/dist')),
    seedDemo: env.PLEXUS_SEED_DEMO !== '0',
    logLevel: level,
    compactEvery: int(env.PLEXUS_COMPACT_EVERY, 1000, 'PLEXUS_COMPACT_EVERY'),
    compactIdleMs: int(env.PLEXUS_COMPACT_IDLE_MS, 5000, 'PLEXUS_COMPACT_IDLE_MS'),
    snapshotPartStructs: int(env.PLEXUS_SNAPSHOT_PART_STRUCTS, PART_STRUCTS, 'PLEXUS_SNAPSHOT_PART_STRUCTS'),
    updatePrecheck: env.PLEXUS_UPDATE_PRECHECK !== '0',
    checkpointActivityMs: int(env.PLEXUS_CHECKPOINT_MINUTES, 5, 'PLEXUS_CHECKPOINT_MINUTES') * 60_000,
    publicVolumes: env.PLEXUS_PUBLIC_VOLUMES === '1',
    volumesCorsOrigins: (env.PLEXUS_VOLUMES_CORS_ORIGINS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    maxSampleVoxels: int(env.PLEXUS_MAX_SAMPLE_VOXELS, 64 * 1024 * 1024, 'PLEXUS_MAX_SAMPLE_VOXELS'),
    kernel: env.PLEXUS_KERNEL !== '0',
    externalKernels: env.PLEXUS_KERNEL === 'external',
    kernelInPlace: env.PLEXUS_KERNEL_IN_PLACE !== '0',
    kernelRunAhead: env.PLEXUS_KERNEL_AHEAD !== '0',
    kernelPlainRuns: env.PLEXUS_KERNEL_PLAIN_RUNS !== '0',
    cellTimeoutMs: int(env.PLEXUS_CELL_TIMEOUT_MS, 30_000, 'PLEXUS_CELL_TIMEOUT_MS'),
    cellMemoryMb: int(env.PLEXUS_CELL_MEMORY_MB, 512, 'PLEXUS_CELL_MEMORY_MB'),
    jobMemoryMb: int(env.PLEXUS_JOB_MEMORY_MB, 2048, 'PLEXUS_JOB_MEMORY_MB'),
    jobTimeoutMs: int(env.PLEXUS_JOB_TIMEOUT_MS, 30 * 60_000, 'PLEXUS_JOB_TIMEOUT_MS'),
    jobNice: int(env.PLEXUS_JOB_NICE, 10, 'PLEXUS_JOB_NICE'),
    jobConcurrency: int(env.PLEXUS_JOBS, 1, 'PLEXUS_JOBS'),
    sqlMemoryMb: int(env.PLEXUS_SQL_MEMORY_MB, 512, 'PLEXUS_SQL_MEMORY_MB'),
    sqlThreads: Math.max(1, Math.floor(int(env.PLEXUS_SQL_THREADS, 2, 'PLEXUS_SQL_THREADS'))),
    sqlChunkHops: env.PLEXUS_SQL_CHUNK_HOPS === '1',
    sqlAdaptiveThreads: env.PLEXUS_SQL_ADAPTIVE_THREADS !== '0',
    sqlRowsToJs: int(env.PLEXUS_SQL_ROWS_TO_JS, 100_000, 'PLEXUS_SQL_ROWS_TO_JS'),
    kernelIdleMs: int(env.PLEXUS_KERNEL_IDLE_MS, 60_000, 'PLEXUS_KERNEL_IDLE_MS'),
    uploadMaxBytes: int(env.PLEXUS_UPLOAD_MAX_BYTES, 200 * 1024 * 1024, 'PLEXUS_UPLOAD_MAX_BYTES'),
    uploadTimeoutMs: int(env.PLEXUS_UPLOAD_TIMEOUT_MS, 120_000, 'PLEXUS_UPLOAD_TIMEOUT_MS'),
    recordingMaxBytes: int(env.PLEXUS_RECORDING_MAX_BYTES, 8 * 2 ** 30, 'PLEXUS_RECORDING_MAX_BYTES'),
    dataQueryTimeoutMs: int(env.PLEXUS_DATA_QUERY_TIMEOUT_MS, 10_000, 'PLEXUS_DATA_QUERY_TIMEOUT_MS'),
    agent: env.PLEXUS_AGENT !== '0',
    agentName: env.PLEXUS_AGENT_NAME?.trim() || undefined,
    embeddings: embeddingsConfig(env),
    ops: loadOpsConfig(env),
    connectionTimeoutMs: int(env.PLEXUS_CONNECTION_TIMEOUT_MS, 30_000, 'PLEXUS_CONNECTION_TIMEOUT_MS'),
    cluster: loadClusterConfig(env, databaseUrl(env.PLEXUS_DATABASE_URL)),
    ...overrides,
  };
}
