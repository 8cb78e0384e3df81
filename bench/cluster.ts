/**
 * Several nodes (server/src/cluster): what serving a workspace from one node and relaying the
 * clients of the others costs, side by side in one run, on real infrastructure — three Plexus nodes
 * as child processes (server/src/main.ts through testkit's `startTestCluster` / `startChildNode`),
 * a throwaway Redis and Postgres (fsync off, as in the cluster tests; `--fsync` for on), and
 * optionally Debian's HAProxy in front. Every workspace here is served by node-a: it is created
 * there and its writer connects there first (the first load takes the lease; checked in Redis).
 *
 * 1. Cross-node latency. A writer (stock @hocuspocus/provider in this process) types single
 *    characters at the end of a code cell (createCell / insertCellText with a user origin) every
 *    `--interval` ms; readers (stock providers) observe their Y.Text. Latency = performance.now()
 *    when the character is in a reader's Y.Text minus performance.now() just before the writer's
 *    transaction (one process, one clock); warm-up keystrokes are not counted. Run A: writer on the
 *    serving node, one reader on each node — "same node" is the reader beside the writer, "cross
 *    node" the readers whose node relays (one relay hop down). Run B: writer on a relaying node
 *    (its frames go up a relay; the reader beside it sees them come back down: two hops). Run C:
 *    `--readers` readers round robin over the three nodes, writer on the serving node.
 * 2. Fan-out. For each of `--counts` N and each `--presence` mode: N light receivers (bench/lib.ts
 *    `lightReceiver`: no Y.Doc) on one workspace, round robin over the three nodes' URLs (or through
 *    HAProxy: `--via=haproxy`); one writer types `--light-keystrokes`; delivery = arrival of the
 *    update carrying keystroke k minus just before its transaction. Presence "off": the receivers
 *    announce lightReceiver's default empty state, which the server drops (server/src/collab/
 *    access.ts) — keystroke-latency's `--light` receivers, keystrokes only. "on": a user presence, as
 *    bench/presenter.ts's followers and real clients announce, renewed every 15 s (y-protocols) and
 *    relayed to all N: N²/15 deliveries a second on top of the keystrokes. After the last keystroke
 *    the run waits while deliveries still arrive (up to --drain s), so "missing" means never
 *    arrived. CPU of each node, Redis, Postgres, HAProxy and this process over the typing window
 *    (/proc/<pid>/stat utime+stime of each process and its direct children — Postgres: the
 *    postmaster and its backends, plus the children it reaped) and run-queue wait of their main
 *    threads (/proc/<pid>/schedstat: runnable, no core free), to see what saturates.
 * 3. Per-update costs, for every typing run (fan-out runs: a background window twice as long, as
 *    presence renewals are measured from it): CPU ms per update of each process, Redis commands per
 *    update (INFO commandstats), Postgres log entries (Δ workspaces.last_seq, exact), rows inserted
 *    into `log` (pg_stat_user_tables n_tup_ins: a cross-check; Postgres publishes it late, waited for
 *    up to 2 s), write transactions (Δ of the snapshot's xmax: exact, our reads take no xid) and WAL
 *    bytes (pg_current_wal_lsn) per update — each above a background window measured just before
 *    typing with the same clients connected (timers, lease renewals, presence renewals). From these:
 *    linear fits of node CPU per update against receivers, presence renewal costs, and a sizing
 *    estimate for `--users` concurrent users, assumptions printed; a run in which some deliveries
 *    never arrived is left out of the fits (and said so).
 * Every stock client here (and one stock "sentinel" reader per node in each fan-out run) records the
 * close codes its socket receives; they are printed, so a node closing sockets shows in the output.
 * (When this was written, a relaying node closed every relayed /collab socket 30–60 s after it
 * connected with 4408 Connection Timeout — its own Hocuspocus connection never sees a frame — so a
 * fan-out run that takes longer than that loses its relayed light receivers and shows incomplete.)
 *
 * Run: node --import tsx bench/cluster.ts [--quick] [--keystrokes=300] [--warmup=30] [--interval=25]
 *      [--readers=20] [--counts=300,1000] [--light-keystrokes=200] [--via=direct|haproxy]
 *      [--presence=off,on] [--drain=60] [--background=2] [--lease-ms=5000] [--fsync]
 *      [--users=10000] [--active=0.1] [--keys-per-s=5] [--rooms=5,20,100] [--session-min=30]
 * Prints figures; asserts nothing.
 * Effects: processes (Redis, Postgres, three Plexus nodes, HAProxy), sockets, temporary files.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import pg from 'pg';
import type { Redis } from 'ioredis';
import * as Y from 'yjs';
import { cellText, createCell, getCell, insertCellText, userOrigin, type CellId } from '@plexus/shared';
import { startTestCluster, type TestCluster } from '@plexus/testkit/cluster';
import { startHaproxy, type Haproxy } from '@plexus/testkit/haproxy';
import type { ChildServer } from '@plexus/testkit/plexus';
import { startPostgres, type PostgresServer } from '@plexus/testkit/postgres';
import { connectRedis, redisReady } from '@plexus/server/cluster/redis';
import { createLogger } from '@plexus/server/log';
import { connectClient, deliveries, fmt, lightReceiver, machine, printTable, repoRoot, sleep, summarize, until, type BenchClient, type LightReceiver, type Summary } from './lib.ts';

// ---------------------------------------------------------------------------------------------
// options

interface Options {
  quick: boolean;
  keystrokes: number;
  warmup: number;
  interval: number;
  readers: number;
  counts: number[];
  lightKeystrokes: number;
  via: 'direct' | 'haproxy';
  backgroundMs: number;
  leaseMs: number;
  fsync: boolean;
  /** Fan-out runs per count: receivers without presence (false) and/or with a user presence (true). */
  presence: boolean[];
  /** Pause between connecting a run's clients and its background window. */
  settleMs: number;
  /** Longest wait for the presence burst of N connecting receivers to die down. */
  settleMaxMs: number;
  /** Longest wait for the last keystroke to reach every receiver (while deliveries still arrive). */
  drainMs: number;
  sizing: { users: number; active: number; keysPerSecond: number; rooms: number[]; sessionMinutes: number };
}

function parseArgs(argv: string[]): Options {
  const quick = argv.includes('--quick');
  const get = (k: string, dflt: string, quickDflt = dflt) => argv.find((a) => a.startsWith(`--${k}=`))?.slice(k.length + 3) ?? (quick ? quickDflt : dflt);
  const num = (k: string, dflt: number, quickDflt = dflt) => Number(get(k, String(dflt), String(quickDflt)));
  const list = (k: string, dflt: string, quickDflt = dflt) => get(k, dflt, quickDflt).split(',').map(Number);
  return {
    quick,
    keystrokes: num('keystrokes', 300, 100),
    warmup: num('warmup', 30, 10),
    interval: num('interval', 25),
    readers: num('readers', 20, 12),
    counts: list('counts', '300,1000', '150,300'),
    lightKeystrokes: num('light-keystrokes', 200, 80),
    via: get('via', 'direct') === 'haproxy' ? 'haproxy' : 'direct',
    backgroundMs: num('background', 2, 1) * 1000,
    leaseMs: num('lease-ms', 5000),
    fsync: argv.includes('--fsync'),
    presence: [...new Set(get('presence', 'off,on').split(','))].map((m) => m === 'on'),
    settleMs: quick ? 500 : 1000,
    settleMaxMs: quick ? 10_000 : 20_000,
    drainMs: num('drain', 60, 20) * 1000,
    sizing: { users: num('users', 10_000), active: num('active', 0.1), keysPerSecond: num('keys-per-s', 5), rooms: list('rooms', '5,20,100'), sessionMinutes: num('session-min', 30) },
  };
}

// ---------------------------------------------------------------------------------------------
// what each process spends: /proc

const NODE_IDS = ['node-a', 'node-b', 'node-c'] as const;
const SERVING = NODE_IDS[0];
const TICK_MS = 1000 / clockTicks();

function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

interface ProcStat {
  ppid: number;
  /** utime + stime, clock ticks. */
  ticks: number;
  /** cutime + cstime: children it waited for, clock ticks. */
  reapedTicks: number;
}

function procStat(pid: number): ProcStat | null {
  let s: string;
  try {
    s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the command name (which may hold spaces and parentheses): state, ppid, …
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]), reapedTicks: Number(f[13]) + Number(f[14]) };
}

/** ms the task `pid` (a process's main thread) has waited on a run queue: runnable, no core free (/proc/<pid>/schedstat). */
function runQueueWaitMs(pid: number): number {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return 0;
  }
}

interface ProcTimes {
  /** CPU ms so far of each root process with its direct children (live, and reaped), and of this process (`bench`). */
  cpu: Record<string, number>;
  /** Run-queue wait ms so far of each root's main thread and of its live direct children, by pid. */
  wait: Record<string, Map<number, number>>;
  /** The whole machine: busy and total jiffies over all cores (/proc/stat). */
  machineBusy: number;
  machineTotal: number;
}

function procTimes(roots: Record<string, number>): ProcTimes {
  const stats = new Map<number, ProcStat>();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const st = procStat(Number(e));
    if (st) stats.set(Number(e), st);
  }
  const cpu: Record<string, number> = {};
  const wait: Record<string, Map<number, number>> = {};
  for (const [label, pid] of Object.entries(roots)) {
    const root = stats.get(pid);
    wait[label] = new Map();
    if (!root) {
      cpu[label] = NaN;
      continue;
    }
    let ticks = root.ticks + root.reapedTicks;
    wait[label].set(pid, runQueueWaitMs(pid));
    for (const [child, st] of stats) {
      if (st.ppid !== pid) continue;
      ticks += st.ticks;
      wait[label].set(child, runQueueWaitMs(child));
    }
    cpu[label] = ticks * TICK_MS;
  }
  const self = process.cpuUsage();
  cpu.bench = (self.user + self.system) / 1000;
  wait.bench = new Map([[process.pid, runQueueWaitMs(process.pid)]]);
  // cpu  user nice system idle iowait irq softirq steal …
  const j = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = j.reduce((a, b) => a + b, 0);
  return { cpu, wait, machineBusy: total - j[3]! - j[4]!, machineTotal: total };
}

const postmasterPid = (pgServer: PostgresServer) => Number(fs.readFileSync(path.join(pgServer.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);

/** The haproxy process running `configPath` (found by its command line). */
function haproxyPid(configPath: string): number {
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(configPath)) return Number(e);
    } catch {
      // gone meanwhile
    }
  }
  return 0;
}

const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').trim();

// ---------------------------------------------------------------------------------------------
// the cluster and the meters

interface Ctx {
  o: Options;
  cluster: TestCluster;
  /** By id; node-a serves every workspace made here. */
  nodes: Map<string, ChildServer>;
  token: string;
  /** Our own connections to Redis and Postgres, for the counters. */
  redis: Redis;
  db: pg.Client;
  lb: Haproxy | null;
  /** Label → root pid whose CPU is measured. */
  pids: Record<string, number>;
  /** Redis commands of our own lease watch, by name (subtracted from the cluster's). */
  ownRedis: Record<string, number>;
  /** CPU ms per second of each process with no client connected. */
  idle: Record<string, number>;
  /** Sockets of our stock clients that closed before we closed them. */
  closes: ClosedSocket[];
}

interface ClosedSocket {
  who: string;
  /** Seconds after it connected. */
  afterS: number;
  code: number | undefined;
  reason: string;
}

interface PgCounters {
  /** Log entries appended (Δ of the workspaces' last_seq: exact). */
  entries: number;
  /** Rows inserted into `log` (pg_stat_user_tables n_tup_ins: backends publish it up to seconds late). */
  logRows: number;
  /** Transactions that wrote (the next transaction id: exact; read-only ones take none). */
  writeXacts: number;
  walBytes: number;
}

interface Sample {
  wall: number;
  procs: ProcTimes;
  redis: Record<string, number>;
  pg: PgCounters;
  ownRedis: Record<string, number>;
  elu: EventLoopUtilization;
}

interface Delta {
  wallMs: number;
  /** CPU ms by label (nodes, redis, postgres, haproxy, bench). */
  cpu: Record<string, number>;
  /** Run-queue wait ms by label (main threads): wanted a core, had none. */
  wait: Record<string, number>;
  /** Share of the whole machine's cores busy (any process), 0–1. */
  machineBusy: number;
  redisCalls: Record<string, number>;
  redisTotal: number;
  pg: PgCounters;
  benchElu: number;
}

async function redisCalls(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  const out: Record<string, number> = {};
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (m[1] !== 'info') out[m[1]!] = Number(m[2]);
  return out;
}

async function pgCounters(ctx: Ctx): Promise<PgCounters> {
  const { rows } = await ctx.db.query<{ entries: number; log_rows: number; xmax: number; wal: number }>(`
    SELECT (SELECT coalesce(sum(last_seq), 0) FROM workspaces)::float8 AS entries,
           (SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables WHERE relname = 'log')::float8 AS log_rows,
           pg_snapshot_xmax(pg_current_snapshot())::text::float8 AS xmax,
           pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS wal`);
  const r = rows[0]!;
  return { entries: r.entries, logRows: r.log_rows, writeXacts: r.xmax, walBytes: r.wal };
}

async function sample(ctx: Ctx): Promise<Sample> {
  const wall = performance.now();
  const procs = procTimes(ctx.pids);
  const elu = performance.eventLoopUtilization();
  // Our own commands are counted when sent, on the same connection as INFO: Redis runs them in order.
  const ownRedis = { ...ctx.ownRedis };
  const [redis, pgc] = await Promise.all([redisCalls(ctx.redis), pgCounters(ctx)]);
  return { wall, procs, redis, pg: pgc, ownRedis, elu };
}

/**
 * The end of a window: everything now, then pg_stat's row count again until it caught up with the
 * entries appended (backends publish their statistics late), for up to 2 s.
 */
async function endSample(ctx: Ctx, start: Sample): Promise<Sample> {
  const s = await sample(ctx);
  const deadline = Date.now() + 2000;
  while (s.pg.logRows - start.pg.logRows < s.pg.entries - start.pg.entries && Date.now() < deadline) {
    await sleep(250);
    s.pg.logRows = (await pgCounters(ctx)).logRows;
  }
  return s;
}

function delta(a: Sample, b: Sample): Delta {
  const cpu: Record<string, number> = {};
  const wait: Record<string, number> = {};
  for (const k of Object.keys(b.procs.cpu)) {
    cpu[k] = b.procs.cpu[k]! - a.procs.cpu[k]!;
    // Over the processes alive at both ends (a backend that exits takes its wait with it).
    let w = 0;
    for (const [pid, ms] of b.procs.wait[k] ?? []) w += ms - (a.procs.wait[k]?.get(pid) ?? ms);
    wait[k] = w;
  }
  const redisCallsDelta: Record<string, number> = {};
  let redisTotal = 0;
  for (const [k, v] of Object.entries(b.redis)) {
    // Our own lease watch's commands are not the cluster's.
    const d = v - (a.redis[k] ?? 0) - ((b.ownRedis[k] ?? 0) - (a.ownRedis[k] ?? 0));
    if (d) redisCallsDelta[k] = d;
    redisTotal += d;
  }
  return {
    wallMs: b.wall - a.wall,
    cpu,
    wait,
    machineBusy: (b.procs.machineBusy - a.procs.machineBusy) / (b.procs.machineTotal - a.procs.machineTotal),
    redisCalls: redisCallsDelta,
    redisTotal,
    pg: {
      entries: b.pg.entries - a.pg.entries,
      logRows: b.pg.logRows - a.pg.logRows,
      writeXacts: b.pg.writeXacts - a.pg.writeXacts,
      walBytes: b.pg.walBytes - a.pg.walBytes,
    },
    benchElu: performance.eventLoopUtilization(b.elu, a.elu).utilization,
  };
}

/** A window of `ms` in which nothing is asked of the cluster (the clients stay connected). */
async function backgroundWindow(ctx: Ctx, ms: number): Promise<Delta> {
  const a = await sample(ctx);
  await sleep(ms);
  return delta(a, await endSample(ctx, a));
}

/** What one typing run cost: the typing window, and the background just before it. */
interface RunCost {
  label: string;
  /** Receivers on each node (a relayed receiver's updates cross one relay hop on its node). */
  receivers: Record<string, number>;
  /** The writer's node. */
  writerOn: string;
  updates: number;
  typing: Delta;
  background: Delta;
  /** Some receiver never saw some keystroke: the run is left out of the fits. */
  incomplete: boolean;
}

/** `get` per update, above the background rate. */
function perUpdate(c: RunCost, get: (d: Delta) => number): number {
  const bgRate = get(c.background) / c.background.wallMs;
  return (get(c.typing) - bgRate * c.typing.wallMs) / c.updates;
}

// ---------------------------------------------------------------------------------------------
// keystrokes and their arrivals

const CODE = 'for (let i = 0; i < values.length; i++) {\n  total += values[i] * weight;\n}\n';
const origin = userOrigin('bench-writer', 'Bench writer');

/** When each keystroke was typed and when each receiver saw it (keystroke k: once it saw k+1 characters). */
class Arrivals {
  readonly sentAt: Float64Array;
  private readonly seenAt: Float64Array;
  private readonly seenCount: Int32Array;

  constructor(
    readonly receivers: number,
    readonly total: number,
  ) {
    this.sentAt = new Float64Array(total);
    this.seenAt = new Float64Array(receivers * total).fill(NaN);
    this.seenCount = new Int32Array(receivers);
  }

  /** Receiver `r` now sees keystrokes < `upTo`. */
  mark(r: number, upTo: number, now: number): void {
    const len = Math.min(upTo, this.total);
    for (let k = this.seenCount[r]!; k < len; k++) this.seenAt[r * this.total + k] = now;
    if (len > this.seenCount[r]!) this.seenCount[r] = len;
  }

  /** Every receiver saw keystrokes < `upTo`. */
  seenBy(upTo: number): boolean {
    return this.seenCount.every((s) => s >= upTo);
  }

  /** Keystroke arrivals so far, over all receivers. */
  progress(): number {
    return this.seenCount.reduce((a, b) => a + b, 0);
  }

  /** Of receivers `rs`: how many saw every keystroke, and where the others stopped (median keystroke count). */
  completeness(rs: number[]): { complete: number; stoppedAt: number } {
    const short = rs.map((r) => this.seenCount[r]!).filter((c) => c < this.total);
    return { complete: rs.length - short.length, stoppedAt: median(short) };
  }

  /** Latencies of receivers `rs` for keystrokes from `from` on; per keystroke the earliest and latest. */
  collect(rs: number[], from: number): { all: number[]; first: number[]; last: number[]; missing: number } {
    return deliveries(this.seenAt, this.sentAt, this.total, from, rs);
  }
}

/** Types keystrokes [from, to) at the end of the cell, one every `interval` ms on a fixed schedule. */
function typeKeys(writer: BenchClient, cellId: CellId, arrivals: Arrivals, from: number, to: number, interval: number): Promise<void> {
  const text = cellText(getCell(writer.doc, cellId)!)!;
  return new Promise((resolve) => {
    const start = performance.now();
    let k = from;
    const tick = () => {
      arrivals.sentAt[k] = performance.now();
      insertCellText(writer.doc, cellId, text.length, CODE[k % CODE.length]!, origin);
      k++;
      if (k === to) return resolve();
      setTimeout(tick, Math.max(0, start + (k - from) * interval - performance.now()));
    };
    tick();
  });
}

/**
 * A typing run: background window, warm-up keystrokes (delivered before the window opens), then the
 * measured keystrokes; the window closes once every receiver saw the last one (or after drainMs).
 */
async function typingRun(ctx: Ctx, writer: BenchClient, cellId: CellId, arrivals: Arrivals, run: Omit<RunCost, 'typing' | 'background' | 'updates' | 'incomplete'>, keystrokes: number, backgroundMs = ctx.o.backgroundMs): Promise<RunCost> {
  const { warmup, interval } = ctx.o;
  await sleep(ctx.o.settleMs);
  const background = await backgroundWindow(ctx, backgroundMs);
  await typeKeys(writer, cellId, arrivals, 0, warmup, interval);
  await drain(arrivals, warmup, ctx.o.drainMs);
  const a = await sample(ctx);
  await typeKeys(writer, cellId, arrivals, warmup, warmup + keystrokes, interval);
  await drain(arrivals, warmup + keystrokes, ctx.o.drainMs);
  const typing = delta(a, await endSample(ctx, a));
  return { ...run, updates: keystrokes, typing, background, incomplete: !arrivals.seenBy(warmup + keystrokes) };
}

/** Waits until every receiver saw keystrokes < `upTo`, or nothing arrived for 3 s, or `capMs`. */
async function drain(arrivals: Arrivals, upTo: number, capMs: number): Promise<void> {
  const end = Date.now() + capMs;
  let last = arrivals.progress();
  let lastChange = Date.now();
  while (!arrivals.seenBy(upTo) && Date.now() < end && Date.now() - lastChange < 3000) {
    await sleep(5);
    const now = arrivals.progress();
    if (now !== last) {
      last = now;
      lastChange = Date.now();
    }
  }
}

/** End (exclusive) of `client`'s clocks in an update: one keystroke is one struct of length 1; anything else is decoded. */
function clockEnd(update: Uint8Array, client: number): number {
  let pos = 0;
  const uint = () => {
    let n = 0;
    for (let mult = 1; ; mult *= 128) {
      const b = update[pos++]!;
      n += (b & 0x7f) * mult;
      if (b < 0x80) return n;
    }
  };
  // Yjs v1 update: number of clients, then per client: number of structs, client id, first clock.
  if (uint() === 1 && uint() === 1) {
    const c = uint();
    return c === client ? uint() + 1 : 0;
  }
  let end = 0;
  for (const st of Y.decodeUpdate(update).structs) if (st.id.client === client) end = Math.max(end, st.id.clock + st.length);
  return end;
}

// ---------------------------------------------------------------------------------------------
// workspaces and clients

async function newWorkspace(ctx: Ctx, name: string): Promise<string> {
  const res = await fetch(`${ctx.nodes.get(SERVING)!.url}/api/workspaces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (res.status !== 201) throw new Error(`create workspace: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { workspace: { id: string } }).workspace.id;
}

/** A stock provider on `node`, whose socket's closes (before we destroy it) go to ctx.closes. */
function stockClient(ctx: Ctx, node: string, ws: string, who: string): BenchClient {
  const c = connectClient(ctx.nodes.get(node)!.url, ws, ctx.token);
  const t0 = performance.now();
  let destroyed = false;
  c.socket.on('close', ({ event }: { event: { code?: number; reason?: string } }) => {
    if (!destroyed) ctx.closes.push({ who: `${who} on ${node}`, afterS: (performance.now() - t0) / 1000, code: event.code, reason: String(event.reason ?? '') });
  });
  const destroy = c.destroy.bind(c);
  c.destroy = () => {
    destroyed = true;
    destroy();
  };
  return c;
}

async function synced(clients: BenchClient[], timeoutMs = 60_000): Promise<void> {
  let timer!: NodeJS.Timeout;
  await Promise.race([
    Promise.all(clients.map((c) => c.synced)),
    new Promise((_, rej) => (timer = setTimeout(() => rej(new Error(`clients did not sync within ${timeoutMs} ms`)), timeoutMs))),
  ]).finally(() => clearTimeout(timer));
}

/** The writer connects first to the serving node: loading the workspace there takes its lease. */
async function servedWriter(ctx: Ctx, ws: string, who = 'writer'): Promise<BenchClient> {
  const writer = stockClient(ctx, SERVING, ws, who);
  await synced([writer]);
  const holder = await ctx.redis.get(`plexus:lease:${ws}`);
  if (holder !== SERVING) {
    writer.destroy();
    throw new Error(`workspace ${ws} is served by ${holder}, expected ${SERVING}`);
  }
  return writer;
}

function newCell(writer: BenchClient): { cellId: CellId; base: number } {
  const cellId = createCell(writer.doc, { kind: 'code', source: '', author: 'bench-writer' }, origin);
  return { cellId, base: Y.decodeStateVector(Y.encodeStateVector(writer.doc)).get(writer.doc.clientID) ?? 0 };
}

/** Stock readers report a keystroke once their cell's Y.Text holds it; returns the detach function. */
async function observeStock(readers: BenchClient[], cellId: CellId, arrivals: Arrivals): Promise<() => void> {
  await until(() => readers.every((c) => getCell(c.doc, cellId)), 30_000, 5, 'the cell at every reader');
  const detach = readers.map((c, r) => {
    const text = cellText(getCell(c.doc, cellId)!)!;
    const onChange = () => arrivals.mark(r, text.length, performance.now());
    text.observe(onChange);
    return () => text.unobserve(onChange);
  });
  return () => detach.forEach((d) => d());
}

const nodeOf = (i: number) => NODE_IDS[i % NODE_IDS.length]!;

function countBy(ids: string[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(NODE_IDS.map((id) => [id, 0]));
  for (const id of ids) out[id] = (out[id] ?? 0) + 1;
  return out;
}

// ---------------------------------------------------------------------------------------------
// 1. cross-node latency

interface LatencyRow {
  run: string;
  writerOn: string;
  readerOn: string;
  path: string;
  s: Summary;
  missing: number;
}

/** How a keystroke travels from the writer's node to the reader's. */
function pathOf(writerOn: string, readerOn: string): string {
  const up = writerOn !== SERVING;
  const down = readerOn !== SERVING;
  if (!up && !down) return 'direct (both on the serving node)';
  if (up && down) return writerOn === readerOn ? 'relayed up + down (same relaying node)' : 'relayed up + down';
  return up ? 'relayed up (writer relayed)' : 'relayed down (reader relayed)';
}

/** Runs `fn`, then closes what it opened (pushed to `closers`), however it ends; waits for the unload. */
async function withClosers<T>(fn: (closers: Array<() => void>) => Promise<T>): Promise<T> {
  const closers: Array<() => void> = [];
  try {
    return await fn(closers);
  } finally {
    closers.forEach((c) => c());
    await sleep(500);
  }
}

/**
 * Run A (writer on the serving node) or B (writer on a relaying node): a fresh workspace, one reader
 * per node. In run B the client that loaded the workspace on the serving node stays, idle.
 */
async function oneReaderPerNodeRun(ctx: Ctx, run: 'A' | 'B'): Promise<{ rows: LatencyRow[]; cost: RunCost }> {
  return withClosers((closers) => oneReaderPerNode(ctx, run, closers));
}

async function oneReaderPerNode(ctx: Ctx, run: 'A' | 'B', closers: Array<() => void>): Promise<{ rows: LatencyRow[]; cost: RunCost }> {
  const o = ctx.o;
  const writerOn = run === 'A' ? SERVING : NODE_IDS[1];
  const ws = await newWorkspace(ctx, `cluster-latency-${run}`);
  const loader = await servedWriter(ctx, ws, run === 'A' ? 'writer' : 'idle client');
  closers.push(() => loader.destroy());
  const readers = NODE_IDS.map((id) => stockClient(ctx, id, ws, `run ${run} reader`));
  const writer = run === 'A' ? loader : stockClient(ctx, writerOn, ws, 'writer');
  [...readers, ...(run === 'A' ? [] : [writer])].forEach((c) => closers.push(() => c.destroy()));
  await synced([...readers, writer]);
  const arrivals = new Arrivals(readers.length, o.warmup + o.keystrokes);
  const { cellId } = newCell(writer);
  const detach = await observeStock(readers, cellId, arrivals);
  const receivers = countBy(run === 'A' ? [...NODE_IDS] : [...NODE_IDS, SERVING]);
  const cost = await typingRun(ctx, writer, cellId, arrivals, { label: `${run}: writer on ${writerOn}, 1 reader per node (stock)`, receivers, writerOn }, o.keystrokes);
  detach();
  const rows = NODE_IDS.map((readerOn, r) => {
    const c = arrivals.collect([r], o.warmup);
    return { run, writerOn, readerOn, path: pathOf(writerOn, readerOn), s: summarize(c.all), missing: c.missing };
  });
  return { rows, cost };
}

/** Run C: `--readers` stock readers round robin over the nodes, writer on the serving node. */
async function manyReadersRun(ctx: Ctx): Promise<{ rows: LatencyRow[]; cost: RunCost }> {
  return withClosers((closers) => manyReaders(ctx, closers));
}

async function manyReaders(ctx: Ctx, closers: Array<() => void>): Promise<{ rows: LatencyRow[]; cost: RunCost }> {
  const o = ctx.o;
  const ws = await newWorkspace(ctx, 'cluster-latency-many');
  const writer = await servedWriter(ctx, ws);
  closers.push(() => writer.destroy());
  const on = Array.from({ length: o.readers }, (_, i) => nodeOf(i));
  const readers = on.map((id) => stockClient(ctx, id, ws, 'run C reader'));
  readers.forEach((c) => closers.push(() => c.destroy()));
  await synced(readers);
  const arrivals = new Arrivals(readers.length, o.warmup + o.keystrokes);
  const { cellId } = newCell(writer);
  const detach = await observeStock(readers, cellId, arrivals);
  const cost = await typingRun(ctx, writer, cellId, arrivals, { label: `C: writer on ${SERVING}, ${o.readers} readers (stock) over 3 nodes`, receivers: countBy(on), writerOn: SERVING }, o.keystrokes);
  detach();
  const idx = (pred: (id: string) => boolean) => on.flatMap((id, r) => (pred(id) ? [r] : []));
  const row = (readerOn: string, rs: number[]) => {
    const c = arrivals.collect(rs, o.warmup);
    return { run: 'C', writerOn: SERVING, readerOn: `${readerOn} (${rs.length})`, path: readerOn === SERVING ? pathOf(SERVING, SERVING) : 'relayed down (reader relayed)', s: summarize(c.all), missing: c.missing };
  };
  const rows = [row(SERVING, idx((id) => id === SERVING)), row(`${NODE_IDS[1]}+${NODE_IDS[2]}`, idx((id) => id !== SERVING))];
  return { rows, cost };
}

function printLatency(rows: LatencyRow[]): void {
  console.log('\n## 1. Cross-node latency: keystroke → visible in a reader\'s Y.Text (ms; stock providers)');
  const sameOf = (r: LatencyRow) => rows.find((x) => x.run === r.run && (r.run === 'C' ? x.readerOn.startsWith(SERVING) : x.readerOn === x.writerOn));
  printTable(
    ['run', 'writer on', 'reader on', 'path', 'obs', 'p50', 'p95', 'p99', 'max', 'missing', 'p50 / same', 'p95 / same', 'p99 / same'],
    rows.map((r) => {
      const same = sameOf(r)!;
      return [r.run, r.writerOn, r.readerOn, r.path, r.s.n, fmt(r.s.p50), fmt(r.s.p95), fmt(r.s.p99), fmt(r.s.max), r.missing, fmt(r.s.p50 / same.s.p50), fmt(r.s.p95 / same.s.p95), fmt(r.s.p99 / same.s.p99)];
    }),
  );
  console.log(`  ("same" = the reader on the writer's node: ${SERVING} in runs A and C, ${NODE_IDS[1]} in run B, where it is relayed both ways.)`);
}

// ---------------------------------------------------------------------------------------------
// 2. fan-out to light receivers

interface FanOutResult {
  n: number;
  presence: boolean;
  error?: string;
  connectMs: number;
  redisPerConnect: number;
  /** Presence entries this process received per second over the background and typing windows (renewals). */
  presencePerSecond: number;
  classes: Array<{ label: string; receivers: number; s: Summary; missing: number; complete: number; stoppedAt: number }>;
  lease: LeaseSeen;
  all: Summary;
  first: Summary;
  last: Summary;
  missing: number;
  cost?: RunCost;
}

/** N light receivers on one workspace spread over the nodes (or through HAProxy); one writer types. */
async function fanOutRun(ctx: Ctx, n: number, presence: boolean): Promise<FanOutResult> {
  const o = ctx.o;
  const closers: Array<() => void> = [];
  const empty = summarize([]);
  const result: FanOutResult = { n, presence, connectMs: NaN, redisPerConnect: NaN, presencePerSecond: NaN, classes: [], lease: { minTtlMs: NaN, holders: [] }, all: empty, first: empty, last: empty, missing: 0 };
  try {
    const ws = await newWorkspace(ctx, `cluster-fanout-${n}`);
    const writer = await servedWriter(ctx, ws);
    closers.push(() => writer.destroy());
    const lease = watchLease(ctx, ws);
    closers.push(() => (result.lease = lease.stop()));
    // One stock reader per node: its socket's close code (if a node closes it) is recorded.
    const sentinels = NODE_IDS.map((id) => stockClient(ctx, id, ws, `N=${n} presence ${onOff(presence)} sentinel`));
    sentinels.forEach((c) => closers.push(() => c.destroy()));
    await synced(sentinels);
    const { cellId, base } = newCell(writer);
    const total = o.warmup + o.lightKeystrokes;
    const arrivals = new Arrivals(n, total);
    const me = writer.doc.clientID;
    let entries = 0;
    const on = Array.from({ length: n }, (_, i) => (ctx.lb ? 'haproxy' : nodeOf(i)));
    const urlOf = (id: string) => (id === 'haproxy' ? ctx.lb!.url : ctx.nodes.get(id)!.url);
    const redisBefore = sumValues(await redisCalls(ctx.redis)) - sumValues(ctx.ownRedis);
    const t0 = performance.now();
    for (let i = 0; i < n; i += 50) {
      const batch: LightReceiver[] = [];
      for (let r = i; r < Math.min(n, i + 50); r++) {
        const rec = lightReceiver(urlOf(on[r]!), ws, ctx.token, (update, now) => {
          const end = clockEnd(update, me);
          if (end > base) arrivals.mark(r, end - base, now);
        }, { state: presenceState(r, presence), onAwareness: (e) => (entries += e.length) });
        closers.push(() => rec.close());
        batch.push(rec);
      }
      await withTimeout(Promise.all(batch.map((b) => b.ready)), 120_000, `receivers ${i}–${i + batch.length} ready`);
    }
    result.connectMs = performance.now() - t0;
    result.redisPerConnect = (sumValues(await redisCalls(ctx.redis)) - sumValues(ctx.ownRedis) - redisBefore) / n;
    await settlePresence(ctx, presence ? n : 0, () => entries);
    const e0 = entries;
    const how = `${ctx.lb ? 'through HAProxy' : 'over 3 nodes'}, presence ${presence ? 'on' : 'off'}`;
    result.cost = await typingRun(ctx, writer, cellId, arrivals, { label: `fan-out: writer on ${SERVING}, ${n} light receivers ${how}`, receivers: ctx.lb ? { haproxy: n, ...countBy([...NODE_IDS]) } : countBy([...on, ...NODE_IDS]), writerOn: SERVING }, o.lightKeystrokes, 2 * o.backgroundMs);
    result.presencePerSecond = ((entries - e0) / (result.cost.background.wallMs + result.cost.typing.wallMs)) * 1000;
    const everyone = arrivals.collect(on.map((_, r) => r), o.warmup);
    Object.assign(result, { all: summarize(everyone.all), first: summarize(everyone.first), last: summarize(everyone.last), missing: everyone.missing });
    for (const id of new Set(on)) {
      const rs = on.flatMap((x, r) => (x === id ? [r] : []));
      const c = arrivals.collect(rs, o.warmup);
      const label = id === SERVING ? `${id} (serving)` : id === 'haproxy' ? 'through HAProxy' : `${id} (relays)`;
      result.classes.push({ label, receivers: rs.length, s: summarize(c.all), missing: c.missing, ...arrivals.completeness(rs) });
    }
  } catch (e) {
    result.error = (e as Error).message;
  } finally {
    closers.forEach((c) => c());
    await sleep(1000); // the serving node unloads the workspace, the relays close
  }
  return result;
}

/** What receiver `i` announces: a person, as a browser tab does (stamped from the token by the server), or nothing. */
const presenceState = (i: number, on: boolean): Record<string, unknown> =>
  on ? { user: { id: `local-owner/bench-viewer-${i}`, sub: 'local-owner', name: `Viewer ${i}`, color: '#4363d8', role: 'owner', kind: 'person' } } : {};

interface LeaseSeen {
  /** Least time the lease had left when polled, ms (-2: it was gone). */
  minTtlMs: number;
  /** Holders seen, in order, consecutive repeats dropped ("none": no lease). */
  holders: string[];
}

/** Polls a workspace's lease every `everyMs` (GET + PTTL, counted as our own Redis commands) until `stop()`. */
function watchLease(ctx: Ctx, ws: string, everyMs = 250): { stop(): LeaseSeen } {
  const key = `plexus:lease:${ws}`;
  const seen: LeaseSeen = { minTtlMs: Infinity, holders: [] };
  let busy = false;
  const poll = async () => {
    if (busy) return;
    busy = true;
    try {
      for (const c of ['get', 'pttl']) ctx.ownRedis[c] = (ctx.ownRedis[c] ?? 0) + 1;
      const res = await ctx.redis.pipeline().get(key).pttl(key).exec();
      const holder = (res?.[0]?.[1] as string | null) ?? 'none';
      seen.minTtlMs = Math.min(seen.minTtlMs, Number(res?.[1]?.[1]));
      if (seen.holders[seen.holders.length - 1] !== holder) seen.holders.push(holder);
    } catch {
      // Redis busy or away: the next poll tries again
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void poll(), everyMs);
  return {
    stop() {
      clearInterval(timer);
      return seen;
    },
  };
}

const sumValues = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer!: NodeJS.Timeout;
  try {
    return await Promise.race([p, new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`${what}: not within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits until the presence burst of `n` receivers announcing themselves has passed: the entries
 * arriving per half second are back near steady renewals (n receivers renew every 15 s, each to the
 * n others), or settleMaxMs. `n` = 0: receivers without presence (only the sync settles).
 */
async function settlePresence(ctx: Ctx, n: number, arrived: () => number): Promise<void> {
  const steady = ((n * n) / 15) * 0.5;
  const deadline = Date.now() + ctx.o.settleMaxMs;
  let last = arrived();
  await sleep(500);
  while (Date.now() < deadline) {
    const now = arrived();
    if (now - last <= 1.5 * steady + 100) return;
    last = now;
    await sleep(500);
  }
}

const onOff = (b: boolean) => (b ? 'on' : 'off');

const cpuPercent = (d: Delta, label: string) => ((d.cpu[label] ?? NaN) / d.wallMs) * 100;

/** The process that wanted the most of a core (CPU + run-queue wait), and whether the machine had it to give. */
function busiest(d: Delta): string {
  const [label, ms] = Object.entries(d.cpu).sort((a, b) => b[1] + (d.wait[b[0]] ?? 0) - a[1] - (d.wait[a[0]] ?? 0))[0]!;
  const used = (ms / d.wallMs) * 100;
  const wanted = used + ((d.wait[label] ?? 0) / d.wallMs) * 100;
  const verdict = used >= 85 ? ' (saturated: a core)' : wanted >= 85 && d.machineBusy >= 0.9 ? ' (starved: wants a core, the machine is full)' : '';
  return `${label} ${fmt(used, 0)}% + ${fmt(wanted - used, 0)}% waiting${verdict}`;
}

function printFanOut(ctx: Ctx, results: FanOutResult[]): void {
  const o = ctx.o;
  const procs = Object.keys(ctx.pids);
  console.log(
    `\n## 2. Fan-out: one writer (${o.lightKeystrokes} keystrokes every ${o.interval} ms) to N light receivers ${ctx.lb ? 'through HAProxy' : 'round robin over the three nodes'}, ` +
      `presence off (keystrokes only) and/or on (a user presence per receiver, renewed every 15 s) (delivery ms)`,
  );
  for (const r of results.filter((x) => x.error)) console.log(`  N=${r.n}, presence ${onOff(r.presence)}: FAILED — ${r.error}`);
  const ok = results.filter((r) => r.cost);
  printTable(
    ['N', 'presence', 'connect s', 'Redis cmds/connect', 'obs', 'p50', 'p95', 'p99', 'max', 'first p50', 'last p99', 'missing', 'presence entries/s (to this process)', 'lease: least ms left', 'lease holders seen'],
    ok.map((r) => [
      r.n, onOff(r.presence), fmt(r.connectMs / 1000, 1), fmt(r.redisPerConnect, 1), r.all.n, fmt(r.all.p50), fmt(r.all.p95), fmt(r.all.p99), fmt(r.all.max), fmt(r.first.p50), fmt(r.last.p99), r.missing,
      fmt(r.presencePerSecond, 0), fmt(r.lease.minTtlMs, 0), r.lease.holders.join(' → '),
    ]),
  );
  console.log('\n  by the receiver\'s node:');
  printTable(
    ['N', 'presence', 'receivers on', 'receivers', 'p50', 'p95', 'p99', 'max', 'missing', 'saw every keystroke', 'the others stopped at (median keystroke)'],
    ok.flatMap((r) => r.classes.map((c) => [r.n, onOff(r.presence), c.label, c.receivers, fmt(c.s.p50), fmt(c.s.p95), fmt(c.s.p99), fmt(c.s.max), c.missing, c.complete, c.complete < c.receivers ? fmt(c.stoppedAt, 0) : '—'])),
  );
  console.log(
    '\n  CPU while typing and in the background window just before (same receivers, nobody typing), as "CPU / run-queue wait" in % of one core: ' +
      'wait = the main thread was runnable but had no core (a node is one event loop, Redis one thread; Postgres: all backends). Machine: all cores busy, any process.',
  );
  printTable(
    ['N', 'presence', 'window', 'wall s', ...procs.map((p) => `${p} %`), 'bench %', 'bench ELU', 'machine busy', 'busiest'],
    ok.flatMap((r) => {
      const c = r.cost!;
      const cell = (d: Delta, p: string) => `${fmt(cpuPercent(d, p), 0)} / ${fmt(((d.wait[p] ?? NaN) / d.wallMs) * 100, 0)}`;
      const line = (name: string, d: Delta) => [r.n, onOff(r.presence), name, fmt(d.wallMs / 1000, 1), ...procs.map((p) => cell(d, p)), cell(d, 'bench'), fmt(d.benchElu), `${fmt(d.machineBusy * 100, 0)}%`, busiest(d)];
      return [line('typing', c.typing), line('background', c.background)];
    }),
  );
}

/** The sockets of our stock clients that a node closed (ours are closed only after their run). */
function printCloses(ctx: Ctx): void {
  console.log('\n## Sockets closed under a client during a run (stock clients and per-node sentinels; none expected)');
  if (!ctx.closes.length) return console.log('  none');
  const meaning: Record<number, string> = {
    4408: "the node's Hocuspocus: no frame reached its ClientConnection for `timeout` (30 s)",
    1005: "no status: how the stock provider closes by itself after 30 s without a message",
    1012: 'workspace moved (its lease moved or expired)',
  };
  printTable(
    ['client', 'after s', 'code', 'reason', 'meaning'],
    ctx.closes.map((c) => [c.who, fmt(c.afterS, 1), c.code ?? '—', c.reason || '—', meaning[c.code ?? 0] ?? '']),
  );
}

// ---------------------------------------------------------------------------------------------
// 3. per-update costs, fits, sizing

function printCosts(ctx: Ctx, costs: RunCost[]): void {
  const procs = Object.keys(ctx.pids);
  console.log('\n## 3. Per-update costs (above the background window before each run; CPU in ms of one core)');
  printTable(
    ['run', 'receivers per node', 'updates', ...procs.map((p) => `${p} ms`), 'bench ms', 'Redis cmds', 'PG entries', 'PG log rows (pg_stat)', 'PG write xacts', 'WAL bytes'],
    costs.map((c) => [
      c.incomplete ? `${c.label} [incomplete: not in the fits]` : c.label,
      Object.entries(c.receivers).map(([k, v]) => `${k.replace('node-', '')}:${v}`).join(' '),
      c.updates,
      ...procs.map((p) => fmt(perUpdate(c, (d) => d.cpu[p] ?? NaN), 3)),
      fmt(perUpdate(c, (d) => d.cpu.bench!), 3),
      fmt(perUpdate(c, (d) => d.redisTotal), 3),
      fmt(perUpdate(c, (d) => d.pg.entries), 2),
      fmt(perUpdate(c, (d) => d.pg.logRows), 2),
      fmt(perUpdate(c, (d) => d.pg.writeXacts), 2),
      fmt(perUpdate(c, (d) => d.pg.walBytes), 0),
    ]),
  );
  console.log('\n  background rates (per second, nobody typing) and Redis commands by name during typing:');
  for (const c of costs) {
    const bg = c.background;
    const rate = (x: number) => fmt((x / bg.wallMs) * 1000, 1);
    const byName = Object.entries(c.typing.redisCalls).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
    console.log(`  ${c.label}: CPU ms/s ${procs.map((p) => `${p} ${rate(bg.cpu[p] ?? NaN)}`).join(', ')}; Redis ${rate(bg.redisTotal)} cmds/s; typing window ${fmt(c.typing.wallMs / 1000, 1)} s, Redis calls: ${byName}`);
  }
}

interface Line {
  a: number;
  b: number;
  points: number;
}

/** Least-squares line y = a + b·x; with one distinct x, the line through the origin (all of it per receiver). */
function fitLine(pts: Array<[number, number]>): Line {
  const ok = pts.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const n = ok.length;
  if (n === 0) return { a: NaN, b: NaN, points: 0 };
  const mx = ok.reduce((s, [x]) => s + x, 0) / n;
  const my = ok.reduce((s, [, y]) => s + y, 0) / n;
  const sxx = ok.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  if (sxx === 0) return mx ? { a: 0, b: my / mx, points: n } : { a: my, b: 0, points: n };
  const b = ok.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0) / sxx;
  return { a: my - b * mx, b, points: n };
}

const total = (r: Record<string, number>) => Object.values(r).reduce((s, v) => s + v, 0);
const median = (xs: number[]) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : NaN;
};

interface Model {
  /** Serving node per update: a + b × receivers (every receiver, relayed or not, is one socket there). */
  serving: Line;
  /** Relaying node per update: a + b × receivers it relays. */
  relay: Line;
  /** Per presence renewal (fan-out runs' background): serving a + b × receivers; relaying per relayed receiver. */
  presenceServing: Line;
  presenceRelay: Line;
  redisPerUpdate: number;
  redisBackgroundPerNode: number;
  redisPerConnect: number;
  redisCpuPerUpdate: number;
  redisCpuBackground: number;
  pgEntries: number;
  pgCommits: number;
  pgWal: number;
  pgCpu: number;
}

function buildModel(ctx: Ctx, all: RunCost[], fanOut: FanOutResult[]): Model {
  const costs = all.filter((c) => !c.incomplete);
  const served = costs.filter((c) => c.writerOn === SERVING);
  const serving = fitLine(served.map((c) => [total(c.receivers), perUpdate(c, (d) => d.cpu[SERVING]!)]));
  const relay = fitLine(served.filter((c) => !('haproxy' in c.receivers)).flatMap((c) => NODE_IDS.slice(1).map((id): [number, number] => [c.receivers[id]!, perUpdate(c, (d) => d.cpu[id]!)])));
  // Presence: the fan-out runs' background (renewals only) above the nodes' idle CPU, per renewal (N/15 a second).
  const fan = fanOut.filter((f) => f.cost && f.presence && !f.cost.incomplete);
  const direct = fan.filter((f) => !('haproxy' in f.cost!.receivers));
  const perRenewal = (f: FanOutResult, id: string) => {
    const bg = f.cost!.background;
    return ((bg.cpu[id]! / bg.wallMs) * 1000 - ctx.idle[id]!) / (f.n / 15);
  };
  const presenceServing = fitLine(fan.map((f) => [f.n, perRenewal(f, SERVING)]));
  const presenceRelay = fitLine(direct.flatMap((f) => NODE_IDS.slice(1).map((id): [number, number] => [f.cost!.receivers[id]!, perRenewal(f, id)])));
  return {
    serving,
    relay,
    presenceServing,
    presenceRelay,
    // Pooled over the runs: the background's periodic commands make one run's figure noisy.
    redisPerUpdate: costs.reduce((a, c) => a + perUpdate(c, (d) => d.redisTotal) * c.updates, 0) / costs.reduce((a, c) => a + c.updates, 0),
    redisBackgroundPerNode: median(costs.map((c) => (c.background.redisTotal / c.background.wallMs) * 1000)) / NODE_IDS.length,
    redisPerConnect: median(fanOut.filter((f) => f.cost && !f.cost.incomplete).map((f) => f.redisPerConnect)),
    redisCpuPerUpdate: median(costs.map((c) => perUpdate(c, (d) => d.cpu.redis!))),
    redisCpuBackground: ctx.idle.redis!,
    pgEntries: median(costs.map((c) => perUpdate(c, (d) => d.pg.entries))),
    pgCommits: median(costs.map((c) => perUpdate(c, (d) => d.pg.writeXacts))),
    pgWal: median(costs.map((c) => perUpdate(c, (d) => d.pg.walBytes))),
    pgCpu: median(costs.map((c) => perUpdate(c, (d) => d.cpu.postgres!))),
  };
}

const pos = (x: number) => (Number.isFinite(x) ? Math.max(0, x) : 0);

interface Sizing {
  room: number;
  workspaces: number;
  updatesPerSecond: number;
  deliveriesPerSecond: number;
  keystrokeCores: number;
  presenceCores: number;
  nodes: number;
  redisCmds: number;
  redisCores: number;
  pgEntries: number;
  pgCommits: number;
  walMBps: number;
  pgCores: number;
}

/** Target load of one node's event loop (headroom for bursts, joins, snapshots). */
const NODE_TARGET = 0.5;

function size(m: Model, o: Options, room: number): Sizing {
  const { users, active, keysPerSecond, sessionMinutes } = o.sizing;
  const updates = users * active * keysPerSecond;
  const renewals = users / 15;
  const others = room - 1;
  let nodes = 3;
  let keystrokeCores = 0;
  let presenceCores = 0;
  // The relayed share depends on the node count (a client lands on the workspace's node 1/n of the time).
  for (let i = 0; i < 10; i++) {
    const relayed = (nodes - 1) / nodes;
    // Each update: the serving node's work for `others` sockets; relays for the relayed readers, and for the writer's frame when it is relayed.
    const keystrokeMs = updates * (pos(m.serving.a) + pos(m.serving.b) * others + pos(m.relay.b) * (others * relayed + relayed));
    const presenceMs = renewals * (pos(m.presenceServing.a) + pos(m.presenceServing.b) * others + pos(m.presenceRelay.b) * (others * relayed + relayed));
    keystrokeCores = keystrokeMs / 1000;
    // No fan-out run measured presence (all failed, or --no-presence): unknown, not zero.
    presenceCores = m.presenceServing.points ? presenceMs / 1000 : NaN;
    const next = Math.max(2, Math.ceil((keystrokeCores + pos(presenceCores)) / NODE_TARGET));
    if (next === nodes) break;
    nodes = next;
  }
  const connects = users / (sessionMinutes * 60);
  const redisCmds = nodes * m.redisBackgroundPerNode + updates * pos(m.redisPerUpdate) + connects * m.redisPerConnect;
  return {
    room,
    workspaces: Math.ceil(users / room),
    updatesPerSecond: updates,
    deliveriesPerSecond: updates * others,
    keystrokeCores,
    presenceCores,
    nodes,
    redisCmds,
    redisCores: (m.redisCpuBackground + updates * pos(m.redisCpuPerUpdate)) / 1000,
    pgEntries: updates * m.pgEntries,
    pgCommits: updates * m.pgCommits,
    walMBps: (updates * m.pgWal) / 1024 / 1024,
    pgCores: (updates * pos(m.pgCpu)) / 1000,
  };
}

function printSizing(ctx: Ctx, m: Model): Sizing[] {
  const o = ctx.o;
  const s = o.sizing;
  const line = (name: string, l: Line, unit: string) => console.log(`  ${name}: ${fmt(l.a, 3)} ms + ${fmt(l.b * 1000, 1)} µs × ${unit} (${l.points} points${l.points && !l.a && l.b ? ', one x: through the origin' : ''})`);
  console.log('\n  fitted over the runs above (writer on the serving node):');
  line('serving node CPU per update', m.serving, 'receivers (sockets on it, relayed ones included)');
  line('relaying node CPU per update', m.relay, 'receivers it relays');
  line('serving node CPU per presence renewal', m.presenceServing, 'receivers');
  line('relaying node CPU per presence renewal', m.presenceRelay, 'receivers it relays');
  console.log(
    `  Redis: ${fmt(m.redisPerUpdate, 3)} commands per update, ${fmt(m.redisBackgroundPerNode, 1)} per second per node in the background (lease renewals, directory, relay watch), ${fmt(m.redisPerConnect, 1)} per connection; ` +
      `Postgres: ${fmt(m.pgEntries, 2)} log entries, ${fmt(m.pgCommits, 2)} commits, ${fmt(m.pgWal, 0)} WAL bytes, ${fmt(m.pgCpu, 3)} ms CPU per update (Redis per update: pooled over the runs; the rest: medians).`,
  );
  console.log(
    `\n## Sizing estimate: ${s.users.toLocaleString('en')} concurrent users. Assumptions: ${fmt(s.active * 100, 0)}% of them typing at any moment at ${s.keysPerSecond} keystrokes/s ` +
      `(= ${fmt(s.users * s.active * s.keysPerSecond, 0)} updates/s); everyone renews presence every 15 s (y-protocols); users in workspaces of "room" people, all connected through a ` +
      `round-robin load balancer (a client is on its workspace's node 1/n of the time, else relayed); nodes loaded to ${NODE_TARGET * 100}% of a core (one event loop each); ` +
      `a session lasts ${s.sessionMinutes} min (connections/s for Redis); CPU per operation as measured on THIS machine (busy, shared cores: pessimistic); ` +
      `Postgres commits per update as grouped at this run's rate (more grouping at higher rates: an upper bound). Awareness ≠ keystroke messages: presence costs come from the fan-out runs' background.`,
  );
  const rows = s.rooms.map((room) => size(m, o, room));
  printTable(
    ['room', 'workspaces', 'updates/s', 'deliveries/s', 'node cores (keys)', 'node cores (presence)', 'nodes @50%', 'Redis cmds/s', 'Redis cores', 'PG entries/s', 'PG commits/s ≤', 'WAL MB/s', 'PG cores'],
    rows.map((r) => [
      r.room, r.workspaces, fmt(r.updatesPerSecond, 0), fmt(r.deliveriesPerSecond, 0), fmt(r.keystrokeCores, 2), fmt(r.presenceCores, 2), r.nodes, fmt(r.redisCmds, 0), fmt(r.redisCores, 3),
      fmt(r.pgEntries, 0), fmt(r.pgCommits, 0), fmt(r.walMBps, 2), fmt(r.pgCores, 2),
    ]),
  );
  return rows;
}

// ---------------------------------------------------------------------------------------------
// summary

function summary(lat: LatencyRow[], fanOut: FanOutResult[], m: Model, sizing: Sizing[], o: Options, closes: ClosedSocket[]): string {
  const pick = (run: string, readerOn: string) => lat.find((r) => r.run === run && r.readerOn.startsWith(readerOn));
  const same = pick('A', SERVING);
  const cross = lat.filter((r) => r.run === 'A' && r.readerOn !== SERVING);
  const crossP50 = median(cross.map((r) => r.s.p50));
  const crossP99 = median(cross.map((r) => r.s.p99));
  const cSame = pick('C', SERVING);
  const cCross = pick('C', NODE_IDS[1]);
  const ok = fanOut.filter((f) => f.cost);
  const fanText = ok
    .map((f) => `N=${f.n} presence ${onOff(f.presence)}: p50 ${fmt(f.all.p50, 1)} / p99 ${fmt(f.all.p99, 1)} ms${f.missing ? ` (INCOMPLETE: ${f.missing} deliveries never arrived)` : ''}, busiest ${busiest(f.cost!.typing)}`)
    .join('; ');
  const codes = new Map<string, number>();
  for (const c of closes) codes.set(String(c.code ?? '—'), (codes.get(String(c.code ?? '—')) ?? 0) + 1);
  const closeText = closes.length
    ? `${closes.length} client socket(s) were closed under a run (${[...codes].map(([k, v]) => `${v}× ${k}`).join(', ')}; after ${fmt(Math.min(...closes.map((c) => c.afterS)), 0)}–${fmt(Math.max(...closes.map((c) => c.afterS)), 0)} s): see that list. `
    : '';
  const failed = fanOut.filter((f) => f.error).map((f) => `N=${f.n} presence ${onOff(f.presence)} failed (${f.error})`).join('; ');
  const mid = sizing[Math.floor(sizing.length / 2)];
  const needs = mid
    ? [
        { what: 'the nodes', cores: mid.keystrokeCores + pos(mid.presenceCores) },
        { what: 'Postgres', cores: mid.pgCores },
        { what: 'Redis', cores: mid.redisCores },
      ].sort((a, b) => b.cores - a.cores)
    : [];
  return (
    `Summary. A keystroke reached a reader on the serving node in p50 ${fmt(same?.s.p50 ?? NaN, 1)} ms (p99 ${fmt(same?.s.p99 ?? NaN, 1)}) and a reader relayed by another node in ` +
    `p50 ${fmt(crossP50, 1)} ms (p99 ${fmt(crossP99, 1)}): ratio ${fmt(crossP50 / (same?.s.p50 ?? NaN))} at p50, ${fmt(crossP99 / (same?.s.p99 ?? NaN))} at p99; with ${o.readers} readers ` +
    `the relayed ones were at ${fmt((cCross?.s.p50 ?? NaN) / (cSame?.s.p50 ?? NaN))}× (p50) / ${fmt((cCross?.s.p99 ?? NaN) / (cSame?.s.p99 ?? NaN))}× (p99) the serving node's. ` +
    `Fan-out to light receivers ${o.via === 'haproxy' ? 'through HAProxy' : 'round robin over three nodes'}: ${fanText || 'no run completed'}${failed ? `; ${failed}` : ''}. The serving node still sends one message per receiver ` +
    `(${fmt(m.serving.b * 1000, 1)} µs each, ${fmt(m.serving.a, 2)} ms fixed per update) — relaying spreads the socket work (${fmt(m.relay.b * 1000, 1)} µs per relayed receiver on its node) but not the serving node's fan-out. ` +
    (Math.abs(m.redisPerUpdate) < 0.5
      ? `Redis is off the typing path (${fmt(m.redisPerUpdate, 2)} commands per update above background; its load is the per-node background and connections), `
      : `Redis takes ${fmt(m.redisPerUpdate, 2)} commands per update, `) +
    `Postgres takes ${fmt(m.pgEntries, 2)} entries and ` +
    `${fmt(m.pgWal, 0)} WAL bytes per update. ` +
    (mid
      ? `For ${o.sizing.users.toLocaleString('en')} users in rooms of ${mid.room} (${fmt(mid.updatesPerSecond, 0)} updates/s), that is ~${fmt(mid.keystrokeCores + pos(mid.presenceCores), 1)} node cores (${mid.nodes} nodes at 50%), ` +
        `${fmt(mid.pgEntries, 0)} Postgres appends/s (${fmt(mid.pgCommits, 0)} commits/s, ${fmt(mid.pgCores, 1)} cores, one database for all) and ${fmt(mid.redisCmds, 0)} Redis commands/s; ` +
        `CPU needed, most first: ${needs.map((x) => `${x.what} ${fmt(x.cores, 2)} cores`).join(', ')}. `
      : '') +
    closeText +
    `Figures come from a machine shared with a stress loop: compare rows of this run, not runs.`
  );
}

// ---------------------------------------------------------------------------------------------
// main

function versions(ctx: Ctx, redisInfo: string, pgVersion: string): string {
  const hp = JSON.parse(fs.readFileSync(path.join(repoRoot, 'node_modules/@hocuspocus/server/package.json'), 'utf8')).version as string;
  const redisVersion = /redis_version:(\S+)/.exec(redisInfo)?.[1] ?? '?';
  let haproxy = '';
  if (ctx.lb) {
    try {
      haproxy = `, ${execFileSync('haproxy', ['-v'], { encoding: 'utf8' }).split('\n')[0]}`;
    } catch {
      haproxy = ', haproxy ?';
    }
  }
  return `node ${process.version}, @hocuspocus/server ${hp}, Redis ${redisVersion}, Postgres ${pgVersion}${haproxy}`;
}

/** CPU ms per second of each process while nothing is connected. */
async function idleRates(ctx: Ctx, ms: number): Promise<Record<string, number>> {
  const d = await backgroundWindow(ctx, ms);
  return Object.fromEntries(Object.entries(d.cpu).map(([k, v]) => [k, (v / d.wallMs) * 1000]));
}

async function startAll(o: Options, cleanups: Array<() => Promise<void>>): Promise<Ctx> {
  const ownPg = o.fsync ? await startPostgres({ fsync: true }) : undefined;
  if (ownPg) cleanups.push(() => ownPg.destroy());
  const cluster = await startTestCluster({ leaseMs: o.leaseMs, ...(ownPg ? { pg: ownPg } : {}) });
  cleanups.push(() => cluster.destroy());
  const started = await Promise.all(NODE_IDS.map((id) => cluster.startChildNode(id)));
  const nodes = new Map(NODE_IDS.map((id, i) => [id as string, started[i]!]));
  const lb = o.via === 'haproxy' ? await startHaproxy(NODE_IDS.map((id) => ({ name: id, url: nodes.get(id)!.url }))) : null;
  if (lb) cleanups.push(() => lb.destroy());
  const redis = connectRedis(cluster.redis.url, createLogger('silent', {}));
  cleanups.push(async () => redis.disconnect());
  await redisReady(redis, 10_000);
  const db = new pg.Client({ connectionString: cluster.databaseUrl });
  await db.connect();
  cleanups.push(() => db.end());
  const pids: Record<string, number> = Object.fromEntries(NODE_IDS.map((id) => [id, nodes.get(id)!.proc.pid!]));
  pids.redis = cluster.redis.pid;
  pids.postgres = postmasterPid(cluster.pg);
  if (lb) pids.haproxy = haproxyPid(lb.configPath);
  if (lb) await sleep(1500); // its first health checks
  return { o, cluster, nodes, token: started[0]!.ownerToken, redis, db, lb, pids, ownRedis: {}, idle: {}, closes: [] };
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  const o = parseArgs(argv);
  const t0 = performance.now();
  console.log(`# Several nodes: cross-node latency, fan-out, per-update costs (${machine()})`);
  console.log(`# loadavg at start: ${loadavg()}`);
  const cleanups: Array<() => Promise<void>> = [];
  let cleaned: Promise<void> | null = null;
  const cleanup = () =>
    (cleaned ??= (async () => {
      for (const c of cleanups.reverse()) await c().catch((e) => console.error(`cleanup: ${(e as Error).message}`));
    })());
  const onSignal = (sig: NodeJS.Signals) => void cleanup().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const ctx = await startAll(o, cleanups);
    const redisInfo = await ctx.redis.info('server');
    const pgVersion = (await ctx.db.query<{ v: string; f: string }>("SELECT current_setting('server_version') AS v, current_setting('fsync') AS f")).rows[0]!;
    console.log(`# ${versions(ctx, redisInfo, `${pgVersion.v} (fsync=${pgVersion.f}, synchronous_commit on)`)}; lease ${o.leaseMs} ms; cluster up in ${fmt((performance.now() - t0) / 1000, 1)} s`);
    console.log(
      `# three nodes (child processes): ${NODE_IDS.map((id) => `${id} pid ${ctx.pids[id]}`).join(', ')}; ${SERVING} serves every workspace here; clients in this process; ` +
        `${o.keystrokes} measured keystrokes (+${o.warmup} warm-up) every ${o.interval} ms per latency run, ${o.lightKeystrokes} per fan-out run; background windows ${o.backgroundMs / 1000} s${o.quick ? '; --quick' : ''}`,
    );
    ctx.idle = await idleRates(ctx, o.backgroundMs);
    console.log(`# idle CPU, nothing connected (ms/s): ${Object.entries(ctx.idle).map(([k, v]) => `${k} ${fmt(v, 1)}`).join(', ')}`);

    const runs = [await oneReaderPerNodeRun(ctx, 'A'), await oneReaderPerNodeRun(ctx, 'B'), await manyReadersRun(ctx)];
    const latency = runs.flatMap((r) => r.rows);
    printLatency(latency);

    const fanOut: FanOutResult[] = [];
    for (const n of o.counts) for (const presence of o.presence) {
      const r = await fanOutRun(ctx, n, presence);
      fanOut.push(r);
      console.log(`# fan-out N=${n}, presence ${onOff(presence)}: ${r.error ? `failed: ${r.error}` : `p50 ${fmt(r.all.p50)} p99 ${fmt(r.all.p99)} ms, missing ${r.missing}`} (load ${loadavg()})`);
    }
    printFanOut(ctx, fanOut);

    const costs = [...runs.map((r) => r.cost), ...fanOut.flatMap((f) => (f.cost ? [f.cost] : []))];
    printCloses(ctx);
    printCosts(ctx, costs);
    const model = buildModel(ctx, costs, fanOut);
    const sizing = printSizing(ctx, model);
    console.log(`\n${summary(latency, fanOut, model, sizing, o, ctx.closes)}`);
  } finally {
    await cleanup();
    console.log(`\n# loadavg at end: ${loadavg()}; total ${fmt((performance.now() - t0) / 1000, 0)} s`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
