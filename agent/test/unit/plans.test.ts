/**
 * The pieces of an analysis run that need no model: structured answers, plan checks, the DAG
 * executor on an in-memory document (driven step by step, no time involved), the verifier's
 * deterministic checks against the data's metadata, and the closing summary.
 */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  addPlanStep, agentOrigin, createCell, initWorkspace, listPlanSteps, removePlanStep, requestAgentRun, roots, serverOrigin, setPlan, setStepDependsOn,
  updatePlanStep, userOrigin, type PlanStepView,
} from '@plexus/shared';
import { firstJsonObject, parseAnswer, AnswerFormatError } from '../../src/plan/json-answer.ts';
import { planProblems } from '../../src/plan/planner.ts';
import { executePlan } from '../../src/plan/executor.ts';
import { deterministicChecks } from '../../src/plan/verifier.ts';
import { normaliseDataType, type DataFacts } from '../../src/plan/data-facts.ts';
import { analysisSummary } from '../../src/plan/summary.ts';
import { toolsFor, ALL_TOOLS } from '../../src/tools/index.ts';

const alice = { id: 'alice', name: 'Alice' };
const person = userOrigin('alice', 'Alice');

function runWithPlan(steps: Array<{ id: string; dependsOn?: string[] }>) {
  const doc = new Y.Doc();
  initWorkspace(doc, { title: 't', created: 1 }, serverOrigin('test'));
  const runId = requestAgentRun(doc, { by: alice, messageId: 'm_1', text: 'go' }, person);
  const origin = agentOrigin(runId);
  setPlan(doc, runId, { clarified: 'x', assumptions: [], alternatives: [], parameters: {}, waiting: false }, steps.map((s) => ({ id: s.id, goal: `goal ${s.id}`, dependsOn: s.dependsOn ?? [], scope: [] })), origin);
  return { doc, runId, origin, map: roots(doc).runs.get(runId)! };
}

/** An executor whose steps finish when the test says so: the interleaving is the test's. */
function drivenExecutor(doc: Y.Doc, runId: string, origin: ReturnType<typeof agentOrigin>, map: Y.Map<unknown>, maxParallel = 2) {
  const started: string[] = [];
  const finishers = new Map<string, (status: 'done' | 'failed') => void>();
  const abort = new AbortController();
  const done = executePlan(
    {
      doc, runId, origin, maxParallel, signal: abort.signal, stopReason: () => 'stopped by Alice', log: () => {},
      runStep: (s: PlanStepView) => {
        updatePlanStep(doc, runId, s.id, { status: 'running' }, origin);
        started.push(s.id);
        return new Promise<void>((resolve) => finishers.set(s.id, (status) => {
          updatePlanStep(doc, runId, s.id, { status }, origin);
          resolve();
        }));
      },
    },
    map,
  );
  const flush = () => new Promise((r) => setImmediate(r));
  return {
    started, done, abort,
    async finish(id: string, status: 'done' | 'failed' = 'done') {
      finishers.get(id)!(status);
      await flush();
    },
    flush,
  };
}

const statuses = (doc: Y.Doc, runId: string) => Object.fromEntries(listPlanSteps(doc, runId).map((s) => [s.id, s.status]));

describe('structured answers', () => {
  it('finds the JSON object in fenced or chatty text, and names every problem', () => {
    expect(firstJsonObject('Sure!\n```json\n{"a": {"b": "}"}}\n```')).toBe('{"a": {"b": "}"}}');
    const schema = { type: 'object', properties: { kind: { type: 'string', enum: ['x', 'y'] } }, required: ['kind'], additionalProperties: false } as const;
    expect(parseAnswer(schema, 'here: {"kind": "x"}', 'route')).toEqual({ kind: 'x' });
    expect(() => parseAnswer(schema, 'no json here', 'route')).toThrow(AnswerFormatError);
    expect(() => parseAnswer(schema, '{"kind": "z", "extra": 1}', 'route')).toThrow(/route\.kind: must be one of.*route\.extra: is not a known argument/);
  });
});

describe('plan checks', () => {
  it('refuses duplicate ids, unknown or self dependencies and cycles', () => {
    expect(planProblems([{ id: 's1', dependsOn: [] }, { id: 's2', dependsOn: ['s1'] }])).toEqual([]);
    expect(planProblems([{ id: 's1', dependsOn: [] }, { id: 's1', dependsOn: [] }])).toEqual(['two steps have the id "s1"']);
    expect(planProblems([{ id: 's1', dependsOn: ['s1', 'nope'] }])).toEqual(['step s1 depends on itself', 'step s1 depends on "nope", which is not a step']);
    expect(planProblems([{ id: 'a', dependsOn: ['b'] }, { id: 'b', dependsOn: ['a'] }])[0]).toMatch(/cycle: a → b/);
  });
});

describe('the executor', () => {
  it('runs independent steps in parallel up to the limit and each step once its dependencies are done', async () => {
    const { doc, runId, origin, map } = runWithPlan([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }, { id: 'c', dependsOn: ['a'] }, { id: 'd', dependsOn: ['a'] }, { id: 'e', dependsOn: ['b', 'c'] }]);
    const ex = drivenExecutor(doc, runId, origin, map, 2);
    await ex.flush();
    expect(ex.started).toEqual(['a']);
    await ex.finish('a');
    expect(ex.started).toEqual(['a', 'b', 'c']); // d waits: two at once
    await ex.finish('b');
    expect(ex.started).toEqual(['a', 'b', 'c', 'd']); // e still waits for c
    await ex.finish('c');
    expect(ex.started).toEqual(['a', 'b', 'c', 'd', 'e']);
    await ex.finish('d');
    await ex.finish('e');
    await ex.done;
    expect(Object.values(statuses(doc, runId))).toEqual(['done', 'done', 'done', 'done', 'done']);
  });

  it('skips the dependants of a failed step (transitively) and goes on with the rest', async () => {
    const { doc, runId, origin, map } = runWithPlan([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }, { id: 'c', dependsOn: ['b'] }, { id: 'd' }]);
    const ex = drivenExecutor(doc, runId, origin, map, 2);
    await ex.flush();
    await ex.finish('a', 'failed');
    await ex.finish('d');
    await ex.done;
    const steps = Object.fromEntries(listPlanSteps(doc, runId).map((s) => [s.id, s]));
    expect(steps.b).toMatchObject({ status: 'skipped', reason: 'depends on step 1 (failed)' });
    expect(steps.c).toMatchObject({ status: 'skipped', reason: 'depends on step 2 (skipped)' });
    expect(steps.d!.status).toBe('done');
  });

  it('follows people\'s edits: a removed step is skipped, an added one runs, a cycle they make is skipped instead of waited on', async () => {
    const { doc, runId, origin, map } = runWithPlan([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }, { id: 'c', dependsOn: ['a'] }, { id: 'x' }, { id: 'y' }]);
    const ex = drivenExecutor(doc, runId, origin, map, 1);
    await ex.flush();
    expect(ex.started).toEqual(['a']);
    removePlanStep(doc, runId, 'b', alice, person);
    const added = addPlanStep(doc, runId, { goal: 'after c', dependsOn: ['c'] }, alice, person)!;
    setStepDependsOn(doc, runId, 'x', ['y'], person);
    setStepDependsOn(doc, runId, 'y', ['x'], person);
    await ex.flush();
    await ex.finish('a');
    expect(statuses(doc, runId)).toMatchObject({ b: 'skipped', x: 'skipped', y: 'skipped' });
    expect(ex.started).toEqual(['a', 'c']);
    await ex.finish('c');
    expect(ex.started).toEqual(['a', 'c', added]);
    await ex.finish(added);
    await ex.done;
    expect(listPlanSteps(doc, runId).find((s) => s.id === 'x')!.reason).toMatch(/cycle/);
  });

  it('Stop: the running steps end, what has not run is skipped with the reason', async () => {
    const { doc, runId, origin, map } = runWithPlan([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }]);
    const ex = drivenExecutor(doc, runId, origin, map, 1);
    await ex.flush();
    ex.abort.abort();
    await ex.finish('a');
    await ex.done;
    expect(listPlanSteps(doc, runId).map((s) => [s.id, s.status, s.reason])).toEqual([['a', 'done', null], ['b', 'skipped', 'stopped by Alice']]);
  });
});

describe('deterministic checks', () => {
  const doc = new Y.Doc();
  initWorkspace(doc, { title: 't', created: 1 }, serverOrigin('test'));
  const facts: DataFacts = { tables: [], volumes: [{ key: 'demo/movie', dataType: 'uint16', size: [256, 256, 900], range: [0, 65535] }], jobs: [{ id: 'j_1', kind: 'calcium', status: 'done', input: 'demo/movie' }] };
  const check = (values: Record<string, number | string>, expect_: Record<string, { min?: number; max?: number; integer?: boolean; why: string }> = {}) =>
    deterministicChecks(doc, { expect: expect_ }, { summary: 's', values, provenance: [{ kind: 'job', id: 'j_1', label: 'job j_1' }], reported: true }, facts);
  const failed = (cs: ReturnType<typeof check>) => cs.filter((c) => !c.passed).map((c) => c.detail);

  it('catches a negative mean intensity on uint16 data from the metadata alone', () => {
    expect(failed(check({ mean_intensity: -12.5 }))).toEqual(['mean_intensity = -12.5 is below 0, the smallest value uint16 data (demo/movie) can hold']);
    expect(failed(check({ mean_intensity: 1200.5 }))).toEqual([]);
    // ΔF/F is relative: it may be negative.
    expect(failed(check({ mean_dff: -0.2 }))).toEqual([]);
  });

  it('catches impossible counts, negative rates, fractions outside 0–1 and NaN', () => {
    expect(failed(check({ n_cells: 12.5 }))).toEqual(['n_cells = 12.5 is not a whole number ≥ 0']);
    expect(failed(check({ n_cells: 100_000 }))).toEqual(['n_cells = 100000 is more than the image can hold (at most 3276 objects of 20 pixels)']);
    expect(failed(check({ event_rate_hz: -0.1 }))).toEqual(['event_rate_hz = -0.1 is negative; a rate cannot be']);
    expect(failed(check({ active_fraction: 1.4 }))).toEqual(['active_fraction = 1.4 is outside 0–1']);
    expect(failed(check({ peak: 'NaN' }))).toEqual(['not a finite number: peak']);
  });

  it('checks frame counts against the recording and row counts against the tables the step used', () => {
    expect(failed(check({ n_frames: 900 }))).toEqual([]);
    expect(failed(check({ n_frames: 1200 }))).toEqual(['n_frames = 1200 is not a frame count of a recording with 900 frames']);
    const withTable = (values: Record<string, number>) =>
      deterministicChecks(doc, { expect: {} }, { summary: 's', values, provenance: [{ kind: 'table', id: 'rois', label: 'table rois' }], reported: true }, { ...facts, tables: [{ name: 'rois', rows: 40, columns: ['id'] }] })
        .filter((c) => !c.passed).map((c) => c.detail);
    expect(withTable({ n_rows: 40 })).toEqual(['table rois does not exist']);
    expect(withTable({ n_rows: 41 })).toEqual(['n_rows = 41 is not a row count of a table with 40 rows', 'table rois does not exist']);
  });

  it('checks the ranges the plan expects, and a missing expected value', () => {
    expect(failed(check({ n_rois: 5 }, { n_rois: { min: 10, integer: true, why: 'the demo has at least 10 neurons' } }))).toEqual(['n_rois = 5 is below 10, but the demo has at least 10 neurons']);
    expect(failed(check({}, { n_rois: { min: 0, why: 'a count' } }))).toEqual(['the plan expects a number "n_rois" (a count); the step did not report it']);
  });

  it('fails a step whose cell ended with an error, and one that reported nothing', () => {
    const id = createCell(doc, { kind: 'code', source: 'x', author: 'agent' }, agentOrigin('r'));
    expect(deterministicChecks(doc, { expect: {} }, { summary: '', values: {}, provenance: [{ kind: 'cell', id: 'c_gone', label: 'cell 9' }], reported: false }, facts).filter((c) => !c.passed).map((c) => c.name)).toEqual(['reported', 'cell cell 9']);
    expect(id).toBeTruthy();
  });

  it('reads zarr and precomputed voxel types alike', () => {
    expect(normaliseDataType('<u2')).toBe('uint16');
    expect(normaliseDataType('|u1')).toBe('uint8');
    expect(normaliseDataType('<f4')).toBe('float32');
    expect(normaliseDataType('uint16')).toBe('uint16');
  });
});

describe('the closing summary and tool scopes', () => {
  it('lists each step with its numbers and links, what failed and was skipped, and the notes used', () => {
    const { doc, runId, origin } = runWithPlan([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }, { id: 'c' }]);
    updatePlanStep(doc, runId, 'a', { status: 'done', summary: 'found 12 cells', values: { n_cells: 12, mean_f: 1234.5678 }, provenance: [{ kind: 'cell', id: 'c_1', label: 'cell 3' }, { kind: 'table', id: 'rois', label: 'table rois' }] }, origin);
    updatePlanStep(doc, runId, 'b', { status: 'failed', attempts: 2, reason: 'failed verification twice: n is negative' }, origin);
    updatePlanStep(doc, runId, 'c', { status: 'skipped', reason: 'removed by Alice' }, origin);
    const text = analysisSummary(listPlanSteps(doc, runId), { stopped: null, sources: ['dff.md'] });
    expect(text).toContain('1 of 3 steps done, 1 failed, 1 skipped');
    expect(text).toContain('`n_cells = 12`, `mean_f = 1234.568` → [cell 3](plexus:cell/c_1) [table rois](plexus:table/rois)');
    expect(text).toContain('✕ **goal b** (retried once) — failed: failed verification twice: n is negative');
    expect(text).toContain('⊘ **goal c** — skipped: removed by Alice');
    expect(text).toContain('(from dff.md)');
  });

  it('a scope gives only its tools, plus reading the notebook', () => {
    const names = toolsFor(['viewer']).map((t) => t.name);
    expect(names).toContain('set_view');
    expect(names).toContain('get_notebook_state');
    expect(names).not.toContain('create_cell');
    expect(toolsFor(['library']).map((t) => t.name)).toEqual(['search_library', 'get_notebook_state', 'get_cell']);
    expect(toolsFor()).toBe(ALL_TOOLS);
  });
});
