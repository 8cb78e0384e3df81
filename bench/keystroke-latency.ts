/**
 * Keystroke-to-remote-visible latency through the server.
 *
 * Two servers run in child processes for the whole benchmark: Plexus as shipped by
 * server/src/main.ts, and a bare Hocuspocus (bench/bare-hocuspocus.ts). For each client count N
 * and each round, N stock @hocuspocus/provider clients (ws as WebSocket, one socket per client)
 * in this process open a fresh workspace on one server, then on the other (the order alternates
 * per round so drifting background load hits both alike). Client 0 types
 * single characters at the end of a code cell's Y.Text (insertCellText with a user origin) every
 * `interval` ms; the other N-1 clients observe their Y.Text and record, for each keystroke k (the
 * character at position k), performance.now() when it became visible minus performance.now()
 * just before the writer's transaction. All clients share this process, so the clock is common.
 * Warm-up keystrokes are not counted. The server's event-loop delay/utilisation and CPU are read
 * over the measured window by a probe preloaded into the server process (bench/probe.ts). CPU per
 * keystroke is what typing adds: the server's CPU over the measured window minus its idle rate
 * read in that same round, with the same clients connected, just before the typing (a window as
 * long as the typing); idle read once after start instead (`--idle=start`, the old way) is
 * inflated by the start-up's tail and swamps the keystrokes' share.
 * "busy off-CPU" = event-loop utilisation minus CPU share: time the loop was busy without running
 * (blocked in a syscall such as an fsync, or waiting for a core).
 *
 * Note the receivers share one Node process: a broadcast to 99 clients is decoded and applied by
 * them one after another, so "all receivers" includes client-side queuing. "first" (the earliest
 * receiver of each keystroke) approximates the server path alone; "last" is full fan-out.
 *
 * Baselines: `bare` (no persistence), `hocuspocus-sqlite` (Hocuspocus' own SQLite extension at its
 * default store debounce), `hocuspocus-sqlite-sync` (storing on every change); see bare-hocuspocus.ts;
 * and `plexus-shadow`, Plexus with its update pre-check off (every update on a shadow replica).
 * Run: npx tsx bench/keystroke-latency.ts [--counts=2,20,100] [--servers=plexus,bare,hocuspocus-sqlite] [--rounds=3]
 *      [--keystrokes=120] [--warmup=30] [--interval=25] [--cpu-prof] [--window-prof] [--label=keystroke-latency]
 *      [--light]  (receivers: light protocol clients without a Y.Doc, to measure the server's fan-out)
 * Saturation: npx tsx bench/keystroke-latency.ts --counts=200,400 --rounds=1 --keystrokes=150 --label=saturation
 * Prints figures; asserts nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { cellText, createCell, getCell, insertCellText, userOrigin, type CellId } from '@plexus/shared';
import * as Y from 'yjs';
import { printProfile } from './cpuprofile.ts';
import { connectClient, connectMany, createWorkspace, deliveries, idleCpuPerSecond as idleCpu, isPlexusKind, lightReceiver, fmt, machine, printTable, repoRoot, sleep, spawnServer, summarize, until, type BenchClient, type ChildServer, type ProbeStats, type ServerKind, type Summary } from './lib.ts';

interface Options {
  counts: number[];
  servers: Kind[];
  rounds: number;
  keystrokes: number;
  warmup: number;
  interval: number;
  /** Write V8 CPU profiles of the server processes to bench/results/profiles/<label>-<kind>. */
  cpuProf: boolean;
  /** Profiles of the measured windows alone (after the warm-up, until the last keystroke is seen). */
  windowProf: boolean;
  /** Name of the results file (bench/results/<label>.json). */
  label: string;
  /** Receivers are light protocol clients (no Y.Doc) instead of stock providers. */
  light: boolean;
  /** When the idle CPU subtracted from CPU per keystroke is read: in each round before typing, or once after start. */
  idle: 'round' | 'start';
}

function parseArgs(argv: string[]): Options {
  const get = (k: string) => argv.find((a) => a.startsWith(`--${k}=`))?.split('=')[1];
  return {
    counts: (get('counts') ?? '2,20,100').split(',').map(Number),
    servers: (get('servers') ?? 'plexus,bare').split(',') as Options['servers'],
    rounds: Number(get('rounds') ?? 3),
    keystrokes: Number(get('keystrokes') ?? 120),
    warmup: Number(get('warmup') ?? 30),
    interval: Number(get('interval') ?? 25),
    cpuProf: argv.includes('--cpu-prof'),
    windowProf: argv.includes('--window-prof'),
    label: get('label') ?? 'keystroke-latency',
    light: argv.includes('--light'),
    idle: get('idle') === 'start' ? 'start' : 'round',
  };
}

/** The servers this benchmark compares. */
type Kind = Exclude<ServerKind, 'static'>;

interface RawRun {
  server: Kind;
  clients: number;
  round: number;
  connectMs: number;
  /** Latency of every receiver observation, ms. */
  all: number[];
  /** Per keystroke: earliest and latest receiver, ms. */
  first: number[];
  last: number[];
  missing: number;
  serverStats: ProbeStats;
  /** The server's idle CPU in this round (clients connected, nobody typing), ms per second. */
  idleCpuPerSecond: number;
  clientEventLoopUtilization: number;
  loadAvg: number;
}

export interface LatencyResult {
  server: Kind;
  clients: number;
  rounds: number;
  all: Summary;
  first: Summary;
  last: Summary;
  /** p99 of each round (spread shows run-to-run noise). */
  roundP99: number[];
  missing: number;
  serverEventLoopDelayP99: number;
  serverEventLoopDelayMax: number;
  serverEventLoopUtilization: number;
  serverCpuPercent: number;
  /** Server CPU time per measured keystroke (receive, log, apply, fan-out to N-1) above idle, ms. */
  serverCpuMsPerKeystroke: number;
  clientEventLoopUtilization: number;
  connectMs: number;
  loadAvg: number;
}

const CODE = 'for (let i = 0; i < values.length; i++) {\n  total += values[i] * weight;\n}\n';
const origin = userOrigin('bench-writer', 'Bench writer');
let workspaceSeq = 0;

/** Idle CPU of each server process (timers, the probe's 1 ms histogram timer), ms per second. */
const idleCpuPerSecond = new Map<string, number>();

async function measureIdle(server: ChildServer): Promise<void> {
  idleCpuPerSecond.set(server.kind, await idleCpu(server));
}

async function runOne(server: ChildServer, n: number, round: number, o: Options): Promise<RawRun> {
  const kind = server.kind;
  const label = `latency-${n}-${round}-${workspaceSeq++}`;
  const name = isPlexusKind(kind) ? await createWorkspace(server, label) : label;
  const loadAvg = os.loadavg()[0]!;
  const t0 = performance.now();
  const total = o.warmup + o.keystrokes;
  const receiverCount = n - 1;
  const sentAt = new Float64Array(total);
  const seenAt = new Float64Array(total * receiverCount).fill(NaN);
  const seenCount = new Int32Array(receiverCount);
  const mark = (r: number, upTo: number, now: number) => {
    const len = Math.min(upTo, total);
    for (let k = seenCount[r]!; k < len; k++) seenAt[r * total + k] = now;
    seenCount[r] = Math.max(seenCount[r]!, len);
  };
  const closers: Array<() => void> = [];
  try {
    let writer: BenchClient;
    let cellId: CellId;
    const detach: Array<() => void> = [];
    if (!o.light) {
      const clients = await connectMany(server.url, name, server.token, n);
      clients.forEach((c) => closers.push(() => c.destroy()));
      writer = clients[0]!;
      const receivers = clients.slice(1);
      cellId = createCell(writer.doc, { kind: 'code', source: '', author: 'bench-writer' }, origin);
      await until(() => receivers.every((c) => getCell(c.doc, cellId)), 30_000, 10, 'the cell at every receiver');
      receivers.forEach((c, r) => {
        const text = cellText(getCell(c.doc, cellId)!)!;
        // The writer appends one character per keystroke: keystroke k is visible once length > k.
        const onChange = () => mark(r, text.length, performance.now());
        text.observe(onChange);
        detach.push(() => text.unobserve(onChange));
      });
    } else {
      writer = connectClient(server.url, name, server.token);
      closers.push(() => writer.destroy());
      await writer.synced;
      cellId = createCell(writer.doc, { kind: 'code', source: '', author: 'bench-writer' }, origin);
      // Keystroke k carries the writer's clock base + k; an update covering clocks < base + m
      // makes keystrokes < m visible (a merged broadcast covers several).
      const me = writer.doc.clientID;
      const base = Y.decodeStateVector(Y.encodeStateVector(writer.doc)).get(me) ?? 0;
      for (let i = 0; i < receiverCount; i += 50) {
        const batch = Array.from({ length: Math.min(50, receiverCount - i) }, (_, j) =>
          lightReceiver(server.url, name, server.token, (update, now) => {
            let end = 0;
            for (const st of Y.decodeUpdate(update).structs) if (st.id.client === me) end = Math.max(end, st.id.clock + st.length);
            if (end > base) mark(i + j, end - base, now);
          }),
        );
        batch.forEach((b) => closers.push(() => b.close()));
        await Promise.all(batch.map((b) => b.ready));
      }
    }
    const connectMs = performance.now() - t0;
    // Let the connection-time awareness fan-out (N x N messages) settle before typing.
    await sleep(500 + 5 * n);
    // The idle rate this round: everyone connected, nobody typing, as long as the typing will take.
    const idleRate = o.idle === 'round' ? await idleCpu(server, total * o.interval) : (idleCpuPerSecond.get(kind) ?? 0);

    let eluStart = performance.eventLoopUtilization();
    const writerText: Y.Text = cellText(getCell(writer.doc, cellId)!)!;
    await new Promise<void>((resolve) => {
      const start = performance.now();
      let k = 0;
      const tick = () => {
        if (k === o.warmup) {
          void server.probe('reset');
          if (o.windowProf) void server.probe('profile-start');
          eluStart = performance.eventLoopUtilization();
        }
        sentAt[k] = performance.now();
        insertCellText(writer.doc, cellId, writerText.length, CODE[k % CODE.length]!, origin);
        k++;
        if (k === total) return resolve();
        setTimeout(tick, Math.max(0, start + k * o.interval - performance.now()));
      };
      tick();
    });
    await until(() => seenCount.every((s) => s >= total), 15_000, 2).catch(() => undefined);
    const serverStats = await server.probe('stats');
    if (o.windowProf) {
      fs.mkdirSync(windowProfDir(o), { recursive: true });
      await server.probe('profile-stop', path.join(windowProfDir(o), `${kind}-N${n}-r${round}.cpuprofile`));
    }
    const clientElu = performance.eventLoopUtilization(eluStart).utilization;
    detach.forEach((d) => d());

    const latencies = deliveries(seenAt, sentAt, total, o.warmup, Array.from({ length: receiverCount }, (_, r) => r));
    return { server: kind, clients: n, round, connectMs, ...latencies, serverStats, idleCpuPerSecond: idleRate, clientEventLoopUtilization: clientElu, loadAvg };
  } finally {
    closers.forEach((c) => c());
    await sleep(300); // let the server unload the document before the next run
  }
}

function combine(runs: RawRun[], o: Options): LatencyResult {
  const r0 = runs[0]!;
  const mean = (f: (r: RawRun) => number) => runs.reduce((a, r) => a + f(r), 0) / runs.length;
  return {
    server: r0.server,
    clients: r0.clients,
    rounds: runs.length,
    all: summarize(runs.flatMap((r) => r.all)),
    first: summarize(runs.flatMap((r) => r.first)),
    last: summarize(runs.flatMap((r) => r.last)),
    roundP99: runs.map((r) => summarize(r.all).p99),
    missing: runs.reduce((a, r) => a + r.missing, 0),
    serverEventLoopDelayP99: Math.max(...runs.map((r) => r.serverStats.eventLoopDelay.p99)),
    serverEventLoopDelayMax: Math.max(...runs.map((r) => r.serverStats.eventLoopDelay.max)),
    serverEventLoopUtilization: mean((r) => r.serverStats.eventLoopUtilization),
    serverCpuPercent: mean((r) => r.serverStats.cpuPercent),
    serverCpuMsPerKeystroke: mean((r) => (r.serverStats.cpuMs - (r.idleCpuPerSecond * r.serverStats.wallMs) / 1000) / o.keystrokes),
    clientEventLoopUtilization: mean((r) => r.clientEventLoopUtilization),
    connectMs: mean((r) => r.connectMs),
    loadAvg: mean((r) => r.loadAvg),
  };
}

const windowProfDir = (o: Options) => path.join(repoRoot, 'bench/results/profiles', `${o.label}-windows`);

export async function main(argv = process.argv.slice(2)): Promise<LatencyResult[]> {
  const o = parseArgs(argv);
  const out = path.join(repoRoot, 'bench/results');
  console.log(`# Keystroke latency (${machine()})`);
  console.log(
    `# ${o.keystrokes} measured keystrokes (+${o.warmup} warm-up) every ${o.interval} ms by one writer, N-1 receivers; ` +
      `${o.rounds} round(s), servers alternated per round; servers in child processes, clients in this process; ` +
      `receivers: ${o.light ? 'light protocol clients (no Y.Doc; time of arrival of the update)' : 'stock @hocuspocus/provider (time the character is in their Y.Text)'}\n`,
  );
  const servers = new Map<Kind, ChildServer>();
  const raw: RawRun[] = [];
  try {
    for (const kind of o.servers) {
      const profDir = path.join(out, 'profiles', `${o.label}-${kind}`);
      if (o.cpuProf) fs.rmSync(profDir, { recursive: true, force: true });
      const nodeArgs = o.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--cpu-prof-interval=250'] : [];
      servers.set(kind, await spawnServer(kind, { nodeArgs }));
    }
    if (o.idle === 'start') {
      for (const s of servers.values()) await measureIdle(s);
      console.log(`idle server CPU (subtracted from CPU per keystroke): ${[...idleCpuPerSecond].map(([k, v]) => `${k} ${fmt(v / 10, 1)}%`).join(', ')}`);
    } else console.log('idle server CPU: read in each round before typing (same clients, same duration) and subtracted from that round');
    for (let round = 1; round <= o.rounds; round++) {
      for (const n of o.counts) {
        const order = round % 2 === 1 ? o.servers : [...o.servers].reverse();
        for (const kind of order) {
          const r = await runOne(servers.get(kind)!, n, round, o);
          raw.push(r);
          const a = summarize(r.all);
          const s = r.serverStats;
          console.log(
            `round ${round} ${kind.padEnd(6)} N=${String(n).padEnd(3)} p50 ${fmt(a.p50)} p99 ${fmt(a.p99)} max ${fmt(a.max)} ms | first p50 ${fmt(summarize(r.first).p50)} | ` +
              `server ELD p99 ${fmt(s.eventLoopDelay.p99)} ELU ${fmt(s.eventLoopUtilization)} CPU ${fmt(s.cpuPercent, 0)}% (idle ${fmt(r.idleCpuPerSecond / 10, 1)}%) ${fmt((s.cpuMs - (r.idleCpuPerSecond * s.wallMs) / 1000) / o.keystrokes, 3)} ms/key | client ELU ${fmt(r.clientEventLoopUtilization)} | ` +
              `missing ${r.missing} | load ${fmt(r.loadAvg, 1)}`,
          );
        }
      }
    }
  } finally {
    for (const s of servers.values()) await s.stop();
  }

  const results: LatencyResult[] = [];
  for (const n of o.counts) for (const kind of o.servers) results.push(combine(raw.filter((r) => r.server === kind && r.clients === n), o));

  console.log('\n## Receiver latency, all observations pooled over rounds (ms)');
  printTable(
    ['server', 'clients', 'obs', 'p50', 'p95', 'p99', 'max', 'p99 per round', 'first p50', 'first p99', 'last p99', 'srv ELD p99', 'srv ELD max', 'srv ELU', 'srv CPU%', 'srv busy off-CPU', 'srv CPU ms/key (above idle)', 'client ELU', 'missing', 'load1'],
    results.map((r) => [
      r.server, r.clients, r.all.n, fmt(r.all.p50), fmt(r.all.p95), fmt(r.all.p99), fmt(r.all.max), r.roundP99.map((x) => fmt(x, 1)).join('/'),
      fmt(r.first.p50), fmt(r.first.p99), fmt(r.last.p99), fmt(r.serverEventLoopDelayP99), fmt(r.serverEventLoopDelayMax), fmt(r.serverEventLoopUtilization),
      fmt(r.serverCpuPercent, 0), fmt(Math.max(0, r.serverEventLoopUtilization - r.serverCpuPercent / 100)), fmt(r.serverCpuMsPerKeystroke, 3), fmt(r.clientEventLoopUtilization), r.missing, fmt(r.loadAvg, 1),
    ]),
  );

  const find = (kind: string, n: number) => results.find((r) => r.server === kind && r.clients === n);
  // Plexus against each baseline that ran: bare Hocuspocus, and Hocuspocus with its own SQLite persistence.
  for (const base of o.servers.filter((k) => k !== 'plexus')) {
    const pairs = o.counts.filter((n) => find('plexus', n) && find(base, n));
    if (!pairs.length) continue;
    console.log(`\n## Overhead: Plexus / ${base} (aims: p99 < 5 ms at 20 clients, < 15 ms at 100; latency ratio < 1.3; CPU per keystroke ≤ 1.5× hocuspocus-sqlite)`);
    printTable(
      ['clients', 'plexus p50', `${base} p50`, 'ratio p50', 'plexus p99', `${base} p99`, 'ratio p99', 'first-recv ratio p50', 'plexus CPU ms/key', `${base} CPU ms/key`, 'server CPU/key ratio'],
      pairs.map((n) => {
        const p = find('plexus', n)!;
        const b = find(base, n)!;
        return [n, fmt(p.all.p50), fmt(b.all.p50), fmt(p.all.p50 / b.all.p50), fmt(p.all.p99), fmt(b.all.p99), fmt(p.all.p99 / b.all.p99), fmt(p.first.p50 / b.first.p50),
          fmt(p.serverCpuMsPerKeystroke, 3), fmt(b.serverCpuMsPerKeystroke, 3), fmt(p.serverCpuMsPerKeystroke / b.serverCpuMsPerKeystroke)];
      }),
    );
  }
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, `${o.label}.json`), JSON.stringify({ machine: machine(), options: o, results }, null, 2));
  console.log(`\nresults: bench/results/${o.label}.json`);
  if (o.windowProf) {
    for (const n of o.counts) {
      for (const kind of o.servers) {
        const file = path.join(windowProfDir(o), `${kind}-N${n}-r1.cpuprofile`);
        console.log(`\n## CPU profile of the ${kind} server's main thread while ${n} clients typed, round 1 (${file})`);
        printProfile(file, 25, /./);
      }
    }
  }
  if (o.cpuProf) {
    for (const kind of o.servers) {
      const dir = path.join(out, 'profiles', `${o.label}-${kind}`);
      // The main thread's profile is the first one written (the others are worker threads).
      const file = fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()[0];
      if (file) {
        console.log(`\n## CPU profile of the ${kind} server process (${dir})`);
        printProfile(path.join(dir, file), 20);
      }
    }
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
