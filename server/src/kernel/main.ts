/**
 * A kernel process of its own (`npm run kernel`): runs the kernels of the workspaces people are in
 * for a server started with `PLEXUS_KERNEL=external`, on this machine or another one that shares
 * the server's data directory (uploaded tables and large results are files there). Several such
 * processes split the workspaces, one kernel per workspace (kernel-service.ts). Stops its kernels
 * and hands their leases back on SIGTERM/SIGINT; killed, its cells' processes die with it
 * (sandbox.ts `pdeathsig`) and another process takes over once the lease runs out.
 *
 * Environment, besides the server's own (PLEXUS_DATA_DIR, PLEXUS_CELL_TIMEOUT_MS,
 * PLEXUS_CELL_MEMORY_MB, PLEXUS_SQL_MEMORY_MB, PLEXUS_SQL_ROWS_TO_JS, PLEXUS_KERNEL_IDLE_MS,
 * PLEXUS_LOG_LEVEL are read as the server reads them):
 *   PLEXUS_SERVER_URL          the server (default http://HOST:PORT, as the agent finds it)
 *   PLEXUS_KERNEL_TOKEN_FILE   the token the server wrote (default <PLEXUS_DATA_DIR>/kernel.token)
 *   PLEXUS_KERNEL_TOKEN        or the token itself
 *   PLEXUS_KERNEL_LEASE_MS     a workspace's kernel lease (default 15000)
 *   PLEXUS_KERNEL_POLL_MS      between two rounds of the workspace list and the leases (default 1000)
 *   PLEXUS_KERNEL_UID_BASE     first uid of this process's cells (root only): each process runs at
 *                              most 256 kernels, one uid each, so give each kernel process on one
 *                              machine its own base, 256 or more apart (default: 300000 + 256 ×
 *                              (pid mod 4096), which two processes rarely share)
 * Effects: network, processes, files, process signals.
 */
import fs from 'node:fs';
import path from 'node:path';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../config.ts';
import { createLogger } from '../log.ts';
import { KERNEL_TOKEN_FILE } from '../auth/agent-token.ts';
import { KernelPool } from './kernel-pool.ts';
import { KernelService, remoteKernelCalls } from './kernel-service.ts';

const env = process.env;
const config = loadConfig(env);
const log = createLogger(config.logLevel, { svc: 'plexus-kernel', pid: process.pid });

function positive(name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
}

const host = config.host === '0.0.0.0' ? '127.0.0.1' : config.host === '::' ? '[::1]' : config.host;
const serverUrl = (env.PLEXUS_SERVER_URL || `http://${host}:${config.port}`).replace(/\/$/, '');
const tokenFile = env.PLEXUS_KERNEL_TOKEN_FILE || path.join(config.dataDir, KERNEL_TOKEN_FILE);
/** Re-read every time: the server rewrites the file when it starts. */
const token = (): string => {
  if (env.PLEXUS_KERNEL_TOKEN) return env.PLEXUS_KERNEL_TOKEN;
  try {
    return fs.readFileSync(tokenFile, 'utf8').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    throw new Error(`no kernel token yet: the server writes ${tokenFile} when it starts with PLEXUS_KERNEL=external (or set PLEXUS_KERNEL_TOKEN)`);
  }
};
/** This process's name as a lease holder (unique, also across machines). */
const runner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
const calls = remoteKernelCalls(serverUrl, token, runner);

/** One uid per kernel: at most this many kernels per process. */
const KERNELS_PER_PROCESS = 256;
// The lease token of each workspace comes with its lease (the service's, bound below).
let service: KernelService | null = null;
const pool = new KernelPool({
  dataDir: config.dataDir,
  sharedDataDir: true,
  capacity: KERNELS_PER_PROCESS,
  token: (ws) => service?.leaseToken(ws) ?? '',
  log,
  limits: { timeoutMs: config.cellTimeoutMs, memoryMb: config.cellMemoryMb, sqlMemoryMb: config.sqlMemoryMb, sqlThreads: config.sqlThreads, sqlChunkHops: config.sqlChunkHops, sqlAdaptiveThreads: config.sqlAdaptiveThreads, sqlRowsToJs: config.sqlRowsToJs, maxFrameBytes: 64 * 1024 * 1024 },
  runAhead: config.kernelRunAhead,
  plainRuns: config.kernelPlainRuns,
  // Processes on one machine need disjoint ranges: set it; the default spreads them by pid.
  uidBase: positive('PLEXUS_KERNEL_UID_BASE', 300_000 + (process.pid % 4096) * KERNELS_PER_PROCESS),
  sample: calls.sample,
  jobs: calls.jobs,
});
const leaseMs = positive('PLEXUS_KERNEL_LEASE_MS', 15_000);
const tickMs = positive('PLEXUS_KERNEL_POLL_MS', 1000);
// Renewals must come well before a lease runs out (the agent renews every third of it).
if (leaseMs < 1000 || tickMs * 3 > leaseMs) throw new Error(`PLEXUS_KERNEL_LEASE_MS (${leaseMs}) must be at least 1000 and at least 3 × PLEXUS_KERNEL_POLL_MS (${tickMs})`);
service = new KernelService({ serverUrl, token, pool, log, tickMs, leaseMs, idleMs: config.kernelIdleMs, runner });
service.start();
log.info('kernel process started', { server: serverUrl, runner: service.runner });

// The first signal stops the kernels and hands the leases back (at most 10 s); a second one exits at once.
let stopping = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (stopping) process.exit(1);
    stopping = true;
    setTimeout(() => {
      log.error('stopping took more than 10 s: exiting');
      process.exit(1);
    }, 10_000).unref();
    void service!.stop().finally(() => process.exit(0));
  });
}
