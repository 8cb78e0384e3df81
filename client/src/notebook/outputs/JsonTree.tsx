/**
 * A collapsible JSON tree. Children are rendered only when their node is open (and at most
 * `PAGE` at a time), so a large value costs nothing until someone looks into it.
 */
import { useState } from 'react';
import type { Json } from '@plexus/shared';

const PAGE = 100;

function Scalar({ v }: { v: Json }) {
  if (v === null) return <span className="json-null">null</span>;
  if (typeof v === 'string') return <span className="json-string">{JSON.stringify(v)}</span>;
  if (typeof v === 'number') return <span className="json-number">{String(v)}</span>;
  return <span className="json-bool">{String(v)}</span>;
}

function Node({ name, value, depth }: { name?: string; value: Json; depth: number }) {
  const isObj = value !== null && typeof value === 'object';
  const [open, setOpen] = useState(depth < 1);
  const [limit, setLimit] = useState(PAGE);
  const label = name !== undefined ? <span className="json-key">{name}: </span> : null;
  if (!isObj)
    return (
      <div className="json-row">
        {label}
        <Scalar v={value} />
      </div>
    );
  const entries: Array<[string, Json]> = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  const summary = Array.isArray(value) ? `Array(${value.length})` : `{${entries.length} keys}`;
  return (
    <div className="json-row">
      <button className="json-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? '▾' : '▸'}
      </button>
      {label}
      <span className="json-summary">{summary}</span>
      {open && (
        <div className="json-children">
          {entries.slice(0, limit).map(([k, v]) => (
            <Node key={k} name={k} value={v} depth={depth + 1} />
          ))}
          {entries.length > limit && (
            <button className="link-btn" onClick={() => setLimit(limit + PAGE)}>
              show {Math.min(PAGE, entries.length - limit)} more of {entries.length - limit}
            </button>
          )}
        </div>
      )}
    </div>
  );
}

export function JsonTree({ value }: { value: Json }) {
  return <Node value={value} depth={0} />;
}
