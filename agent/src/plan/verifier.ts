/**
 * The verifier: after a step, checks of its result the agent can compute itself — it reported a
 * result, the cells it ran ended without error, its numbers are finite, within the ranges the
 * plan expects and within what the data's metadata allows (intensities within the voxel type's
 * range, counts whole, non-negative and possible for the image size, rates ≥ 0, fractions in
 * 0–1), the tables it names exist and have rows — then one model judgement of the result against
 * the step's goal. Either failing fails the step (the executor retries once with the issues).
 */
import type * as Y from 'yjs';
import { getCell, readCellRun, type CheckResult, type PlanStepView, type ProvenanceLink, type StepVerdict, type TokenUsage, listTables } from '@plexus/shared';
import type { Model } from '../llm/model.ts';
import type { DataFacts, VolumeFact } from './data-facts.ts';
import { AnswerFormatError, parseAnswer } from './json-answer.ts';
import { instructionsSection, taskHeader } from './prompts.ts';

export interface StepResult {
  summary: string;
  values: Record<string, number | string>;
  provenance: ProvenanceLink[];
  /** Whether the step ended with a report (report_result or a final answer). */
  reported: boolean;
}

const INTENSITY = /(intensit|fluoresc|brightness|pixel_value|raw_f|mean_f\b|^f$|^f0$|baseline_f)/i;
const RELATIVE = /(dff|df_f|delta|ratio|z_?score|snr|normali|corr|fraction|percent)/i;
const COUNT = /(^|_)(n|num|number|count)(_|$)|_count$|^count|n_cells|n_rois|cells$|rois$|events$/i;
const RATE = /(rate|_hz$|hz_|frequency)/i;
const FRAMES = /(^|_)(n_)?frames?($|_)|frame_count/i;
const ROWS = /(^|_)(n_)?rows?($|_)|row_count/i;
const FRACTION = /(fraction|proportion)/i;
const PERCENT = /(percent|pct)/i;

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : String(Math.round(v * 1e4) / 1e4));

/** The volumes a step's result is about: those of the jobs it links, else every volume. */
function volumesOf(facts: DataFacts, provenance: ProvenanceLink[]): VolumeFact[] {
  const inputs = new Set(provenance.filter((p) => p.kind === 'job').map((p) => facts.jobs.find((j) => j.id === p.id)?.input).filter((x): x is string => !!x));
  const linked = facts.volumes.filter((v) => inputs.has(v.key));
  return linked.length ? linked : facts.volumes;
}

export function deterministicChecks(doc: Y.Doc, step: Pick<PlanStepView, 'expect'>, result: StepResult, facts: DataFacts): CheckResult[] {
  const checks: CheckResult[] = [];
  const add = (name: string, passed: boolean, detail: string) => checks.push({ name, passed, detail: detail.slice(0, 1000) });

  add('reported', result.reported && (result.summary.trim().length > 0 || Object.keys(result.values).length > 0), result.reported ? 'the step reported its result' : 'the step ended without reporting a result (call report_result)');

  for (const p of result.provenance.filter((x) => x.kind === 'cell')) {
    const cell = getCell(doc, p.id);
    if (!cell) {
      add(`cell ${p.label}`, false, `${p.label} no longer exists`);
      continue;
    }
    const run = cell.kind === 'markdown' ? null : readCellRun(doc, cell);
    if (!run?.exec) continue;
    if (run.exec.state === 'error') {
      const err = run.outputs.find((o) => o.type === 'error') as { message?: string } | undefined;
      add(`cell ${p.label}`, false, `${p.label} ended with an error${err?.message ? `: ${err.message}` : ''}`);
    } else if (run.exec.state === 'running') add(`cell ${p.label}`, false, `${p.label} is still running`);
    else if (run.exec.state === 'cancelled') add(`cell ${p.label}`, false, `${p.label} was cancelled`);
    else add(`cell ${p.label}`, true, `${p.label} ran without error`);
  }

  const numbers = Object.entries(result.values).flatMap(([k, v]) => (typeof v === 'number' ? [[k, v] as const] : typeof v === 'string' && /^\s*[-+]?(nan|inf(inity)?)\s*$/i.test(v) ? [[k, NaN] as const] : []));
  const bad = numbers.filter(([, v]) => !Number.isFinite(v));
  add('finite values', bad.length === 0, bad.length ? `not a finite number: ${bad.map(([k]) => k).join(', ')}` : `${numbers.length} numeric value${numbers.length === 1 ? '' : 's'}, all finite`);

  for (const [name, e] of Object.entries(step.expect)) {
    const v = result.values[name];
    if (typeof v !== 'number') {
      add(`expected ${name}`, false, `the plan expects a number "${name}" (${e.why}); the step did not report it`);
      continue;
    }
    const problems: string[] = [];
    if (e.min !== undefined && v < e.min) problems.push(`below ${fmt(e.min)}`);
    if (e.max !== undefined && v > e.max) problems.push(`above ${fmt(e.max)}`);
    if (e.integer && !Number.isInteger(v)) problems.push('not a whole number');
    add(`expected ${name}`, problems.length === 0, problems.length ? `${name} = ${fmt(v)} is ${problems.join(' and ')}, but ${e.why}` : `${name} = ${fmt(v)} is within the expected range (${e.why})`);
  }

  const vols = volumesOf(facts, result.provenance);
  for (const [name, v] of numbers) {
    if (!Number.isFinite(v) || name in step.expect) continue;
    if (FRAMES.test(name) && !RATE.test(name)) {
      const frames = vols.map((x) => (x.size && x.size.length >= 3 ? x.size[2]! : 0)).filter((n) => n > 1);
      if (frames.length) {
        const most = Math.max(...frames);
        const ok = Number.isInteger(v) && v >= 0 && v <= most;
        add(`frames ${name}`, ok, ok ? `${name} = ${v} is within the ${most} frames of the recording` : `${name} = ${fmt(v)} is not a frame count of a recording with ${most} frames`);
        continue;
      }
    }
    if (ROWS.test(name)) {
      const named = result.provenance.filter((p) => p.kind === 'table').map((p) => facts.tables.find((t) => t.name === p.id)?.rows ?? listTables(doc).find((t) => t.name === p.id)?.rows).filter((n): n is number => typeof n === 'number');
      if (named.length) {
        const most = Math.max(...named);
        const ok = Number.isInteger(v) && v >= 0 && v <= most;
        add(`rows ${name}`, ok, ok ? `${name} = ${v} is within the ${most} rows of the table` : `${name} = ${fmt(v)} is not a row count of a table with ${most} rows`);
        continue;
      }
    }
    if (INTENSITY.test(name) && !RELATIVE.test(name)) {
      const ranged = vols.filter((x) => x.range);
      if (ranged.length) {
        const lo = Math.min(...ranged.map((x) => x.range![0]));
        const hi = Math.max(...ranged.map((x) => x.range![1]));
        const what = ranged.map((x) => `${x.dataType} data (${x.key})`).slice(0, 3).join(', ');
        add(`range of ${name}`, v >= lo && v <= hi, v < lo ? `${name} = ${fmt(v)} is below ${lo}, the smallest value ${what} can hold` : v > hi ? `${name} = ${fmt(v)} is above ${hi}, the largest value ${what} can hold` : `${name} = ${fmt(v)} is within ${lo}–${hi} (${what})`);
      }
    } else if (COUNT.test(name) && !RATE.test(name) && !FRACTION.test(name) && !PERCENT.test(name)) {
      const pixels = vols.map((x) => (x.size && x.size.length >= 2 ? x.size[0]! * x.size[1]! : 0)).filter((n) => n > 0);
      const most = pixels.length ? Math.floor(Math.max(...pixels) / 20) : Infinity;
      const ok = Number.isInteger(v) && v >= 0 && v <= most;
      add(`count ${name}`, ok, ok ? `${name} = ${v} is a plausible count` : !Number.isInteger(v) || v < 0 ? `${name} = ${fmt(v)} is not a whole number ≥ 0` : `${name} = ${v} is more than the image can hold (at most ${most} objects of 20 pixels)`);
    } else if (RATE.test(name)) {
      add(`rate ${name}`, v >= 0, v >= 0 ? `${name} = ${fmt(v)} ≥ 0` : `${name} = ${fmt(v)} is negative; a rate cannot be`);
    } else if (FRACTION.test(name)) {
      add(`fraction ${name}`, v >= 0 && v <= 1, `${name} = ${fmt(v)}${v >= 0 && v <= 1 ? ' lies in 0–1' : ' is outside 0–1'}`);
    } else if (PERCENT.test(name)) {
      add(`percent ${name}`, v >= 0 && v <= 100, `${name} = ${fmt(v)}${v >= 0 && v <= 100 ? ' lies in 0–100' : ' is outside 0–100'}`);
    }
  }

  const tables = new Map(listTables(doc).map((t) => [t.name, t]));
  for (const p of result.provenance.filter((x) => x.kind === 'table')) {
    const t = tables.get(p.id);
    add(`table ${p.id}`, !!t && t.rows > 0, !t ? `table ${p.id} does not exist` : t.rows > 0 ? `table ${p.id} has ${t.rows} rows` : `table ${p.id} is empty`);
  }
  return checks;
}

const JUDGEMENT_SCHEMA = {
  type: 'object',
  properties: {
    passed: { type: 'boolean' },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    issues: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 1000 } },
    suggestions: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 1000 } },
  },
  required: ['passed'],
  additionalProperties: false,
} as const;

export function verifierPrompt(instructions = ''): string {
  return [
    taskHeader('verify'),
    'You check one step of an analysis in a shared research workspace before other steps build on it.',
    'Judge whether the result achieves the step\'s goal and is scientifically plausible (units, magnitudes, counts for the data size, signs). The automatic checks are listed; do not repeat them unless they matter.',
    'Answer with one JSON object only: {"passed": true|false, "confidence": 0..1, "issues": ["..."], "suggestions": ["how to fix"]}.',
    instructionsSection(instructions),
  ].join('\n');
}

export function verifierRequest(goal: string, result: StepResult, checks: CheckResult[]): string {
  const values = Object.entries(result.values).map(([k, v]) => `- ${k} = ${v}`).join('\n') || '(none)';
  return [
    `Step goal: ${goal}`,
    `Result summary: ${result.summary || '(none)'}`,
    `Values:\n${values}`,
    `Produced: ${result.provenance.map((p) => p.label).join(', ') || 'nothing linked'}`,
    `Automatic checks:\n${checks.map((c) => `- ${c.passed ? 'passed' : 'FAILED'}: ${c.name} — ${c.detail}`).join('\n')}`,
  ].join('\n\n');
}

export interface Verification {
  verdict: StepVerdict;
  usage: TokenUsage | null;
}

/** The checks, then the model's judgement; the verdict passes only if both do. */
export async function verifyStep(
  model: Model,
  input: { doc: Y.Doc; step: PlanStepView; goal: string; result: StepResult; facts: DataFacts; instructions: string; signal: AbortSignal },
): Promise<Verification> {
  const checks = deterministicChecks(input.doc, input.step, input.result, input.facts);
  const failed = checks.filter((c) => !c.passed);
  const turn = await model.turn({
    messages: [
      { role: 'system', content: verifierPrompt(input.instructions) },
      { role: 'user', content: verifierRequest(input.goal, input.result, checks) },
    ],
    tools: [],
    signal: input.signal,
    onText: () => {},
  });
  let judged: { passed: boolean; confidence: number; issues: string[]; suggestions: string[] } | null = null;
  try {
    const a = parseAnswer(JUDGEMENT_SCHEMA, turn.text, 'verdict');
    judged = { passed: a.passed, confidence: a.confidence ?? 0.5, issues: a.issues ?? [], suggestions: a.suggestions ?? [] };
  } catch (e) {
    if (!(e instanceof AnswerFormatError)) throw e;
  }
  const all: CheckResult[] = [
    ...checks,
    judged
      ? { name: 'model judgement', passed: judged.passed, detail: `${judged.passed ? 'plausible' : 'not plausible'} (confidence ${fmt(judged.confidence)})${judged.issues.length ? `: ${judged.issues.join('; ')}` : ''}` }
      : { name: 'model judgement', passed: true, detail: 'the judgement could not be read; the automatic checks decide' },
  ];
  const passed = failed.length === 0 && (judged?.passed ?? true);
  return {
    verdict: {
      passed,
      confidence: failed.length ? 1 : (judged?.confidence ?? 0.5),
      issues: [...failed.map((c) => c.detail), ...(judged && !judged.passed ? judged.issues : [])].slice(0, 20),
      suggestions: (judged?.suggestions ?? []).slice(0, 20),
      checks: all.slice(0, 50),
    },
    usage: turn.usage,
  };
}
