/**
 * Summaries of one uploaded table, read from its DuckDB file opened read-only: per-column
 * statistics (DuckDB's SUMMARIZE, plus exact non-null counts) and histograms of numeric columns.
 * For `GET /api/workspaces/:id/data/:name/describe` and `…/histogram`.
 * Effects: DuckDB (the table file, read-only).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { DataError, isNumericType, quoteIdent, withDuckDB, type DataLimits } from './guarded-duckdb.ts';

export const DEFAULT_BINS = 20;
export const MAX_BINS = 200;

type Stat = number | string | null;

export interface ColumnSummary {
  name: string;
  type: string;
  /** Non-null values. */
  count: number;
  nulls: number;
  /** Distinct values (DuckDB's approx_unique: a HyperLogLog estimate). */
  distinct: number | null;
  /** Numbers for numeric columns; other columns' min/max as DuckDB prints them; null where not applicable. */
  min: Stat;
  max: Stat;
  mean: Stat;
  std: Stat;
  /** Quartiles (DuckDB's approximate quantiles), numeric and temporal columns. */
  q25: Stat;
  q50: Stat;
  q75: Stat;
}

export interface TableSummary {
  name: string;
  rows: number;
  columns: ColumnSummary[];
}

export interface Histogram {
  column: string;
  /** bins + 1 edges; bin i holds edges[i] ≤ v < edges[i+1], the last bin also max. Empty when no finite value. */
  edges: number[];
  counts: number[];
  min: number | null;
  max: number | null;
  nulls: number;
  /** NaN and ±Infinity values (not in any bin). */
  nonFinite: number;
}

const num = (v: unknown): number | null => {
  if (v === null || v === undefined) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
};

function stat(v: unknown, numeric: boolean): Stat {
  if (v === null || v === undefined) return null;
  return numeric ? num(v) : String(v);
}

async function columnsOf(conn: DuckDBConnection): Promise<Array<{ name: string; type: string }>> {
  const r = await conn.runAndReadAll('DESCRIBE data');
  return r.getRowObjectsJS().map((c) => ({ name: String(c.column_name), type: String(c.column_type) }));
}

/** Per-column statistics of the table stored in `file`. */
export function describeTable(file: string, name: string, limits: DataLimits): Promise<TableSummary> {
  return withDuckDB(file, limits, async (conn) => {
    const summary = (await conn.runAndReadAll('SUMMARIZE data')).getRowObjectsJS();
    const names = summary.map((s) => String(s.column_name));
    // SUMMARIZE gives null percentages rounded to 0.01 %: count exactly, in one pass.
    const counts = (await conn.runAndReadAll(`SELECT count(*)${names.map((n) => `, count(${quoteIdent(n)})`).join('')} FROM data`)).getRowsJS()[0]!.map(Number);
    const rows = counts[0]!;
    const columns = summary.map((s, i): ColumnSummary => {
      const type = String(s.column_type);
      const numeric = isNumericType(type);
      const count = counts[i + 1]!;
      return {
        name: names[i]!,
        type,
        count,
        nulls: rows - count,
        distinct: num(s.approx_unique),
        min: stat(s.min, numeric),
        max: stat(s.max, numeric),
        mean: stat(s.avg, numeric),
        std: stat(s.std, numeric),
        q25: stat(s.q25, numeric),
        q50: stat(s.q50, numeric),
        q75: stat(s.q75, numeric),
      };
    });
    return { name, rows, columns };
  });
}

/**
 * Histogram of numeric column `column` in `bins` equal-width bins from its min to its max (finite
 * values only; a column holding one value gets the range value ± 0.5).
 */
export function columnHistogram(file: string, column: string, bins: number, limits: DataLimits): Promise<Histogram> {
  return withDuckDB(file, limits, async (conn) => {
    const cols = await columnsOf(conn);
    const col = cols.find((c) => c.name === column);
    if (!col) throw new DataError(400, 'unknown-column', `no column "${column}" in this table; its columns: ${cols.map((c) => c.name).join(', ')}`);
    if (!isNumericType(col.type)) throw new DataError(400, 'not-numeric', `column "${column}" is ${col.type}, not numeric: histograms need numbers`);
    const values = `(SELECT CAST(${quoteIdent(column)} AS DOUBLE) AS v FROM data)`;
    const range = (
      await conn.runAndReadAll(`SELECT min(v) FILTER (WHERE isfinite(v)) AS lo, max(v) FILTER (WHERE isfinite(v)) AS hi,
        count(*) FILTER (WHERE v IS NULL) AS nulls, count(*) FILTER (WHERE NOT isfinite(v)) AS nonfinite FROM ${values}`)
    ).getRowObjectsJS()[0]!;
    const min = num(range.lo);
    const max = num(range.hi);
    const base = { column, min, max, nulls: Number(range.nulls), nonFinite: Number(range.nonfinite) };
    if (min === null || max === null) return { ...base, edges: [], counts: [] };
    const lo = min === max ? min - 0.5 : min;
    const hi = min === max ? max + 0.5 : max;
    const width = (hi - lo) / bins;
    const edges = Array.from({ length: bins + 1 }, (_, i) => (i === bins ? hi : lo + i * width));
    const counts = new Array<number>(bins).fill(0);
    const binned = await conn.runAndReadAll(
      `SELECT least(greatest(floor((v - $lo) / $width), 0), $last)::BIGINT AS bin, count(*) AS n FROM ${values} WHERE isfinite(v) GROUP BY bin`,
      { lo, width, last: bins - 1 },
    );
    for (const r of binned.getRowObjectsJS()) counts[Number(r.bin)] = Number(r.n);
    return { ...base, edges, counts };
  });
}
