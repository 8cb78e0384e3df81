/**
 * What a transaction changed, in the words of the history panel: cells added, removed, edited or
 * run, chat messages, viewer layers and camera, atlas maps, tables, the workspace's title and
 * settings, agent runs and analyses. The server summarises every transaction it applies and
 * attributes it to whoever sent it (server/src/history/attribution.ts); summaries of one person
 * over a stretch of time merge into one entry. Pure module.
 */
import * as Y from 'yjs';
import { roots } from '../schema.ts';
import { CAMERA_KEYS, viewerRoots } from '../viewer/state-doc.ts';

export interface ChangeSummary {
  cellsAdded: string[];
  cellsRemoved: string[];
  cellsEdited: string[];
  /** Cells whose run state or outputs changed (the kernel), or whose run someone requested. */
  cellsRun: string[];
  /** Chat messages posted. */
  messages: number;
  /** Chat messages whose text changed after posting (streamed answers, edits). */
  messagesEdited: number;
  /** Viewer: layer names, or `camera` / `layout` / another top-level key. */
  viewer: string[];
  /** Atlas map ids. */
  atlas: string[];
  /** Uploaded tables (registered or removed). */
  tables: string[];
  /** Workspace keys: `title`, `settings`. */
  workspace: string[];
  /** Agent run ids. */
  runs: string[];
  /** Analysis job ids. */
  jobs: string[];
}

/** Most names a list of a summary keeps (the count beyond is not tracked). */
export const MAX_SUMMARY_NAMES = 50;

export function emptySummary(): ChangeSummary {
  return { cellsAdded: [], cellsRemoved: [], cellsEdited: [], cellsRun: [], messages: 0, messagesEdited: 0, viewer: [], atlas: [], tables: [], workspace: [], runs: [], jobs: [] };
}

const LIST_KEYS = ['cellsAdded', 'cellsRemoved', 'cellsEdited', 'cellsRun', 'viewer', 'atlas', 'tables', 'workspace', 'runs', 'jobs'] as const;
type ListKey = (typeof LIST_KEYS)[number];

function add(list: string[], name: unknown): void {
  if (typeof name !== 'string' || list.length >= MAX_SUMMARY_NAMES || list.includes(name)) return;
  list.push(name);
}

/** True when nothing is in the summary. */
export function isEmptySummary(s: ChangeSummary): boolean {
  return s.messages === 0 && s.messagesEdited === 0 && LIST_KEYS.every((k) => s[k].length === 0);
}

/** `into` + `more`, in place (a cell added and then removed in one stretch is neither). */
export function mergeSummary(into: ChangeSummary, more: ChangeSummary): ChangeSummary {
  for (const k of LIST_KEYS) for (const n of more[k]) add(into[k], n);
  into.messages += more.messages;
  into.messagesEdited += more.messagesEdited;
  // `into` holds no cell both added and removed, and no added cell as edited (every summary is
  // built by these merges): only cells `more` adds, removes or edits can break that. The common
  // case — a keystroke into a cell this stretch already edited — allocates nothing.
  const addsOrRemoves = more.cellsAdded.length > 0 || more.cellsRemoved.length > 0;
  const gone = addsOrRemoves ? into.cellsAdded.filter((id) => into.cellsRemoved.includes(id)) : [];
  if (gone.length) {
    const drop = (l: string[]) => l.filter((id) => !gone.includes(id));
    into.cellsAdded = drop(into.cellsAdded);
    into.cellsRemoved = drop(into.cellsRemoved);
    into.cellsEdited = drop(into.cellsEdited);
    into.cellsRun = drop(into.cellsRun);
  }
  if (into.cellsAdded.length && (addsOrRemoves || more.cellsEdited.length)) into.cellsEdited = into.cellsEdited.filter((id) => !into.cellsAdded.includes(id));
  return into;
}

/** Keys of a cell written by the kernel (or a run request): a change to them is a run, not an edit. */
const RUN_KEYS = new Set(['exec', 'stale', 'pending', 'ack', 'run']);

/** Reads a summary from stored JSON, dropping anything that is not one. */
export function readSummary(v: unknown): ChangeSummary {
  const out = emptySummary();
  if (!v || typeof v !== 'object') return out;
  const o = v as Record<string, unknown>;
  for (const k of LIST_KEYS) if (Array.isArray(o[k])) for (const n of o[k] as unknown[]) add(out[k], n);
  out.messages = Number.isFinite(o.messages) ? Math.max(0, Number(o.messages)) : 0;
  out.messagesEdited = Number.isFinite(o.messagesEdited) ? Math.max(0, Number(o.messagesEdited)) : 0;
  return out;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- events of any shared type
type AnyEvent = Y.YEvent<any>;
type Classify = (e: AnyEvent, s: ChangeSummary) => void;

const keysOf = (e: AnyEvent): string[] => [...e.changes.keys.keys()];

/** Changes of a dictionary root (id → entry): every touched id goes to `list`. */
const byFirstKey = (list: ListKey): Classify => (e, s) => {
  if (e.path.length === 0) for (const k of keysOf(e)) add(s[list], k);
  else add(s[list], e.path[0]);
};

const classifyCells: Classify = (e, s) => {
  if (e.path.length === 0) {
    for (const [id, change] of e.changes.keys) add(change.action === 'add' ? s.cellsAdded : change.action === 'delete' ? s.cellsRemoved : s.cellsEdited, id);
    return;
  }
  const id = e.path[0];
  const keys = e.path.length === 1 ? keysOf(e) : [String(e.path[1])];
  if (keys.some((k) => !RUN_KEYS.has(k))) add(s.cellsEdited, id);
  if (keys.some((k) => RUN_KEYS.has(k))) add(s.cellsRun, id);
};

const classifyChat: Classify = (e, s) => {
  if (e.path.length === 0) {
    for (const d of e.changes.delta) if (d.insert && Array.isArray(d.insert)) s.messages += d.insert.length;
  } else s.messagesEdited += 1;
};

const classifyViewerState: Classify = (e, s) => {
  const keys = e.path.length === 0 ? keysOf(e) : [String(e.path[0])];
  for (const k of keys) add(s.viewer, (CAMERA_KEYS as readonly string[]).includes(k) ? 'camera' : k);
};

/**
 * Calls `onChange(transaction, summary)` after every transaction that changed something the
 * history tracks (not the checkpoint records themselves). Returns a function that detaches.
 */
export function observeChanges(doc: Y.Doc, onChange: (tr: Y.Transaction, summary: ChangeSummary) => void): () => void {
  const r = roots(doc);
  const v = viewerRoots(doc);
  const pending = new WeakMap<Y.Transaction, ChangeSummary>();
  const summaryOf = (tr: Y.Transaction) => {
    let s = pending.get(tr);
    if (!s) pending.set(tr, (s = emptySummary()));
    return s;
  };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Yjs types are invariant in their content
  const watched: Array<[Y.AbstractType<any>, Classify]> = [
    [r.cells, classifyCells],
    [r.chat, classifyChat],
    [v.state, classifyViewerState],
    [v.layers, byFirstKey('viewer')],
    [v.views, (e, s) => add(s.viewer, 'views')],
    [r.atlas, byFirstKey('atlas')],
    [r.data, byFirstKey('tables')],
    [r.meta, (e, s) => (e.path.length === 0 ? keysOf(e) : [String(e.path[0])]).forEach((k) => add(s.workspace, k))],
    [r.runs, byFirstKey('runs')],
    [r.jobs, byFirstKey('jobs')],
  ];
  const handlers = watched.map(([type, classify]) => {
    const h = (events: AnyEvent[], tr: Y.Transaction) => {
      const s = summaryOf(tr);
      for (const e of events) classify(e, s);
    };
    type.observeDeep(h);
    return () => type.unobserveDeep(h);
  });
  const after = (tr: Y.Transaction) => {
    const s = pending.get(tr);
    if (s && !isEmptySummary(s)) onChange(tr, s);
  };
  doc.on('afterTransaction', after);
  return () => {
    handlers.forEach((off) => off());
    doc.off('afterTransaction', after);
  };
}

/** One line for a summary ("edited 3 cells, ran 2, posted 1 message, moved the camera"). */
export function describeSummary(s: ChangeSummary): string {
  const parts: string[] = [];
  const n = (k: number, one: string, many = one + 's') => `${k} ${k === 1 ? one : many}`;
  if (s.cellsAdded.length) parts.push(`added ${n(s.cellsAdded.length, 'cell')}`);
  if (s.cellsRemoved.length) parts.push(`removed ${n(s.cellsRemoved.length, 'cell')}`);
  if (s.cellsEdited.length) parts.push(`edited ${n(s.cellsEdited.length, 'cell')}`);
  if (s.cellsRun.length) parts.push(`ran ${n(s.cellsRun.length, 'cell')}`);
  if (s.messages) parts.push(`posted ${n(s.messages, 'message')}`);
  else if (s.messagesEdited) parts.push('wrote in the chat');
  const layers = s.viewer.filter((k) => k !== 'camera' && k !== 'layout' && k !== 'views');
  if (s.viewer.includes('camera')) parts.push('moved the camera');
  if (layers.length) parts.push(`changed ${n(layers.length, 'viewer setting')}`);
  if (s.atlas.length) parts.push(`changed ${n(s.atlas.length, 'map')}`);
  if (s.tables.length) parts.push(`changed ${n(s.tables.length, 'table')}`);
  if (s.workspace.length) parts.push(`changed the workspace ${s.workspace.join(' and ')}`);
  if (s.runs.length) parts.push(`${n(s.runs.length, 'agent run')}`);
  if (s.jobs.length) parts.push(`${n(s.jobs.length, 'analysis', 'analyses')}`);
  return parts.join(', ') || 'no visible change';
}
