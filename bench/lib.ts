/**
 * Shared benchmark plumbing: servers in child processes (Plexus as shipped in server/src/main.ts,
 * or a bare Hocuspocus) with the measurement probe preloaded, stock Hocuspocus clients, figures.
 * Benchmarks print figures; they never assert timings. Effects: processes, sockets, temp files.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import * as Y from 'yjs';

import WebSocket from 'ws';
import { repoRoot, tmpDir } from '@plexus/testkit/dirs';
import { QuietWebSocket } from '@plexus/testkit/quiet-ws';
import { sleep, until } from '@plexus/testkit/wait';
import type { Pause, ProfileClock } from './pauses.ts';

// The generic plumbing lives in @plexus/testkit; re-exported for the benchmarks that import it here.
export { repoRoot, sleep, tmpDir, until };

const here = path.dirname(new URL(import.meta.url).pathname);
export const BENCH_SECRET = 'bench-secret-0123456789abcdef0123';

// ---------------------------------------------------------------------------------------------
// figures

/** Percentile (nearest-rank) of an ascending array. */
export function pct(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(values: ArrayLike<number>): Summary {
  const s = Float64Array.from(values as ArrayLike<number>).sort();
  let sum = 0;
  for (const v of s) sum += v;
  return { n: s.length, p50: pct(s, 50), p95: pct(s, 95), p99: pct(s, 99), max: s.length ? s[s.length - 1]! : NaN, mean: s.length ? sum / s.length : NaN };
}

export const median = (xs: number[]): number => pct(Float64Array.from(xs).sort(), 50);
export const fmt = (v: number, digits = 2): string => (Number.isFinite(v) ? v.toFixed(digits) : '—');
export const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

/**
 * Delivery latencies from arrival times: `seenAt[r * total + k]` is when receiver r saw keystroke k
 * (NaN: never), `sentAt[k]` when it was typed. Over keystrokes `from`…`total-1` and receivers
 * `receivers`: every latency, and per keystroke the earliest and the latest; plus those never seen.
 */
export function deliveries(seenAt: Float64Array, sentAt: ArrayLike<number>, total: number, from: number, receivers: Iterable<number>): { all: number[]; first: number[]; last: number[]; missing: number } {
  const rs = [...receivers];
  const out = { all: [] as number[], first: [] as number[], last: [] as number[], missing: 0 };
  for (let k = from; k < total; k++) {
    let lo = Infinity;
    let hi = -Infinity;
    for (const r of rs) {
      const t = seenAt[r * total + k]!;
      if (Number.isNaN(t)) {
        out.missing++;
        continue;
      }
      const lat = t - sentAt[k]!;
      out.all.push(lat);
      lo = Math.min(lo, lat);
      hi = Math.max(hi, lat);
    }
    if (lo !== Infinity) {
      out.first.push(lo);
      out.last.push(hi);
    }
  }
  return out;
}

/** Prints an aligned text table. */
export function printTable(headers: string[], rows: Array<Array<string | number>>): void {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => '  ' + r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(headers));
  console.log('  ' + widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of cells.slice(1)) console.log(line(r));
}


// ---------------------------------------------------------------------------------------------
// servers in child processes

export interface ProbeStats {
  eventLoopDelay: { p50: number; p99: number; max: number; mean: number };
  eventLoopUtilization: number;
  /** CPU time (user + system) of the server process over the window. */
  cpuMs: number;
  cpuPercent: number;
  wallMs: number;
  memory: MemoryFigures;
}
export interface MemoryFigures {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

/** A server in a child process (`K` defaults to the two collaboration servers). */
export interface ChildServer<K extends ServerKind = Exclude<ServerKind, 'static'>> {
  kind: K;
  proc: ChildProcess;
  port: number;
  url: string;
  /** Plexus: owner token for every workspace; bare: any string (no auth). */
  token: string;
  /** Lines the server printed (stdout and stderr), for log inspection. */
  output: string[];
  probe(cmd: 'reset'): Promise<void>;
  probe(cmd: 'stats'): Promise<ProbeStats>;
  probe(cmd: 'gc'): Promise<{ gcAvailable: boolean; memory: MemoryFigures }>;
  probe(cmd: 'snapshot'): Promise<{ file: string }>;
  /** The main thread's CPU profile of a window: start, then stop writing it to `file`. */
  probe(cmd: 'profile-start'): Promise<void>;
  probe(cmd: 'profile-stop', file: string): Promise<{ file: string; clock: ProfileClock }>;
  probe(cmd: 'pauses'): Promise<{ pauses: Pause[] }>;
  stop(): Promise<void>;
  /** SIGKILL (for a server whose event loop is blocked and cannot handle SIGTERM). */
  kill(): Promise<void>;
}

export interface SpawnOptions {
  /** Plexus data directory (a fresh temp dir by default). */
  dataDir?: string;
  env?: Record<string, string>;
  /** Extra node flags (e.g. --expose-gc, --cpu-prof). */
  nodeArgs?: string[];
}

/**
 * `plexus`: server/src/main.ts; `plexus-shadow`: the same with the pre-check off (every update
 * decided on a shadow replica, as before it: PLEXUS_UPDATE_PRECHECK=0); `plexus-kernel-socket`: the
 * in-server kernel a socket peer with a replica, as before it served the live document
 * (PLEXUS_KERNEL_IN_PLACE=0); `plexus-no-ahead`: chains of trivial cells one runner round trip per
 * cell, as before they went as one batch (PLEXUS_KERNEL_AHEAD=0); `plexus-sql-1`: DuckDB on one thread
 * (PLEXUS_SQL_THREADS=1); `plexus-sql-hops`: SQL results read a chunk per call into DuckDB, as
 * before they were read within the query's call (PLEXUS_SQL_CHUNK_HOPS=1); `plexus-sql-all-threads`:
 * every SQL query on all of DuckDB's threads, as before small ones ran on one
 * (PLEXUS_SQL_ADAPTIVE_THREADS=0); `plexus-map-runs`: a
 * fast cell's run written as a map of its keys and outputs, as before it was one plain value
 * (PLEXUS_KERNEL_PLAIN_RUNS=0); `bare`: a bare Hocuspocus;
 * `hocuspocus-sqlite`: Hocuspocus with its own SQLite persistence at its default store debounce;
 * `hocuspocus-sqlite-sync`: the same storing on every change; `static`: a plain file server of env
 * STATIC_ROOT; `plexus-previous`: Plexus as another revision has it, from the checkout in env
 * PLEXUS_PREVIOUS_DIR (made by bench/previous-checkout.sh), to measure a change side by side.
 */
export type ServerKind = 'plexus' | 'plexus-shadow' | 'plexus-kernel-socket' | 'plexus-no-ahead' | 'plexus-sql-1' | 'plexus-sql-hops' | 'plexus-sql-all-threads' | 'plexus-map-runs' | 'plexus-previous' | 'bare' | 'hocuspocus-sqlite' | 'hocuspocus-sqlite-sync' | 'static';
/** Kinds that are Plexus servers (workspaces made through its API, a data directory). */
export const isPlexusKind = (k: ServerKind): boolean => k === 'plexus' || k === 'plexus-shadow' || k === 'plexus-kernel-socket' || k === 'plexus-no-ahead' || k === 'plexus-sql-1' || k === 'plexus-sql-hops' || k === 'plexus-sql-all-threads' || k === 'plexus-map-runs' || k === 'plexus-previous';
const ENTRIES: Record<ServerKind, string> = {
  plexus: path.join(repoRoot, 'server/src/main.ts'),
  'plexus-shadow': path.join(repoRoot, 'server/src/main.ts'),
  'plexus-kernel-socket': path.join(repoRoot, 'server/src/main.ts'),
  'plexus-no-ahead': path.join(repoRoot, 'server/src/main.ts'),
  'plexus-sql-1': path.join(repoRoot, 'server/src/main.ts'),
  'plexus-sql-hops': path.join(repoRoot, 'server/src/main.ts'),
  'plexus-sql-all-threads': path.join(repoRoot, 'server/src/main.ts'),
  'plexus-map-runs': path.join(repoRoot, 'server/src/main.ts'),
  'plexus-previous': 'server/src/main.ts', // under PLEXUS_PREVIOUS_DIR
  bare: path.join(here, 'bare-hocuspocus.ts'),
  'hocuspocus-sqlite': path.join(here, 'bare-hocuspocus.ts'),
  'hocuspocus-sqlite-sync': path.join(here, 'bare-hocuspocus.ts'),
  static: path.join(here, 'static-file-server.ts'),
};
/** What each kind needs in its environment. */
const KIND_ENV: Partial<Record<ServerKind, () => Record<string, string>>> = {
  'plexus-shadow': () => ({ PLEXUS_UPDATE_PRECHECK: '0' }),
  'plexus-kernel-socket': () => ({ PLEXUS_KERNEL_IN_PLACE: '0' }),
  'plexus-no-ahead': () => ({ PLEXUS_KERNEL_AHEAD: '0' }),
  'plexus-sql-1': () => ({ PLEXUS_SQL_THREADS: '1' }),
  'plexus-sql-hops': () => ({ PLEXUS_SQL_CHUNK_HOPS: '1' }),
  'plexus-sql-all-threads': () => ({ PLEXUS_SQL_ADAPTIVE_THREADS: '0' }),
  'plexus-map-runs': () => ({ PLEXUS_KERNEL_PLAIN_RUNS: '0' }),
  'hocuspocus-sqlite': () => ({ BENCH_HOCUSPOCUS_SQLITE: path.join(tmpDir('hocuspocus-sqlite-'), 'db.sqlite') }),
  'hocuspocus-sqlite-sync': () => ({ BENCH_HOCUSPOCUS_SQLITE: path.join(tmpDir('hocuspocus-sqlite-'), 'db.sqlite'), BENCH_HOCUSPOCUS_DEBOUNCE: '0' }),
};

/** The other revision's checkout for `plexus-previous`. */
function previousDir(): string {
  const dir = process.env.PLEXUS_PREVIOUS_DIR;
  if (!dir || !fs.existsSync(path.join(dir, 'server/src/main.ts'))) throw new Error('plexus-previous needs PLEXUS_PREVIOUS_DIR: a checkout made by `bash bench/previous-checkout.sh REV DIR`');
  return path.resolve(dir);
}

/** Starts a server of `kind` in a child process with the probe preloaded. */
export async function spawnServer<K extends ServerKind>(kind: K, opts: SpawnOptions = {}): Promise<ChildServer<K>> {
  const root = kind === 'plexus-previous' ? previousDir() : repoRoot;
  const entry = path.resolve(root, ENTRIES[kind]);
  const dataDir = opts.dataDir ?? (isPlexusKind(kind) ? tmpDir('plexus-bench-') : undefined);
  const proc = spawn(process.execPath, ['--import', 'tsx', '--import', path.join(here, 'probe.ts'), ...(opts.nodeArgs ?? []), entry], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      PLEXUS_READY_JSON: '1',
      PLEXUS_SEED_DEMO: '0',
      PLEXUS_LOG_LEVEL: 'warn',
      PLEXUS_SECRET: BENCH_SECRET,
      ...(dataDir ? { PLEXUS_DATA_DIR: dataDir } : {}),
      ...KIND_ENV[kind]?.(),
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const lines = (stream: NodeJS.ReadableStream, onLine: (l: string) => void) => {
    let buf = '';
    stream.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        onLine(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
  };
  const ready = new Promise<{ port: number; url: string; ownerToken?: string }>((resolve, reject) => {
    lines(proc.stdout!, (l) => {
      output.push(l);
      if (l.startsWith('{"ready"')) resolve(JSON.parse(l));
    });
    lines(proc.stderr!, (l) => output.push(l));
    exited.then((code) => reject(new Error(`${kind} server exited with ${code}:\n${output.join('\n')}`)));
    setTimeout(() => reject(new Error(`${kind} server did not start in 120 s:\n${output.join('\n')}`)), 120_000).unref(); // a hang guard: a loaded machine starts slowly
  });
  const info = await ready;

  let nextId = 1;
  const pending = new Map<number, (v: unknown) => void>();
  proc.on('message', (m: { id: number }) => {
    pending.get(m.id)?.(m);
    pending.delete(m.id);
  });
  const probe = ((cmd: string, file?: string) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, resolve);
      proc.send({ id, cmd, ...(file ? { file } : {}) }, (err) => err && reject(err));
    })) as ChildServer<K>['probe'];

  let stopped: Promise<void> | null = null;
  const cleanup = () => {
    if (dataDir && !opts.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return {
    kind,
    proc,
    port: info.port,
    url: `http://127.0.0.1:${info.port}`,
    token: info.ownerToken ?? 'bare',
    output,
    probe,
    stop: () =>
      (stopped ??= (async () => {
        if (proc.exitCode === null && proc.signalCode === null) {
          proc.kill('SIGTERM');
          const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(t);
        }
        cleanup();
      })()),
    kill: () =>
      (stopped ??= (async () => {
        if (proc.exitCode === null && proc.signalCode === null) {
          proc.kill('SIGKILL');
          await exited;
        }
        cleanup();
      })()),
  };
}

/** CPU the server process spends per second of wall time while nothing is asked of it (timers, the probe, renewals), ms. */
export async function idleCpuPerSecond(server: Pick<ChildServer, 'probe'>, windowMs = 2000): Promise<number> {
  await server.probe('reset');
  await sleep(windowMs);
  const s = await server.probe('stats');
  return s.cpuMs / (s.wallMs / 1000);
}

/** Creates a workspace through the Plexus HTTP API; returns its id. */
export async function createWorkspace(server: ChildServer, name = 'bench'): Promise<string> {
  const res = await fetch(`${server.url}/api/workspaces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (res.status !== 201) throw new Error(`create workspace: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { workspace: { id: string } }).workspace.id;
}

// ---------------------------------------------------------------------------------------------
// clients

export interface BenchClient {
  doc: Y.Doc;
  provider: HocuspocusProvider;
  socket: HocuspocusProviderWebsocket;
  synced: Promise<void>;
  destroy(): void;
}

/** A stock @hocuspocus/provider client with `ws` as its WebSocket (one socket per client). */
export function connectClient(baseUrl: string, name: string, token: string): BenchClient {
  const doc = new Y.Doc();
  const socket = new HocuspocusProviderWebsocket({ url: baseUrl.replace(/^http/, 'ws') + '/collab', WebSocketPolyfill: QuietWebSocket, maxAttempts: 1 } as never);
  let resolveSynced!: () => void;
  let rejectSynced!: (e: Error) => void;
  const synced = new Promise<void>((res, rej) => {
    resolveSynced = res;
    rejectSynced = rej;
  });
  const provider = new HocuspocusProvider({
    websocketProvider: socket,
    name,
    document: doc,
    token,
    onSynced: () => resolveSynced(),
    onAuthenticationFailed: ({ reason }) => rejectSynced(new Error(`authentication failed: ${reason}`)),
    onClose: ({ event }) => rejectSynced(new Error(`closed before sync: ${event.code} ${event.reason}`)),
  });
  provider.attach();
  return {
    doc,
    provider,
    socket,
    synced,
    destroy() {
      provider.destroy();
      socket.destroy();
      doc.destroy();
    },
  };
}

/** Connects `n` clients, `concurrency` at a time, and waits until all are synced. */
export async function connectMany(baseUrl: string, name: string, token: string, n: number, concurrency = 25, timeoutMs = 60_000): Promise<BenchClient[]> {
  const out: BenchClient[] = [];
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; i < n; i += concurrency) {
    const batch = Array.from({ length: Math.min(concurrency, n - i) }, () => connectClient(baseUrl, name, token));
    out.push(...batch);
    const left = deadline - Date.now();
    let timer!: NodeJS.Timeout;
    await Promise.race([
      Promise.all(batch.map((c) => c.synced)),
      new Promise((_, rej) => (timer = setTimeout(() => rej(new Error(`clients did not sync within ${timeoutMs} ms`)), Math.max(0, left)))),
    ]).finally(() => clearTimeout(timer));
  }
  return out;
}

/** Machine description for the printed header. */
export function machine(): string {
  const cpus = os.cpus();
  return `node ${process.version}, ${os.platform()} ${os.release()}, ${os.availableParallelism?.() ?? cpus.length} cores (${cpus[0]?.model ?? '?'}), ${mb(os.totalmem())} MiB RAM`;
}

// ---------------------------------------------------------------------------------------------
// a minimal Hocuspocus protocol client, to time the server without a client-side apply

function varUint(out: number[], n: number): void {
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
}
function varBytes(out: number[], bytes: Uint8Array): void {
  varUint(out, bytes.length);
  for (const b of bytes) out.push(b);
}
const varString = (out: number[], s: string) => varBytes(out, new TextEncoder().encode(s));

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}
  uint(): number {
    let n = 0;
    let mult = 1;
    for (;;) {
      const b = this.buf[this.pos++]!;
      n += (b & 0x7f) * mult;
      if (b < 0x80) return n;
      mult *= 128;
    }
  }
  bytes(): Uint8Array {
    const len = this.uint();
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }
  string(): string {
    return new TextDecoder().decode(this.bytes());
  }
}

export interface RawLoad {
  /** WebSocket open, ms after the connection request. */
  openMs: number;
  /** First byte of the full document state (sync step 2) received, ms after the request. */
  stateMs: number;
  /** Size of the state the server sent. */
  bytes: number;
  /** The state itself (to time a client-side apply separately). */
  state: Uint8Array;
}

/**
 * Opens a document the way @hocuspocus/provider does (auth message, then sync step 1 with an empty
 * state vector) and resolves when the server's sync step 2 (the whole document) arrives. Nothing
 * is applied, so the time is the server's: handshake, auth, load, encode, send. The socket is
 * returned open (closing it would unload the document); call `close()`.
 */
export function rawOpen(baseUrl: string, name: string, token: string, timeoutMs = 60_000): Promise<RawLoad & { close(): void }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let openMs = NaN;
    const ws = new WebSocket(baseUrl.replace(/^http/, 'ws') + '/collab');
    ws.binaryType = 'nodebuffer';
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`no document state within ${timeoutMs} ms`));
    }, timeoutMs);
    ws.on('open', () => {
      openMs = performance.now() - t0;
      const auth: number[] = [];
      varString(auth, name);
      varUint(auth, 2); // Auth
      varUint(auth, 0); // Token
      varString(auth, token);
      varString(auth, '4.8.0');
      const step1: number[] = [];
      varString(step1, name);
      varUint(step1, 0); // Sync
      varUint(step1, 0); // step 1
      varBytes(step1, Uint8Array.of(0)); // empty state vector
      ws.send(Uint8Array.from(auth));
      ws.send(Uint8Array.from(step1));
    });
    ws.on('message', (data: Buffer) => {
      const r = new Reader(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      r.string();
      const type = r.uint();
      if (type === 2 && r.uint() === 1) {
        clearTimeout(timer);
        ws.close();
        reject(new Error(`permission denied: ${r.string()}`));
        return;
      }
      if ((type === 0 || type === 4) && r.uint() === 1) {
        const stateMs = performance.now() - t0;
        clearTimeout(timer);
        const state = r.bytes().slice();
        resolve({ openMs, stateMs, bytes: state.byteLength, state, close: () => ws.close() });
      }
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      reject(new Error(`closed: ${code} ${reason}`));
    });
    ws.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

export interface LightReceiver {
  /** Resolves once the server sent the document state (the receiver is subscribed). */
  ready: Promise<void>;
  /** Sends this receiver's awareness state again (a new clock), as a renewal or a change would. */
  announce(): void;
  close(): void;
}

/** One entry of an awareness update as a light receiver sees it (the state itself is not parsed). */
export interface AwarenessArrival {
  clientId: number;
  clock: number;
}

export interface LightReceiverOptions {
  /** The awareness state it announces (default `{}`). */
  state?: Record<string, unknown>;
  /** Called with the entries of every awareness update the server sends, and its arrival time. */
  onAwareness?: (entries: AwarenessArrival[], now: number) => void;
}

/**
 * A receive-only protocol client that keeps no Y.Doc: it authenticates, syncs, announces an
 * awareness state (renewed every 15 s like y-protocols' Awareness) and hands every incoming
 * document update to `onUpdate` with its arrival time. Costs a few µs per message instead of a
 * provider's decode + apply + observers, so hundreds of them in one process measure the server's
 * fan-out rather than the client process.
 */
export function lightReceiver(
  baseUrl: string,
  name: string,
  token: string,
  onUpdate: (update: Uint8Array, now: number) => void,
  opts: LightReceiverOptions = {},
): LightReceiver {
  const ws = new WebSocket(baseUrl.replace(/^http/, 'ws') + '/collab');
  ws.binaryType = 'nodebuffer';
  const clientId = Math.floor(Math.random() * 2 ** 31);
  const stateJson = JSON.stringify(opts.state ?? {});
  let clock = 0;
  let renew: NodeJS.Timeout | undefined;
  const awareness = () => {
    const body: number[] = [];
    varUint(body, 1);
    varUint(body, clientId);
    varUint(body, ++clock);
    varString(body, stateJson);
    const msg: number[] = [];
    varString(msg, name);
    varUint(msg, 1); // Awareness
    varBytes(msg, Uint8Array.from(body));
    ws.send(Uint8Array.from(msg));
  };
  const ready = new Promise<void>((resolve, reject) => {
    ws.on('open', () => {
      const auth: number[] = [];
      varString(auth, name);
      varUint(auth, 2);
      varUint(auth, 0);
      varString(auth, token);
      varString(auth, '4.8.0');
      const step1: number[] = [];
      varString(step1, name);
      varUint(step1, 0);
      varUint(step1, 0);
      varBytes(step1, Uint8Array.of(0));
      ws.send(Uint8Array.from(auth));
      ws.send(Uint8Array.from(step1));
      awareness();
      // Renew every 15 s like y-protocols' Awareness, at a random phase: steady state, not the
      // synchronised burst of clients that all connected in the same second.
      renew = setTimeout(() => {
        awareness();
        renew = setInterval(awareness, 15_000);
      }, Math.random() * 15_000);
    });
    ws.on('message', (data: Buffer) => {
      const now = performance.now();
      const r = new Reader(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      r.string();
      const type = r.uint();
      if (type === 1 && opts.onAwareness) {
        // Awareness: (count, then clientId, clock, state JSON) in a length-prefixed update.
        const u = new Reader(r.bytes());
        const entries: AwarenessArrival[] = [];
        for (let n = u.uint(); n > 0; n--) {
          const id = u.uint();
          entries.push({ clientId: id, clock: u.uint() });
          u.bytes();
        }
        opts.onAwareness(entries, now);
        return;
      }
      if (type !== 0 && type !== 4) return;
      const sub = r.uint();
      if (sub === 1) resolve();
      else if (sub === 2) onUpdate(r.bytes(), now);
    });
    ws.on('close', (code, reason) => reject(new Error(`closed: ${code} ${reason}`)));
    ws.on('error', reject);
  });
  ready.catch(() => undefined);
  return {
    ready,
    announce: () => {
      if (ws.readyState === WebSocket.OPEN) awareness();
    },
    close: () => {
      clearTimeout(renew);
      clearInterval(renew);
      ws.terminate();
    },
  };
}
