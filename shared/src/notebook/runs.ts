/**
 * The run protocol between collaborators and the kernel, all through the document (no side
 * channel, no lock). Pure module.
 *
 * People (and the agent) write **requests**; the kernel writes **state**:
 *
 * | where | key | written by | value |
 * |---|---|---|---|
 * | cell map | `run` | anyone | `RunRequest` — "run this cell (and its dependents)" |
 * | cell map | `ack` | kernel | id of the last request the kernel took into account |
 * | cell map | `pending` | kernel | `PendingRun` while the cell waits in the kernel's queue, else absent |
 * | cell map | `exec` | kernel | the latest run: a Y.Map of `ExecInfo` keys + `outputs` (Y.Array<Y.Map>) while it runs, one plain `FinishedRun` value once it ended |
 * | cell map | `stale` | kernel | `StaleMark` when an input of the last run vanished or the kernel lost its state |
 * | `kernel` root | `runAll` `runStale` `interrupt` `restart` | anyone | `KernelCommand` |
 * | `kernel` root | `status` | kernel | `KernelStatus` |
 *
 * A request is new when its id differs from `ack` (cells) or from `status.handled[key]` (commands),
 * so a kernel that restarts never replays old requests. Each request carries `seen`: the run id the
 * requester saw on the cell when pressing Run. Two people pressing Run at once both saw the same run,
 * so whichever request the kernel sees second is **coalesced** into the run the first one started
 * (one run, never two in flight). A request made after seeing that run start is a new run, queued
 * after it. Each run replaces `exec` with a new Y.Map: writes of a superseded or cancelled run go to
 * the replaced map and change nothing anyone sees, and writes to a deleted cell cannot resurrect it.
 * A run that started and ended before anything of it was written (a fast cell, most of a reactive
 * chain) is written once, as a plain value: one item in the document instead of a map, a dozen
 * keys, an output list and a map per output — a fraction of the work for every replica that
 * validates, stores, sends, applies and loads it. A run that was written while it ran (it took a
 * while, streamed, showed outputs) is settled the same way when it ends: its map is replaced by the
 * plain value (finishExec), so a notebook at rest holds one item per run. Readers see the same
 * `ExecInfo` and outputs either way.
 */
import * as Y from 'yjs';
import { randomId } from '../ids.ts';
import type { Origin } from '../origin.ts';
import { roots } from '../schema.ts';
import { compareOrder } from '../order.ts';
import { cellSource, getCell, listCells, type CellView } from '../cells.ts';
import { jsonSize, mapToOutput, outputToMap, type CellOutput } from './outputs.ts';
import { isRunnableCell } from './jupyter.ts';

/** Who asked. */
export interface Requester {
  id: string;
  name?: string;
}

/** A request to run one cell, written by a collaborator into the cell's `run` key. */
export interface RunRequest {
  id: string;
  by: string;
  name?: string;
  /** Wall-clock ms of the requester (for display only; ordering never depends on clocks). */
  at: number;
  /** `exec.runId` of the cell when the requester pressed Run (null: no run yet). */
  seen: string | null;
}

/** A notebook-level command, written into the `kernel` root. */
export interface KernelCommand {
  id: string;
  by: string;
  name?: string;
  at: number;
}
export const KERNEL_COMMANDS = ['runAll', 'runStale', 'interrupt', 'restart'] as const;
export type KernelCommandKind = (typeof KERNEL_COMMANDS)[number];

/** Why a run happens. */
export type RunTrigger = 'request' | 'upstream' | 'run-all' | 'run-stale' | 'inputs';

/** A cell waiting in the kernel's queue. */
export interface PendingRun {
  runId: string;
  requestId: string | null;
  trigger: RunTrigger;
  requestedBy: Requester | null;
  queuedAt: number;
}

export type ExecState = 'running' | 'done' | 'error' | 'cancelled';

/** The latest run of a cell (the `exec` map's keys; `outputs` is read separately). */
export interface ExecInfo {
  runId: string;
  state: ExecState;
  requestId: string | null;
  trigger: RunTrigger;
  requestedBy: Requester | null;
  /** Execution count (kernel-wide, like Jupyter's [n]). */
  count: number;
  /** Kernel generation the run happened in (restarts increase it). */
  generation: number;
  startedAt: number;
  endedAt: number | null;
  durationMs: number | null;
  /** `sourceHash` of the source the run executed, and that source (cut to 64 KiB). */
  sourceHash: string;
  source: string;
  /** Names the run defined (its outputs to other cells). */
  defines: string[];
  /** Cancelled runs: why (superseded, upstream failed, interrupted, ...). */
  reason?: string;
}

/** A run written whole when it ended (recordExec): its `ExecInfo` and its outputs, as plain values. */
export type FinishedRun = ExecInfo & { outputs: CellOutput[] };

/** A kernel-set staleness mark: the last run's inputs are gone or the kernel lost its values. */
export interface StaleMark {
  reason: string;
  /** Names that are no longer defined, when that is the reason. */
  names?: string[];
  at: number;
}

export type KernelState = 'starting' | 'idle' | 'busy' | 'restarting' | 'offline';

/** What the kernel tells everyone about itself. */
export interface KernelStatus {
  state: KernelState;
  generation: number;
  /** Executions so far (the next run gets count + 1). */
  count: number;
  /** Cell running now, and the cells waiting, in order. */
  current: string | null;
  queue: string[];
  /** Last command id handled, per command key. */
  handled: Partial<Record<KernelCommandKind, string>>;
  limits: { timeoutMs: number; memoryMb: number };
  /** Sandbox layers in force (e.g. 'netns', 'uid', 'rlimits', 'permission-model'). */
  sandbox: string[];
  updatedAt: number;
  message?: string;
}

/** The status of one cell as a UI shows it. */
export type CellRunState = 'idle' | 'queued' | 'running' | 'done' | 'error' | 'cancelled';

/** Everything a UI needs to render a cell's run state. */
export interface CellRunView {
  state: CellRunState;
  pending: PendingRun | null;
  exec: ExecInfo | null;
  outputs: CellOutput[];
  /** The output no longer matches: the source changed since the run, or the kernel marked it stale. */
  stale: boolean;
  staleReason: string | null;
  /** A run request the kernel has not taken into account yet (e.g. the kernel is offline). */
  requested: boolean;
}

/**
 * Hash of a cell's source (cyrb53, base 36): identical in the kernel and in every client, so any
 * replica can tell whether an output was produced from the source it shows.
 */
export function sourceHash(s: string): string {
  let h1 = 0xdeadbeef ^ s.length;
  let h2 = 0x41c6ce57 ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

/** What a run of `cell` executes: its source, and for SQL cells its name (renaming re-runs it). */
export function runSource(cell: CellView): string {
  return cell.kind === 'sql' ? `${cell.name ?? ''}\n${cellSource(cell)}` : cellSource(cell);
}

const kernelRoot = (doc: Y.Doc) => roots(doc).kernel;

const resolveCell = (doc: Y.Doc, c: CellView | string): CellView | undefined => (typeof c === 'string' ? getCell(doc, c) : c);

// ---------------------------------------------------------------------------------------------
// requests (anyone)

/**
 * Asks the kernel to run a cell and its dependents. Returns the request id (null if the cell does
 * not exist, is markdown or is code Plexus cannot run). Pressing Run on a cell that is already running with what you saw is
 * coalesced into that run (see the module header).
 */
export function requestRun(doc: Y.Doc, cellId: string, who: Requester, origin: Origin): string | null {
  const cell = getCell(doc, cellId);
  // Markdown, and code in a language Plexus does not run (imported Python, R, …).
  if (!cell || !isRunnableCell(cell)) return null;
  const id = `q_${randomId()}`;
  const req: RunRequest = { id, by: who.id, name: who.name, at: Date.now(), seen: readExec(cell)?.runId ?? null };
  if (req.name === undefined) delete req.name;
  doc.transact(() => cell.map.set('run', req), origin);
  return id;
}

function command(doc: Y.Doc, key: KernelCommandKind, who: Requester, origin: Origin): string {
  const id = `k_${randomId()}`;
  const cmd: KernelCommand = { id, by: who.id, at: Date.now(), ...(who.name ? { name: who.name } : {}) };
  doc.transact(() => kernelRoot(doc).set(key, cmd), origin);
  return id;
}

/** Asks the kernel to run every code and SQL cell in dependency order. */
export const requestRunAll = (doc: Y.Doc, who: Requester, origin: Origin): string => command(doc, 'runAll', who, origin);
/** Asks the kernel to run the cells whose output is stale or missing (and their dependents). */
export const requestRunStale = (doc: Y.Doc, who: Requester, origin: Origin): string => command(doc, 'runStale', who, origin);
/** Asks the kernel to stop the running cell and drop the queue (values of finished cells stay). */
export const requestInterrupt = (doc: Y.Doc, who: Requester, origin: Origin): string => command(doc, 'interrupt', who, origin);
/** Asks the kernel to restart: a fresh process, every value forgotten, every output marked stale. */
export const requestRestart = (doc: Y.Doc, who: Requester, origin: Origin): string => command(doc, 'restart', who, origin);

// ---------------------------------------------------------------------------------------------
// reading (anyone)

/** The cell's current run request, if any. */
export function readRunRequest(cell: CellView): RunRequest | null {
  const r = cell.map.get('run') as RunRequest | undefined;
  return r && typeof r === 'object' && typeof r.id === 'string' ? r : null;
}

/** A notebook-level command, if one was ever written. */
export function readCommand(doc: Y.Doc, key: KernelCommandKind): KernelCommand | null {
  const c = kernelRoot(doc).get(key) as KernelCommand | undefined;
  return c && typeof c === 'object' && typeof c.id === 'string' ? c : null;
}

/** The kernel's status (state 'offline' when no kernel ever wrote one). */
export function readKernelStatus(doc: Y.Doc): KernelStatus {
  const s = kernelRoot(doc).get('status') as KernelStatus | undefined;
  if (s && typeof s === 'object' && typeof s.state === 'string') return s;
  return { state: 'offline', generation: 0, count: 0, current: null, queue: [], handled: {}, limits: { timeoutMs: 0, memoryMb: 0 }, sandbox: [], updatedAt: 0 };
}

/** The cell's `exec` value: a run's map, or a run written whole (a plain object), or null. */
function execValue(cell: CellView): Y.Map<unknown> | Record<string, unknown> | null {
  const m = cell.map.get('exec');
  if (m instanceof Y.Map) return m;
  return m && typeof m === 'object' && !Array.isArray(m) && !(m instanceof Y.AbstractType) ? (m as Record<string, unknown>) : null;
}

/** The latest run of a cell, without its outputs. */
export function readExec(cell: CellView): ExecInfo | null {
  const m = execValue(cell);
  if (!m) return null;
  const o: Record<string, unknown> = {};
  if (m instanceof Y.Map) m.forEach((v, k) => k !== 'outputs' && (o[k] = v));
  else for (const k in m) if (k !== 'outputs') o[k] = m[k];
  if (typeof o.runId !== 'string') return null;
  // A run restored by an undo racing the kernel can lack its latest state: it ended, somehow.
  if (typeof o.state !== 'string') o.state = 'cancelled';
  return o as unknown as ExecInfo;
}

/** The outputs of the latest run. */
export function readOutputs(cell: CellView): CellOutput[] {
  const m = execValue(cell);
  if (!m) return [];
  if (!(m instanceof Y.Map)) {
    const outs = m.outputs;
    // Copies: the objects are the document's own (a reader changing one must not change it).
    return Array.isArray(outs) ? outs.filter((o): o is CellOutput => !!o && typeof o === 'object' && typeof (o as { type?: unknown }).type === 'string').map((o) => ({ ...o })) : [];
  }
  const arr = m.get('outputs');
  if (!(arr instanceof Y.Array)) return [];
  return arr.toArray().map(mapToOutput).filter((o): o is CellOutput => o !== null);
}

/** The queued run of a cell, if it waits in the kernel's queue. */
export function readPending(cell: CellView): PendingRun | null {
  const p = cell.map.get('pending') as PendingRun | undefined;
  return p && typeof p === 'object' && typeof p.runId === 'string' ? p : null;
}

/** The kernel's staleness mark on a cell, if any. */
export function readStale(cell: CellView): StaleMark | null {
  const s = cell.map.get('stale') as StaleMark | undefined;
  return s && typeof s === 'object' && typeof s.reason === 'string' ? s : null;
}

/** Whether the latest output of the cell no longer matches, and why (null when it matches). */
export function staleReason(cell: CellView): string | null {
  const exec = readExec(cell);
  if (!exec || exec.state === 'running') return null;
  if (exec.sourceHash !== sourceHash(runSource(cell))) return 'the source changed since this output was produced';
  return readStale(cell)?.reason ?? null;
}

/** Everything about one cell's run state, for rendering. */
export function readCellRun(doc: Y.Doc, c: CellView | string): CellRunView | null {
  const cell = resolveCell(doc, c);
  if (!cell) return null;
  const exec = readExec(cell);
  const pending = readPending(cell);
  const req = readRunRequest(cell);
  const reason = staleReason(cell);
  const state: CellRunState = pending ? 'queued' : exec ? exec.state : 'idle';
  return {
    state,
    pending,
    exec,
    outputs: readOutputs(cell),
    stale: reason !== null,
    staleReason: reason,
    requested: !!req && req.id !== cell.map.get('ack'),
  };
}

/** Ids of the code and SQL cells whose output is stale or missing (what "run stale" runs). */
export function staleCells(doc: Y.Doc): string[] {
  return listCells(doc)
    .filter(isRunnableCell)
    .filter((c) => {
      const exec = readExec(c);
      return !exec || exec.state === 'cancelled' || staleReason(c) !== null;
    })
    .map((c) => c.id);
}

// ---------------------------------------------------------------------------------------------
// kernel writes (kernel origin)

/** Marks the request `requestId` of a cell as taken into account. */
export function ackRequest(doc: Y.Doc, cell: CellView, requestId: string, origin: Origin): void {
  doc.transact(() => cell.map.set('ack', requestId), origin);
}

/** Puts a cell in the queue (or clears its queued state with `null`). */
export function setPending(doc: Y.Doc, cell: CellView, pending: PendingRun | null, origin: Origin): void {
  doc.transact(() => (pending ? cell.map.set('pending', pending) : cell.map.has('pending') && cell.map.delete('pending')), origin);
}

/**
 * Starts a run: replaces `exec` with a fresh map in state `running`, clears `pending` and `stale`.
 * Returns the run's map: later writes of this run go to it, and change nothing once it is replaced.
 */
export function startExec(doc: Y.Doc, cell: CellView, info: Omit<ExecInfo, 'state' | 'endedAt' | 'durationMs'>, origin: Origin): Y.Map<unknown> {
  const m = new Y.Map<unknown>();
  doc.transact(() => {
    for (const [k, v] of Object.entries({ ...info, state: 'running', endedAt: null, durationMs: null })) if (v !== undefined) m.set(k, v);
    m.set('outputs', new Y.Array<Y.Map<unknown>>());
    cell.map.set('exec', m);
    if (cell.map.has('pending')) cell.map.delete('pending');
    if (cell.map.has('stale')) cell.map.delete('stale');
  }, origin);
  return m;
}

/**
 * A run that started and ended before anything of it was written (a fast cell): its final record
 * in one write, as one plain `FinishedRun` value (see the header) — never changed afterwards.
 */
export function recordExec(doc: Y.Doc, cell: CellView, info: Omit<ExecInfo, 'state' | 'endedAt' | 'durationMs'>, end: RunEnd, origin: Origin): void {
  const run = finishedRun(info, end, end.outputs ?? []);
  doc.transact(() => {
    cell.map.set('exec', run);
    if (cell.map.has('pending')) cell.map.delete('pending');
    if (cell.map.has('stale')) cell.map.delete('stale');
  }, origin);
}

/** How a run ended. */
type RunEnd = { state: Exclude<ExecState, 'running'>; defines?: string[]; reason?: string; outputs?: CellOutput[] };

/** A run's final record as one plain value: its keys as they end, and `outputs` (no undefined anywhere). */
function finishedRun(info: { startedAt?: unknown }, end: RunEnd, outputs: CellOutput[]): Record<string, unknown> {
  const endedAt = Date.now();
  // Built key by key (no `delete`: an object that loses keys becomes a slow dictionary to encode).
  const run = definedOnly(info);
  run.state = end.state;
  run.endedAt = endedAt;
  run.durationMs = endedAt - Number(info.startedAt ?? endedAt);
  if (end.defines) run.defines = end.defines;
  if (end.reason) run.reason = end.reason;
  run.outputs = outputs.map(definedOnly);
  return run;
}

/** A copy of `o` without its undefined values (Yjs cannot store them); the document keeps its own copy. */
function definedOnly(o: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * Outputs a run had already written (streamed text, outputs shown while it ran) up to which its end
 * rewrites it whole; above, the run ends in its map (rewriting would send all of them once more).
 */
export const SETTLE_MAX_WRITTEN_CHARS = 256 * 1024;

/** Records a run that never started (upstream failed, cycle, deleted input...) as cancelled. */
export function cancelExec(doc: Y.Doc, cell: CellView, info: Omit<ExecInfo, 'state' | 'endedAt' | 'durationMs' | 'startedAt'> & { reason: string }, outputs: CellOutput[], origin: Origin): void {
  const m = startExec(doc, cell, { ...info, startedAt: Date.now() }, origin);
  doc.transact(() => {
    for (const o of outputs) (m.get('outputs') as Y.Array<Y.Map<unknown>>).push([outputToMap(o)]);
    m.set('state', 'cancelled');
    m.set('endedAt', Date.now());
  }, origin);
}

/** Appends to the run's last stream output of that name, or starts a new one. */
export function appendStream(run: Y.Map<unknown>, name: 'stdout' | 'stderr', text: string, origin: Origin): void {
  const doc = run.doc;
  const outputs = run.get('outputs');
  if (!doc || !(outputs instanceof Y.Array) || !text) return;
  doc.transact(() => {
    const last = outputs.length ? outputs.get(outputs.length - 1) : null;
    const t = last instanceof Y.Map && last.get('type') === 'stream' && last.get('name') === name ? last.get('text') : null;
    if (t instanceof Y.Text) t.insert(t.length, text);
    else outputs.push([outputToMap({ type: 'stream', name, text })]);
  }, origin);
}

/** Adds outputs to a run. */
export function pushOutputs(run: Y.Map<unknown>, outs: CellOutput[], origin: Origin): void {
  const doc = run.doc;
  const outputs = run.get('outputs');
  if (!doc || !(outputs instanceof Y.Array) || !outs.length) return;
  doc.transact(() => outputs.push(outs.map(outputToMap)), origin);
}

/**
 * Ends a run (and may add its final outputs in the same transaction). A run that is still the
 * cell's latest is **settled**: its map is replaced by one plain `FinishedRun` value, as if it had
 * been written whole (recordExec), so a finished run costs every replica one item however it was
 * written while it ran (Yjs collects the map's items). The map stays, and receives the end, when a
 * newer run replaced it (nobody sees it) or when it already holds more than
 * `SETTLE_MAX_WRITTEN_CHARS` of outputs.
 */
export function finishExec(run: Y.Map<unknown>, end: RunEnd, origin: Origin, opts: { settle?: boolean } = {}): void {
  const doc = run.doc;
  if (!doc) return;
  doc.transact(() => {
    const outputs = run.get('outputs');
    // (`settle: false`: the run ends in its map as before settling existed; benchmarks' baseline.)
    const cellMap = opts.settle !== false && run.parent instanceof Y.Map && run.parent.get('exec') === run ? run.parent : null;
    if (cellMap) {
      const written = outputs instanceof Y.Array ? outputs.toArray().map(mapToOutput).filter((o): o is CellOutput => o !== null) : [];
      if (!written.length || jsonSize(written) <= SETTLE_MAX_WRITTEN_CHARS) {
        const info: Record<string, unknown> = {};
        run.forEach((v, k) => k !== 'outputs' && (info[k] = v));
        cellMap.set('exec', finishedRun(info, end, [...written, ...(end.outputs ?? [])]));
        return;
      }
    }
    if (end.outputs?.length && outputs instanceof Y.Array) outputs.push(end.outputs.map(outputToMap));
    const endedAt = Date.now();
    run.set('state', end.state);
    run.set('endedAt', endedAt);
    run.set('durationMs', endedAt - Number(run.get('startedAt') ?? endedAt));
    if (end.defines) run.set('defines', end.defines);
    if (end.reason) run.set('reason', end.reason);
  }, origin);
}

/**
 * Clears what a kernel that died left behind on a cell: its queued mark, and a run still marked
 * running (it will never end), which becomes cancelled with `reason`.
 */
export function abandonKernelMarks(doc: Y.Doc, cell: CellView, reason: string, origin: Origin): void {
  doc.transact(() => {
    if (cell.map.has('pending')) cell.map.delete('pending');
    const ex = execValue(cell);
    // (A run written whole has ended: only a map can still say `running`.)
    if (ex instanceof Y.Map && ex.get('state') === 'running') {
      ex.set('state', 'cancelled');
      ex.set('reason', reason);
    }
  }, origin);
}

/** The id of the last run request the kernel took into account for a cell. */
export const readAck = (cell: CellView): string | null => {
  const a = cell.map.get('ack');
  return typeof a === 'string' ? a : null;
};

/** Sets (or clears, with null) the kernel's staleness mark on a cell. */
export function setStale(doc: Y.Doc, cell: CellView, mark: StaleMark | null, origin: Origin): void {
  doc.transact(() => (mark ? cell.map.set('stale', mark) : cell.map.has('stale') && cell.map.delete('stale')), origin);
}

/** Publishes the kernel's status. */
export function writeKernelStatus(doc: Y.Doc, status: KernelStatus, origin: Origin): void {
  doc.transact(() => kernelRoot(doc).set('status', status), origin);
}

/**
 * The cells of the notebook that have an unacknowledged run request, in notebook order; `among`:
 * only these cells (ids), as `requestChanges` names them — not a walk over every cell.
 */
export function pendingRequests(doc: Y.Doc, among?: Iterable<string>): Array<{ cell: CellView; request: RunRequest }> {
  const out: Array<{ cell: CellView; request: RunRequest }> = [];
  const cells = among ? [...new Set(among)].map((id) => getCell(doc, id)).filter((c): c is CellView => !!c).sort(compareOrder) : listCells(doc);
  for (const cell of cells) {
    const request = readRunRequest(cell);
    if (request && request.id !== cell.map.get('ack')) out.push({ cell, request });
  }
  return out;
}

/**
 * What a transaction changed of the run requests: `'all'` when cells were added or removed (a new
 * cell may come with its request), else the ids of the cells whose request or its acknowledgement
 * changed (a kernel looks at those again, not at every cell).
 */
export function requestChanges(doc: Y.Doc, tr: Y.Transaction): 'all' | Set<string> {
  const cells = roots(doc).cells;
  const out = new Set<string>();
  for (const [type, keys] of tr.changed) {
    if ((type as unknown) === cells) return 'all';
    if (type instanceof Y.Map && type._item?.parent === cells && (keys.has('run') || keys.has('ack'))) {
      const id = type.get('id');
      if (typeof id !== 'string') return 'all';
      out.add(id);
    }
  }
  return out;
}
