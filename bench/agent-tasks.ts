/**
 * The agent on analysis tasks with checkable answers (issue: agent plans): 13 requests over the
 * demo recording — counts, rates, extremes, motion, quality — whose answers are known from the
 * simulation's ground truth or computed from the analysis tables with DuckDB. Each task runs twice,
 * in a fresh workspace per mode: as a verified plan whose steps have their own small contexts
 * (PLEXUS_AGENT_ROUTE=analysis), and as one tool loop over the whole conversation
 * (PLEXUS_AGENT_ROUTE=action); per task it reports steps, retries, prompt and completion tokens,
 * wall time and (plan mode) the largest step context.
 *
 * Against a real model (any OpenAI-compatible endpoint: --base-url, --model, OPENAI_API_KEY) it
 * also reports the success rate: a task passes when its answer (the closing message, or a plan
 * step's values) holds the true value within the task's tolerance. With the scripted model (the
 * default, and what CI can run) the model's "answers" are scripted, so only the plumbing is
 * measured: steps, retries, prompt sizes — no success rate is claimed.
 *
 * Run: npm run bench -- --only=agent-tasks
 *      npx tsx bench/agent-tasks.ts [--tasks=t01,t02] [--base-url=URL --model=NAME] [--route=analysis,action]
 */
import os from 'node:os';
import path from 'node:path';
import * as Y from 'yjs';
import { getRun, listMessages, listPlanSteps, postMessage, requestAgentRun, setSetting, userOrigin, type RunView } from '@plexus/shared';
import { loadAgentConfig } from '../agent/src/config.ts';
import { Model } from '../agent/src/llm/model.ts';
import { WorkspacePeer } from '../agent/src/peer/workspace-peer.ts';
import { startScriptedLlm, type ScriptedLlm } from '../agent/src/scripted-llm/server.ts';
import type { ScriptedTurn } from '../agent/src/scripted-llm/scenario.ts';
import { TokenSigner } from '../server/src/auth/tokens.ts';
import { writeDemoDataset } from '../server/src/volumes/demo/demo-dataset.ts';
import { BENCH_SECRET, connectClient, createWorkspace, machine, printTable, spawnServer, tmpDir, until, type ChildServer } from './lib.ts';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=').slice(1).join('=');
const BASE_URL = arg('base-url') ?? null;
const MODEL = arg('model') ?? 'gpt-4o-mini';
const ONLY = arg('tasks')?.split(',');
const ROUTES = (arg('route') ?? 'analysis,action').split(',') as Array<'analysis' | 'action'>;
const real = BASE_URL !== null;
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');
const alice = { id: 'alice', name: 'Alice' };
const origin = userOrigin('alice', 'Alice');

/** The demo recording of the benchmark: small enough for a few seconds of analysis, with known neurons. */
const DEMO = { width: 128, height: 128, frames: 600, neurons: 24, seed: 11 };
const T = 'calcium_demo';

interface Ctx {
  sql(query: string): Promise<number | string>;
  truth: { neurons: number; active: number; frames: number; frameRate: number };
}
interface Task {
  id: string;
  request: string;
  /** The true answer, and how close an answer must be (relative; 0: exact). */
  answer(ctx: Ctx): Promise<number | string>;
  tolerance: number;
  /** The query the scripted model runs (plumbing mode). */
  oracle: string;
  /** More queries for a longer analysis: the plan gets one step per query (a chain), the loop one turn each. */
  more?: string[];
}

const TASKS: Task[] = [
  { id: 't01', request: 'How many active neurons does the demo recording contain? Count cells with at least one calcium event.', tolerance: 0.1, answer: async (c) => c.truth.active, oracle: `select count(distinct e.id) as v from ${T}_events e join ${T}_rois r using (id) where r.is_cell` },
  { id: 't02', request: 'How many ROIs did the analysis classify as cells?', tolerance: 0, answer: (c) => c.sql(`select count(*) as v from ${T}_rois where is_cell`), oracle: `select count(*) as v from ${T}_rois where is_cell` },
  { id: 't03', request: 'What is the mean event rate per cell, in events per second?', tolerance: 0.1, answer: (c) => c.sql(`select (select count(*) from ${T}_events e join ${T}_rois r using (id) where r.is_cell)::double / (select count(*) from ${T}_rois where is_cell) / (select max(time_s) from ${T}_traces) as v`), oracle: `select (select count(*) from ${T}_events e join ${T}_rois r using (id) where r.is_cell)::double / (select count(*) from ${T}_rois where is_cell) / (select max(time_s) from ${T}_traces) as v` },
  { id: 't04', request: 'Which ROI has the highest mean raw fluorescence? Give its id.', tolerance: 0, answer: (c) => c.sql(`select id as v from ${T}_traces group by id order by avg(f) desc limit 1`), oracle: `select id as v from ${T}_traces group by id order by avg(f) desc limit 1` },
  { id: 't05', request: 'How many frames does the demo movie have?', tolerance: 0, answer: async (c) => c.truth.frames, oracle: `select count(distinct frame) as v from ${T}_traces` },
  { id: 't06', request: 'Which ROI has the largest area in pixels? Give its id.', tolerance: 0, answer: (c) => c.sql(`select id as v from ${T}_rois order by area_px desc, id limit 1`), oracle: `select id as v from ${T}_rois order by area_px desc, id limit 1` },
  { id: 't07', request: 'How many ROIs were rejected as not being cells?', tolerance: 0, answer: (c) => c.sql(`select count(*) as v from ${T}_rois where not is_cell`), oracle: `select count(*) as v from ${T}_rois where not is_cell` },
  { id: 't08', request: 'What was the largest motion-correction shift, in pixels (length of the shift vector)?', tolerance: 0.05, answer: (c) => c.sql(`select max(sqrt(dx * dx + dy * dy)) as v from ${T}_shifts`), oracle: `select max(sqrt(dx * dx + dy * dy)) as v from ${T}_shifts` },
  { id: 't09', request: 'What is the mean SNR of the cells?', tolerance: 0.05, answer: (c) => c.sql(`select avg(snr) as v from ${T}_rois where is_cell`), oracle: `select avg(snr) as v from ${T}_rois where is_cell` },
  { id: 't10', request: 'Which cell has the most calcium events? Give its id.', tolerance: 0, answer: (c) => c.sql(`select id as v from ${T}_events group by id order by count(*) desc, id limit 1`), oracle: `select id as v from ${T}_events group by id order by count(*) desc, id limit 1` },
  { id: 't11', request: 'What fraction of the cells has at least one event?', tolerance: 0.05, answer: (c) => c.sql(`select (select count(distinct e.id) from ${T}_events e join ${T}_rois r using (id) where r.is_cell)::double / (select count(*) from ${T}_rois where is_cell) as v`), oracle: `select (select count(distinct e.id) from ${T}_events e join ${T}_rois r using (id) where r.is_cell)::double / (select count(*) from ${T}_rois where is_cell) as v` },
  { id: 't12', request: 'What is the largest ΔF/F value reached by any cell?', tolerance: 0.05, answer: (c) => c.sql(`select max(t.dff) as v from ${T}_traces t join ${T}_rois r using (id) where r.is_cell`), oracle: `select max(t.dff) as v from ${T}_traces t join ${T}_rois r using (id) where r.is_cell` },
  {
    id: 't14',
    request: 'For ROIs 1 to 8, look at the first 40 frames of each trace, then give the mean ΔF/F over all of them.',
    tolerance: 0.05,
    answer: (c) => c.sql(`select avg(dff) as v from ${T}_traces where id between 1 and 8 and frame < 40`),
    oracle: `select avg(dff) as v from ${T}_traces where id between 1 and 8 and frame < 40`,
    more: Array.from({ length: 8 }, (_, k) => `select id, frame, f, f_neuropil, dff from ${T}_traces where id = ${k + 1} and frame < 40 order by frame`),
  },
  { id: 't13', request: 'How many calcium events were detected in total, over all cells?', tolerance: 0, answer: (c) => c.sql(`select count(*) as v from ${T}_events e join ${T}_rois r using (id) where r.is_cell`), oracle: `select count(*) as v from ${T}_events e join ${T}_rois r using (id) where r.is_cell` },
];

/**
 * The scripted model's turns for a task. Plan mode: a chain of steps (one per extra query, then
 * the answer query and a cross-check), each a query and a report. Loop mode: the same queries as
 * turns of one conversation, then a closing text.
 */
function scriptedTurns(t: Task): ScriptedTurn[] {
  const queries = [...(t.more ?? []), t.oracle, t.oracle];
  const goal = (i: number) => `${t.id} step ${i + 1}: ${i === queries.length - 1 ? 'cross-check the answer with a second query' : i === queries.length - 2 ? 'query the analysis tables for the answer' : 'read part of the traces'}`;
  const sql = (query: string) => ({ name: 'sql', arguments: { query, limit: 50 } });
  return [
    {
      match: { task: 'plan', lastUserContains: t.request },
      repeat: true,
      text: JSON.stringify({
        clarified: t.request, assumptions: ['the analysis tables of calcium-demo/movie are current'], alternatives: [], parameters: {},
        steps: queries.map((_, i) => ({ id: `s${i + 1}`, goal: goal(i), dependsOn: i ? [`s${i}`] : [], scope: ['data'] })),
      }),
    },
    ...queries.flatMap((query, i): ScriptedTurn[] => [
      { match: { task: 'step', lastUserContains: `Goal: ${goal(i)}`, afterTools: 0 }, repeat: true, toolCalls: [sql(query)] },
      { match: { task: 'step', lastUserContains: `Goal: ${goal(i)}`, afterTools: 1 }, repeat: true, toolCalls: [{ name: 'report_result', arguments: { summary: `ran query ${i + 1}`, values: i >= queries.length - 2 ? { answer: '$tool.rows.0.v' } : { rows: '$tool.rowCount' } } }] },
    ]),
    ...queries.map((query, i): ScriptedTurn => ({ match: { lastUserContains: t.request, afterTools: i }, repeat: true, toolCalls: [sql(query)] })),
    { match: { lastUserContains: t.request, afterTools: queries.length }, repeat: true, text: 'The answer is the value the queries returned.' },
  ];
}

/** Whether `text` (and the plan's values) hold the answer within the tolerance. */
function answered(text: string, values: Array<number | string>, truth: number | string, tolerance: number): boolean {
  const candidates = [...values.map(Number), ...[...text.matchAll(/-?\d+(?:\.\d+)?(?:e-?\d+)?/gi)].map((m) => Number(m[0]))].filter(Number.isFinite);
  const want = Number(truth);
  return candidates.some((v) => (tolerance === 0 ? v === want : Math.abs(v - want) <= tolerance * Math.max(Math.abs(want), 1e-9)));
}

async function analyse(server: ChildServer, ws: string, doc: Y.Doc): Promise<void> {
  const res = await fetch(`${server.url}/api/workspaces/${ws}/jobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'calcium', dataset: 'calcium-demo', layer: 'movie', params: { tauDecay: 'GCaMP6f' } }),
  });
  if (res.status !== 201) throw new Error(`start analysis: ${res.status} ${await res.text()}`);
  await until(() => {
    const jobs = doc.getMap('jobs');
    for (const j of jobs.values()) if (j instanceof Y.Map && j.get('status') === 'error') throw new Error(`analysis failed: ${j.get('error')}`);
    return [...jobs.values()].some((j) => j instanceof Y.Map && j.get('status') === 'done');
  }, 300_000, 50, 'the calcium analysis');
}

async function main(): Promise<void> {
  console.log(`agent tasks (${real ? `model ${MODEL} at ${BASE_URL}` : 'scripted model: plumbing only, no success rate'}) — ${machine()}, load ${load()}`);
  const dataDir = tmpDir('plexus-bench-agent-');
  const demo = await writeDemoDataset(path.join(dataDir, 'volumes', 'calcium-demo'), { params: DEMO, layout: { movieChunk: [64, 64, 32], planeChunk: [64, 64] } });
  const truth = {
    neurons: demo.truth.neurons.length,
    active: demo.truth.neurons.filter((n) => n.spikeTimes.length > 0).length,
    frames: DEMO.frames,
    frameRate: demo.truth.params.frameRate,
  };
  const server = await spawnServer('plexus', { dataDir, env: { PLEXUS_JOB_NICE: '0' } });
  const tasks = TASKS.filter((t) => !ONLY || ONLY.includes(t.id));
  const llm: ScriptedLlm | null = real ? null : await startScriptedLlm({ turns: tasks.flatMap(scriptedTurns) });
  const token = new TokenSigner(Buffer.from(BENCH_SECRET)).sign({ ws: '*', role: 'service', sub: 'service:agent', ttlSeconds: 24 * 3600 });
  const rows: Array<Array<string | number>> = [];
  const totals: Record<string, { prompt: number; passed: number; tasks: number }> = {};
  try {
    for (const route of ROUTES) {
      const ws = await createWorkspace(server, `agent-tasks-${route}`);
      const a = connectClient(server.url, ws, server.token);
      await a.synced;
      setSetting(a.doc, 'agentMode', 'direct', origin);
      await analyse(server, ws, a.doc);
      const sql = async (query: string) => {
        const r = await fetch(`${server.url}/api/workspaces/${ws}/data/query`, { method: 'POST', headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ sql: query, limit: 1 }) });
        if (!r.ok) throw new Error(`query: ${r.status} ${await r.text()}`);
        return ((await r.json()) as { rows: Array<{ v: number | string }> }).rows[0]!.v;
      };
      const env = {
        PLEXUS_SERVER_URL: server.url, OPENAI_API_KEY: real ? (process.env.OPENAI_API_KEY ?? '') : 'k', OPENAI_BASE_URL: real ? BASE_URL! : llm!.baseURL,
        PLEXUS_AGENT_MODEL: real ? MODEL : 'scripted', PLEXUS_AGENT_ROUTE: route, PLEXUS_AGENT_REQUESTS_PER_HOUR_PERSON: '0', PLEXUS_AGENT_REQUESTS_PER_HOUR_WORKSPACE: '0',
      };
      const config = loadAgentConfig(env);
      const model = new Model({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL, model: env.PLEXUS_AGENT_MODEL, maxTokensPerTurn: 4096, timeoutMs: 120_000 });
      const peer = new WorkspacePeer(ws, config, model, () => token, () => {});
      await peer.start();
      await peer.whenHolding();
      totals[route] = { prompt: 0, passed: 0, tasks: 0 };
      for (const t of tasks) {
        const before = llm?.requests.length ?? 0;
        const started = performance.now();
        let runId = '';
        a.doc.transact(() => {
          const messageId = postMessage(a.doc, { author: { ...alice, kind: 'person' }, text: `@agent ${t.request}` }, origin);
          runId = requestAgentRun(a.doc, { by: alice, messageId, text: t.request }, origin);
        }, origin);
        const ended = () => {
          const r = getRun(a.doc, runId);
          return r && (r.status === 'done' || r.status === 'stopped' || r.status === 'error') ? r : null;
        };
        await until(() => ended() !== null, 600_000, 20, `task ${t.id}`);
        const run: RunView = ended()!;
        const wall = (performance.now() - started) / 1000;
        const steps = listPlanSteps(a.doc, runId);
        const retries = steps.reduce((n, s) => n + Math.max(0, s.attempts - 1), 0);
        const stepContexts = (llm?.requests.slice(before) ?? [])
          .filter((r) => r.task === 'step' && !(r.body.messages as Array<{ role: string }>).some((m) => m.role === 'tool'))
          .map((r) => (r.body.messages as Array<{ content?: unknown }>).reduce((n, m) => n + (typeof m.content === 'string' ? m.content.length : 0), 0));
        const reply = listMessages(a.doc).find((m) => m.id === run.replyId)?.text ?? '';
        const want = await t.answer({ sql, truth });
        const ok = real ? answered(reply, steps.flatMap((s) => Object.values(s.values)), want, t.tolerance) : null;
        totals[route]!.prompt += run.tokens.prompt;
        totals[route]!.tasks++;
        if (ok) totals[route]!.passed++;
        rows.push([t.id, route, run.status, steps.length || '—', retries, run.steps, run.tokens.prompt, run.tokens.completion, wall.toFixed(1), stepContexts.length ? Math.max(...stepContexts) : '—', String(want).slice(0, 10), ok === null ? '—' : ok ? 'yes' : 'no']);
      }
      await peer.close();
      a.destroy();
    }
  } finally {
    await llm?.close();
    await server.stop();
  }
  printTable(['task', 'mode', 'status', 'plan steps', 'retries', 'model calls', 'prompt tokens', 'completion', 'wall s', 'max step context (chars)', 'truth', 'answered'], rows);
  console.log('');
  for (const [route, t] of Object.entries(totals)) {
    console.log(`${route === 'analysis' ? 'plan with per-step contexts' : 'one tool loop'}: ${t.tasks} tasks, ${t.prompt.toLocaleString()} prompt tokens (${Math.round(t.prompt / Math.max(1, t.tasks)).toLocaleString()} per task)${real ? `, success ${t.passed}/${t.tasks} (${Math.round((100 * t.passed) / Math.max(1, t.tasks))} %)` : ''}`);
  }
  if (totals.analysis && totals.action) console.log(`prompt tokens per task, plan / loop: ${(totals.analysis.prompt / Math.max(1, totals.action.prompt)).toFixed(2)}`);
  if (!real) console.log('scripted model: tokens are estimated by the scripted server (characters / 4); success is not measured without a real model');
  console.log(`truth: ${truth.neurons} simulated neurons, ${truth.active} active, ${truth.frames} frames at ${truth.frameRate} Hz; load after ${load()}`);
}

await main();
