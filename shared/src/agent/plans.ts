/**
 * An analysis run's shared plan (seed 002): how the agent understood the request (its route and
 * brief: the clarified request, assumptions anyone may edit, alternatives anyone may pick,
 * parameters, and whether it waits for a person's Go), and the steps it runs as a DAG — each
 * with a goal anyone may edit, the steps it depends on, a status, the verifier's verdict, a
 * summary and the cells, tables and views it produced. Everything lives in the run's map, so
 * everyone in the meeting watches and steers the same run. Pure module.
 *
 * | key in the run | written by | value |
 * |---|---|---|
 * | `route` | agent | `RunRoute`: question, analysis or direct action, and why |
 * | `brief` | agent creates; people edit `assumptions`, press `go`, `pick` an alternative | Y.Map |
 * | `planSteps` | agent creates; people add steps, edit `goal` / `dependsOn`, `remove` pending ones | Y.Map<id, Y.Map> |
 *
 * Inside a step: `id`, `order` (fractional key), `goal` (Y.Text), `dependsOn` (step ids),
 * `scope` (tool scopes), `expect` (value ranges the planner knows from metadata), `status`,
 * `attempts`, `verdict`, `summary`, `values`, `provenance`, `reason`, `startedAt`/`endedAt`
 * (agent), `removed` (anyone), `addedBy` (a person who added it).
 */
import * as Y from 'yjs';
import { randomId } from '../ids.ts';
import { orderKeyBetween } from '../order.ts';
import type { Origin } from '../origin.ts';
import { applyTextDiff } from '../text-diff.ts';
import { roots } from '../schema.ts';
import type { RunSignal } from './runs.ts';

export const ROUTE_KINDS = ['question', 'analysis', 'action'] as const;
export type RouteKind = (typeof ROUTE_KINDS)[number];
export interface RunRoute {
  kind: RouteKind;
  reason: string;
  /** Tool scopes the request needs (direct actions and questions). */
  scopes?: ToolScope[];
}

/** Groups of tools; the model sees only the tools of the scopes in play. */
export const TOOL_SCOPES = ['notebook', 'viewer', 'data', 'calcium', 'atlas', 'chat', 'library'] as const;
export type ToolScope = (typeof TOOL_SCOPES)[number];

export const STEP_STATUSES = ['pending', 'running', 'verifying', 'done', 'failed', 'skipped'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];
export const isStepFinished = (s: StepStatus): boolean => s === 'done' || s === 'failed' || s === 'skipped';

export interface Alternative {
  label: string;
  /** The request as it would read with this alternative (sent to re-plan). */
  request: string;
}
export type ParamValue = string | number | boolean;

/** A check the verifier ran, and how it came out. */
export interface CheckResult {
  name: string;
  passed: boolean;
  detail: string;
}
export interface StepVerdict {
  passed: boolean;
  /** 0..1: the model's confidence in its judgement (1 for deterministic failures). */
  confidence: number;
  issues: string[];
  suggestions: string[];
  checks: CheckResult[];
}
/** What a step produced that people can jump to. */
export interface ProvenanceLink {
  kind: 'cell' | 'table' | 'view' | 'job';
  id: string;
  label: string;
}
/** A value range the planner expects of a named result (from metadata: dtype, frame count, rows). */
export interface ValueExpectation {
  min?: number;
  max?: number;
  integer?: boolean;
  why: string;
}
export interface PickedAlternative extends Alternative {
  by: string;
  name?: string;
  at: number;
}

export interface PlanStepView {
  id: string;
  order: string;
  goal: string;
  dependsOn: string[];
  scope: ToolScope[];
  expect: Record<string, ValueExpectation>;
  status: StepStatus;
  attempts: number;
  verdict: StepVerdict | null;
  summary: string;
  values: Record<string, number | string>;
  provenance: ProvenanceLink[];
  reason: string | null;
  startedAt: number | null;
  endedAt: number | null;
  removed: RunSignal | null;
  addedBy: { id: string; name?: string } | null;
  map: Y.Map<unknown>;
}

export interface BriefView {
  clarified: string;
  assumptions: string;
  alternatives: Alternative[];
  parameters: Record<string, ParamValue>;
  waiting: boolean;
  go: RunSignal | null;
  pick: PickedAlternative | null;
  map: Y.Map<unknown>;
}

/** Limits of what a plan holds (the schema enforces them too). */
export const MAX_STEPS = 30;
export const MAX_GOAL_CHARS = 1000;
export const MAX_SUMMARY_CHARS = 1200;
export const MAX_ASSUMPTIONS_CHARS = 4000;

const str = (v: unknown): string => (typeof v === 'string' ? v : v instanceof Y.Text ? v.toString() : '');
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const arr = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
const obj = <T>(v: unknown): T | null => (v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Y.AbstractType) ? (v as T) : null);

function runMap(doc: Y.Doc, runId: string): Y.Map<unknown> | null {
  const m = roots(doc).runs.get(runId);
  return m instanceof Y.Map ? m : null;
}

// ---------------------------------------------------------------------------------------------
// reading

export function getRoute(doc: Y.Doc, runId: string): RunRoute | null {
  return obj<RunRoute>(runMap(doc, runId)?.get('route'));
}

export function getBrief(doc: Y.Doc, runId: string): BriefView | null {
  const m = runMap(doc, runId)?.get('brief');
  if (!(m instanceof Y.Map)) return null;
  return {
    clarified: str(m.get('clarified')),
    assumptions: str(m.get('assumptions')).slice(0, MAX_ASSUMPTIONS_CHARS),
    alternatives: arr<Alternative>(m.get('alternatives')),
    parameters: obj<Record<string, ParamValue>>(m.get('parameters')) ?? {},
    waiting: m.get('waiting') === true,
    go: obj<RunSignal>(m.get('go')),
    pick: obj<PickedAlternative>(m.get('pick')),
    map: m,
  };
}

/** The assumptions one per line (blank lines and list markers dropped). */
export const assumptionLines = (text: string): string[] =>
  text
    .split('\n')
    .map((l) => l.replace(/^\s*(?:[-*•]|\d+[.)])\s*/, '').trim())
    .filter(Boolean);

function readStep(m: unknown): PlanStepView | null {
  if (!(m instanceof Y.Map)) return null;
  const id = m.get('id');
  if (typeof id !== 'string') return null;
  const status = m.get('status');
  return {
    id,
    order: typeof m.get('order') === 'string' ? (m.get('order') as string) : id,
    // People type goals: what the agent reads is bounded whatever was pasted.
    goal: str(m.get('goal')).slice(0, MAX_GOAL_CHARS),
    dependsOn: arr<unknown>(m.get('dependsOn')).filter((d): d is string => typeof d === 'string'),
    scope: arr<ToolScope>(m.get('scope')).filter((s) => (TOOL_SCOPES as readonly string[]).includes(s)),
    expect: obj<Record<string, ValueExpectation>>(m.get('expect')) ?? {},
    status: (STEP_STATUSES as readonly unknown[]).includes(status) ? (status as StepStatus) : 'pending',
    attempts: num(m.get('attempts')) ?? 0,
    verdict: obj<StepVerdict>(m.get('verdict')),
    summary: str(m.get('summary')),
    values: obj<Record<string, number | string>>(m.get('values')) ?? {},
    provenance: arr<ProvenanceLink>(m.get('provenance')),
    reason: typeof m.get('reason') === 'string' ? (m.get('reason') as string) : null,
    startedAt: num(m.get('startedAt')),
    endedAt: num(m.get('endedAt')),
    removed: obj<RunSignal>(m.get('removed')),
    addedBy: obj<{ id: string; name?: string }>(m.get('addedBy')),
    map: m,
  };
}

/** The plan's steps in order (people may insert steps between others). */
export function listPlanSteps(doc: Y.Doc, runId: string): PlanStepView[] {
  const m = runMap(doc, runId)?.get('planSteps');
  if (!(m instanceof Y.Map)) return [];
  const out: PlanStepView[] = [];
  m.forEach((v) => {
    const s = readStep(v);
    if (s) out.push(s);
  });
  return out.sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : a.id < b.id ? -1 : 1));
}

export function getPlanStep(doc: Y.Doc, runId: string, stepId: string): PlanStepView | null {
  const m = runMap(doc, runId)?.get('planSteps');
  return m instanceof Y.Map ? readStep(m.get(stepId)) : null;
}

/** Whether the run has a step plan (an analysis), as opposed to a direct answer. */
export const hasStepPlan = (doc: Y.Doc, runId: string): boolean => runMap(doc, runId)?.get('planSteps') instanceof Y.Map;

// ---------------------------------------------------------------------------------------------
// the agent writes

/** Agent: how the request was routed. */
export function setRoute(doc: Y.Doc, runId: string, route: RunRoute, origin: Origin): void {
  const m = runMap(doc, runId);
  if (!m) return;
  const clean: RunRoute = { kind: route.kind, reason: route.reason.slice(0, 500), ...(route.scopes?.length ? { scopes: [...new Set(route.scopes)] } : {}) };
  doc.transact(() => m.set('route', clean), origin);
}

export interface BriefInput {
  clarified: string;
  assumptions: string[];
  alternatives: Alternative[];
  parameters: Record<string, ParamValue>;
  waiting: boolean;
}

export interface StepInput {
  id: string;
  goal: string;
  dependsOn: string[];
  scope: ToolScope[];
  expect?: Record<string, ValueExpectation>;
}

/**
 * Agent: the brief and the plan, in one transaction (a re-plan after a picked alternative
 * replaces both). Step ids are the planner's ("s1"…), unique within the run.
 */
export function setPlan(doc: Y.Doc, runId: string, brief: BriefInput, steps: StepInput[], origin: Origin): void {
  const m = runMap(doc, runId);
  if (!m) return;
  doc.transact(() => {
    const b = new Y.Map<unknown>();
    b.set('clarified', brief.clarified.slice(0, 2000));
    b.set('assumptions', new Y.Text(brief.assumptions.map((a) => a.replace(/\s+/g, ' ').trim()).filter(Boolean).slice(0, 20).join('\n')));
    b.set('alternatives', brief.alternatives.slice(0, 6).map((a) => ({ label: a.label.slice(0, 60), request: a.request.slice(0, 2000) })));
    b.set('parameters', Object.fromEntries(Object.entries(brief.parameters).slice(0, 30).map(([k, v]) => [k.slice(0, 60), typeof v === 'string' ? v.slice(0, 500) : v])));
    b.set('waiting', brief.waiting);
    m.set('brief', b);
    const all = new Y.Map<unknown>();
    let prev: string | null = null;
    for (const s of steps.slice(0, MAX_STEPS)) {
      const order = orderKeyBetween(prev, null);
      prev = order;
      all.set(s.id, newStep(s, order));
    }
    m.set('planSteps', all);
  }, origin);
}

function newStep(s: StepInput, order: string, addedBy?: { id: string; name?: string }): Y.Map<unknown> {
  const sm = new Y.Map<unknown>();
  sm.set('id', s.id);
  sm.set('order', order);
  sm.set('goal', new Y.Text(s.goal.slice(0, MAX_GOAL_CHARS)));
  sm.set('dependsOn', [...new Set(s.dependsOn)].slice(0, MAX_STEPS));
  if (s.scope.length) sm.set('scope', [...new Set(s.scope)]);
  if (s.expect && Object.keys(s.expect).length) sm.set('expect', s.expect);
  if (addedBy) sm.set('addedBy', addedBy);
  else sm.set('status', 'pending');
  return sm;
}

/** Agent: the brief no longer waits (a person pressed Go, or the setting says proceed). */
export function setBriefWaiting(doc: Y.Doc, runId: string, waiting: boolean, origin: Origin): void {
  const b = runMap(doc, runId)?.get('brief');
  if (b instanceof Y.Map && b.get('waiting') !== waiting) doc.transact(() => b.set('waiting', waiting), origin);
}

export type StepUpdate = Partial<{
  status: StepStatus;
  attempts: number;
  verdict: StepVerdict;
  summary: string;
  values: Record<string, number | string>;
  provenance: ProvenanceLink[];
  reason: string;
  startedAt: number;
  endedAt: number;
}>;

/** Agent: a step's progress. */
export function updatePlanStep(doc: Y.Doc, runId: string, stepId: string, update: StepUpdate, origin: Origin): void {
  const steps = runMap(doc, runId)?.get('planSteps');
  const m = steps instanceof Y.Map ? steps.get(stepId) : null;
  if (!(m instanceof Y.Map)) return;
  doc.transact(() => {
    for (const [k, v] of Object.entries(update)) {
      if (v === undefined) continue;
      if (k === 'summary' || k === 'reason') m.set(k, String(v).slice(0, MAX_SUMMARY_CHARS));
      else if (k === 'provenance') m.set(k, (v as ProvenanceLink[]).slice(0, 30));
      else m.set(k, v);
    }
  }, origin);
}

// ---------------------------------------------------------------------------------------------
// people (and the agent) steer

/** Anyone: Go — the agent starts the plan (with the assumptions as they now read). */
export function pressGo(doc: Y.Doc, runId: string, who: { id: string; name?: string }, origin: Origin): boolean {
  const b = runMap(doc, runId)?.get('brief');
  if (!(b instanceof Y.Map) || b.get('go')) return false;
  doc.transact(() => b.set('go', { by: who.id, ...(who.name ? { name: who.name } : {}), at: Date.now() } satisfies RunSignal), origin);
  return true;
}

/** Anyone: picks an alternative; the agent plans again for it. */
export function pickAlternative(doc: Y.Doc, runId: string, alt: Alternative, who: { id: string; name?: string }, origin: Origin): boolean {
  const b = runMap(doc, runId)?.get('brief');
  if (!(b instanceof Y.Map)) return false;
  const pick: PickedAlternative = { label: alt.label.slice(0, 60), request: alt.request.slice(0, 2000), by: who.id, ...(who.name ? { name: who.name } : {}), at: Date.now() };
  doc.transact(() => b.set('pick', pick), origin);
  return true;
}

/** Anyone: edits the assumptions (a minimal diff of the shared text). */
export function editAssumptions(doc: Y.Doc, runId: string, text: string, origin: Origin): void {
  const t = runMap(doc, runId)?.get('brief');
  const y = t instanceof Y.Map ? t.get('assumptions') : null;
  if (y instanceof Y.Text) doc.transact(() => applyTextDiff(y, text.slice(0, MAX_ASSUMPTIONS_CHARS)), origin);
}

/** Anyone: edits a step's goal (a minimal diff, so concurrent edits merge). */
export function editStepGoal(doc: Y.Doc, runId: string, stepId: string, goal: string, origin: Origin): boolean {
  const s = getPlanStep(doc, runId, stepId);
  const y = s?.map.get('goal');
  if (!s || !(y instanceof Y.Text) || isStepFinished(s.status) || s.status !== 'pending') return false;
  doc.transact(() => applyTextDiff(y, goal.slice(0, MAX_GOAL_CHARS)), origin);
  return true;
}

/** Anyone: a pending step should not run (the agent marks it skipped). */
export function removePlanStep(doc: Y.Doc, runId: string, stepId: string, who: { id: string; name?: string }, origin: Origin): boolean {
  const s = getPlanStep(doc, runId, stepId);
  if (!s || s.removed || s.status !== 'pending') return false;
  doc.transact(() => s.map.set('removed', { by: who.id, ...(who.name ? { name: who.name } : {}), at: Date.now() } satisfies RunSignal), origin);
  return true;
}

/** Anyone: changes which steps a pending step waits for. */
export function setStepDependsOn(doc: Y.Doc, runId: string, stepId: string, dependsOn: string[], origin: Origin): boolean {
  const s = getPlanStep(doc, runId, stepId);
  if (!s || s.status !== 'pending') return false;
  doc.transact(() => s.map.set('dependsOn', [...new Set(dependsOn.filter((d) => d !== stepId))].slice(0, MAX_STEPS)), origin);
  return true;
}

/** Anyone: adds a step after `afterId` (or at the end) that waits for `dependsOn`. Returns its id. */
export function addPlanStep(
  doc: Y.Doc,
  runId: string,
  input: { goal: string; dependsOn?: string[]; afterId?: string | null; id?: string },
  who: { id: string; name?: string },
  origin: Origin,
): string | null {
  const all = runMap(doc, runId)?.get('planSteps');
  if (!(all instanceof Y.Map)) return null;
  const steps = listPlanSteps(doc, runId);
  if (steps.length >= MAX_STEPS) return null;
  const i = input.afterId ? steps.findIndex((s) => s.id === input.afterId) : steps.length - 1;
  const before = i >= 0 ? steps[i]!.order : null;
  const after = steps[i + 1]?.order ?? null;
  const id = input.id ?? `p_${randomId(8)}`;
  const step = newStep({ id, goal: input.goal, dependsOn: input.dependsOn ?? [], scope: [] }, orderKeyBetween(before, after), { id: who.id, ...(who.name ? { name: who.name } : {}) });
  doc.transact(() => all.set(id, step), origin);
  return id;
}

/** The steps that can start now: pending, not removed, every dependency done. */
export function readySteps(steps: PlanStepView[]): PlanStepView[] {
  const byId = new Map(steps.map((s) => [s.id, s]));
  return steps.filter((s) => s.status === 'pending' && !s.removed && s.dependsOn.every((d) => byId.get(d)?.status === 'done' || !byId.has(d)));
}

/** Pending steps that can never run: a dependency failed, was skipped or removed. With the reason. */
export function blockedSteps(steps: PlanStepView[]): Array<{ step: PlanStepView; reason: string }> {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const out: Array<{ step: PlanStepView; reason: string }> = [];
  for (const s of steps) {
    if (s.status !== 'pending') continue;
    if (s.removed) {
      out.push({ step: s, reason: `removed by ${s.removed.name ?? s.removed.by}` });
      continue;
    }
    for (const d of s.dependsOn) {
      const dep = byId.get(d);
      if (dep && (dep.status === 'failed' || dep.status === 'skipped')) {
        out.push({ step: s, reason: `depends on step ${stepNumber(steps, d)} (${dep.status})` });
        break;
      }
    }
  }
  return out;
}

/** A step's number as people see it (1-based position in the plan). */
export function stepNumber(steps: PlanStepView[], id: string): number {
  return steps.findIndex((s) => s.id === id) + 1;
}

/** Dependency cycles among pending steps (people's edits can make one): the ids in one. */
export function findCycle(steps: Array<{ id: string; dependsOn: string[] }>): string[] | null {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const state = new Map<string, 1 | 2>();
  const path: string[] = [];
  const visit = (id: string): string[] | null => {
    if (state.get(id) === 2) return null;
    if (state.get(id) === 1) return path.slice(path.indexOf(id));
    state.set(id, 1);
    path.push(id);
    for (const d of byId.get(id)?.dependsOn ?? []) {
      if (!byId.has(d)) continue;
      const c = visit(d);
      if (c) return c;
    }
    path.pop();
    state.set(id, 2);
    return null;
  };
  for (const s of steps) {
    const c = visit(s.id);
    if (c) return c;
  }
  return null;
}
