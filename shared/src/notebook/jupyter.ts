/**
 * What Plexus keeps of a Jupyter notebook it imported, so that exporting writes it back unchanged
 * (docs/api.md "Jupyter round trip"), and the pure helpers that show Jupyter outputs safely.
 *
 * Document keys (all written once, by the server's import, in the import's transaction):
 *
 * | where | key | type | content |
 * |---|---|---|---|
 * | cell map | `jupyter` | plain JSON object (`JupyterCellRecord`) | the cell's nbformat id, metadata, attachments, outputs, execution count, original source (and, for markdown, what its rich text rendered to at import; for `%%sql`, the magic line) |
 * | cell map | `language` | string | language of a code cell Plexus cannot run (`python`, `r`, …); absent for JavaScript |
 * | `meta` root | `jupyter` | plain JSON object (`JupyterNotebookRecord`) | the notebook's metadata (kernelspec, language_info, widgets, …) |
 *
 * Nothing here is rewritten when a person edits a cell: export compares the cell's current content
 * with the record (markdown: its rendering at import; code: the source) and replays the original
 * only while they agree. Pure module.
 */
import * as Y from 'yjs';
import { cellSource, type CellView } from '../cells.ts';
import type { Origin } from '../origin.ts';
import { roots } from '../schema.ts';
import { isJsonObject, type Json, type JsonObject } from '../json.ts';

/** The nbformat cell a Plexus cell was imported from. */
export interface JupyterCellRecord {
  /** nbformat cell type it came from. */
  cellType: 'code' | 'markdown' | 'raw';
  /** The Plexus kind it was imported as (a later kind change makes export describe the cell again). */
  kind: 'markdown' | 'code' | 'sql';
  /** nbformat 4.5 cell id, when the notebook had one. */
  id?: string;
  /** Cell metadata, untouched (tags, collapsed, jupyter.source_hidden, …). */
  metadata: JsonObject;
  /** Markdown and raw cells' attachments (mime bundles by file name), untouched. */
  attachments?: JsonObject;
  /** The cell's source exactly as imported (lines joined). */
  source: string;
  /** Markdown and raw cells: `fragmentToMarkdown` of the rich text right after import. */
  rendered?: string;
  /** `%%sql` cells: the magic line (without its newline), e.g. `%%sql tracks <<`. */
  sqlMagic?: string;
  /** The SQL cell's name the magic line gave (to tell whether a person renamed it since). */
  sqlName?: string;
  /** Code cells: nbformat outputs, untouched. */
  outputs: Json[];
  /** Code cells: execution count as imported. */
  executionCount: number | null;
}

/** What Plexus keeps of an imported notebook as a whole. */
export interface JupyterNotebookRecord {
  /** Notebook metadata, untouched. */
  metadata: JsonObject;
}

const CELL_KEY = 'jupyter';
const LANGUAGE_KEY = 'language';
const META_KEY = 'jupyter';

/** The Jupyter record of a cell, or null for a cell that was not imported. */
export function readJupyterRecord(cell: CellView): JupyterCellRecord | null {
  const r = cell.map.get(CELL_KEY);
  return isJsonObject(r) && typeof r.cellType === 'string' && typeof r.source === 'string' && isJsonObject(r.metadata) && Array.isArray(r.outputs)
    ? (r as unknown as JupyterCellRecord)
    : null;
}

/**
 * Whether a code or SQL cell's text changed since import, so its imported outputs no longer
 * match it (they are still shown and exported, like Jupyter's outputs of an edited cell).
 */
export function importedOutputsStale(cell: CellView): boolean {
  const rec = readJupyterRecord(cell);
  if (!rec || cell.kind === 'markdown') return false;
  const text = cellSource(cell);
  if (cell.kind === 'sql' && rec.sqlMagic !== undefined) return parseSqlMagic(rec.source)?.sql !== text;
  return text !== rec.source;
}

/** Writes a cell's Jupyter record (import only). */
export function writeJupyterRecord(doc: Y.Doc, cell: CellView, rec: JupyterCellRecord, origin: Origin): void {
  const plain = JSON.parse(JSON.stringify(rec)) as JsonObject;
  doc.transact(() => cell.map.set(CELL_KEY, plain), origin);
}

/** Languages whose code cells the kernel runs (JavaScript; absent `language` means JavaScript). */
export const RUNNABLE_CODE_LANGUAGES = ['javascript'] as const;

/** The language of a code cell: `javascript` unless the cell says otherwise (imported Python, R, …). */
export function cellLanguage(cell: CellView): string {
  if (cell.kind === 'sql') return 'sql';
  if (cell.kind === 'markdown') return 'markdown';
  const l = cell.map.get(LANGUAGE_KEY);
  return typeof l === 'string' && l ? l : 'javascript';
}

/** Sets (or clears, with null) the language of a code cell (import only). */
export function setCellLanguage(doc: Y.Doc, cell: CellView, language: string | null, origin: Origin): void {
  doc.transact(() => (language === null ? cell.map.delete(LANGUAGE_KEY) : cell.map.set(LANGUAGE_KEY, language)), origin);
}

/** True for the cells the kernel runs: SQL cells and JavaScript code cells. */
export function isRunnableCell(cell: CellView): boolean {
  if (cell.kind === 'markdown') return false;
  return cell.kind === 'sql' || (RUNNABLE_CODE_LANGUAGES as readonly string[]).includes(cellLanguage(cell));
}

/** A language's display name ("Python — not runnable in Plexus"). */
export function languageLabel(language: string): string {
  const known: Record<string, string> = { python: 'Python', r: 'R', julia: 'Julia', scala: 'Scala', bash: 'Bash', sh: 'Shell', c: 'C', 'c++': 'C++', java: 'Java', ruby: 'Ruby', go: 'Go', rust: 'Rust', octave: 'Octave', matlab: 'MATLAB' };
  return known[language.toLowerCase()] ?? (language ? language[0]!.toUpperCase() + language.slice(1) : 'Unknown language');
}

/** The imported notebook's record, if a notebook was imported into the workspace. */
export function readJupyterNotebook(doc: Y.Doc): JupyterNotebookRecord | null {
  const r = roots(doc).meta.get(META_KEY);
  return isJsonObject(r) && isJsonObject(r.metadata) ? (r as unknown as JupyterNotebookRecord) : null;
}

/**
 * Records an imported notebook's metadata. The first import into a workspace sets it; later imports
 * only add top-level keys it does not have yet (what is there stays untouched).
 */
export function writeJupyterNotebook(doc: Y.Doc, metadata: JsonObject, origin: Origin): void {
  doc.transact(() => {
    const have = readJupyterNotebook(doc);
    const merged: JsonObject = have ? { ...metadata, ...have.metadata } : metadata;
    roots(doc).meta.set(META_KEY, JSON.parse(JSON.stringify({ metadata: merged })) as JsonObject);
  }, origin);
}

// ---------------------------------------------------------------------------------------------
// %%sql magics (ipython-sql, jupysql)

/** A parsed `%%sql` cell: the magic line, the result name it binds, and the SQL below it. */
export interface SqlMagic {
  magic: string;
  name?: string;
  sql: string;
}

/**
 * Parses an ipython-sql / jupysql cell: `%%sql`, `%%sql name <<`, `%%sql --save name`
 * (`-s name`), optionally with a connection string (`%%sql duckdb://`). Null when `source` is not
 * a `%%sql` cell.
 */
export function parseSqlMagic(source: string): SqlMagic | null {
  const m = /^%%sql(?=\s|$)([^\n]*)(?:\n|$)/.exec(source);
  if (!m) return null;
  const magic = `%%sql${m[1]}`;
  const sql = source.slice(m[0].length);
  let name: string | undefined;
  const args = m[1]!;
  const assign = /^\s*(?:\S+:\/\/\S*\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*<<\s*$/.exec(args);
  const save = /(?:^|\s)(?:--save|-s)\s+([A-Za-z_][A-Za-z0-9_]*)(?=\s|$)/.exec(args);
  if (assign) name = assign[1];
  else if (save) name = save[1];
  return { magic, ...(name ? { name } : {}), sql };
}

/**
 * The magic line to write back for an SQL cell named `name` that was imported with `rec`: the
 * original line while the name is unchanged, else that line with the name replaced (or added).
 */
export function sqlMagicLine(rec: JupyterCellRecord, name: string | undefined): string {
  const magic = rec.sqlMagic ?? '%%sql';
  if ((name ?? '') === (rec.sqlName ?? '')) return magic;
  const old = rec.sqlName;
  if (old) {
    const assign = new RegExp(`(^%%sql\\s+(?:\\S+://\\S*\\s+)?)${old}(\\s*<<)`);
    const save = new RegExp(`(\\s(?:--save|-s)\\s+)${old}(?=\\s|$)`);
    if (assign.test(magic)) return name ? magic.replace(assign, `$1${name}$2`) : magic.replace(assign, '$1').replace(/<<\s*/, '').trimEnd();
    if (save.test(magic)) return name ? magic.replace(save, `$1${name}`) : magic.replace(new RegExp(`\\s(?:--save|-s)\\s+${old}(?=\\s|$)`), '');
  }
  return name ? `${magic} --save ${name}` : magic;
}

// ---------------------------------------------------------------------------------------------
// showing Jupyter outputs

/** nbformat multiline strings (a string or a list of lines) as one string. */
export const joinMultiline = (s: unknown): string => (Array.isArray(s) ? s.map((x) => (typeof x === 'string' ? x : '')).join('') : typeof s === 'string' ? s : '');

/** Removes ANSI escape sequences (colours in IPython tracebacks). */
export const stripAnsi = (s: string): string =>
  // CSI sequences, OSC sequences, then any other two-character escape.
  s.replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, '').replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, '').replace(/\x1b[@-_]/g, '');

/**
 * MIME types Plexus shows, richest first (JupyterLab's order without the ones that run code:
 * `application/javascript` and widget views are never shown, their text/plain is).
 */
export const SAFE_MIME_ORDER = [
  'text/html',
  'image/svg+xml',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'text/latex',
  'text/markdown',
  'application/json',
  'text/plain',
] as const;
export type SafeMime = (typeof SAFE_MIME_ORDER)[number];

/** A Jupyter output reduced to what a page shows. */
export type JupyterDisplay =
  | { kind: 'stream'; name: string; text: string }
  | { kind: 'error'; ename: string; evalue: string; traceback: string }
  | { kind: 'mime'; mime: SafeMime; data: string; json?: Json; executionCount?: number | null }
  | { kind: 'unknown'; outputType: string };

/** What to show for one nbformat output: the richest safe MIME type of a result, ANSI stripped. */
export function displayJupyterOutput(o: Json): JupyterDisplay {
  if (!isJsonObject(o)) return { kind: 'unknown', outputType: 'invalid' };
  const type = typeof o.output_type === 'string' ? o.output_type : 'invalid';
  if (type === 'stream') return { kind: 'stream', name: typeof o.name === 'string' ? o.name : 'stdout', text: stripAnsi(joinMultiline(o.text)) };
  if (type === 'error') {
    const tb = Array.isArray(o.traceback) ? o.traceback.map((l) => (typeof l === 'string' ? l : '')).join('\n') : '';
    return { kind: 'error', ename: String(o.ename ?? 'Error'), evalue: String(o.evalue ?? ''), traceback: stripAnsi(tb) };
  }
  if ((type === 'execute_result' || type === 'display_data' || type === 'update_display_data') && isJsonObject(o.data)) {
    const data = o.data;
    for (const mime of SAFE_MIME_ORDER) {
      if (!(mime in data)) continue;
      const v = data[mime]!;
      const ec = typeof o.execution_count === 'number' ? o.execution_count : null;
      if (mime === 'application/json') return { kind: 'mime', mime, data: JSON.stringify(v, null, 2), json: v, executionCount: ec };
      const s = joinMultiline(v);
      return { kind: 'mime', mime, data: mime === 'text/plain' ? stripAnsi(s) : s, executionCount: ec };
    }
  }
  return { kind: 'unknown', outputType: type };
}

/** An image data: URL for a base64 bitmap or SVG text (never anything else). */
export function imageDataUrl(mime: string, data: string): string | null {
  if (mime === 'image/svg+xml') return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(data)}`;
  if (!/^image\/(png|jpeg|gif|webp)$/.test(mime)) return null;
  const b64 = data.replace(/\s+/g, '');
  return /^[A-Za-z0-9+/]*={0,2}$/.test(b64) ? `data:${mime};base64,${b64}` : null;
}

// ---------------------------------------------------------------------------------------------
// HTML sanitising for the report (the browser uses DOMPurify; the report has no DOM)

const ALLOWED_TAGS = new Set([
  'table', 'thead', 'tbody', 'tfoot', 'tr', 'td', 'th', 'caption', 'colgroup', 'col', 'div', 'span', 'p', 'br', 'hr', 'b', 'i',
  'em', 'strong', 'u', 's', 'sub', 'sup', 'code', 'pre', 'kbd', 'samp', 'var', 'small', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'blockquote', 'img', 'a', 'abbr', 'mark', 'figure', 'figcaption',
]);
const VOID = new Set(['br', 'hr', 'img', 'col']);
const ALLOWED_ATTRS = new Set(['class', 'title', 'alt', 'colspan', 'rowspan', 'align', 'valign', 'border', 'width', 'height', 'start', 'scope']);
/** Elements dropped together with their content. */
const DROPPED = /<(script|style|iframe|object|embed|template|noscript|textarea|title|svg|math|frame|frameset|applet|head|select|form)\b[\s\S]*?(?:<\/\1\s*>|$)/gi;
const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*(\/?)>/g;
const ATTR = /([^\s"'>/=]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+))?/g;

const escText = (s: string): string => s.replace(/&(?!(?:[a-zA-Z][a-zA-Z0-9]{1,31}|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});)/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escAttr = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A strict allowlist sanitiser: keeps table/text markup and `data:` bitmap images, drops scripts,
 * styles, frames, forms, event handlers, links' targets and every other attribute. Used for HTML
 * outputs in the self-contained report (which also forbids scripts by its CSP).
 */
export function sanitizeHtml(html: string): string {
  const src = html.replace(/<!--[\s\S]*?(?:-->|$)/g, '').replace(DROPPED, '');
  let out = '';
  let last = 0;
  // Open elements: a close tag closes only what is open, and everything left open is closed at the
  // end, so an output cannot swallow the rest of the report.
  const open: string[] = [];
  for (const m of src.matchAll(TAG)) {
    out += escText(src.slice(last, m.index));
    last = (m.index ?? 0) + m[0].length;
    const [, close, rawName, attrs] = m;
    const name = rawName!.toLowerCase();
    if (!ALLOWED_TAGS.has(name)) continue;
    const isVoid = VOID.has(name);
    if (close) {
      const at = open.lastIndexOf(name);
      if (isVoid || at < 0) continue;
      while (open.length > at) out += `</${open.pop()}>`;
      continue;
    }
    if (!isVoid) open.push(name);
    let kept = '';
    for (const a of attrs!.matchAll(ATTR)) {
      const key = a[1]!.toLowerCase();
      const raw = a[2] ?? '';
      const value = /^["']/.test(raw) ? raw.slice(1, -1) : raw;
      if (ALLOWED_ATTRS.has(key)) kept += ` ${key}="${escAttr(value)}"`;
      else if (name === 'img' && key === 'src' && /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]+$/.test(value)) kept += ` src="${escAttr(value.replace(/\s+/g, ''))}"`;
    }
    out += `<${name}${kept}>`;
  }
  out += escText(src.slice(last));
  while (open.length) out += `</${open.pop()}>`;
  return out;
}
