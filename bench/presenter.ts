/**
 * Presenter mode's fan-out: one presenter, N followers on one Plexus server.
 *
 * The presenter is a stock @hocuspocus/provider client with a real y-protocols Awareness; it
 * starts a presentation in the document (`startPresenting`) and then changes what it shows every
 * `interval` ms, alternating a notebook scroll (the `present` field's anchor, as the browser
 * publishes it once per animation frame) and a camera move (the `viewer` field's camera). The N
 * followers are light protocol clients (`lightReceiver` of bench/lib.ts: no Y.Doc, a few µs per
 * message) that announce `following: <presenter>` once, like the browser, and timestamp the arrival
 * of every presenter awareness update by its clock. Hocuspocus coalesces the awareness updates it
 * reads in one event-loop turn into the latest state of each client, so a change whose own clock
 * never arrives was superseded: it counts as received with the first later clock ("coalesced").
 * Latency = arrival − performance.now() just before the presenter's `setLocalStateField` (one
 * process, one clock).
 *
 * Server CPU per presenter change comes from the probe preloaded into the server (bench/probe.ts),
 * minus the CPU of a baseline window with the followers connected and the presenter still (their
 * 15 s awareness renewals), per change and per *relayed* change (one the server did not coalesce).
 * Fan-out is linear when the CPU per relayed change grows like N: the ratio between two follower
 * counts is compared with N's ratio ("exponent" 1 = linear, 2 = quadratic).
 * `--naive` adds runs in which every follower re-publishes its awareness on each presenter change
 * (what a follower that republishes its followed camera does), to show the quadratic case.
 *
 * Run: node --import tsx bench/presenter.ts [--counts=100,300] [--rounds=2] [--changes=200]
 *      [--interval=33] [--naive=25,50,100] [--naive-changes=30] [--naive-interval=200] [--cpu-prof]
 * Prints figures; asserts nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startPresenting, userOrigin } from '@plexus/shared';
import { printProfile } from './cpuprofile.ts';
import {
  connectClient,
  createWorkspace,
  fmt,
  idleCpuPerSecond,
  lightReceiver,
  machine,
  printTable,
  repoRoot,
  sleep,
  spawnServer,
  summarize,
  until,
  type ChildServer,
  type LightReceiver,
  type ProbeStats,
  type Summary,
} from './lib.ts';

interface Options {
  counts: number[];
  rounds: number;
  changes: number;
  interval: number;
  naive: number[];
  naiveChanges: number;
  naiveInterval: number;
  /** Write a V8 CPU profile of the server (bench/results/profiles/presenter) and print its top functions. */
  cpuProf: boolean;
}

function parseArgs(argv: string[]): Options {
  const get = (k: string) => argv.find((a) => a.startsWith(`--${k}=`))?.split('=')[1];
  const list = (v: string | undefined, d: string) => (v ?? d).split(',').filter(Boolean).map(Number);
  return {
    counts: list(get('counts'), '100,300'),
    rounds: Number(get('rounds') ?? 2),
    changes: Number(get('changes') ?? 200),
    interval: Number(get('interval') ?? 33),
    naive: list(get('naive'), ''),
    naiveChanges: Number(get('naive-changes') ?? 30),
    naiveInterval: Number(get('naive-interval') ?? 200),
    cpuProf: argv.includes('--cpu-prof'),
  };
}

interface Run {
  mode: 'followers publish once' | 'followers re-publish (naive)';
  followers: number;
  round: number;
  changes: number;
  latency: Summary;
  /** Per change: the earliest and the latest follower. */
  first: Summary;
  last: Summary;
  missing: number;
  /** Observations superseded by a later state before the server relayed them (received with it). */
  coalesced: number;
  /** Awareness messages the server sent to the followers during the changes, per presenter change (all followers together). */
  messagesPerChange: number;
  /** Awareness entries (one client's state each) in those messages, per presenter change: the fan-out itself. */
  entriesPerChange: number;
  stats: ProbeStats;
  /** Server CPU per presenter change above the baseline, ms. */
  cpuMsPerChange: number;
  /** Presenter states the server relayed (changes not coalesced into a later one), per follower on average. */
  relayed: number;
  /** Server CPU per relayed presenter state above the baseline, ms: the cost of one fan-out to N followers. */
  cpuMsPerRelay: number;
  baselineCpuPercent: number;
  loadavg: string;
}

const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').trim();
let seq = 0;

async function runOne(server: ChildServer, n: number, round: number, changes: number, interval: number, naive: boolean): Promise<Run> {
  const name = await createWorkspace(server, `presenter-${n}-${round}-${seq++}`);
  const presenter = connectClient(server.url, name, server.token);
  const closers: Array<() => void> = [() => presenter.destroy()];
  try {
    await presenter.synced;
    const aw = presenter.provider.awareness!;
    // Ids as the server stamps them (`<token sub>/<device>`), as a browser builds its presence: no re-encode per frame.
    const presenterId = 'local-owner/bench-presenter';
    aw.setLocalState({ user: { id: presenterId, sub: 'local-owner', name: 'Presenter', color: '#e6194b', role: 'owner', kind: 'person' } });
    startPresenting(presenter.doc, { id: presenterId, name: 'Presenter' }, userOrigin('bench-presenter', 'Presenter'));
    const me = aw.clientID;
    // Arrival times: follower f, change k at [f * changes + k].
    const seenAt = new Float64Array(n * changes).fill(NaN);
    const sentAt = new Float64Array(changes);
    const changeOfClock = new Map<number, number>();
    // Per follower: the first change not received yet (clocks only grow).
    const next = new Int32Array(n);
    let coalesced = 0;
    let measuring = false;
    let messages = 0;
    let delivered = 0;
    const followers: LightReceiver[] = [];
    for (let i = 0; i < n; i += 50) {
      const batch = Array.from({ length: Math.min(50, n - i) }, (_, j) => {
        const f = i + j;
        const r: LightReceiver = lightReceiver(server.url, name, server.token, () => undefined, {
          state: { user: { id: `local-owner/bench-follower-${f}`, sub: 'local-owner', name: `Follower ${f}`, color: '#4363d8', role: 'owner', kind: 'person' }, following: presenterId },
          onAwareness: (entries, now) => {
            if (measuring) {
              messages++;
              delivered += entries.length;
            }
            for (const e of entries) {
              if (e.clientId !== me) continue;
              const k = changeOfClock.get(e.clock);
              if (k === undefined || k < next[f]!) continue;
              for (let j = next[f]!; j <= k; j++) seenAt[f * changes + j] = now;
              coalesced += k - next[f]!;
              next[f] = k + 1;
              if (naive) r.announce();
            }
          },
        });
        return r;
      });
      followers.push(...batch);
      batch.forEach((b) => closers.push(() => b.close()));
      await Promise.all(batch.map((b) => b.ready));
    }
    // Let the connection-time awareness burst (each arrival is announced to everyone) settle.
    await sleep(1000 + 5 * n);
    const baselinePerSecond = await idleCpuPerSecond(server, 3000);

    const load = loadavg();
    await server.probe('reset');
    measuring = true;
    await new Promise<void>((resolve) => {
      const start = performance.now();
      let k = 0;
      const tick = () => {
        sentAt[k] = performance.now();
        if (k % 2 === 0) {
          // A notebook scroll, as the browser publishes it (at most once per animation frame).
          aw.setLocalStateField('present', { anchor: { cellId: `c${(k >> 4) % 40}`, ratio: (k % 16) / 16 }, focus: null, panels: { viewer: true, atlas: false, data: false, analyses: false }, summon: null });
        } else {
          // A camera move, as the viewer binding publishes it.
          aw.setLocalStateField('viewer', { mode: 'shared', camera: { position: [128 + k, 128, 30], crossSectionScale: 1 + (k % 7) / 10 } });
        }
        changeOfClock.set(aw.meta.get(me)!.clock, k);
        k++;
        if (k === changes) return resolve();
        setTimeout(tick, Math.max(0, start + k * interval - performance.now()));
      };
      tick();
    });
    const complete = () => {
      for (let i = 0; i < seenAt.length; i++) if (Number.isNaN(seenAt[i]!)) return false;
      return true;
    };
    await until(complete, 3000, 5).catch(() => undefined);
    const stats = await server.probe('stats');
    measuring = false;

    const all: number[] = [];
    const first: number[] = [];
    const last: number[] = [];
    let missing = 0;
    for (let k = 0; k < changes; k++) {
      let lo = Infinity;
      let hi = -Infinity;
      for (let f = 0; f < n; f++) {
        const t = seenAt[f * changes + k]!;
        if (Number.isNaN(t)) {
          missing++;
          continue;
        }
        const lat = t - sentAt[k]!;
        all.push(lat);
        lo = Math.min(lo, lat);
        hi = Math.max(hi, lat);
      }
      if (lo !== Infinity) {
        first.push(lo);
        last.push(hi);
      }
    }
    const cpuMs = stats.cpuMs - (baselinePerSecond * stats.wallMs) / 1000;
    const relayed = (all.length - coalesced) / n;
    return {
      mode: naive ? 'followers re-publish (naive)' : 'followers publish once',
      followers: n,
      round,
      changes,
      latency: summarize(all),
      first: summarize(first),
      last: summarize(last),
      missing,
      coalesced,
      messagesPerChange: messages / changes,
      entriesPerChange: delivered / changes,
      stats,
      cpuMsPerChange: cpuMs / changes,
      relayed,
      cpuMsPerRelay: cpuMs / relayed,
      baselineCpuPercent: baselinePerSecond / 10,
      loadavg: load,
    };
  } finally {
    closers.forEach((c) => c());
    await sleep(500);
  }
}

function printRuns(title: string, runs: Run[]): void {
  console.log(`\n## ${title}`);
  printTable(
    ['mode', 'followers', 'round', 'obs', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'first p50', 'last p99', 'missing', 'coalesced', 'relayed', 'msgs to followers per change', 'entries to followers per change', 'srv CPU ms/change', 'srv CPU ms/relay', 'µs per follower per relay', 'baseline CPU %', 'srv ELU', 'srv ELD p99', '/proc/loadavg'],
    runs.map((r) => [
      r.mode, r.followers, r.round, r.latency.n, fmt(r.latency.p50), fmt(r.latency.p95), fmt(r.latency.p99), fmt(r.latency.max), fmt(r.first.p50), fmt(r.last.p99), r.missing, r.coalesced,
      fmt(r.relayed, 0), fmt(r.messagesPerChange, 0), fmt(r.entriesPerChange, 0), fmt(r.cpuMsPerChange, 3), fmt(r.cpuMsPerRelay, 3), fmt((r.cpuMsPerRelay * 1000) / r.followers, 1), fmt(r.baselineCpuPercent, 1), fmt(r.stats.eventLoopUtilization), fmt(r.stats.eventLoopDelay.p99), r.loadavg,
    ]),
  );
}

/** Per-change CPU ratios between follower counts, and the exponent they imply (1 linear, 2 quadratic). */
function printScaling(title: string, runs: Run[]): void {
  const counts = [...new Set(runs.map((r) => r.followers))].sort((a, b) => a - b);
  if (counts.length < 2) return;
  const perCount = counts.map((n) => {
    const rs = runs.filter((r) => r.followers === n);
    return { n, cpu: rs.reduce((a, r) => a + r.cpuMsPerRelay, 0) / rs.length };
  });
  console.log(`\n## ${title}: server CPU per relayed presenter change against the number of followers`);
  printTable(
    ['followers', 'vs', 'CPU/relay ms', 'vs', 'followers ratio', 'CPU/relay ratio', 'exponent (1 = linear, 2 = quadratic)', 'marginal µs per added follower'],
    perCount.slice(1).map((b) => {
      const a = perCount[0]!;
      const ratio = b.cpu / a.cpu;
      return [b.n, a.n, fmt(b.cpu, 3), fmt(a.cpu, 3), fmt(b.n / a.n), fmt(ratio), fmt(Math.log(ratio) / Math.log(b.n / a.n)), fmt(((b.cpu - a.cpu) * 1000) / (b.n - a.n), 1)];
    }),
  );
}

export async function main(argv = process.argv.slice(2)): Promise<Run[]> {
  const o = parseArgs(argv);
  console.log(`# Presenter fan-out (${machine()})`);
  console.log(`# /proc/loadavg at start: ${loadavg()}`);
  console.log(
    `# one presenter (stock provider) changes what it shows every ${o.interval} ms (${o.changes} changes: scroll and camera alternately); ` +
      `N light followers in this process; ${o.rounds} round(s); server in a child process\n`,
  );
  const profDir = path.join(repoRoot, 'bench/results/profiles/presenter');
  if (o.cpuProf) fs.rmSync(profDir, { recursive: true, force: true });
  const server = await spawnServer('plexus', { nodeArgs: o.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--cpu-prof-interval=250'] : [] });
  const runs: Run[] = [];
  const naiveRuns: Run[] = [];
  try {
    // Warm-up (not reported): the server's awareness paths compiled before the first measured run.
    await runOne(server, 20, 0, 60, o.interval, false);
    for (let round = 1; round <= o.rounds; round++) {
      for (const n of round % 2 === 1 ? o.counts : [...o.counts].reverse()) {
        const r = await runOne(server, n, round, o.changes, o.interval, false);
        runs.push(r);
        console.log(`round ${round} N=${n}: p50 ${fmt(r.latency.p50)} p99 ${fmt(r.latency.p99)} ms, CPU ${fmt(r.cpuMsPerChange, 3)} ms/change ${fmt(r.cpuMsPerRelay, 3)} ms/relay, missing ${r.missing}, coalesced ${r.coalesced}, load ${r.loadavg}`);
      }
    }
    for (const n of o.naive) {
      const r = await runOne(server, n, 1, o.naiveChanges, o.naiveInterval, true);
      naiveRuns.push(r);
      console.log(`naive N=${n}: p50 ${fmt(r.latency.p50)} p99 ${fmt(r.latency.p99)} ms, CPU ${fmt(r.cpuMsPerChange, 3)} ms/change ${fmt(r.cpuMsPerRelay, 3)} ms/relay, missing ${r.missing}, load ${r.loadavg}`);
    }
  } finally {
    await server.stop();
  }
  printRuns('Presenter change → followers (all followers × changes pooled per run)', runs);
  printScaling('Followers publish once (Plexus)', runs);
  if (naiveRuns.length) {
    printRuns('Naive: every follower re-publishes on each presenter change', naiveRuns);
    printScaling('Naive', naiveRuns);
  }
  console.log(`\n# /proc/loadavg at end: ${loadavg()}; os.loadavg: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const out = path.join(repoRoot, 'bench/results');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'presenter.json'), JSON.stringify({ machine: machine(), options: o, runs, naiveRuns }, null, 2));
  console.log('results: bench/results/presenter.json');
  if (o.cpuProf) {
    // The main thread's profile is the first one written (the others are worker threads).
    const file = fs.readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile')).sort()[0];
    if (file) {
      console.log(`\n## CPU profile of the server process (${profDir})`);
      printProfile(path.join(profDir, file), 25);
    }
  }
  return runs;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
