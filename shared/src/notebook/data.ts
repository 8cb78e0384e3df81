/**
 * The `data` registry: one entry per uploaded table (name, columns, types, rows, size, uploader),
 * written by the server after an upload was validated and stored; the bytes live on the server.
 * Entries are immutable plain objects keyed by table name (a re-upload replaces the entry whole).
 * Pure module.
 */
import type * as Y from 'yjs';
import type { Origin } from '../origin.ts';
import { roots } from '../schema.ts';
import { SQL_NAME_PATTERN } from './sql-name.ts';
import type { TableColumn } from './outputs.ts';

export const DATA_FORMATS = ['csv', 'tsv', 'parquet', 'json'] as const;
export type DataFormat = (typeof DATA_FORMATS)[number];

/** One uploaded table as everyone sees it. */
export interface DataTable {
  /** SQL name of the table (cells query it by this name). */
  name: string;
  /** The file name it was uploaded as. */
  fileName: string;
  format: DataFormat;
  columns: TableColumn[];
  rows: number;
  /** Bytes uploaded, and bytes stored on the server. */
  bytes: number;
  storedBytes: number;
  uploadedBy: { id: string; name?: string };
  created: number;
  /**
   * The portable source URL of a segmentation whose segment ids are this table's `id` column
   * (set by the server for tables it makes from a dataset, e.g. the demo's ground-truth neurons
   * and its `labels`): the atlas shows a map's selected rows as those segments in the viewer.
   */
  segmentSource?: string;
}

/** True when `name` may name a table (the same rule as SQL cell names). */
export const isTableName = (name: string): boolean => SQL_NAME_PATTERN.test(name);

/**
 * A table name derived from a file name: the base name without extensions, lower-cased, every
 * other character replaced by `_`, never starting with a digit (`"2024 Trials.csv"` → `t_2024_trials`).
 */
export function tableNameFromFile(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? '';
  let n = base.replace(/(\.(gz|csv|tsv|txt|parquet|json|jsonl|ndjson))+$/i, '').toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  if (!n) n = 'table';
  if (/^[0-9]/.test(n)) n = `t_${n}`;
  return n.slice(0, 63);
}

function readTable(v: unknown): DataTable | null {
  if (!v || typeof v !== 'object') return null;
  const t = v as DataTable;
  return typeof t.name === 'string' && Array.isArray(t.columns) && typeof t.rows === 'number' ? t : null;
}

/** Every registered table, by name. */
export function listTables(doc: Y.Doc): DataTable[] {
  const out: DataTable[] = [];
  roots(doc).data.forEach((v) => {
    const t = readTable(v);
    if (t) out.push(t);
  });
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** One registered table. */
export const getTable = (doc: Y.Doc, name: string): DataTable | null => readTable(roots(doc).data.get(name));

/** Registers (or replaces) a table. Server only: the entry must describe bytes it stored. */
export function registerTable(doc: Y.Doc, table: DataTable, origin: Origin): void {
  if (!isTableName(table.name)) throw new Error(`"${table.name}" is not a valid table name`);
  doc.transact(() => roots(doc).data.set(table.name, table), origin);
}

/** Removes a table from the registry. Returns false when it was not registered. */
export function unregisterTable(doc: Y.Doc, name: string, origin: Origin): boolean {
  let done = false;
  doc.transact(() => {
    if (roots(doc).data.has(name)) {
      roots(doc).data.delete(name);
      done = true;
    }
  }, origin);
  return done;
}
