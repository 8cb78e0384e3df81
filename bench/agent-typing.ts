/**
 * Five people type at 5 characters/s each in the code cell the agent is rewriting (the real agent
 * peer, its real edit engine, driven by the scripted model: `replace_in_cell` over and over, a
 * 4-character piece per transaction, ~200 tokens/s). Measures each typist's keystroke latency
 * (local insert → in all four other typists' replicas), with and without the agent, and checks
 * that every typed character is in every replica exactly once (typists, agent, a fresh client of
 * the server). The agent runs in its own process, as `npm start` runs it. Exits 1 on any lost or
 * duplicated character (the agent's replica is checked by the agent's own edits landing intact).
 * With `--kernel-load`, the kernel is on in every run, and a third run adds two cells in two other
 * workspaces that keep both cores busy for the whole run (the kernel's children run at nice 10,
 * `PLEXUS_KERNEL_NICE`).
 * Besides the percentiles it prints, per run, the keystrokes slower than 50 ms (stalls) and this
 * process's event-loop utilisation while people typed ("bench ELU"): near 1, the bench itself is
 * what limits the figures, not Plexus.
 * Each stall is set beside the server's and this process's pauses then (event-loop gaps over 30 ms,
 * GCs over 20 ms: bench/pauses.ts); `--profile-server` also profiles the server's thread and says
 * what it ran during each of its pauses.
 * Run: npx tsx bench/agent-typing.ts [--seconds=60] [--pause=5] [--kernel-load] [--profile-server]
 */
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import readline from 'node:readline';
import { performance } from 'node:perf_hooks';
import * as Y from 'yjs';
import { cellSource, createCell, getCell, getRun, listRuns, setSetting, postMessage, readCellRun, requestAgentRun, requestRun, requestRunStop, userOrigin } from '@plexus/shared';
import type { Scenario, ScriptedTurn } from '../agent/src/scripted-llm/scenario.ts';
import { TokenSigner } from '../server/src/auth/tokens.ts';
import { pausesNear, profileWindow, recordPauses } from './pauses.ts';
import { agentNice, nodeCommand } from '../scripts/agent-process.mjs';
import { BENCH_SECRET, connectClient, createWorkspace, fmt, machine, printTable, sleep, spawnServer, summarize, tmpDir, until, type BenchClient, type ChildServer } from './lib.ts';

const SECONDS = Number(process.argv.find((a) => a.startsWith('--seconds='))?.split('=')[1] ?? 60);
const TYPISTS = 5;
/** Pause between the agent's 4-character pieces: about 200 tokens/s here. */
const PAUSE_MS = Number(process.argv.find((a) => a.startsWith('--pause='))?.split('=')[1] ?? 5);
const LETTERS = ['α', 'β', 'γ', 'δ', 'ε'];
const KERNEL_LOAD = process.argv.includes('--kernel-load');
/** `--profile-server`: a CPU profile of the server's thread during each run; its pauses are then explained from it. */
const PROFILE_SERVER = process.argv.includes('--profile-server');
/** Rewrites per agent run (the bench asks again when a run ends). */
const RUN_STEPS = Number(process.argv.find((a) => a.startsWith('--run-steps='))?.split('=')[1] ?? 100);
/**
 * `--agent-nice=0,10`: a run with the agent for each of these nice levels of its process, side by
 * side (default: the level `npm start` gives it, `PLEXUS_AGENT_NICE` or 10).
 */
const AGENT_NICES = process.argv.find((a) => a.startsWith('--agent-nice='))?.split('=')[1]?.split(',').map(Number) ?? [agentNice(process.env)];
/** `--repeat=N`: the whole sequence of runs N times (baseline first each time); ratios from all of them pooled. */
const REPEAT = Number(process.argv.find((a) => a.startsWith('--repeat='))?.split('=')[1] ?? 1);
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');
const count = (s: string, ch: string) => s.split(ch).length - 1;

// The region the agent rewrites: two versions of ~400 characters, with no Greek letters.
const versionA = Array.from({ length: 10 }, (_, i) => `const a${i} = data.map((x) => x * ${i + 1});`).join('\n');
const versionB = Array.from({ length: 10 }, (_, i) => `let b${i} = values.filter((v) => v > ${i * 3});`).join('\n');
const header = '// Shared analysis cell. Each person types on their own line below.\n' + '// '.padEnd(600, '-') + '\n';

interface Outcome {
  latencies: number[];
  typed: number[];
  replicas: Array<{ name: string; text: string }>;
  agentChars: number;
  seconds: number;
  /** This process's event-loop utilisation while people typed (near 1: the bench itself is the limit). */
  clientElu: number;
}

async function session(server: ChildServer<'plexus'>, withAgent: boolean, nice = 0): Promise<Outcome> {
  const ws = await createWorkspace(server, `agent-typing-${withAgent}`);
  const typists: BenchClient[] = [];
  for (let k = 0; k < TYPISTS; k++) {
    const c = connectClient(server.url, ws, server.token);
    await c.synced;
    typists.push(c);
  }
  const origins = typists.map((_, k) => userOrigin(`typist${k}`));
  const source = header + LETTERS.map((l, k) => `// typist ${k}: `).join('\n') + '\n' + versionA + '\n';
  const cellId = createCell(typists[0]!.doc, { kind: 'code', source, author: 'typist0' }, origins[0]!);
  await until(() => typists.every((t) => getCell(t.doc, cellId) !== undefined), 10_000);

  // Keystroke n of typist k is seen by replica r when r holds n+1 of k's letters.
  const sentAt: number[][] = typists.map(() => []);
  const seenBy: number[][][] = typists.map(() => typists.map(() => []));
  // Counted from the strings each update inserts (typed letters are never deleted: the agent's
  // region has none), so the bench's cost per update does not grow with the cell. Rescanning the
  // whole text on every update — or Yjs' event delta, which walks every item of the text,
  // tombstones included — made this process the bottleneck of long runs on two cores.
  const haveIn = typists.map(() => LETTERS.map((l) => count(source, l)));
  typists.forEach((t, r) => {
    const have = haveIn[r]!;
    t.doc.on('update', (update: Uint8Array) => {
      const now = performance.now();
      for (const st of Y.decodeUpdate(update).structs) {
        const str = st instanceof Y.Item && st.content instanceof Y.ContentString ? st.content.str : null;
        if (!str) continue;
        for (let k = 0; k < TYPISTS; k++) {
          if (k === r || !str.includes(LETTERS[k]!)) continue;
          have[k]! += count(str, LETTERS[k]!);
          const list = seenBy[k]![r]!;
          while (list.length < have[k]!) list.push(now);
        }
      }
    });
  });

  let agent: ChildProcessByStdio<Writable, Readable, null> | null = null;
  let agentOut: AsyncIterator<string> | null = null;
  let runId = '';
  if (withAgent) {
    // Turn n answers the request after n tool results: it swaps the region back and forth. A run
    // ends after RUN_STEPS swaps (an even number: the region is back to version A) and the bench
    // asks again, so no conversation grows without bound (one endless run filled the agent's
    // heap with its own history in 4 minutes).
    const turns: ScriptedTurn[] = [
      ...Array.from({ length: RUN_STEPS }, (_, n) => ({
        match: { afterTools: n },
        repeat: true,
        toolCalls: [{ name: 'replace_in_cell', arguments: n % 2 === 0 ? { cell_id: cellId, find: versionA, replace: versionB } : { cell_id: cellId, find: versionB, replace: versionA } }],
      })),
      { match: { afterTools: RUN_STEPS }, repeat: true, text: 'Rewritten.' },
    ];
    const token = new TokenSigner(Buffer.from(BENCH_SECRET)).sign({ ws: '*', role: 'service', sub: 'service:agent', ttlSeconds: 3600 });
    // At the agent's nice level, as `npm start` runs it (scripts/agent-process.mjs).
    const run = nodeCommand(['--import', 'tsx', new URL('./agent-child.ts', import.meta.url).pathname], nice);
    const child = spawn(run.command, run.args, { stdio: ['pipe', 'pipe', 'inherit'] });
    agent = child;
    agentOut = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const env = { PLEXUS_AGENT_TYPING_CHARS: '4', PLEXUS_AGENT_TYPING_PAUSE_MS: String(PAUSE_MS), PLEXUS_AGENT_MAX_STEPS: String(RUN_STEPS + 5), PLEXUS_AGENT_REQUESTS_PER_HOUR_PERSON: '0', PLEXUS_AGENT_REQUESTS_PER_HOUR_WORKSPACE: '0', PLEXUS_AGENT_TOKENS_PER_HOUR_PERSON: '0', PLEXUS_AGENT_TOKENS_PER_HOUR_WORKSPACE: '0', PLEXUS_AGENT_MAX_TOKENS: '1000000000', PLEXUS_AGENT_MAX_RUN_SECONDS: '100000' };
    child.stdin.write(JSON.stringify({ serverUrl: server.url, workspace: ws, token, scenario: { turns } satisfies Scenario, env }) + '\n');
    if ((await agentOut.next()).value !== 'ready') throw new Error('the agent process did not start');
    // Direct mode: the agent types into the cell (propose mode, the default, would post cards).
    setSetting(typists[0]!.doc, 'agentMode', 'direct', origins[0]!);
    askAgain();
    await sleep(1000);
  }
  function askAgain(): void {
    const me = { id: 'typist0' };
    typists[0]!.doc.transact(() => {
      const messageId = postMessage(typists[0]!.doc, { author: { ...me, name: 'T0', kind: 'person' }, text: '@agent keep rewriting' }, origins[0]!);
      runId = requestAgentRun(typists[0]!.doc, { by: me, messageId, text: 'keep rewriting' }, origins[0]!);
    }, origins[0]!);
  }
  let typing = true;
  let runs = withAgent ? 1 : 0;
  if (withAgent) {
    typists[0]!.doc.on('update', () => {
      const run = getRun(typists[0]!.doc, runId);
      if (!typing || !run || run.status === 'queued' || run.status === 'running') return;
      if (run.status !== 'done') {
        typing = false; // a run that fails would fail again: report it instead of asking forever
        console.log(`  the agent's run ended ${run.status}: ${run.reason}`);
        return;
      }
      runs++;
      askAgain();
    });
  }
  const agentClock = async (): Promise<number> => {
    if (!agent || !agentOut) return 0;
    agent.stdin.write('stats\n');
    return (JSON.parse((await agentOut.next()).value as string) as { clock: number }).clock;
  };
  const clockBefore = await agentClock();
  let agentChars = 0;

  // Each typist types its letter at the end of its own line, 5 per second, with jitter.
  const eluStart = performance.eventLoopUtilization();
  // This process's pauses and the server's, to set beside the stalls (bench/pauses.ts).
  if (PROFILE_SERVER) await server.probe('profile-start');
  await server.probe('pauses'); // (starting the profiler holds the server's thread ~0.1 s: not counted)
  const benchPauses = recordPauses();
  const started = performance.now();
  const typed = typists.map(() => 0);
  await Promise.all(
    typists.map(async (t, k) => {
      await sleep(k * 37);
      while (performance.now() - started < SECONDS * 1000) {
        // The end of this typist's line, from the letters this replica holds (the lines above the
        // agent's region only grow by them): reading the text instead walks all of its items,
        // the agent's deleted ones included, and grew into this process's own bottleneck.
        let end = header.length;
        for (let j = 0; j < k; j++) end += `// typist ${j}: `.length + haveIn[k]![j]! + 1;
        end += `// typist ${k}: `.length + sentAt[k]!.length;
        if (sentAt[k]!.length % 50 === 0) {
          const text = cellSource(getCell(t.doc, cellId)!);
          if (text.indexOf('\n', text.indexOf(`// typist ${k}: `)) !== end) throw new Error(`typist ${k}: its line ends elsewhere than counted`);
        }
        sentAt[k]!.push(performance.now());
        const ytext = getCell(t.doc, cellId)!.map.get('source') as Y.Text;
        t.doc.transact(() => ytext.insert(end, LETTERS[k]!), origins[k]!);
        typed[k]!++;
        await sleep(200 + (Math.random() - 0.5) * 40);
      }
    }),
  );
  typing = false;
  const seconds = (performance.now() - started) / 1000;
  const clientElu = performance.eventLoopUtilization(eluStart).utilization;
  const pauses = [
    { where: 'server', pauses: (await server.probe('pauses')).pauses },
    { where: 'bench', pauses: benchPauses.stop() },
  ];
  const profile = PROFILE_SERVER ? await server.probe('profile-stop', path.join(tmpDir('plexus-agent-typing-prof-'), 'server.cpuprofile')) : null;
  if (withAgent) {
    const all = listRuns(typists[0]!.doc);
    const steps = all.map((r) => r.activity.length);
    console.log(`  (the agent was asked ${runs} times, up to ${RUN_STEPS} rewrites each: ${steps.reduce((a, b) => a + b, 0)} rewrites in all; ${all.filter((r) => r.activity.some((x) => x.status !== 'done')).length} runs with a refused rewrite)`);
    const bad = all.flatMap((r) => r.activity.filter((x) => x.status !== 'done')).slice(0, 3);
    for (const b of bad) console.log(`    ${b.status}: ${b.summary}`);
  }
  if (agent && runId) {
    // Characters the agent inserted while people typed: its Yjs clock advanced by that much.
    agentChars = (await agentClock()) - clockBefore;
    requestRunStop(typists[1]!.doc, runId, { id: 'typist1' }, origins[1]!);
  }
  await sleep(1500);
  const fresh = connectClient(server.url, ws, server.token);
  await fresh.synced;
  await sleep(500);
  const replicas = [
    ...typists.map((t, k) => ({ name: `typist ${k}`, text: cellSource(getCell(t.doc, cellId)!) })),
    { name: 'server (fresh client)', text: cellSource(getCell(fresh.doc, cellId)!) },
  ];
  const latencies: number[] = [];
  const minutes: number[][] = [];
  const stalls: Array<[number, number]> = [];
  for (let k = 0; k < TYPISTS; k++) {
    for (let n = 0; n < sentAt[k]!.length; n++) {
      const arrivals = typists.map((_, r) => (r === k ? sentAt[k]![n]! : seenBy[k]![r]![n])).filter((x): x is number => x !== undefined);
      if (arrivals.length !== TYPISTS) continue;
      const ms = Math.max(...arrivals) - sentAt[k]![n]!;
      latencies.push(ms);
      if (ms > 50) stalls.push([sentAt[k]![n]! - started, ms]);
      (minutes[Math.floor((sentAt[k]![n]! - started) / 60_000)] ??= []).push(ms);
    }
  }
  // A cost that grows over the run shows as a p99 that grows minute by minute.
  if (minutes.length > 1) console.log(`  ${withAgent ? 'with' : 'without'} the agent, p99 by minute: ${minutes.map((m) => fmt(summarize(Float64Array.from(m)).p99)).join(', ')} ms`);
  // When the stalls came (s into the run), to set beside the server's log or a profile.
  if (stalls.length) console.log(`  stalls over 50 ms at: ${stalls.slice(0, 20).map(([at, ms]) => `${fmt(at / 1000, 1)} s (${fmt(ms, 0)} ms)`).join(', ')}`);
  // Beside each, what held the server's or this process's thread then (gaps over 30 ms, GCs over 20 ms).
  for (const [at, ms] of stalls.slice(0, 20)) {
    const near = pausesNear(performance.timeOrigin + started + at, ms, pauses);
    console.log(`    ${fmt(at / 1000, 1)} s: ${near.length ? near.join('; ') : 'no pause over 30 ms in the server or the bench'}`);
  }
  // With --profile-server: what the server's thread did during each of its pauses.
  if (profile)
    for (const p of pauses[0]!.pauses) {
      const w = profileWindow(profile.file, profile.clock, p.at, p.at + p.ms);
      console.log(`    server ${p.kind} ${p.ms.toFixed(0)} ms at ${fmt((p.at - performance.timeOrigin - started) / 1000, 1)} s (${w.sampledMs.toFixed(0)} ms sampled busy): ${w.self.join('; ')}`);
      console.log(`      from: ${w.ours.join('; ') || '—'}`);
    }
  const pausesOf = (where: string) => pauses.find((p) => p.where === where)!.pauses;
  console.log(`  pauses over 30 ms (GC over 20 ms) during the run: server ${pausesOf('server').length}, bench ${pausesOf('bench').length}${pausesOf('server').length ? `; server's longest ${Math.max(...pausesOf('server').map((p) => p.ms)).toFixed(0)} ms` : ''}`);
  fresh.destroy();
  if (agent) {
    agent.stdin.write('stop\n');
    await new Promise((r) => agent!.once('exit', r));
  }
  typists.forEach((t) => t.destroy());
  return { latencies, typed, replicas, agentChars, seconds, clientElu };
}

/** Starts a cell that keeps one core busy for `seconds` in a workspace of its own; returns a stop function. */
async function busyCell(server: ChildServer<'plexus'>, seconds: number): Promise<() => void> {
  const ws = await createWorkspace(server, 'busy-kernel');
  const c = connectClient(server.url, ws, server.token);
  await c.synced;
  const origin = userOrigin('busy');
  const id = createCell(c.doc, { kind: 'code', source: `const end = Date.now() + ${seconds * 1000};\nlet spins = 0;\nwhile (Date.now() < end) spins++;\nspins`, author: 'busy' }, origin);
  requestRun(c.doc, id, { id: 'busy' }, origin);
  await until(() => readCellRun(c.doc, id)?.state === 'running', 60_000);
  return () => c.destroy();
}

console.log(`five typists in the cell the agent rewrites, ${SECONDS} s each run${KERNEL_LOAD ? ', kernel on' : ''} — ${machine()}, load ${load()}`);
const server = await spawnServer('plexus', {
  env: {
    PLEXUS_KERNEL: KERNEL_LOAD ? '1' : '0',
    ...(KERNEL_LOAD ? { PLEXUS_CELL_TIMEOUT_MS: String((SECONDS + 120) * 1000) } : {}),
    ...(process.env.PLEXUS_COMPACT_EVERY ? { PLEXUS_COMPACT_EVERY: process.env.PLEXUS_COMPACT_EVERY } : {}),
    ...(process.env.PLEXUS_KERNEL_NICE ? { PLEXUS_KERNEL_NICE: process.env.PLEXUS_KERNEL_NICE } : {}),
  },
});
let bad = 0;
try {
  const rows: Array<Array<string | number>> = [];
  const results: Record<string, Outcome> = {};
  const sequence: Array<{ key: string; withAgent: boolean; busy: boolean; label: string; nice: number }> = [
    { key: 'false', withAgent: false, busy: false, label: 'without the agent', nice: 0 },
    ...AGENT_NICES.map((nice, i) => ({ key: i === 0 ? 'true' : `true-nice${nice}`, withAgent: true, busy: false, label: `with the agent rewriting${AGENT_NICES.length > 1 ? `, nice ${nice}` : ''}`, nice })),
    ...(KERNEL_LOAD ? [{ key: 'busy', withAgent: true, busy: true, label: 'with the agent, 2 cells busy', nice: AGENT_NICES[0]! }] : []),
  ];
  const runs = Array.from({ length: REPEAT }, (_, r) => sequence.map((x) => ({ ...x, label: REPEAT > 1 ? `${x.label} (${r + 1})` : x.label, rep: r }))).flat();
  const pooled: Record<string, number[]> = {};
  for (const { key, withAgent, busy, label, nice } of runs) {
    const stops = busy ? await Promise.all([busyCell(server, SECONDS + 60), busyCell(server, SECONDS + 60)]) : [];
    const o = await session(server, withAgent, nice);
    stops.forEach((stop) => stop());
    results[key] = o;
    (pooled[key] ??= []).push(...o.latencies);
    const s = summarize(Float64Array.from(o.latencies));
    rows.push([label, o.latencies.length, fmt(s.p50), fmt(s.p95), fmt(s.p99), fmt(s.max), o.latencies.filter((x) => x > 50).length, withAgent ? `${fmt(o.agentChars / o.seconds, 0)} chars/s (${fmt(o.agentChars / o.seconds / 4, 0)} tokens/s)` : '—', fmt(o.clientElu), load()]);
    for (const r of o.replicas) {
      for (let k = 0; k < TYPISTS; k++) {
        const have = count(r.text, LETTERS[k]!);
        if (have !== o.typed[k]) {
          bad++;
          console.log(`  ${withAgent ? 'with' : 'without'} agent: ${r.name} holds ${have} of typist ${k}'s ${o.typed[k]} characters`);
        }
      }
      if (!r.text.includes(versionA) && !r.text.includes(versionB)) console.log(`  note: ${r.name}'s rewritten region was mid-edit when the run stopped`);
    }
  }
  printTable(['run', 'keystrokes', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'over 50 ms', 'agent typing rate', 'bench ELU', 'load'], rows);
  const p99 = (k: string) => summarize(Float64Array.from(pooled[k]!)).p99;
  const pooledNote = REPEAT > 1 ? `, all ${REPEAT} repeats pooled` : '';
  for (const r of sequence.filter((x) => x.withAgent && !x.busy)) console.log(`typists' p99 ${r.label} / without${pooledNote}: ${fmt(p99(r.key) / p99('false'))} (aim ≤ 1.2)`);
  if (KERNEL_LOAD) console.log(`typists' p99 with the agent and both cores busy in cells / without either: ${fmt(p99('busy') / p99('false'))} (aim ≤ 1.2)`);
  console.log(`lost or duplicated characters: ${bad === 0 ? 'none' : bad + ' replica/typist mismatches'} (typed ${results['true']!.typed.reduce((a, b) => a + b, 0)} + ${results['false']!.typed.reduce((a, b) => a + b, 0)} characters)`);
} finally {
  await server.stop();
}
process.exit(bad === 0 ? 0 : 1);
