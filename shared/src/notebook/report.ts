/**
 * The notebook as a self-contained HTML report: title, markdown rendered from the cells' rich text,
 * code and SQL with their outputs (tables, text, JSON, errors, images inline; charts as static SVG
 * images drawn by the server beforehand — the report runs no script — or, where a chart could not
 * be drawn, the reason and its spec). Cells imported from Jupyter that Plexus has not run show
 * their imported outputs: HTML through an allowlist sanitiser, images as data: URLs, tracebacks as
 * text without ANSI colours. Everything else is escaped; no remote resource is referenced.
 * Pure module.
 */
import * as Y from 'yjs';
import { cellFragment, cellSource, listCells } from '../cells.ts';
import { getTitle } from '../schema.ts';
import { tableHtml } from './ipynb.ts';
import { chartKey, type ChartImages, type DrawnOutput } from './chart-images.ts';
import type { CellOutput } from './outputs.ts';
import { readExec, readOutputs, staleReason } from './runs.ts';
import { cellLanguage, displayJupyterOutput, imageDataUrl, isRunnableCell, languageLabel, readJupyterRecord, sanitizeHtml } from './jupyter.ts';
import type { Json } from '../json.ts';

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const TAGS: Record<string, string> = {
  paragraph: 'p', bulletList: 'ul', orderedList: 'ol', listItem: 'li', blockquote: 'blockquote', horizontalRule: 'hr', hardBreak: 'br',
};

function inline(t: Y.XmlText): string {
  return (t.toDelta() as Array<{ insert: unknown; attributes?: Record<string, unknown> }>)
    .map((d) => {
      let s = esc(typeof d.insert === 'string' ? d.insert : '');
      const a = d.attributes ?? {};
      if (a.code) s = `<code>${s}</code>`;
      if (a.bold) s = `<strong>${s}</strong>`;
      if (a.italic) s = `<em>${s}</em>`;
      return s;
    })
    .join('');
}

function node(n: Y.XmlElement | Y.XmlText): string {
  if (n instanceof Y.XmlText) return inline(n);
  const kids = n.toArray().map((k) => node(k as Y.XmlElement | Y.XmlText)).join('');
  const name = n.nodeName;
  if (name === 'heading') {
    const level = Math.min(6, Math.max(1, Number(n.getAttribute('level') ?? 1)));
    return `<h${level}>${kids}</h${level}>`;
  }
  if (name === 'codeBlock') return `<pre><code>${kids}</code></pre>`;
  const tag = TAGS[name] ?? 'div';
  return tag === 'hr' || tag === 'br' ? `<${tag}>` : `<${tag}>${kids}</${tag}>`;
}

/** Every chart output of the notebook with its key (for drawing them before an export). */
export function chartOutputs(doc: Y.Doc): Array<{ key: string; format: 'vega-lite' | 'plot'; spec: Json | null; ref?: string }> {
  const out: Array<{ key: string; format: 'vega-lite' | 'plot'; spec: Json | null; ref?: string }> = [];
  for (const c of listCells(doc)) {
    if (c.kind === 'markdown' || !readExec(c)) continue;
    readOutputs(c).forEach((o, i) => {
      if (o.type === 'chart') out.push({ key: chartKey(c.id, i), format: o.format, spec: o.spec, ...(o.ref ? { ref: o.ref } : {}) });
    });
  }
  return out;
}

/** The outputs of run cells that are images kept on the server (too large for the document), by output key. */
export function storedImageOutputs(doc: Y.Doc): Array<{ key: string; ref: string }> {
  const out: Array<{ key: string; ref: string }> = [];
  for (const c of listCells(doc)) {
    if (c.kind === 'markdown' || !readExec(c)) continue;
    readOutputs(c).forEach((o, i) => {
      if (o.type === 'image' && !o.data && o.ref) out.push({ key: chartKey(c.id, i), ref: o.ref });
    });
  }
  return out;
}

function chartHtml(o: Extract<CellOutput, { type: 'chart' }>, drawn: DrawnOutput | undefined): string {
  const label = o.format === 'vega-lite' ? 'Vega-Lite' : 'Plot';
  if (drawn && 'svg' in drawn) return `<figure class="chart"><img alt="${label} chart" src="data:image/svg+xml;charset=utf-8,${encodeURIComponent(drawn.svg)}"></figure>`;
  const why = drawn && 'error' in drawn ? `${label} chart could not be drawn: ${drawn.error}` : `${label} chart`;
  return `<details class="chart"><summary>${esc(why)} (spec)</summary><pre>${esc(JSON.stringify(o.spec, null, 1))}</pre></details>`;
}

function output(o: CellOutput, drawn?: DrawnOutput): string {
  switch (o.type) {
    case 'stream':
      return `<pre class="${o.name}">${esc(o.text)}</pre>`;
    case 'text':
      return `<pre class="value">${esc(o.text)}</pre>`;
    case 'json':
      return `<pre class="value">${esc(JSON.stringify(o.value, null, 2))}</pre>`;
    case 'table':
      return tableHtml(o.columns, o.rows, o.totalRows);
    case 'error':
      return `<pre class="error">${esc(`${o.name}: ${o.message}${o.line ? ` (line ${o.line})` : ''}`)}</pre>`;
    case 'chart':
      return chartHtml(o, drawn);
    case 'image': {
      const data = o.data ?? (drawn && 'image' in drawn ? drawn.image.data : undefined);
      if (!data) return '<p class="note">image stored on the server</p>';
      const src = o.mime === 'image/svg+xml' ? `data:image/svg+xml;charset=utf-8,${encodeURIComponent(data)}` : `data:${esc(o.mime)};base64,${esc(data)}`;
      return /^image\/(png|jpeg|gif|webp|svg\+xml)$/.test(o.mime) ? `<img alt="cell image" src="${src}">` : '';
    }
  }
}

/** One imported nbformat output (Jupyter's richest safe MIME type). */
function jupyterOutput(raw: Json): string {
  const d = displayJupyterOutput(raw);
  switch (d.kind) {
    case 'stream':
      return `<pre class="${d.name === 'stderr' ? 'stderr' : 'stdout'}">${esc(d.text)}</pre>`;
    case 'error':
      return `<pre class="error">${esc(`${d.ename}: ${d.evalue}`)}${d.traceback ? `\n\n${esc(d.traceback)}` : ''}</pre>`;
    case 'unknown':
      return `<p class="note">${esc(d.outputType)} output (not shown)</p>`;
    case 'mime': {
      if (d.mime === 'text/html') return `<div class="html-output">${sanitizeHtml(d.data)}</div>`;
      if (d.mime.startsWith('image/')) {
        const src = imageDataUrl(d.mime, d.data);
        return src ? `<img alt="output" src="${esc(src)}">` : '';
      }
      return `<pre class="value">${esc(d.data)}</pre>`;
    }
  }
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
section{margin:1.2rem 0}pre{background:#f5f5f7;padding:.6rem;overflow:auto;border-radius:4px}
pre.source{border-left:3px solid #4a7bd0}pre.error{background:#fdecec;color:#9b1c1c}pre.stderr{background:#fff7e0}
.meta{color:#6e6e73;font-size:12px}table{border-collapse:collapse;font-size:13px;margin:.4rem 0}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}caption{caption-side:bottom;color:#6e6e73;font-size:12px}
.stale{color:#a15c00}img{max-width:100%}.note{color:#6e6e73}figure.chart{margin:.5rem 0}`;

/** The whole report as one HTML document. */
export function notebookToHtml(doc: Y.Doc, charts: ChartImages = new Map()): string {
  const title = getTitle(doc);
  const parts = listCells(doc).map((c) => {
    if (c.kind === 'markdown') {
      const f = cellFragment(c);
      return `<section class="markdown">${f ? f.toArray().map((n) => node(n as Y.XmlElement)).join('') : ''}</section>`;
    }
    const exec = readExec(c);
    const stale = staleReason(c);
    const kind = c.kind === 'sql' ? `SQL${c.name ? ` → ${esc(c.name)}` : ''}` : isRunnableCell(c) ? 'JavaScript' : `${esc(languageLabel(cellLanguage(c)))} — not runnable in Plexus`;
    const rec = readJupyterRecord(c);
    if (!exec && rec) {
      const count = rec.executionCount === null ? '' : `[${rec.executionCount}] `;
      return `<section class="${c.kind}"><div class="meta">${count}${kind} · imported from Jupyter</div><pre class="source">${esc(cellSource(c))}</pre>${rec.outputs.map(jupyterOutput).join('')}</section>`;
    }
    const meta = exec
      ? `<div class="meta">[${exec.count}] ${kind} · ${esc(exec.state)}${exec.durationMs !== null ? ` · ${exec.durationMs} ms` : ''}${stale ? ` · <span class="stale">stale: ${esc(stale)}</span>` : ''}</div>`
      : `<div class="meta">${kind} · not run</div>`;
    return `<section class="${c.kind}">${meta}<pre class="source">${esc(cellSource(c))}</pre>${readOutputs(c).map((o, i) => output(o, charts.get(chartKey(c.id, i)))).join('')}</section>`;
  });
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><style>${STYLE}</style></head><body><h1>${esc(title)}</h1>${parts.join('\n')}<footer class="meta">Exported from Plexus ${esc(new Date().toISOString())}</footer></body></html>`;
}
