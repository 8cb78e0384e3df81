/**
 * Cell outputs as the kernel writes them into the document: the output union, its size caps, and
 * the conversion between a plain output and the Y.Map that holds it (stream outputs keep a Y.Text
 * so stdout can grow while a cell runs). Pure module.
 */
import * as Y from 'yjs';

/** A JSON value. */
import type { Json } from '../json.ts';

/** A table column: name and type (DuckDB's type name for SQL results, a JS type name otherwise). */
export interface TableColumn {
  name: string;
  type: string;
}

/** One output of a cell. */
export type CellOutput =
  /** stdout / stderr as the cell printed it (streamed while it runs). */
  | { type: 'stream'; name: 'stdout' | 'stderr'; text: string; truncated?: boolean }
  /** A value shown as text (strings, numbers, functions, symbols...). */
  | { type: 'text'; text: string; truncated?: boolean }
  /** A value shown as a JSON tree (objects, arrays). `ref` fetches the whole value when truncated. */
  | { type: 'json'; value: Json; truncated?: boolean; ref?: string }
  /**
   * A table: arrays of objects and SQL results. `rows` is a preview (first `TABLE_PREVIEW_ROWS`);
   * `ref` pages through all `totalRows` over HTTP (`GET /api/workspaces/:id/results/:ref`).
   */
  | { type: 'table'; columns: TableColumn[]; rows: Array<Record<string, Json>>; totalRows: number; ref?: string }
  /** A chart spec the browser renders: Vega-Lite, or Observable Plot in declarative form (see docs/api.md). */
  | { type: 'chart'; format: 'vega-lite' | 'plot'; spec: Json; ref?: string }
  /** An image: base64 bytes (png, jpeg, gif, webp) or SVG text; `ref` when too large for the document. */
  | { type: 'image'; mime: string; data?: string; ref?: string; width?: number; height?: number }
  /** An error, with the line and column in the cell's own source when known. */
  | { type: 'error'; name: string; message: string; line?: number; column?: number; stack?: string };

export type CellOutputType = CellOutput['type'];

/** Most bytes (JSON) of outputs one cell keeps in the document; larger values live on the server. */
export const MAX_OUTPUT_BYTES_PER_CELL = 64 * 1024;
/** Most characters of stdout+stderr one run streams into the document. */
export const MAX_STREAM_CHARS = 32 * 1024;
/** Rows of a table shown in the document (the rest is paged from the server). */
export const TABLE_PREVIEW_ROWS = 50;

/** Writes `out` into a new Y.Map (not yet integrated; the caller inserts it in a transaction). */
export function outputToMap(out: CellOutput): Y.Map<unknown> {
  const m = new Y.Map<unknown>();
  for (const [k, v] of Object.entries(out)) {
    if (v === undefined) continue;
    if (out.type === 'stream' && k === 'text') m.set('text', new Y.Text(v as string));
    else m.set(k, v);
  }
  return m;
}

/** Reads an output map back into a plain output (null when it is not one). */
export function mapToOutput(m: unknown): CellOutput | null {
  if (!(m instanceof Y.Map)) return null;
  const o: Record<string, unknown> = {};
  m.forEach((v, k) => (o[k] = v instanceof Y.Text ? v.toString() : v));
  return typeof o.type === 'string' ? (o as CellOutput) : null;
}

/** JSON size of a value in bytes (approximate: UTF-16 length of its JSON). */
export const jsonSize = (v: unknown): number => {
  try {
    return JSON.stringify(v)?.length ?? 0;
  } catch {
    return Infinity;
  }
};
