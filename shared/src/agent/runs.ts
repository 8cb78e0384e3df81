/**
 * Agent runs: one entry per request to the agent in the `runs` root, so everyone sees what the
 * agent is doing, and anyone can stop or undo it — all through the document, no side channel.
 * Pure module.
 *
 * | key | written by | value |
 * |---|---|---|
 * | `id`, `request`, `created` | requester | `RunRequestInfo` (who asked, which message, the text) |
 * | `status`, `reason` | agent | `RunStatus`; `reason` says why a run stopped or failed |
 * | `replyId` | agent | the chat message the answer streams into |
 * | `startedAt`, `endedAt`, `steps`, `model` | agent | progress |
 * | `tokens` | agent | `TokenUsage` summed over the run's model calls |
 * | `plan` | agent | `PlanStep[]`: the agent's plan and how far it got |
 * | `activity` | agent | Y.Array<Y.Map>: one `ToolActivity` per tool call, updated as it runs |
 * | `audit` | agent | Y.Array of `AuditEntry`: every change the run made to the document |
 * | `stop` | anyone | `RunSignal`: stop this run now |
 * | `undo` | anyone | `RunSignal`: revert the changes of this run |
 * | `undone` | agent | `UndoOutcome` once the undo was carried out (or refused) |
 *
 * Status is written by the agent only; requesters write `stop`/`undo` requests that the agent
 * acts on, so two replicas never race on one status key.
 */
import * as Y from 'yjs';
import { randomId } from '../ids.ts';
import type { Origin } from '../origin.ts';
import { roots } from '../schema.ts';

export const RUN_STATUSES = ['queued', 'running', 'done', 'stopped', 'error'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/** A run that has ended and will change nothing more (undo aside). */
export const isFinished = (s: RunStatus): boolean => s === 'done' || s === 'stopped' || s === 'error';

export interface RunRequester {
  id: string;
  name?: string;
}

export interface RunRequestInfo {
  by: RunRequester;
  /** The chat message that asked. */
  messageId: string;
  /** What was asked (the message text, cut to MAX_REQUEST_CHARS). */
  text: string;
  at: number;
  /** The run this one follows up (same answer thread), if any. */
  followUp?: string;
}

export interface TokenUsage {
  prompt: number;
  completion: number;
  total: number;
}

export type PlanStepStatus = 'todo' | 'doing' | 'done' | 'skipped';
export interface PlanStep {
  text: string;
  status: PlanStepStatus;
}

export type ActivityStatus = 'running' | 'done' | 'error' | 'proposed' | 'refused';
export interface ToolActivity {
  id: string;
  tool: string;
  /** Arguments in short (one line, cut). */
  args: string;
  status: ActivityStatus;
  startedAt: number;
  durationMs: number | null;
  /** Result in short (one line, cut), or the error. */
  summary: string;
  /** The plan step it belongs to (analysis runs). */
  step?: string;
}

export interface AuditEntry {
  at: number;
  tool: string;
  /** What changed, e.g. `cell c_123 source (2 hunks, +40 −12 chars)`. */
  change: string;
  /** The thing changed: `cell:<id>`, `layer:<name>`, `view:<id>`, `viewer:camera`, ... */
  target: string;
}

export interface RunSignal {
  by: string;
  name?: string;
  at: number;
}

export interface UndoOutcome {
  ok: boolean;
  at: number;
  by: string;
  message: string;
}

export interface RunView {
  id: string;
  status: RunStatus;
  reason: string | null;
  request: RunRequestInfo;
  created: number;
  replyId: string | null;
  startedAt: number | null;
  endedAt: number | null;
  steps: number;
  model: string | null;
  tokens: TokenUsage;
  plan: PlanStep[];
  activity: ToolActivity[];
  audit: AuditEntry[];
  stop: RunSignal | null;
  undo: RunSignal | null;
  undone: UndoOutcome | null;
  map: Y.Map<unknown>;
}

/** Longest request text kept in a run. */
export const MAX_REQUEST_CHARS = 8000;
/** Activity summaries and argument lines are cut to this. */
export const MAX_ACTIVITY_CHARS = 300;

const ZERO_TOKENS: TokenUsage = { prompt: 0, completion: 0, total: 0 };

/** Longest tool-call arguments kept in a run (the schema's cap): shown whole when a card is opened. */
export const MAX_ACTIVITY_ARGS_CHARS = 2000;

/** One line, at most `max` characters (an ellipsis marks the cut). */
export function oneLine(s: string, max = MAX_ACTIVITY_CHARS): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : flat.slice(0, Math.max(0, max - 1)) + '…';
}

const isStatus = (s: unknown): s is RunStatus => (RUN_STATUSES as readonly unknown[]).includes(s);
const obj = <T>(v: unknown): T | null => (v && typeof v === 'object' ? (v as T) : null);

function readActivity(m: unknown): ToolActivity | null {
  if (!(m instanceof Y.Map)) return null;
  const id = m.get('id');
  if (typeof id !== 'string') return null;
  return {
    id,
    tool: String(m.get('tool') ?? ''),
    args: String(m.get('args') ?? ''),
    status: (m.get('status') as ActivityStatus) ?? 'running',
    startedAt: Number(m.get('startedAt') ?? 0),
    durationMs: typeof m.get('durationMs') === 'number' ? (m.get('durationMs') as number) : null,
    summary: String(m.get('summary') ?? ''),
    ...(typeof m.get('step') === 'string' ? { step: m.get('step') as string } : {}),
  };
}

/** Reads a run map; null when it is not one. */
export function readRun(map: Y.Map<unknown>): RunView | null {
  const id = map.get('id');
  const request = obj<RunRequestInfo>(map.get('request'));
  if (typeof id !== 'string' || !request) return null;
  const status = map.get('status');
  const activity = map.get('activity');
  const audit = map.get('audit');
  const num = (k: string) => (typeof map.get(k) === 'number' ? (map.get(k) as number) : null);
  return {
    id,
    status: isStatus(status) ? status : 'queued',
    reason: typeof map.get('reason') === 'string' ? (map.get('reason') as string) : null,
    request,
    created: Number(map.get('created') ?? 0),
    replyId: typeof map.get('replyId') === 'string' ? (map.get('replyId') as string) : null,
    startedAt: num('startedAt'),
    endedAt: num('endedAt'),
    steps: num('steps') ?? 0,
    model: typeof map.get('model') === 'string' ? (map.get('model') as string) : null,
    tokens: { ...ZERO_TOKENS, ...obj<TokenUsage>(map.get('tokens')) },
    plan: Array.isArray(map.get('plan')) ? (map.get('plan') as PlanStep[]) : [],
    activity: activity instanceof Y.Array ? activity.toArray().map(readActivity).filter((a): a is ToolActivity => a !== null) : [],
    audit: audit instanceof Y.Array ? (audit.toArray() as AuditEntry[]) : [],
    stop: obj<RunSignal>(map.get('stop')),
    undo: obj<RunSignal>(map.get('undo')),
    undone: obj<UndoOutcome>(map.get('undone')),
    map,
  };
}

/** One run. */
export function getRun(doc: Y.Doc, id: string): RunView | null {
  const m = roots(doc).runs.get(id);
  return m instanceof Y.Map ? readRun(m) : null;
}

/** Every run, oldest first. */
export function listRuns(doc: Y.Doc): RunView[] {
  const out: RunView[] = [];
  roots(doc).runs.forEach((m) => {
    const r = m instanceof Y.Map ? readRun(m) : null;
    if (r) out.push(r);
  });
  return out.sort((a, b) => a.created - b.created || (a.id < b.id ? -1 : 1));
}

/** The run answering a chat message (its request or its reply). */
export function runForMessage(doc: Y.Doc, messageId: string): RunView | null {
  for (const r of listRuns(doc)) if (r.request.messageId === messageId || r.replyId === messageId) return r;
  return null;
}

/** Creates a queued run for a chat message that asks the agent. Returns the run id. */
export function requestAgentRun(
  doc: Y.Doc,
  input: { by: RunRequester; messageId: string; text: string; followUp?: string; id?: string },
  origin: Origin,
): string {
  const id = input.id ?? `r_${randomId()}`;
  const request: RunRequestInfo = {
    by: { ...input.by },
    messageId: input.messageId,
    text: input.text.slice(0, MAX_REQUEST_CHARS),
    at: Date.now(),
    ...(input.followUp ? { followUp: input.followUp } : {}),
  };
  doc.transact(() => {
    const m = new Y.Map<unknown>();
    m.set('id', id);
    m.set('request', request);
    m.set('created', Date.now());
    m.set('status', 'queued');
    roots(doc).runs.set(id, m);
  }, origin);
  return id;
}

function runMap(doc: Y.Doc, id: string): Y.Map<unknown> | null {
  const m = roots(doc).runs.get(id);
  return m instanceof Y.Map ? m : null;
}

/** Asks the agent to stop a run (anyone). No-op on finished runs. */
export function requestRunStop(doc: Y.Doc, id: string, who: RunRequester, origin: Origin): boolean {
  const m = runMap(doc, id);
  const r = m && readRun(m);
  if (!m || !r || isFinished(r.status)) return false;
  doc.transact(() => m.set('stop', { by: who.id, ...(who.name ? { name: who.name } : {}), at: Date.now() } satisfies RunSignal), origin);
  return true;
}

/** Asks the agent to revert the changes of a finished run (anyone). */
export function requestRunUndo(doc: Y.Doc, id: string, who: RunRequester, origin: Origin): boolean {
  const m = runMap(doc, id);
  const r = m && readRun(m);
  if (!m || !r || !isFinished(r.status) || r.undone || r.audit.length === 0) return false;
  doc.transact(() => m.set('undo', { by: who.id, ...(who.name ? { name: who.name } : {}), at: Date.now() } satisfies RunSignal), origin);
  return true;
}

// ---------------------------------------------------------------------------------------------
// agent side

/** Agent: the run starts; its answer streams into `replyId`. */
export function startRun(doc: Y.Doc, id: string, init: { replyId: string; model: string }, origin: Origin): void {
  const m = runMap(doc, id);
  if (!m) return;
  doc.transact(() => {
    m.set('status', 'running');
    m.set('replyId', init.replyId);
    m.set('model', init.model);
    m.set('startedAt', Date.now());
    m.set('steps', 0);
    m.set('tokens', { ...ZERO_TOKENS });
    m.set('activity', new Y.Array<Y.Map<unknown>>());
    m.set('audit', new Y.Array<AuditEntry>());
  }, origin);
}

/** Agent: the run ends (done, stopped or error) with an optional visible reason. */
export function finishRun(doc: Y.Doc, id: string, status: Exclude<RunStatus, 'queued' | 'running'>, reason: string | null, origin: Origin): void {
  const m = runMap(doc, id);
  if (!m) return;
  doc.transact(() => {
    m.set('status', status);
    if (reason) m.set('reason', reason);
    m.set('endedAt', Date.now());
  }, origin);
}

/**
 * Agent: one more model step, and the tokens it used. `countStep: false` adds only the tokens (a
 * routing call: it is not one of the run's steps, but its tokens count against the budget).
 */
export function recordStep(doc: Y.Doc, id: string, usage: TokenUsage | null, origin: Origin, opts: { countStep?: boolean } = {}): void {
  const m = runMap(doc, id);
  if (!m) return;
  const r = readRun(m);
  if (!r) return;
  doc.transact(() => {
    if (opts.countStep !== false) m.set('steps', r.steps + 1);
    if (usage) {
      m.set('tokens', {
        prompt: r.tokens.prompt + usage.prompt,
        completion: r.tokens.completion + usage.completion,
        total: r.tokens.total + usage.total,
      } satisfies TokenUsage);
    }
  }, origin);
}

/** Agent: replaces the plan (a short list; each step's status shows progress). */
export function setRunPlan(doc: Y.Doc, id: string, plan: PlanStep[], origin: Origin): void {
  const m = runMap(doc, id);
  if (!m) return;
  const clean = plan.slice(0, 20).map((s) => ({ text: oneLine(s.text, 200), status: s.status }));
  doc.transact(() => m.set('plan', clean), origin);
}

/** Agent: a tool call begins. Returns the activity id. */
export function startActivity(doc: Y.Doc, id: string, tool: string, args: string, origin: Origin, step?: string): string | null {
  const m = runMap(doc, id);
  const arr = m?.get('activity');
  if (!(arr instanceof Y.Array)) return null;
  const aid = `a_${randomId()}`;
  doc.transact(() => {
    const a = new Y.Map<unknown>();
    a.set('id', aid);
    a.set('tool', tool);
    const raw = args.trim();
    a.set('args', raw.length <= MAX_ACTIVITY_ARGS_CHARS ? raw : raw.slice(0, MAX_ACTIVITY_ARGS_CHARS - 1) + '…');
    a.set('status', 'running');
    a.set('startedAt', Date.now());
    a.set('summary', '');
    if (step) a.set('step', step);
    arr.push([a]);
  }, origin);
  return aid;
}

/** Agent: a tool call ended. */
/** Shows what a running tool is doing (e.g. waiting for a person's Accept) in its summary. */
export function noteActivity(doc: Y.Doc, id: string, activityId: string, summary: string, origin: Origin): void {
  const arr = runMap(doc, id)?.get('activity');
  if (!(arr instanceof Y.Array)) return;
  for (const a of arr.toArray()) {
    if (a instanceof Y.Map && a.get('id') === activityId && a.get('status') === 'running') {
      doc.transact(() => a.set('summary', oneLine(summary)), origin);
      return;
    }
  }
}

export function finishActivity(doc: Y.Doc, id: string, activityId: string, status: Exclude<ActivityStatus, 'running'>, summary: string, origin: Origin): void {
  const arr = runMap(doc, id)?.get('activity');
  if (!(arr instanceof Y.Array)) return;
  for (const a of arr.toArray()) {
    if (a instanceof Y.Map && a.get('id') === activityId) {
      doc.transact(() => {
        a.set('status', status);
        a.set('durationMs', Date.now() - Number(a.get('startedAt') ?? Date.now()));
        a.set('summary', oneLine(summary));
      }, origin);
      return;
    }
  }
}

/** Agent: records a change the run made (in the same transaction as the change when possible). */
export function addAudit(doc: Y.Doc, id: string, entry: Omit<AuditEntry, 'at'>, origin: Origin): void {
  const arr = runMap(doc, id)?.get('audit');
  if (!(arr instanceof Y.Array)) return;
  doc.transact(() => arr.push([{ at: Date.now(), tool: entry.tool, change: oneLine(entry.change, 500), target: entry.target }]), origin);
}

/** Agent: the outcome of an undo request. */
export function setUndoOutcome(doc: Y.Doc, id: string, outcome: UndoOutcome, origin: Origin): void {
  const m = runMap(doc, id);
  if (!m) return;
  doc.transact(() => m.set('undone', outcome), origin);
}
