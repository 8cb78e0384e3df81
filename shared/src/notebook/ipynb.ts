/**
 * Jupyter `.ipynb` (nbformat 4) conversion. Export writes every cell in notebook order with its
 * outputs (tables as HTML + plain text, charts under their Vega-Lite / Plot MIME types, errors as
 * error outputs); SQL cells are code cells marked `metadata.plexus = { kind: 'sql', name }`.
 * Import keeps markdown as markdown, JavaScript and SQL code as cells of that kind, and code in any
 * other language as text (a markdown cell holding a fenced code block, its language noted).
 * Pure module.
 */
import type * as Y from 'yjs';
import { cellSource, listCells, type CellKind } from '../cells.ts';
import { getTitle } from '../schema.ts';
import type { CellOutput } from './outputs.ts';
import type { Json } from '../json.ts';
import { readExec, readOutputs } from './runs.ts';

type NbCell = { cell_type: string; source: string | string[]; metadata?: Record<string, unknown>; outputs?: unknown[]; execution_count?: number | null };

const lines = (s: string): string[] => (s === '' ? [] : s.split(/(?<=\n)/));
const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A table as an HTML `<table>` (escaped). */
export function tableHtml(columns: Array<{ name: string }>, rows: Array<Record<string, Json>>, totalRows: number): string {
  const head = columns.map((c) => `<th>${escapeHtml(c.name)}</th>`).join('');
  const body = rows.map((r) => `<tr>${columns.map((c) => `<td>${escapeHtml(r[c.name] === null || r[c.name] === undefined ? '' : typeof r[c.name] === 'object' ? JSON.stringify(r[c.name]) : String(r[c.name]))}</td>`).join('')}</tr>`).join('');
  const more = totalRows > rows.length ? `<caption>${rows.length} of ${totalRows} rows</caption>` : '';
  return `<table>${more}<thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

function nbOutput(o: CellOutput, count: number | null): Record<string, unknown> {
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
    case 'chart':
      return { output_type: 'display_data', metadata: {}, data: { [o.format === 'vega-lite' ? 'application/vnd.vegalite.v5+json' : 'application/vnd.plexus.plot+json']: o.spec, 'text/plain': [`${o.format} chart`] } };
    case 'image':
      return { output_type: 'display_data', metadata: {}, data: { [o.mime]: o.data ?? '', 'text/plain': ['image'] } };
  }
}

/** The notebook as an nbformat 4 document. */
export function notebookToIpynb(doc: Y.Doc): Record<string, unknown> {
  const cells: NbCell[] = listCells(doc).map((c) => {
    const source = lines(cellSource(c));
    if (c.kind === 'markdown') return { cell_type: 'markdown', metadata: {}, source };
    const exec = readExec(c);
    const count = exec ? exec.count : null;
    return {
      cell_type: 'code',
      execution_count: count,
      metadata: c.kind === 'sql' ? { plexus: { kind: 'sql', ...(c.name ? { name: c.name } : {}) } } : { plexus: { kind: 'code' } },
      source,
      outputs: readOutputs(c).map((o) => nbOutput(o, count)),
    };
  });
  return {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      title: getTitle(doc),
      kernelspec: { name: 'plexus', display_name: 'Plexus (JavaScript + SQL)', language: 'javascript' },
      language_info: { name: 'javascript' },
    },
    cells,
  };
}

/** A cell to create from an imported notebook. */
export interface ImportedCell {
  kind: CellKind;
  source: string;
  name?: string;
  /** The language of a code cell (as noted in the notebook). */
  language?: string;
}

const text = (s: unknown): string => (Array.isArray(s) ? s.join('') : typeof s === 'string' ? s : '');

/** Cells of an nbformat 4 notebook; throws a clear Error when `nb` is not one. */
export function ipynbToCells(nb: unknown): ImportedCell[] {
  if (!nb || typeof nb !== 'object' || !Array.isArray((nb as { cells?: unknown }).cells)) throw new Error('not a Jupyter notebook: no "cells" list');
  const meta = ((nb as { metadata?: Record<string, any> }).metadata ?? {}) as Record<string, any>;
  const lang = String(meta.language_info?.name ?? meta.kernelspec?.language ?? 'python').toLowerCase();
  const out: ImportedCell[] = [];
  for (const raw of (nb as { cells: unknown[] }).cells.slice(0, 5000)) {
    if (!raw || typeof raw !== 'object') continue;
    const c = raw as NbCell;
    const source = text(c.source);
    const plexus = (c.metadata?.plexus ?? null) as { kind?: string; name?: string } | null;
    if (c.cell_type === 'markdown') out.push({ kind: 'markdown', source });
    else if (c.cell_type === 'raw') out.push({ kind: 'markdown', source: '```\n' + source + '\n```' });
    else if (c.cell_type === 'code') {
      if (plexus?.kind === 'sql') out.push({ kind: 'sql', source, language: 'sql', ...(plexus.name ? { name: plexus.name } : {}) });
      else if (/^%%sql\b/.test(source)) out.push({ kind: 'sql', source: source.replace(/^%%sql[^\n]*\n?/, ''), language: 'sql' });
      else if (plexus?.kind === 'code' || lang === 'javascript' || lang === 'typescript') out.push({ kind: 'code', source, language: 'javascript' });
      else out.push({ kind: 'markdown', source: `*${lang} code (imported as text; this notebook runs JavaScript and SQL):*\n\n\`\`\`${lang}\n${source}\n\`\`\``, language: lang });
    }
  }
  return out;
}
