/**
 * Outputs a cell brought from Jupyter (shown until Plexus runs the cell): streams, errors with their
 * traceback as plain text (ANSI colours removed), and for results the richest safe MIME type —
 * HTML through DOMPurify (scripts, event handlers, styles, forms and frames removed: nothing in an
 * imported notebook ever runs), images as data: URLs in <img> (an SVG there runs no script),
 * `text/latex` with KaTeX, JSON as a tree, else text.
 */
import { useEffect, useMemo, useRef } from 'react';
import type * as Y from 'yjs';
import DOMPurify from 'dompurify';
import { displayJupyterOutput, imageDataUrl, importedOutputsStale, type CellView, type Json } from '@plexus/shared';
import { useYVersion } from '../../collab/useY.ts';
import { JsonTree } from './JsonTree.tsx';
import { FoldedText } from './CellOutputs.tsx';
import { latexOutput, renderMath } from '../math/katex.ts';

const PURIFY = {
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'frame', 'object', 'embed', 'link', 'meta', 'base'],
  FORBID_ATTR: ['style', 'srcset', 'action', 'formaction'],
  ALLOW_DATA_ATTR: false,
};

/** Sanitised HTML of an output. Pure (given a DOM). */
export function sanitizeOutputHtml(html: string): string {
  return DOMPurify.sanitize(html, PURIFY) as string;
}

function Html({ html }: { html: string }) {
  return <div className="out-html" data-testid="output-html" dangerouslySetInnerHTML={{ __html: sanitizeOutputHtml(html) }} />;
}

function Latex({ data }: { data: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const { tex, display } = latexOutput(data);
    if (ref.current) renderMath(ref.current, tex, display);
  }, [data]);
  return <div className="out-latex" data-testid="output-latex" ref={ref} />;
}

function Output({ raw }: { raw: Json }) {
  const d = displayJupyterOutput(raw);
  switch (d.kind) {
    case 'stream':
      return <FoldedText text={d.text} className={`out-stream out-${d.name === 'stderr' ? 'stderr' : 'stdout'}`} testId="output-stream" name={d.name} />;
    case 'error':
      return (
        <div className="out-error" data-testid="output-error" role="alert">
          <strong>{d.ename}</strong>: {d.evalue}
          {d.traceback && <pre className="out-traceback" data-testid="output-traceback">{d.traceback}</pre>}
        </div>
      );
    case 'unknown':
      return <div className="muted">{d.outputType} output (kept for export, not shown)</div>;
    case 'mime':
      if (d.mime === 'text/html') return <Html html={d.data} />;
      if (d.mime.startsWith('image/')) {
        const src = imageDataUrl(d.mime, d.data);
        return src ? <img className="out-image" data-testid="output-image" alt="cell output" src={src} /> : null;
      }
      if (d.mime === 'text/latex') return <Latex data={d.data} />;
      if (d.mime === 'application/json') return <div className="out-json" data-testid="output-json"><JsonTree value={d.json ?? null} /></div>;
      return <FoldedText text={d.data} className="out-text" testId="output-text" />;
  }
}

export function JupyterOutputs({ outputs, stale }: { outputs: Json[]; stale: boolean }) {
  if (!outputs.length) return null;
  return (
    <div className={`cell-outputs is-imported${stale ? ' is-stale' : ''}`} data-testid="cell-outputs" data-imported="true" data-stale={stale}>
      {stale && <div className="muted imported-stale" data-testid="imported-stale">Edited since these outputs (from Jupyter)</div>}
      {outputs.map((o, i) => (
        <div className="output" data-testid="output" data-type={displayJupyterOutput(o).kind} key={i}>
          <Output raw={o} />
        </div>
      ))}
    </div>
  );
}

/** The imported outputs of a code or SQL cell, marked stale once its text differs from the import. */
export function ImportedCellOutputs({ view, text, outputs }: { view: CellView; text: Y.Text | null; outputs: Json[] }) {
  const version = useYVersion(text);
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const stale = useMemo(() => importedOutputsStale(view), [view, version]);
  return <JupyterOutputs outputs={outputs} stale={stale} />;
}
