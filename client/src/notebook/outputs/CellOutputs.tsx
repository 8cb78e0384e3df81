/**
 * The outputs of a cell's latest run: streams (stderr tinted), text, JSON trees, paged tables,
 * errors with their line, charts (lazy-loaded renderers) and images. Rendering is capped (first
 * `MAX_SHOWN` outputs, long texts folded) so a chatty cell cannot freeze the page.
 */
import { lazy, Suspense, useState } from 'react';
import type { CellOutput } from '@plexus/shared';
import { JsonTree } from './JsonTree.tsx';
import { TableOutput } from './TableOutput.tsx';
import { ImageOutput } from './ImageOutput.tsx';

const ChartOutput = lazy(() => import('./ChartOutput.tsx'));

const MAX_SHOWN = 50;
/** Characters of a text shown before "show all". */
const TEXT_FOLD = 8000;

/** "TypeError: x is undefined"; a message that already starts with its name is not repeated. */
function errorHeadline(name: string, message: string) {
  if (!name || message.toLowerCase().startsWith(name.toLowerCase())) return <strong>{message}</strong>;
  return (
    <>
      <strong>{name}</strong>: {message}
    </>
  );
}

export function FoldedText({ text, className, testId, name }: { text: string; className: string; testId: string; name?: string }) {
  const [all, setAll] = useState(false);
  const long = text.length > TEXT_FOLD;
  return (
    <pre className={className} data-testid={testId} data-name={name}>
      {long && !all ? text.slice(0, TEXT_FOLD) : text}
      {long && !all && (
        <button className="link-btn" onClick={() => setAll(true)}>
          … show all {text.length.toLocaleString()} characters
        </button>
      )}
    </pre>
  );
}

function Output({ out }: { out: CellOutput }) {
  switch (out.type) {
    case 'stream':
      return <FoldedText text={out.text} className={`out-stream out-${out.name}`} testId="output-stream" name={out.name} />;
    case 'text':
      return <FoldedText text={out.text} className="out-text" testId="output-text" />;
    case 'json':
      return (
        <div className="out-json" data-testid="output-json">
          {out.value === null && out.ref ? <span className="muted">value too large for the notebook (result {out.ref})</span> : <JsonTree value={out.value} />}
          {out.truncated && <div className="muted">(cut for display)</div>}
        </div>
      );
    case 'table':
      return <TableOutput out={out} />;
    case 'error':
      return (
        <div className="out-error" data-testid="output-error" role="alert">
          {errorHeadline(out.name, out.message)}
          {out.line !== undefined && (
            <span className="error-line" data-testid="error-line">
              {' '}
              (line {out.line}
              {out.column !== undefined ? `, column ${out.column + 1}` : ''})
            </span>
          )}
          {out.stack && (
            <details>
              <summary>stack</summary>
              <pre>{out.stack}</pre>
            </details>
          )}
        </div>
      );
    case 'chart':
      return (
        <Suspense fallback={<div className="out-chart muted">Loading chart…</div>}>
          <ChartOutput out={out} />
        </Suspense>
      );
    case 'image':
      return <ImageOutput out={out} />;
  }
}

export function CellOutputs({ outputs, stale }: { outputs: CellOutput[]; stale: boolean }) {
  const [all, setAll] = useState(false);
  if (!outputs.length) return null;
  const shown = all ? outputs : outputs.slice(0, MAX_SHOWN);
  return (
    <div className={`cell-outputs${stale ? ' is-stale' : ''}`} data-testid="cell-outputs">
      {shown.map((o, i) => (
        <div className="output" data-testid="output" data-type={o.type} key={i}>
          <Output out={o} />
        </div>
      ))}
      {shown.length < outputs.length && (
        <button className="link-btn" onClick={() => setAll(true)}>
          Show {outputs.length - shown.length} more outputs
        </button>
      )}
    </div>
  );
}
