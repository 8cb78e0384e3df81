/**
 * Records when this thread could not run JavaScript for a while: event-loop gaps (a 5 ms timer
 * firing more than `gapMs` late) and garbage collections longer than `gcMs`, with wall-clock times
 * (ms since the epoch), so that pauses in several processes can be set beside one another and
 * beside a benchmark's slow moments (bench/agent-typing.ts: what stalled a keystroke). Effects: a
 * timer and a PerformanceObserver on this thread until `stop`.
 */
import fs from 'node:fs';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';

export interface Pause {
  /** When it began, ms since the epoch. */
  at: number;
  ms: number;
  /** 'loop' (the event loop was held: work or GC), or the GC's kind ('gc major', 'gc minor', …). */
  kind: string;
}

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'gc major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'gc minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'gc incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'gc weak callbacks',
};

export function recordPauses(opts: { gapMs?: number; gcMs?: number } = {}): { take(): Pause[]; stop(): Pause[] } {
  const gapMs = opts.gapMs ?? 30;
  const gcMs = opts.gcMs ?? 20;
  const TICK = 5;
  let pauses: Pause[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - last - TICK > gapMs) pauses.push({ at: performance.timeOrigin + last + TICK, ms: now - last - TICK, kind: 'loop' });
    last = now;
  }, TICK);
  timer.unref();
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.duration < gcMs) continue;
      const kind = ((e as unknown as { detail?: { kind?: number } }).detail)?.kind;
      pauses.push({ at: performance.timeOrigin + e.startTime, ms: e.duration, kind: GC_KINDS[kind ?? -1] ?? 'gc' });
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  const take = () => {
    const out = pauses.sort((a, b) => a.at - b.at);
    pauses = [];
    return out;
  };
  return {
    take,
    stop: () => {
      clearInterval(timer);
      gc.disconnect();
      return take();
    },
  };
}

/** The pauses that overlap [at - slackMs, at + ms + slackMs], as "where kind N ms (+offset)". */
export function pausesNear(at: number, ms: number, sources: Array<{ where: string; pauses: Pause[] }>, slackMs = 20): string[] {
  const out: string[] = [];
  for (const { where, pauses } of sources)
    for (const p of pauses)
      if (p.at <= at + ms + slackMs && p.at + p.ms >= at - slackMs) out.push(`${where} ${p.kind} ${p.ms.toFixed(0)} ms (${p.at - at >= 0 ? '+' : ''}${(p.at - at).toFixed(0)})`);
  return out;
}

/** A monotonic time (µs, a V8 CPU profile's timestamps) and the wall-clock time (ms) of one moment. */
export interface ProfileClock {
  monotonicUs: number;
  epochMs: number;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/**
 * What a thread did between two wall-clock times, from a CPU profile of it (V8 .cpuprofile with the
 * `clock` its probe gave, bench/probe.ts): the functions with the most self time then, and the
 * deepest frames of this repository's code on the stacks (what called into the library or the
 * runtime), each with its ms.
 */
export function profileWindow(file: string, clock: ProfileClock, fromMs: number, toMs: number, top = 6): { self: string[]; ours: string[]; sampledMs: number } {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const epochOf = (us: number) => clock.epochMs - (clock.monotonicUs - us) / 1000;
  const name = (n: ProfileNode) => {
    const { functionName, url, lineNumber } = n.callFrame;
    const file = url.replace(/^file:\/\//, '').replace(/.*\/node_modules\//, '~/').replace(/.*\/(server|shared|agent|bench|peer|calcium)\/src\//, '$1/');
    return `${functionName || '(anonymous)'}${file ? ` ${file}:${lineNumber + 1}` : ''}`;
  };
  const self = new Map<string, number>();
  const ours = new Map<string, number>();
  let t = p.startTime;
  let sampled = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i]!;
    const at = epochOf(t);
    if (at < fromMs || at > toMs) continue;
    const dt = (p.timeDeltas[i + 1] ?? 0) / 1000;
    const leaf = byId.get(p.samples[i]!)!;
    if (leaf.callFrame.functionName === '(idle)') continue;
    sampled += dt;
    self.set(name(leaf), (self.get(name(leaf)) ?? 0) + dt);
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const n = byId.get(id)!;
      if (/\/(server|shared|agent|peer)\/src\//.test(n.callFrame.url)) {
        ours.set(name(n), (ours.get(name(n)) ?? 0) + dt);
        break;
      }
    }
  }
  const best = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `${v.toFixed(1)} ms ${k}`);
  return { self: best(self), ours: best(ours), sampledMs: sampled };
}
