/**
 * The workspace document, declared once: every root, every record, every key, its type and who
 * may write it. The server enforces it on each incoming update (check.ts, before anything is
 * stored or relayed), loads check whole documents against it, the browser checks its own
 * writes with it, and the tests generate a violating update for every rule it declares.
 * A feature that adds state adds its records and their write rules here.
 * Pure module.
 *
 * Who writes what, in short: people and the agent author cells, chat and the viewer; people
 * rename the workspace and change its settings; only the kernel writes run results and its
 * status; only the agent writes its runs' progress; only the server writes the workspace's
 * identity (schema version, creation time), the uploaded tables' registry and imported Jupyter
 * records.
 */
import { z } from 'zod';
import {
  AGENT, ANYONE, COLLABORATORS, KERNEL, NOBODY, PEOPLE, SERVER,
  dict, field, json, list, oneOf, record, richText, text, type DocSchema, type Writer,
} from './spec.ts';
import { isJson, type Json } from '../json.ts';

// ---------------------------------------------------------------------------------------------
// values

const id = z.string().min(1).max(200);
const str = (max = 10_000) => z.string().max(max);
const time = z.number().finite();
const count = z.number().int().nonnegative();
/** Any JSON value, as `z.json()` decides it, checked without zod's six-way union per value (json.ts). */
const anyJson = z.custom<Json>(isJson, { message: 'not a JSON value (strings, finite numbers, booleans, null, lists and plain objects)' });
const person = z.object({ id, name: z.string().max(200).optional() });

const cellTags = z.array(z.string().min(1).max(40).regex(/^[\w-]+$/)).max(20);
const runTrigger = z.enum(['request', 'upstream', 'run-all', 'run-stale', 'inputs']);
const requester = z.object({ id: z.string().max(200), name: z.string().max(200).optional() }).nullable();
export const runRequest = z.object({ id, by: z.string().max(200), name: z.string().max(200).optional(), at: time, seen: z.string().max(200).nullable() });
export const kernelCommand = z.object({ id, by: z.string().max(200), name: z.string().max(200).optional(), at: time });
export const pendingRun = z.object({ runId: id, requestId: z.string().nullable(), trigger: runTrigger, requestedBy: requester, queuedAt: time });
export const staleMark = z.object({ reason: str(2000), names: z.array(z.string()).optional(), at: time });
export const kernelStatus = z.object({
  state: z.enum(['starting', 'idle', 'busy', 'restarting', 'offline']),
  generation: count,
  count,
  current: z.string().nullable(),
  queue: z.array(z.string()),
  handled: z.record(z.string(), z.string()),
  updatedAt: time,
});

export const chatAuthor = z.object({ id, name: z.string().max(200), kind: z.enum(['person', 'agent', 'system']), color: z.string().max(64).optional() });
const messageStatus = z.enum(['done', 'streaming', 'stopped', 'error']);
export const proposal = z.object({ runId: id, action: z.looseObject({ type: z.string() }), title: str(2000), why: str(4000).optional(), destructive: str(500).optional() });
export const proposalOutcome = z.object({ status: z.enum(['accepted', 'dismissed', 'failed']), by: z.string().max(200), name: z.string().max(200).optional(), at: time, message: str(4000) });
export const suggestions = z.object({
  values: z.array(z.object({ label: str(60), value: str(2000) })).max(6),
  actions: z.array(z.object({ label: str(60), action: z.string().max(40), target: str(200).optional() })).max(6),
});

export const runRequestInfo = z.object({ by: person, messageId: id, text: str(8000), at: time, followUp: id.optional() });
export const runSignal = z.object({ by: z.string().max(200), name: z.string().max(200).optional(), at: time });
export const tokenUsage = z.object({ prompt: count, completion: count, total: count });
export const planStep = z.object({ text: str(2000), status: z.enum(['todo', 'doing', 'done', 'skipped']) });
export const auditEntry = z.object({ at: time, tool: str(100), change: str(2000), target: str(500) });
export const undoOutcome = z.object({ ok: z.boolean(), at: time, by: z.string().max(200), message: str(4000) });

const tableColumn = z.object({ name: z.string(), type: z.string() });
export const dataTable = z.object({
  name: z.string(),
  fileName: z.string(),
  format: z.enum(['csv', 'tsv', 'parquet', 'json']),
  columns: z.array(tableColumn),
  rows: count,
  bytes: count,
  storedBytes: count,
  uploadedBy: person,
  created: time,
  segmentSource: z.string().max(2000).optional(),
});

/** What an imported Jupyter cell came from (notebook/jupyter.ts), carried through to export. */
export const jupyterCell = z.object({
  cellType: z.enum(['code', 'markdown', 'raw']),
  kind: z.enum(['markdown', 'code', 'sql']),
  id: z.string().max(64).optional(),
  metadata: z.record(z.string(), anyJson),
  attachments: z.record(z.string(), anyJson).optional(),
  source: z.string(),
  rendered: z.string().optional(),
  sqlMagic: z.string().max(2000).optional(),
  sqlName: z.string().max(200).optional(),
  outputs: z.array(anyJson),
  executionCount: z.number().int().nullable(),
});

/** A chat author may only be the writer itself: people post as people, the agent as the agent. */
function authorMatchesWriter(value: unknown, writer: Writer): string | null {
  const kind = (value as { kind?: unknown } | null)?.kind;
  if (writer === 'person' && kind !== 'person') return `a person cannot post as ${String(kind)}`;
  if (writer === 'agent' && kind !== 'agent') return `the agent cannot post as ${String(kind)}`;
  if (writer === 'kernel') return 'the kernel does not post in the chat';
  return null;
}

// ---------------------------------------------------------------------------------------------
// records

const settings = record('workspace settings', {
  agentMode: field(json('an agent mode', z.enum(['direct', 'propose'])), PEOPLE),
  // Whether an analysis plan waits for a person's Go, and the instructions in every agent prompt.
  planApproval: field(json('a plan approval mode', z.enum(['wait', 'auto'])), PEOPLE),
  agentInstructions: field(text('agent instructions'), PEOPLE),
  neuroglancerHost: field(json('a Neuroglancer URL', z.string().max(2000).regex(/^https?:\/\/\S+$/)), PEOPLE),
});

/** Forks and hand-outs (forks/forks.ts): where a fork came from, a student's raised hand, the teacher's roster. */
export const forkOrigin = z.object({
  workspace: id,
  name: z.string().max(200),
  at: time,
  by: z.object({ id: z.string().max(300), name: z.string().max(200).optional() }),
  checkpoint: id.optional(),
  handout: z.boolean().optional(),
});
export const raisedHand = z.object({ by: z.string().max(300), name: z.string().max(200).optional(), at: time });
export const rosterEntry = z.object({
  fork: id,
  student: z.object({ id: z.string().max(300), name: z.string().max(200).optional() }),
  created: time,
  cells: z.object({ total: count, ran: count, ok: count, errors: count, running: count }),
  lastError: z.object({ cellId: id, index: count, message: str(500), at: time }).nullable(),
  hand: raisedHand.nullable(),
  active: time,
  updated: time,
});

/** Who presents (presentation.ts): people start, take over and end it; viewers, the agent and the kernel never. */
export const presentation = z.object({ by: id, name: z.string().max(200), since: time });

const meta = record('workspace meta', {
  schemaVersion: field(json('a schema version', count), SERVER, { create: SERVER }),
  // People rename the workspace in the header (the server mirrors it into its registry).
  title: field(json('a title', z.string().min(1).max(200)), PEOPLE, { create: SERVER }),
  created: field(json('a time', time), SERVER, { create: SERVER }),
  settings: field(settings, SERVER),
  // An imported notebook's metadata (kernelspec, language_info, widgets…), for export.
  jupyter: field(json('notebook metadata', z.object({ metadata: z.record(z.string(), anyJson) })), SERVER),
  // Presenter mode: any person may start (or take over) and end a presentation.
  presentation: field(json('a presentation', presentation), PEOPLE),
  // Where a fork was copied from (forks/forks.ts): written once, by the server, when it forks.
  forkedFrom: field(json('a fork origin', forkOrigin), SERVER),
});

/** One output of a run: its `type` says which keys mean what (outputs.ts); stream text grows. */
const output = record(
  'a cell output',
  {
    type: field(json('an output type', z.string().max(40)), NOBODY, { required: true }),
    text: field(oneOf('output text', json('a string', z.string()), text('streamed output')), KERNEL),
  },
  field(json('an output value', anyJson), KERNEL),
);

const exec = record('a cell run', {
  runId: field(json('a run id', id), NOBODY, { required: true }),
  state: field(json('a run state', z.enum(['running', 'done', 'error', 'cancelled'])), KERNEL),
  requestId: field(json('a request id', z.string().nullable()), KERNEL),
  trigger: field(json('a trigger', runTrigger), KERNEL),
  requestedBy: field(json('a requester', requester), KERNEL),
  count: field(json('an execution count', count), KERNEL),
  generation: field(json('a kernel generation', count), KERNEL),
  startedAt: field(json('a time', time), KERNEL),
  endedAt: field(json('a time', time.nullable()), KERNEL),
  durationMs: field(json('a duration', z.number().nullable()), KERNEL),
  sourceHash: field(json('a hash', z.string().max(64)), KERNEL),
  source: field(json('a source', z.string()), KERNEL),
  defines: field(json('names', z.array(z.string())), KERNEL),
  reason: field(json('a reason', str(2000)), KERNEL),
  outputs: field(list('outputs', output, { insert: KERNEL, remove: KERNEL }), KERNEL),
});

/** A run written whole when it ended (runs.ts, recordExec): the same keys as `exec`, and its outputs, as one plain value. */
const plainOutput = z.strictObject({ type: z.string().max(40), text: z.string().optional() }).catchall(anyJson);
export const finishedRun = z.strictObject({
  runId: id,
  state: z.enum(['done', 'error', 'cancelled']),
  requestId: z.string().nullable().optional(),
  trigger: runTrigger.optional(),
  requestedBy: requester.optional(),
  count: count.optional(),
  generation: count.optional(),
  startedAt: time.optional(),
  endedAt: time.nullable().optional(),
  durationMs: z.number().nullable().optional(),
  sourceHash: z.string().max(64).optional(),
  source: z.string().optional(),
  defines: z.array(z.string()).optional(),
  reason: str(2000).optional(),
  outputs: z.array(plainOutput),
});

const cell = record('a cell', {
  id: field(json('a cell id', id), NOBODY, { required: true }),
  // Only keys written once, at creation, are required: Yjs' undo racing a concurrent overwrite can
  // leave an overwritten key without a value (also inside a restored cell), and readers cope.
  kind: field(json('a cell kind', z.enum(['markdown', 'code', 'sql'])), COLLABORATORS),
  order: field(json('an order key', z.string().min(1).max(1000)), COLLABORATORS),
  author: field(json('an author id', z.string().max(200)), NOBODY),
  created: field(json('a time', time), NOBODY),
  name: field(json('an SQL name', z.string().max(200)), COLLABORATORS),
  source: field(oneOf('a cell source', text('code'), richText('markdown')), COLLABORATORS),
  run: field(json('a run request', runRequest), COLLABORATORS),
  ack: field(json('a request id', z.string().max(200)), KERNEL),
  pending: field(json('a queued run', pendingRun), KERNEL),
  exec: field(oneOf('a cell run', exec, json('a finished cell run', finishedRun)), KERNEL),
  stale: field(json('a staleness mark', staleMark), KERNEL),
  // Imported from Jupyter (the server's import): the original cell, and the language of code
  // Plexus cannot run (absent: JavaScript).
  jupyter: field(json('an imported Jupyter cell', jupyterCell), SERVER),
  language: field(json('a language', z.string().min(1).max(40)), SERVER),
  // Labels people give a cell; a markdown cell tagged `note` is part of the method library.
  tags: field(json('cell tags', cellTags), COLLABORATORS),
});

const message = record('a chat message', {
  id: field(json('a message id', id), NOBODY, { required: true }),
  author: field(json('an author', chatAuthor), NOBODY, { required: true, check: authorMatchesWriter }),
  text: field(text('message text'), COLLABORATORS, { required: true }),
  created: field(json('a time', time), NOBODY),
  status: field(json('a message status', messageStatus), COLLABORATORS),
  replyTo: field(json('a message id', id), NOBODY),
  runId: field(json('a run id', id), NOBODY),
  proposal: field(json('a proposal', proposal), NOBODY, { create: AGENT }),
  outcome: field(json('a proposal outcome', proposalOutcome), COLLABORATORS),
  suggestions: field(json('suggestions', suggestions), AGENT, { create: AGENT }),
});

const activity = record('a tool activity', {
  id: field(json('an activity id', id), NOBODY, { required: true }),
  tool: field(json('a tool name', str(100)), AGENT),
  args: field(json('arguments', str(2000)), AGENT),
  status: field(json('an activity status', z.enum(['running', 'done', 'error', 'proposed', 'refused'])), AGENT),
  startedAt: field(json('a time', time), AGENT),
  durationMs: field(json('a duration', z.number().nullable()), AGENT),
  summary: field(json('a summary', str(2000)), AGENT),
  step: field(json('a step id', id), AGENT),
});

const stepStatus = z.enum(['pending', 'running', 'verifying', 'done', 'failed', 'skipped']);
export const toolScopes = z.array(z.enum(['notebook', 'viewer', 'data', 'calcium', 'atlas', 'chat', 'library'])).max(7);
export const runRoute = z.object({ kind: z.enum(['question', 'analysis', 'action']), reason: str(500), scopes: toolScopes.optional() });
export const alternative = z.object({ label: str(60), request: str(2000) });
export const pickedAlternative = alternative.extend({ by: z.string().max(200), name: z.string().max(200).optional(), at: time });
export const paramValues = z.record(z.string().max(60), z.union([z.string().max(500), z.number(), z.boolean()]));
export const valueExpectations = z.record(z.string().max(100), z.object({ min: z.number().optional(), max: z.number().optional(), integer: z.boolean().optional(), why: str(300) }));
export const stepVerdict = z.object({
  passed: z.boolean(),
  confidence: z.number().min(0).max(1),
  issues: z.array(str(1000)).max(20),
  suggestions: z.array(str(1000)).max(20),
  checks: z.array(z.object({ name: str(100), passed: z.boolean(), detail: str(1000) })).max(50),
});
export const provenanceLinks = z.array(z.object({ kind: z.enum(['cell', 'table', 'view', 'job']), id: str(200), label: str(200) })).max(30);
export const stepValues = z.record(z.string().max(100), z.union([z.number(), z.string().max(500)]));
const stepIds = z.array(id).max(30);
const addedBy = person;

/** How the agent understood an analysis request: people edit the assumptions, press Go or pick an alternative. */
const brief = record('an analysis brief', {
  clarified: field(json('a clarified request', str(2000)), AGENT, { create: AGENT }),
  assumptions: field(text('assumptions'), COLLABORATORS, { create: AGENT }),
  alternatives: field(json('alternatives', z.array(alternative).max(6)), AGENT, { create: AGENT }),
  parameters: field(json('parameters', paramValues), AGENT, { create: AGENT }),
  waiting: field(json('a flag', z.boolean()), AGENT, { create: AGENT }),
  go: field(json('a go signal', runSignal), COLLABORATORS),
  pick: field(json('a picked alternative', pickedAlternative), COLLABORATORS),
});

/** One step of an analysis plan: the agent runs it; people add steps, edit pending goals and dependencies, remove pending steps. */
const planStepRecord = record('a plan step', {
  id: field(json('a step id', id), NOBODY, { required: true }),
  order: field(json('an order key', z.string().min(1).max(1000)), COLLABORATORS),
  goal: field(text('a step goal'), COLLABORATORS),
  dependsOn: field(json('step ids', stepIds), COLLABORATORS),
  scope: field(json('tool scopes', toolScopes), COLLABORATORS),
  expect: field(json('value expectations', valueExpectations), AGENT, { create: AGENT }),
  status: field(json('a step status', stepStatus), AGENT, { create: AGENT }),
  attempts: field(json('an attempt count', count), AGENT, { create: AGENT }),
  verdict: field(json('a verdict', stepVerdict), AGENT, { create: AGENT }),
  summary: field(json('a summary', str(1200)), AGENT, { create: AGENT }),
  values: field(json('result values', stepValues), AGENT, { create: AGENT }),
  provenance: field(json('provenance links', provenanceLinks), AGENT, { create: AGENT }),
  reason: field(json('a reason', str(1200)), AGENT, { create: AGENT }),
  startedAt: field(json('a time', time), AGENT, { create: AGENT }),
  endedAt: field(json('a time', time), AGENT, { create: AGENT }),
  removed: field(json('a removal', runSignal), COLLABORATORS),
  addedBy: field(json('a person', addedBy), NOBODY, { create: PEOPLE }),
});

/** An agent run: people create it (queued) and may ask it to stop or be undone; the agent writes its progress. */
const run = record('an agent run', {
  id: field(json('a run id', id), NOBODY, { required: true }),
  request: field(json('a run request', runRequestInfo), NOBODY, { required: true }),
  created: field(json('a time', time), NOBODY),
  status: field(json('a run status', z.enum(['queued', 'running', 'done', 'stopped', 'error'])), AGENT),
  stop: field(json('a stop signal', runSignal), COLLABORATORS),
  undo: field(json('an undo signal', runSignal), COLLABORATORS),
  replyId: field(json('a message id', id), AGENT, { create: AGENT }),
  model: field(json('a model name', str(200)), AGENT, { create: AGENT }),
  startedAt: field(json('a time', time), AGENT, { create: AGENT }),
  endedAt: field(json('a time', time), AGENT, { create: AGENT }),
  reason: field(json('a reason', str(4000)), AGENT, { create: AGENT }),
  steps: field(json('a step count', count), AGENT, { create: AGENT }),
  tokens: field(json('token usage', tokenUsage), AGENT, { create: AGENT }),
  plan: field(json('a plan', z.array(planStep).max(50)), AGENT, { create: AGENT }),
  activity: field(list('tool activity', activity, { insert: AGENT, remove: AGENT }), AGENT, { create: AGENT }),
  audit: field(list('audit entries', json('an audit entry', auditEntry), { insert: AGENT, remove: AGENT }), AGENT, { create: AGENT }),
  undone: field(json('an undo outcome', undoOutcome), AGENT, { create: AGENT }),
  route: field(json('a route', runRoute), AGENT, { create: AGENT }),
  brief: field(brief, AGENT, { create: AGENT }),
  planSteps: field(dict('plan steps', id, field(planStepRecord, COLLABORATORS, { remove: AGENT })), AGENT, { create: AGENT }),
});

const kernelRoot = record('kernel commands and status', {
  runAll: field(json('a kernel command', kernelCommand), COLLABORATORS),
  runStale: field(json('a kernel command', kernelCommand), COLLABORATORS),
  interrupt: field(json('a kernel command', kernelCommand), COLLABORATORS),
  restart: field(json('a kernel command', kernelCommand), COLLABORATORS),
  status: field(json('a kernel status', kernelStatus), KERNEL),
});

const annotationEntry = z.object({ o: z.string(), a: z.record(z.string(), anyJson) });
const layer = record('a viewer layer', {
  order: field(json('an order key', z.string().max(1000)), COLLABORATORS),
  props: field(dict('layer properties', z.string().max(200), field(json('a layer property', anyJson), COLLABORATORS)), COLLABORATORS),
  controls: field(dict('shader controls', z.string().max(200), field(json('a shader control value', anyJson), COLLABORATORS)), COLLABORATORS),
  annotations: field(dict('annotations', z.string().max(200), field(json('an annotation', annotationEntry), COLLABORATORS)), COLLABORATORS),
  hasControls: field(json('a flag', z.boolean()), COLLABORATORS),
  hasAnnotations: field(json('a flag', z.boolean()), COLLABORATORS),
});

const name = z.string().min(1).max(200);

export const jobRequester = z.object({ id, name: z.string().max(200).optional(), via: z.enum(['person', 'agent', 'cell']) });
export const jobInput = z.object({ dataset: z.string().max(200).optional(), layer: z.string().max(200).optional(), fileName: z.string().max(500).optional(), paramsKey: z.string().max(4000).optional() });
export const jobProgress = z.object({ stage: z.string().max(100), done: count, total: count, eta: z.number().nonnegative().nullable(), at: time });
export const roiEdit = z.union([
  z.object({ action: z.literal('delete'), by: z.string().max(200), name: z.string().max(200).optional(), at: time }),
  z.object({ action: z.literal('merge'), into: z.number().int().positive(), by: z.string().max(200), name: z.string().max(200).optional(), at: time }),
  z.object({ action: z.literal('classify'), cell: z.boolean(), by: z.string().max(200), name: z.string().max(200).optional(), at: time }),
]);
const jsonObject = z.record(z.string(), anyJson);

export const libraryDoc = z.object({
  id,
  name: z.string().min(1).max(200),
  format: z.enum(['md', 'txt', 'pdf']),
  chars: count,
  passages: count,
  bytes: count,
  uploadedBy: person.nullable(),
  builtin: z.boolean(),
  created: time,
});

/** A long analysis the server runs: the server writes it; people and the agent may stop it and edit its ROIs. */
const job = record('an analysis job', {
  id: field(json('a job id', id), NOBODY, { required: true }),
  kind: field(json('a job kind', z.enum(['calcium', 'tiff-import'])), NOBODY, { required: true }),
  title: field(json('a job title', str(500)), NOBODY),
  input: field(json('a job input', jobInput), NOBODY),
  params: field(json('job parameters', anyJson), SERVER),
  requestedBy: field(json('a job requester', jobRequester), NOBODY),
  created: field(json('a time', time), NOBODY),
  status: field(json('a job status', z.enum(['queued', 'running', 'done', 'error', 'stopped'])), SERVER),
  progress: field(json('job progress', jobProgress), SERVER),
  error: field(json('a job error', str(4000)), SERVER),
  result: field(json('a job result', jsonObject), SERVER),
  stop: field(json('a stop signal', runSignal), COLLABORATORS),
  roiEdits: field(dict('ROI edits', z.string().min(1).max(20), field(json('an ROI edit', roiEdit), COLLABORATORS)), SERVER),
});

const finite = z.number().finite();
const rowIds = z.array(z.number().int().nonnegative()).max(10_000);
export const atlasCoords = z.object({
  status: z.enum(['queued', 'running', 'done', 'error']),
  table: name.optional(),
  points: count.optional(),
  progress: z.object({ stage: str(100), done: count, total: count }).optional(),
  error: str(4000).optional(),
  labels: z.array(z.object({ cluster: z.number().int(), x: finite, y: finite, text: str(200), size: count })).max(200).optional(),
  how: str(500).optional(),
  at: time,
});
export const atlasSelection = z.union([
  z.object({ kind: z.literal('rect'), x0: finite, y0: finite, x1: finite, y1: finite, by: z.string().max(200), name: z.string().max(200).optional(), at: time }),
  z.object({ kind: z.literal('lasso'), points: z.array(z.tuple([finite, finite])).min(3).max(500), by: z.string().max(200), name: z.string().max(200).optional(), at: time }),
]);
export const atlasHighlight = z.object({ rows: rowIds, label: str(200), by: z.string().max(200), name: z.string().max(200).optional(), at: time });
/** Where a map's selected and highlighted rows show in the viewer (atlas/viewer-record.ts). */
export const atlasViewer = z.object({ layer: name.nullable(), of: name.nullable(), shown: count, hidden: count, at: time });
export const atlasCategory = z.object({ rows: rowIds, note: str(2000), summary: str(2000).optional(), by: z.string().max(200), name: z.string().max(200).optional(), at: time });

/** A map of a table's rows: people (and the agent) create it, brush it and save categories; the server writes its coordinates. */
const atlasMap = record('an atlas map', {
  id: field(json('a map id', id), NOBODY, { required: true }),
  table: field(json('a table name', name), NOBODY, { required: true }),
  method: field(json('a projection method', z.enum(['columns', 'pca', 'umap', 'tfidf', 'embeddings'])), NOBODY),
  columns: field(json('column names', z.array(z.string().max(200)).max(200)), NOBODY),
  created: field(json('a time', time), NOBODY),
  createdBy: field(json('a user id', z.string().max(200)), NOBODY),
  title: field(json('a title', str(200)), COLLABORATORS),
  colorBy: field(json('a column name', z.string().max(200)), COLLABORATORS),
  coords: field(json('map coordinates', atlasCoords), SERVER),
  selection: field(json('a map selection', atlasSelection), COLLABORATORS),
  highlight: field(json('highlighted rows', atlasHighlight), COLLABORATORS),
  categories: field(dict('saved categories', z.string().min(1).max(100), field(json('a category', atlasCategory), COLLABORATORS)), NOBODY),
  // The server writes it; people's transactions clear it with the selection and prune it with an ROI deletion.
  viewer: field(json('a viewer highlight', atlasViewer), COLLABORATORS),
});

/** A stored checkpoint's record (history/checkpoints.ts): the server writes and forgets them. */
export const checkpointRecord = z.object({
  id,
  label: str(200),
  kind: z.enum(['named', 'agent-run', 'activity', 'import', 'restore', 'fork']),
  by: z.object({ id, name: z.string().max(200).optional(), kind: z.enum(['person', 'agent', 'kernel', 'server']) }),
  at: time,
  bytes: count,
  cells: count,
  run: id.optional(),
});

export const WORKSPACE_SCHEMA: DocSchema = {
  roots: {
    meta,
    cells: dict('cells', id, field(cell, COLLABORATORS)),
    chat: list('chat messages', message, { insert: COLLABORATORS, remove: COLLABORATORS }),
    runs: dict('agent runs', id, field(run, COLLABORATORS)),
    data: dict('uploaded tables', name, field(json('a table description', dataTable), SERVER, { remove: PEOPLE })),
    kernel: kernelRoot,
    // The viewer keeps every top-level Neuroglancer key it is given (unknown ones too): open record.
    viewer: record('the viewer state', {}, field(json('a viewer state value', anyJson), COLLABORATORS)),
    viewerLayers: dict('viewer layers', name, field(layer, COLLABORATORS)),
    viewerViews: dict('named views', id, field(json('a named view', z.record(z.string(), anyJson)), COLLABORATORS)),
    jobs: dict('analysis jobs', id, field(job, SERVER, { remove: PEOPLE })),
    // The method library: documents the server indexed (uploads and the notes shipped with Plexus).
    library: dict('method library', id, field(json('a library document', libraryDoc), SERVER, { remove: PEOPLE })),
    atlas: dict('atlas maps', id, field(atlasMap, COLLABORATORS)),
    // Checkpoints: the server stores the states and records them here (people ask for one over HTTP).
    checkpoints: dict('checkpoints', id, field(json('a checkpoint', checkpointRecord), SERVER)),
    // A fork's raised hand (its people) and, in a hand-out's source, the roster of its forks (the server).
    classroom: record('the classroom', {
      hand: field(json('a raised hand', raisedHand), PEOPLE),
      roster: field(dict('the roster of forks', id, field(json('a roster entry', rosterEntry), SERVER)), SERVER),
    }),
  },
};

/** Writers every rule lets through (for messages). */
export const ALL_WRITERS = ANYONE;
