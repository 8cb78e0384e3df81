/**
 * What the agent knows when a run starts (seed 003's context conveyor): the asker's situation,
 * read from their awareness state — focused cell, text selection, visible viewer region, selected
 * rows — and summaries of the workspace: notebook, viewer, data registry and recent chat. Every
 * section has an explicit size cap and the whole has one too, so a huge notebook or chat never
 * makes a prompt that a model refuses. Pure module.
 */
import * as Y from 'yjs';
import { listAtlasMaps } from '../atlas/atlas.ts';
import { cellSource, getCell, listCells, type CellView } from '../cells.ts';
import { recentMessages } from '../chat.ts';
import { isPresenceOf, readPresence, type PresenceState } from '../presence.ts';
import { getTitle } from '../schema.ts';
import { listTables } from '../notebook/data.ts';
import { readCellRun } from '../notebook/runs.ts';
import { cellLanguage, displayJupyterOutput, isRunnableCell, readJupyterRecord } from '../notebook/jupyter.ts';
import type { CellOutput } from '../notebook/outputs.ts';
import { summarizeViewer } from '../viewer/summary.ts';
import type { Json } from '../json.ts';

/** Rows a person selected in a data preview (published in awareness as `dataSelection`). */
export interface DataSelection {
  table: string;
  /** Row offsets in the table. */
  rows: number[];
  /** The selected rows' values (a few), so the agent need not fetch them. */
  values?: Array<Record<string, Json>>;
}

/** Awareness field carrying selected rows. */
export const DATA_SELECTION_FIELD = 'dataSelection';

export interface ContextCaps {
  /** Whole context, characters. */
  total: number;
  asker: number;
  notebook: number;
  /** Per cell: source and output preview. */
  cellSource: number;
  cellOutput: number;
  viewer: number;
  data: number;
  chat: number;
  chatMessages: number;
  chatMessage: number;
  atlas: number;
}

export const DEFAULT_CONTEXT_CAPS: ContextCaps = {
  total: 24_000,
  asker: 3_000,
  notebook: 9_000,
  cellSource: 1_200,
  cellOutput: 400,
  viewer: 3_000,
  data: 2_500,
  chat: 4_000,
  chatMessages: 20,
  chatMessage: 600,
  atlas: 1_500,
};

/** The atlas maps: table, status, the shared selection (a table SQL reads), highlight and categories. */
export function atlasSummary(doc: Y.Doc, max: number): string {
  const lines = listAtlasMaps(doc).map((m) => {
    const sel = m.selection ? `; selection by ${m.selection.name ?? m.selection.by} (${m.selection.kind}) — its rows are table ${m.coords?.table ?? '?'}_selection` : '';
    const cats = Object.keys(m.categories);
    return `- map ${m.id} "${m.title}" of table ${m.table} (${m.coords?.how ?? m.method}, ${m.coords?.status ?? 'not started'}${m.coords?.points ? `, ${m.coords.points} points` : ''})${sel}${m.highlight ? `; highlighted: ${m.highlight.rows.length} rows (${m.highlight.label})` : ''}${m.viewer?.layer ? `; in the viewer: ${m.viewer.shown} ROIs on layer "${m.viewer.layer}"` : ''}${cats.length ? `; categories: ${cats.join(', ')}` : ''}`;
  });
  return cap(lines.join('\n'), max);
}

/** Cuts `s` to `max` characters, saying how much was left out. */
export function cap(s: string, max: number): string {
  if (s.length <= max) return s;
  const note = `… [${s.length - max} more characters cut]`;
  return s.slice(0, Math.max(0, max - note.length)) + note;
}

/** A short preview of one output (never image bytes). */
export function previewOutput(o: CellOutput, max = 400): string {
  switch (o.type) {
    case 'stream':
      return cap(`${o.name}: ${o.text}`, max);
    case 'text':
      return cap(o.text, max);
    case 'json':
      return cap(JSON.stringify(o.value), max);
    case 'table': {
      const cols = o.columns.map((c) => `${c.name}:${c.type}`).join(', ');
      const rows = o.rows.slice(0, 5).map((r) => JSON.stringify(r)).join('\n');
      return cap(`table ${o.totalRows} rows [${cols}]\n${rows}`, max);
    }
    case 'chart':
      return `chart (${o.format})`;
    case 'image':
      return `image ${o.mime}${o.width ? ` ${o.width}×${o.height}` : ''}`;
    case 'error':
      return cap(`${o.name}: ${o.message}${o.line ? ` (line ${o.line})` : ''}`, max);
  }
}

/** One cell as the model sees it (seed 001's `get_notebook_state` entry). */
export interface CellState {
  id: string;
  index: number;
  kind: string;
  name?: string;
  source: string;
  state: string;
  count?: number;
  stale?: boolean;
  outputs: string[];
  /** Code Plexus does not run (imported Python, R, …): its language. */
  language?: string;
}

/** An imported Jupyter output in short (what the cell showed in Jupyter). */
function previewJupyter(raw: Json, max: number): string {
  const d = displayJupyterOutput(raw);
  if (d.kind === 'stream') return cap(d.text, max);
  if (d.kind === 'error') return cap(`${d.ename}: ${d.evalue}`, max);
  if (d.kind === 'unknown') return cap(`(${d.outputType} output)`, max);
  if (d.mime.startsWith('image/')) return cap(`(${d.mime} image)`, max);
  return cap(d.mime === 'text/html' ? `(HTML) ${d.data.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim()}` : d.data, max);
}

export function cellState(doc: Y.Doc, cell: CellView, index: number, caps: Pick<ContextCaps, 'cellSource' | 'cellOutput'>): CellState {
  const run = cell.kind === 'markdown' ? null : readCellRun(doc, cell);
  const out: CellState = { id: cell.id, index, kind: cell.kind, source: cap(cellSource(cell), caps.cellSource), state: run?.state ?? 'idle', outputs: [] };
  if (cell.name) out.name = cell.name;
  if (cell.kind === 'code' && !isRunnableCell(cell)) out.language = cellLanguage(cell);
  const imported = cell.kind === 'markdown' || run?.exec ? null : readJupyterRecord(cell);
  if (imported) {
    let left = caps.cellOutput;
    for (const o of imported.outputs) {
      if (left <= 0) break;
      const p = previewJupyter(o, left);
      out.outputs.push(p);
      left -= p.length;
    }
    if (imported.executionCount !== null) out.count = imported.executionCount;
  }
  if (run?.exec) out.count = run.exec.count;
  if (run?.stale) out.stale = true;
  if (run) {
    let left = caps.cellOutput;
    for (const o of run.outputs) {
      if (left <= 0) break;
      const p = previewOutput(o, left);
      out.outputs.push(p);
      left -= p.length;
    }
  }
  return out;
}

/** The notebook, bounded: every cell is listed; sources and outputs shrink to fit `max`. */
export function notebookSummary(doc: Y.Doc, max: number, caps: Pick<ContextCaps, 'cellSource' | 'cellOutput'>): string {
  const cells = listCells(doc);
  if (cells.length === 0) return 'The notebook is empty.';
  const render = (c: CellState) =>
    `[${c.index}] ${c.kind}${c.language ? ` (${c.language}, not runnable in Plexus)` : ''}${c.name ? ` ${c.name}` : ''} id=${c.id} state=${c.state}${c.stale ? ' (stale)' : ''}\n${c.source}${c.outputs.length ? `\n→ ${c.outputs.join('\n→ ')}` : ''}`;
  // Shrink per-cell budgets until the whole fits (huge notebooks keep one line per cell).
  let src = caps.cellSource;
  let outp = caps.cellOutput;
  for (let attempt = 0; attempt < 6; attempt++) {
    const text = cells.map((c, i) => render(cellState(doc, c, i, { cellSource: src, cellOutput: outp }))).join('\n\n');
    if (text.length <= max) return text;
    src = Math.floor(src / 3);
    outp = Math.floor(outp / 3);
  }
  const lines = cells.map((c, i) => `[${i}] ${c.kind} id=${c.id}: ${cellSource(c).split('\n')[0]?.slice(0, 60) ?? ''}`);
  return cap(`${cells.length} cells (sources omitted, use get_notebook_state):\n${lines.join('\n')}`, max);
}

/** The data registry in short. */
export function dataSummary(doc: Y.Doc, max: number): string {
  const tables = listTables(doc);
  if (tables.length === 0) return 'No uploaded tables.';
  return cap(tables.map((t) => `${t.name}: ${t.rows} rows (${t.fileName}) [${t.columns.map((c) => `${c.name}:${c.type}`).join(', ')}]`).join('\n'), max);
}

/** The last messages, oldest first, each cut. */
export function chatSummary(doc: Y.Doc, caps: Pick<ContextCaps, 'chat' | 'chatMessages' | 'chatMessage'>, exclude?: string): string {
  const msgs = recentMessages(doc, caps.chatMessages + 1).filter((m) => m.id !== exclude && !m.map.get('proposal'));
  const lines = msgs.slice(-caps.chatMessages).map((m) => `${m.author.name} (${m.author.kind}): ${cap(m.text, caps.chatMessage)}`);
  // Keep the newest lines when the whole is too long.
  let out = '';
  for (let i = lines.length - 1; i >= 0; i--) {
    const next = lines[i]! + (out ? '\n' + out : '');
    if (next.length > caps.chat) break;
    out = next;
  }
  return out || 'No earlier messages.';
}

/** Decodes a y-codemirror.next / tiptap-style `{anchor, head}` of relative positions to a text range. */
function selectionOf(doc: Y.Doc, field: unknown): { type: Y.AbstractType<unknown>; from: number; to: number } | null {
  if (!field || typeof field !== 'object') return null;
  const { anchor, head } = field as { anchor?: unknown; head?: unknown };
  if (!anchor || !head) return null;
  try {
    const a = Y.createAbsolutePositionFromRelativePosition(Y.createRelativePositionFromJSON(anchor), doc);
    const h = Y.createAbsolutePositionFromRelativePosition(Y.createRelativePositionFromJSON(head), doc);
    if (!a || !h || a.type !== h.type) return null;
    return { type: a.type, from: Math.min(a.index, h.index), to: Math.max(a.index, h.index) };
  } catch {
    return null;
  }
}

/** The asker's situation from their awareness state (null state: they are not connected). */
export function askerSummary(doc: Y.Doc, state: PresenceState | null, max: number): string {
  if (!state) return 'The asker is not connected now.';
  const parts: string[] = [`Asker: ${state.user.name}`];
  const focus = state.focus;
  if (focus?.panel) parts.push(`Working in: ${focus.panel}`);
  if (focus?.cellId) {
    const cell = getCell(doc, focus.cellId);
    const i = listCells(doc).findIndex((c) => c.id === focus.cellId);
    if (cell) parts.push(`Focused cell: [${i}] ${cell.kind} id=${cell.id}`);
  }
  const sel = selectionOf(doc, state.cursor);
  if (sel && sel.to > sel.from && sel.type instanceof Y.Text) {
    const cell = listCells(doc).find((c) => c.map.get('source') === sel.type);
    parts.push(`Selected text${cell ? ` in cell ${cell.id}` : ''} (chars ${sel.from}–${sel.to}):\n${cap(sel.type.toString().slice(sel.from, sel.to), 1500)}`);
  }
  const viewer = state.viewer as { camera?: Record<string, Json>; selectedLayer?: Json; mode?: string } | undefined;
  if (viewer?.camera) {
    const c = viewer.camera;
    const keys = ['position', 'crossSectionScale', 'projectionScale', 'crossSectionOrientation'].filter((k) => c[k] !== undefined);
    parts.push(`Their viewer (${viewer.mode ?? 'shared'} view): ${keys.map((k) => `${k}=${JSON.stringify(c[k])}`).join(' ')}`);
    const layer = (viewer.selectedLayer as { layer?: string } | undefined)?.layer;
    if (layer) parts.push(`Selected layer: ${layer}`);
  }
  const rows = state[DATA_SELECTION_FIELD] as DataSelection | undefined;
  if (rows && typeof rows.table === 'string' && Array.isArray(rows.rows) && rows.rows.length) {
    parts.push(`Selected rows of table ${rows.table}: ${rows.rows.slice(0, 50).join(', ')}${rows.rows.length > 50 ? ` (+${rows.rows.length - 50} more)` : ''}`);
    if (rows.values?.length) parts.push(cap(rows.values.slice(0, 10).map((r) => JSON.stringify(r)).join('\n'), 1500));
  }
  return cap(parts.join('\n'), max);
}

/** Finds the awareness state of a user (a document author id: presence ids are `<sub>/<that id>`) among `states` (the most recently focused one wins). */
export function findAskerState(states: Map<number, unknown>, userId: string): PresenceState | null {
  let found: PresenceState | null = null;
  for (const s of states.values()) {
    const p = readPresence(s);
    if (p && isPresenceOf(p.user, userId)) found = p.focus?.panel || !found ? p : found;
  }
  return found;
}

/** The whole context block for a run's system prompt, under `caps.total`. */
export function buildContext(doc: Y.Doc, asker: PresenceState | null, opts: { caps?: Partial<ContextCaps>; excludeMessage?: string } = {}): string {
  const caps = { ...DEFAULT_CONTEXT_CAPS, ...opts.caps };
  const sections = [
    `# Workspace "${getTitle(doc)}"`,
    `## Asker\n${askerSummary(doc, asker, caps.asker)}`,
    `## Notebook\n${notebookSummary(doc, caps.notebook, caps)}`,
    `## Viewer\n${cap(summarizeViewer(doc, { maxChars: caps.viewer }), caps.viewer)}`,
    `## Data tables\n${dataSummary(doc, caps.data)}`,
    ...(listAtlasMaps(doc).length ? [`## Atlas maps\n${atlasSummary(doc, caps.atlas)}`] : []),
    `## Recent chat\n${chatSummary(doc, caps, opts.excludeMessage)}`,
  ];
  return cap(sections.join('\n\n'), caps.total);
}
