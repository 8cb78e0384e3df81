/**
 * Jupyter `.ipynb` (nbformat 4) import and export, lossless for what Plexus does not change.
 *
 * Import (`ipynbToCells` to convert and validate, `importNotebook` to write): markdown stays
 * markdown (the original text is kept with the cell and exported byte for byte while the cell's
 * rich text still renders as it did at import), JavaScript and SQL code become cells of that kind,
 * `%%sql` cells (ipython-sql, jupysql) become SQL cells named by `name <<` / `--save name`, code in
 * other languages becomes a code cell of that language that Plexus does not run. Each cell keeps
 * its id, metadata, attachments, outputs and execution count (`jupyter.ts` record); the notebook
 * keeps its metadata. Everything is validated before anything is written, and written in one
 * transaction.
 *
 * Export (`notebookToIpynb`): nbformat 4.5 with a valid, unique id on every cell. A cell's outputs
 * are the kernel's when Plexus ran it, else the imported ones; Plexus outputs are tables as HTML +
 * plain text, charts under their Vega-Lite / Plot MIME types, errors as error outputs. Cells that do
 * not describe themselves (SQL without a `%%sql` line, JavaScript in a notebook of another language)
 * are marked `metadata.plexus = { kind, name }`. Pure module.
 */
import * as Y from 'yjs';
import { chartKey, type ChartImages, type DrawnOutput } from './chart-images.ts';
import { cellSource, createCell, getCell, listCells, type CellKind, type CellView } from '../cells.ts';
import type { CellId } from '../ids.ts';
import type { Origin } from '../origin.ts';
import { fragmentToMarkdown, markdownToFragment } from '../markdown.ts';
import { getTitle } from '../schema.ts';
import type { CellOutput } from './outputs.ts';
import { isJsonObject, type Json, type JsonObject } from '../json.ts';
import { readExec, readOutputs } from './runs.ts';
import {
  cellLanguage, parseSqlMagic, readJupyterNotebook, readJupyterRecord, setCellLanguage, sqlMagicLine, writeJupyterNotebook, writeJupyterRecord,
  type JupyterCellRecord,
} from './jupyter.ts';

type NbCell = {
  id?: string;
  cell_type: string;
  source: string | string[];
  metadata: JsonObject;
  attachments?: JsonObject;
  outputs?: Json[];
  execution_count?: number | null;
};

const lines = (s: string): string[] => (s === '' ? [] : s.split(/(?<=\n)/));
const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A table as an HTML `<table>` (escaped). */
export function tableHtml(columns: Array<{ name: string }>, rows: Array<Record<string, Json>>, totalRows: number): string {
  const head = columns.map((c) => `<th>${escapeHtml(c.name)}</th>`).join('');
  const body = rows.map((r) => `<tr>${columns.map((c) => `<td>${escapeHtml(r[c.name] === null || r[c.name] === undefined ? '' : typeof r[c.name] === 'object' ? JSON.stringify(r[c.name]) : String(r[c.name]))}</td>`).join('')}</tr>`).join('');
  const more = totalRows > rows.length ? `<caption>${rows.length} of ${totalRows} rows</caption>` : '';
  return `<table>${more}<thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

function nbOutput(o: CellOutput, count: number | null, drawn?: DrawnOutput): Record<string, unknown> {
  switch (o.type) {
    case 'stream':
      return { output_type: 'stream', name: o.name, text: lines(o.text) };
    case 'error':
      return { output_type: 'error', ename: o.name, evalue: o.message, traceback: o.stack ? o.stack.split('\n') : [`${o.name}: ${o.message}`] };
    case 'text':
      return { output_type: 'execute_result', execution_count: count, metadata: {}, data: { 'text/plain': lines(o.text) } };
    case 'json':
      return { output_type: 'execute_result', execution_count: count, metadata: {}, data: { 'application/json': o.value, 'text/plain': lines(JSON.stringify(o.value, null, 1)) } };
    case 'table':
      return {
        output_type: 'execute_result', execution_count: count, metadata: {},
        data: { 'text/html': lines(tableHtml(o.columns, o.rows, o.totalRows)), 'text/plain': [`${o.totalRows} rows × ${o.columns.length} columns`] },
      };
    case 'chart': {
      // Beside the spec, the drawn chart as SVG: what Jupyter, VS Code and nbviewer show.
      const svg = drawn && 'svg' in drawn ? { 'image/svg+xml': lines(drawn.svg) } : {};
      return { output_type: 'display_data', metadata: {}, data: { [o.format === 'vega-lite' ? 'application/vnd.vegalite.v5+json' : 'application/vnd.plexus.plot+json']: o.spec, ...svg, 'text/plain': [`${o.format} chart`] } };
    }
    case 'image':
      return { output_type: 'display_data', metadata: {}, data: { [o.mime]: o.data ?? (drawn && 'image' in drawn ? drawn.image.data : ''), 'text/plain': ['image'] } };
  }
}

const CELL_ID = /^[a-zA-Z0-9-_]{1,64}$/;

function exportCell(c: CellView, nbLanguage: string, usedIds: Set<string>, charts: ChartImages): NbCell {
  const rec = readJupyterRecord(c);
  let id = rec?.id && CELL_ID.test(rec.id) && !usedIds.has(rec.id) ? rec.id : CELL_ID.test(c.id) && !usedIds.has(c.id) ? c.id : '';
  for (let n = 1; !id; n++) if (!usedIds.has(`${c.id.slice(0, 56)}-${n}`.replace(/[^a-zA-Z0-9-_]/g, '_'))) id = `${c.id.slice(0, 56)}-${n}`.replace(/[^a-zA-Z0-9-_]/g, '_');
  usedIds.add(id);
  const metadata: JsonObject = rec ? { ...rec.metadata } : {};
  if (c.kind === 'markdown') {
    const md = cellSource(c);
    const attachments = rec?.attachments ? { attachments: rec.attachments } : {};
    // Unchanged since import (the rich text renders as it did): the original text, byte for byte.
    if (rec && rec.cellType !== 'code' && rec.rendered === md) return { id, cell_type: rec.cellType, metadata, ...attachments, source: lines(rec.source) };
    return { id, cell_type: 'markdown', metadata, ...attachments, source: lines(md) };
  }
  const exec = readExec(c);
  const text = cellSource(c);
  let source = text;
  let describes = rec !== null && rec.kind === c.kind && !isJsonObject(rec.metadata.plexus);
  if (c.kind === 'sql') {
    if (rec?.sqlMagic !== undefined) {
      const orig = parseSqlMagic(rec.source);
      const sameName = (c.name ?? '') === (rec.sqlName ?? '');
      source = sameName && orig && orig.sql === text ? rec.source : `${sqlMagicLine(rec, c.name)}\n${text}`;
      describes = true;
    } else describes = false;
  } else if (cellLanguage(c) === 'javascript' && nbLanguage !== 'javascript') describes = false; // JavaScript in, say, a Python notebook
  if (!describes) metadata.plexus = c.kind === 'sql' ? { kind: 'sql', ...(c.name ? { name: c.name } : {}) } : { kind: 'code' };
  const count = exec ? exec.count : (rec?.executionCount ?? null);
  const outputs: Json[] = exec ? readOutputs(c).map((o, i) => nbOutput(o, count, charts.get(chartKey(c.id, i))) as unknown as Json) : (rec?.outputs ?? []);
  return { id, cell_type: 'code', execution_count: count, metadata, source: lines(source), outputs };
}

/** The notebook as an nbformat 4.5 document. */
export function notebookToIpynb(doc: Y.Doc, charts: ChartImages = new Map()): Record<string, unknown> {
  const nb = readJupyterNotebook(doc);
  const metadata: JsonObject = nb
    ? nb.metadata
    : {
        title: getTitle(doc),
        kernelspec: { name: 'plexus', display_name: 'Plexus (JavaScript + SQL)', language: 'javascript' },
        language_info: { name: 'javascript' },
      };
  const language = notebookLanguage(metadata);
  const used = new Set<string>();
  const cells = listCells(doc).map((c) => exportCell(c, language, used, charts));
  return { nbformat: 4, nbformat_minor: 5, metadata, cells };
}

/** A cell to create from an imported notebook. */
export interface ImportedCell {
  kind: CellKind;
  source: string;
  name?: string;
  /** The language of a code cell (as noted in the notebook); `sql` for SQL cells. */
  language?: string;
  /** What the cell was in the notebook (written with it; see `jupyter.ts`). */
  jupyter: JupyterCellRecord;
}

/** A converted notebook: its cells and metadata. */
export interface ImportedNotebook {
  cells: ImportedCell[];
  metadata: JsonObject;
}

/** Most cells one import may hold. */
export const MAX_IMPORT_CELLS = 5000;

const text = (s: unknown): string => (Array.isArray(s) ? s.join('') : typeof s === 'string' ? s : '');

function notebookLanguage(meta: JsonObject): string {
  const ks = isJsonObject(meta.kernelspec) ? meta.kernelspec : {};
  const li = isJsonObject(meta.language_info) ? meta.language_info : {};
  const l = typeof ks.language === 'string' ? ks.language : typeof li.name === 'string' ? li.name : 'python';
  const low = l.toLowerCase();
  return low === 'typescript' ? 'javascript' : low;
}

const isMultiline = (v: unknown): boolean => typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string'));

/** Checks one cell's shape; returns an error message or null. */
function cellProblem(c: unknown): string | null {
  if (!isJsonObject(c)) return 'is not an object';
  if (typeof c.cell_type !== 'string') return 'has no "cell_type"';
  if (!['markdown', 'code', 'raw'].includes(c.cell_type)) return `has an unknown cell_type "${c.cell_type}"`;
  if (!isMultiline(c.source)) return '"source" must be a string or a list of strings';
  if (c.metadata !== undefined && !isJsonObject(c.metadata)) return '"metadata" must be an object';
  if (c.id !== undefined && typeof c.id !== 'string') return '"id" must be a string';
  if (c.attachments !== undefined && !isJsonObject(c.attachments)) return '"attachments" must be an object';
  if (c.cell_type === 'code') {
    if (c.outputs !== undefined && !Array.isArray(c.outputs)) return '"outputs" must be a list';
    for (const [j, o] of ((c.outputs as unknown[] | undefined) ?? []).entries()) {
      if (!isJsonObject(o) || typeof o.output_type !== 'string') return `output ${j + 1} has no "output_type"`;
      if (o.output_type === 'stream' && !isMultiline(o.text)) return `output ${j + 1}: a stream's "text" must be a string or a list of strings`;
      if ((o.output_type === 'execute_result' || o.output_type === 'display_data') && !isJsonObject(o.data)) return `output ${j + 1}: "data" must be an object`;
      if (o.output_type === 'error' && (!Array.isArray(o.traceback) || typeof o.ename !== 'string')) return `output ${j + 1}: an error needs "ename" and a "traceback" list`;
    }
    const ec = c.execution_count;
    if (ec !== undefined && ec !== null && !(Number.isInteger(ec) && (ec as number) >= 0)) return '"execution_count" must be a non-negative integer or null';
  }
  return null;
}

/** What the rich text of a markdown cell renders to right after importing `markdown`. */
function renderedMarkdown(markdown: string): string {
  const frag = new Y.Doc().getXmlFragment('scratch');
  markdownToFragment(frag, markdown);
  return fragmentToMarkdown(frag);
}

/**
 * Converts an nbformat 4 notebook (parsed JSON). Throws a clear Error (naming the cell) when `nb`
 * is not one; converts nothing partially.
 */
export function ipynbToNotebook(nb: unknown): ImportedNotebook {
  if (!isJsonObject(nb)) throw new Error('not a Jupyter notebook: expected a JSON object');
  if (nb.nbformat !== undefined && nb.nbformat !== 4) {
    throw new Error(`unsupported nbformat ${JSON.stringify(nb.nbformat)}: Plexus reads nbformat 4 (convert with "jupyter nbconvert --to notebook --nbformat 4")`);
  }
  if (!Array.isArray(nb.cells)) throw new Error('not a Jupyter notebook: no "cells" list');
  if (nb.metadata !== undefined && !isJsonObject(nb.metadata)) throw new Error('not a Jupyter notebook: "metadata" must be an object');
  if (nb.cells.length > MAX_IMPORT_CELLS) throw new Error(`the notebook has ${nb.cells.length} cells; at most ${MAX_IMPORT_CELLS} can be imported`);
  const metadata = (nb.metadata ?? {}) as JsonObject;
  const lang = notebookLanguage(metadata);
  const out: ImportedCell[] = [];
  nb.cells.forEach((raw, i) => {
    const problem = cellProblem(raw);
    if (problem) throw new Error(`cell ${i + 1} ${problem}`);
    const c = raw as unknown as NbCell;
    const source = text(c.source);
    const meta = (c.metadata ?? {}) as JsonObject;
    const base = {
      ...(c.id !== undefined ? { id: c.id } : {}),
      metadata: meta,
      ...(c.attachments !== undefined && c.cell_type !== 'code' ? { attachments: c.attachments } : {}),
      source,
      outputs: c.cell_type === 'code' ? (c.outputs ?? []) : [],
      executionCount: c.cell_type === 'code' ? (c.execution_count ?? null) : null,
    };
    const plexus = isJsonObject(meta.plexus) ? meta.plexus : null;
    if (c.cell_type === 'markdown' || c.cell_type === 'raw') {
      const md = c.cell_type === 'raw' ? '```\n' + source + '\n```' : source;
      out.push({ kind: 'markdown', source: md, jupyter: { cellType: c.cell_type, kind: 'markdown', ...base, rendered: renderedMarkdown(md) } });
      return;
    }
    const magic = parseSqlMagic(source);
    const sqlName = typeof plexus?.name === 'string' ? plexus.name : undefined;
    if (plexus?.kind === 'sql') {
      out.push({ kind: 'sql', source, language: 'sql', ...(sqlName ? { name: sqlName } : {}), jupyter: { cellType: 'code', kind: 'sql', ...base } });
    } else if (magic && plexus?.kind !== 'code') {
      out.push({
        kind: 'sql', source: magic.sql, language: 'sql', ...(magic.name ? { name: magic.name } : {}),
        jupyter: { cellType: 'code', kind: 'sql', ...base, sqlMagic: magic.magic, ...(magic.name ? { sqlName: magic.name } : {}) },
      });
    } else if (plexus?.kind === 'code' || lang === 'javascript') {
      out.push({ kind: 'code', source, language: 'javascript', jupyter: { cellType: 'code', kind: 'code', ...base } });
    } else out.push({ kind: 'code', source, language: lang, jupyter: { cellType: 'code', kind: 'code', ...base } });
  });
  return { cells: out, metadata };
}

/** Cells of an nbformat 4 notebook; throws a clear Error when `nb` is not one. */
export function ipynbToCells(nb: unknown): ImportedCell[] {
  return ipynbToNotebook(nb).cells;
}

/**
 * Appends an imported notebook's cells (with their Jupyter records) to the document and records
 * its metadata, all in one transaction. Returns the new cells' ids.
 */
export function importNotebook(doc: Y.Doc, nb: ImportedNotebook, author: string, origin: Origin): CellId[] {
  const ids: CellId[] = [];
  doc.transact(() => {
    for (const c of nb.cells) {
      const id = createCell(doc, { kind: c.kind, source: c.source, author, ...(c.name ? { name: c.name } : {}) }, origin);
      const cell = getCell(doc, id)!;
      if (c.kind === 'code' && c.language && c.language !== 'javascript') setCellLanguage(doc, cell, c.language, origin);
      writeJupyterRecord(doc, cell, c.jupyter, origin);
      ids.push(id);
    }
    writeJupyterNotebook(doc, nb.metadata, origin);
  }, origin);
  return ids;
}
