/** Server configuration from environment variables, with embedded defaults. Effects: reads env. */
import path from 'node:path';
import { DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_PORT } from '@plexus/shared';
import type { DemoOptions } from './volumes/demo/demo-dataset.ts';

export interface ServerConfig {
  port: number;
  host: string;
  dataDir: string;
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
}

function int(v: string | undefined, dflt: number, name: string): number {
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got "${v}"`);
  return n;
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
    publicVolumes: env.PLEXUS_PUBLIC_VOLUMES === '1',
    volumesCorsOrigins: (env.PLEXUS_VOLUMES_CORS_ORIGINS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    maxSampleVoxels: int(env.PLEXUS_MAX_SAMPLE_VOXELS, 64 * 1024 * 1024, 'PLEXUS_MAX_SAMPLE_VOXELS'),
    kernel: env.PLEXUS_KERNEL !== '0',
    cellTimeoutMs: int(env.PLEXUS_CELL_TIMEOUT_MS, 30_000, 'PLEXUS_CELL_TIMEOUT_MS'),
    cellMemoryMb: int(env.PLEXUS_CELL_MEMORY_MB, 512, 'PLEXUS_CELL_MEMORY_MB'),
    jobMemoryMb: int(env.PLEXUS_JOB_MEMORY_MB, 2048, 'PLEXUS_JOB_MEMORY_MB'),
    jobTimeoutMs: int(env.PLEXUS_JOB_TIMEOUT_MS, 30 * 60_000, 'PLEXUS_JOB_TIMEOUT_MS'),
    jobNice: int(env.PLEXUS_JOB_NICE, 10, 'PLEXUS_JOB_NICE'),
    jobConcurrency: int(env.PLEXUS_JOBS, 1, 'PLEXUS_JOBS'),
    sqlMemoryMb: int(env.PLEXUS_SQL_MEMORY_MB, 512, 'PLEXUS_SQL_MEMORY_MB'),
    sqlRowsToJs: int(env.PLEXUS_SQL_ROWS_TO_JS, 100_000, 'PLEXUS_SQL_ROWS_TO_JS'),
    kernelIdleMs: int(env.PLEXUS_KERNEL_IDLE_MS, 60_000, 'PLEXUS_KERNEL_IDLE_MS'),
    uploadMaxBytes: int(env.PLEXUS_UPLOAD_MAX_BYTES, 200 * 1024 * 1024, 'PLEXUS_UPLOAD_MAX_BYTES'),
    uploadTimeoutMs: int(env.PLEXUS_UPLOAD_TIMEOUT_MS, 120_000, 'PLEXUS_UPLOAD_TIMEOUT_MS'),
    recordingMaxBytes: int(env.PLEXUS_RECORDING_MAX_BYTES, 8 * 2 ** 30, 'PLEXUS_RECORDING_MAX_BYTES'),
    dataQueryTimeoutMs: int(env.PLEXUS_DATA_QUERY_TIMEOUT_MS, 10_000, 'PLEXUS_DATA_QUERY_TIMEOUT_MS'),
    agent: env.PLEXUS_AGENT !== '0',
    agentName: env.PLEXUS_AGENT_NAME?.trim() || undefined,
    ...overrides,
  };
}
