/**
 * The server's reads of a map's tables (its source table and its coordinates table, both stored
 * DuckDB files of one table `data`): the points the panel draws (coordinates in row order, with a
 * colour column), rows by number (tooltips, category cards), the source's columns (colour and
 * column pickers), and the selection exported as a Parquet file of the rows inside it. Every read
 * opens a private in-memory DuckDB under the data-read limits (guarded-duckdb.ts: one thread, a
 * memory cap, a time limit, at most two at once) with the files attached read-only, after taking
 * each file's turn (in name order, so two readers never wait on each other).
 * Effects: DuckDB reads, one Parquet file written per selection export.
 */
import fs from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import { encodePoints, inSelection, selectionBoundingBox, type AtlasSelection, type Json, type PointsColor, type PointsInput, type TableColumn } from '@plexus/shared';
import { DataError, fileTurn, isNumericType, quoteIdent, quoteLiteral, withDuckDB, type DataLimits } from '../data/guarded-duckdb.ts';
import { jsonRow } from '../kernel/results.ts';
import { MAP_COLUMNS, sourceColumnName } from './table-names.ts';

/** Yields to the event loop (long loops in the server process give others a turn). */
const yieldNow = () => new Promise<void>((r) => setImmediate(r));

/** Most distinct values a text or boolean column may have to colour a map by category. */
export const MAX_CATEGORIES = 50;
/** Most rows one rows request may ask for. */
export const MAX_ROWS_PER_REQUEST = 100;

/** Runs `use` on an in-memory DuckDB with `files` attached read-only under their aliases. */
const mustExist = (file: string) => {
  if (!fs.existsSync(file)) throw new DataError(404, 'not-found', 'a table of this map is missing on the server; make the map again');
};

export async function withAttached<T>(files: Record<string, string>, limits: DataLimits, use: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  Object.values(files).forEach(mustExist);
  const releases: Array<() => void> = [];
  try {
    for (const f of [...new Set(Object.values(files))].sort()) releases.push(await fileTurn(f));
    return await withDuckDB(':memory:', limits, async (conn) => {
      for (const [alias, file] of Object.entries(files)) await conn.run(`ATTACH ${quoteLiteral(file)} AS ${quoteIdent(alias)} (READ_ONLY)`);
      return use(conn);
    });
  } finally {
    releases.forEach((r) => r());
  }
}

/** A map's points as readPoints gives them (the encoder's input, @plexus/shared points-format.ts). */
export interface Points extends PointsInput {
  x: Float32Array;
  y: Float32Array;
  row: Uint32Array;
  color: Float32Array | null;
}

/** How a column colours a map: `numeric` (its values), `categorical` (≤ 50 distinct values), or not at all. */
export const colorKind = (type: string): 'numeric' | 'categorical' => (isNumericType(type) ? 'numeric' : 'categorical');

/**
 * Every point of a map, in row order: x, y, row, and the colour column's value per point (numbers
 * as they are, NaN when missing; other types as the index of their value in the sorted
 * categories, NaN when missing). `color` names a source column (checked by the caller), or
 * `cluster` for the map's own clusters when the source has no such column.
 */
export async function readPoints(
  files: { source: string; coords: string },
  color: { column: string; type: string } | { column: 'cluster'; type: 'cluster' } | null,
  limits: DataLimits,
): Promise<Points> {
  return withAttached({ src: files.source, map: files.coords }, limits, async (conn) => {
    const total = Number((await conn.runAndReadAll('SELECT count(*) FROM src.data')).getRowsJS()[0]![0]);
    let categories: string[] | null = null;
    let expr = 'NULL';
    if (color?.type === 'cluster') {
      const k = Number((await conn.runAndReadAll('SELECT coalesce(max(cluster), -1) + 1 FROM map.data')).getRowsJS()[0]![0]);
      categories = Array.from({ length: k }, (_, i) => String(i));
      expr = 'CAST(c.cluster AS DOUBLE)';
    } else if (color) {
      const col = `s.${quoteIdent(color.column)}`;
      if (colorKind(color.type) === 'numeric') expr = `CAST(${col} AS DOUBLE)`;
      else {
        const distinct = await conn.runAndReadAll(`SELECT DISTINCT CAST(${quoteIdent(color.column)} AS VARCHAR) AS v FROM src.data WHERE ${quoteIdent(color.column)} IS NOT NULL ORDER BY v LIMIT ${MAX_CATEGORIES + 1}`);
        categories = distinct.getRowsJS().map((r) => String(r[0]));
        if (categories.length > MAX_CATEGORIES)
          throw new DataError(400, 'too-many-categories', `column "${color.column}" has more than ${MAX_CATEGORIES} distinct values: colour by a numeric column or one with at most ${MAX_CATEGORIES} values`);
        expr = `CAST(${col} AS VARCHAR)`;
      }
    }
    const n = Number((await conn.runAndReadAll('SELECT count(*) FROM map.data')).getRowsJS()[0]![0]);
    const x = new Float32Array(n);
    const y = new Float32Array(n);
    const row = new Uint32Array(n);
    const values = color ? new Float32Array(n) : null;
    const index = new Map((categories ?? []).map((c, i) => [c, i]));
    const join = color && color.type !== 'cluster' ? 'LEFT JOIN src.data s ON s.rowid = c.row' : '';
    const result = await conn.stream(`SELECT CAST(c.row AS UBIGINT), CAST(c.x AS DOUBLE), CAST(c.y AS DOUBLE), ${expr} FROM map.data c ${join} ORDER BY c.row`);
    let at = 0;
    for (let k = 1; ; k++) {
      const chunk = await result.fetchChunk();
      if (!chunk || !chunk.rowCount) break;
      const [r, xs, ys, cs] = [0, 1, 2, 3].map((j) => chunk.getColumnValues(j));
      const count = Math.min(chunk.rowCount, n - at);
      for (let i = 0; i < count; i++) {
        row[at + i] = Number(r![i]);
        x[at + i] = Number(xs![i]);
        y[at + i] = Number(ys![i]);
        if (values) {
          const v = cs![i];
          values[at + i] = v === null || v === undefined ? NaN : typeof v === 'string' ? (index.get(v) ?? NaN) : Number(v);
        }
      }
      at += count;
      if (at >= n) break;
      if (k % 16 === 0) await yieldNow();
    }
    let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
    for (let i = 0; i < n; i++) {
      if (Number.isFinite(x[i]!)) (x0 = Math.min(x0, x[i]!)), (x1 = Math.max(x1, x[i]!));
      if (Number.isFinite(y[i]!)) (y0 = Math.min(y0, y[i]!)), (y1 = Math.max(y1, y[i]!));
    }
    const bounds: [number, number, number, number] = Number.isFinite(x0) && Number.isFinite(y0) ? [x0, y0, x1, y1] : [0, 0, 0, 0];
    let meta: PointsColor | null = null;
    if (color && categories) meta = { kind: 'categorical', column: color.column, categories };
    else if (color && values) {
      let lo = Infinity;
      let hi = -Infinity;
      for (const v of values) if (Number.isFinite(v)) (lo = Math.min(lo, v)), (hi = Math.max(hi, v));
      // No finite value: NaN, which the format writes as null.
      meta = { kind: 'numeric', column: color.column, min: Number.isFinite(lo) ? lo : NaN, max: Number.isFinite(hi) ? hi : NaN };
    }
    return { x, y, row, color: values, meta: { bounds, color: meta, total, sampled: false } };
  });
}

/** The body of `GET …/atlas/:map/points`: the shared points format (@plexus/shared points-format.ts), as a Buffer without a copy. */
export function pointsBody(p: Points): Buffer {
  const bytes = encodePoints(p);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Rows of the source table by number (0-based rowid), each `{ row, ...values }`; a source column `row` is `source_row`. */
export async function readRows(sourceFile: string, rows: number[], limits: DataLimits): Promise<{ columns: TableColumn[]; rows: Array<Record<string, Json>> }> {
  mustExist(sourceFile);
  return withDuckDB(sourceFile, limits, async (conn) => {
    const wanted = [...new Set(rows)].sort((a, b) => a - b);
    const reader = await conn.runAndReadAll(`SELECT CAST(rowid AS BIGINT) AS "__atlas_row", * FROM data WHERE rowid IN (${wanted.length ? wanted.join(',') : '-1'}) ORDER BY rowid`);
    const types = reader.columnTypes();
    const names = reader.columnNames();
    const sourceNames = names.slice(1);
    const renamed = sourceNames.map((nm) => sourceColumnName(nm, ['row'], sourceNames));
    const columns = sourceNames.map((_, i) => ({ name: renamed[i]!, type: types[i + 1]!.toString() }));
    const out = reader.getRowsJS().map((r) => {
      const values = jsonRow(Object.fromEntries(renamed.map((nm, i) => [nm, r[i + 1]])));
      return { row: Number(r[0]), ...values };
    });
    return { columns, rows: out };
  });
}

export interface ColumnInfo {
  name: string;
  type: string;
  numeric: boolean;
  /** Distinct non-null values (text, boolean and other non-numeric columns). */
  distinct?: number;
  /** How the column can colour the map: by value, by category (≤ 50 distinct values), or not. */
  color: 'numeric' | 'categorical' | null;
}

/** The source table's columns with their types, whether numeric, and whether they can colour the map. */
export async function describeColumns(sourceFile: string, limits: DataLimits): Promise<{ rows: number; columns: ColumnInfo[] }> {
  mustExist(sourceFile);
  return withDuckDB(sourceFile, limits, async (conn) => {
    const desc = (await conn.runAndReadAll('DESCRIBE data')).getRowObjectsJS().map((c) => ({ name: String(c.column_name), type: String(c.column_type) }));
    const other = desc.filter((c) => !isNumericType(c.type));
    const counts = (await conn.runAndReadAll(`SELECT count(*)${other.map((c) => `, count(DISTINCT ${quoteIdent(c.name)})`).join('')} FROM data`)).getRowsJS()[0]!.map(Number);
    const distinct = new Map(other.map((c, i) => [c.name, counts[i + 1]!]));
    return {
      rows: counts[0]!,
      columns: desc.map((c) => {
        const numeric = isNumericType(c.type);
        const d = distinct.get(c.name);
        return { name: c.name, type: c.type, numeric, ...(d === undefined ? {} : { distinct: d }), color: numeric ? 'numeric' : d !== undefined && d <= MAX_CATEGORIES ? 'categorical' : null };
      }),
    };
  });
}

/**
 * Writes the source rows inside `sel` as a Parquet file:
 * columns `row`, `x`, `y`, then every source column (renamed `source_<name>` when it is `row`,
 * `x` or `y`), in row order. A rectangle is filtered in SQL; a lasso by its bounding box in SQL,
 * then exactly (`inSelection`) here, in slices that yield to the event loop. No selection: the
 * file has the columns and no rows. Returns the number of rows written.
 */
export async function exportSelection(files: { source: string; coords: string }, sel: AtlasSelection | null, out: string, limits: DataLimits): Promise<number> {
  return withAttached({ src: files.source, map: files.coords }, limits, async (conn) => {
    const desc = (await conn.runAndReadAll('DESCRIBE src.data')).getRowObjectsJS().map((c) => String(c.column_name));
    const list = desc.map((c) => `s.${quoteIdent(c)} AS ${quoteIdent(sourceColumnName(c, MAP_COLUMNS, desc))}`).join(', ');
    let where = 'false';
    if (sel) {
      const b = selectionBoundingBox(sel);
      if (![b.x0, b.y0, b.x1, b.y1].every(Number.isFinite)) throw new DataError(400, 'bad-selection', 'the selection has coordinates that are not finite numbers');
      const box = `c.x BETWEEN ${b.x0} AND ${b.x1} AND c.y BETWEEN ${b.y0} AND ${b.y1}`;
      if (sel.kind === 'rect') where = box;
      else {
        const cand = await conn.stream(`SELECT CAST(c.row AS BIGINT), CAST(c.x AS DOUBLE), CAST(c.y AS DOUBLE) FROM map.data c WHERE ${box}`);
        const inside: number[] = [];
        for (let k = 1; ; k++) {
          const chunk = await cand.fetchChunk();
          if (!chunk || !chunk.rowCount) break;
          const [r, xs, ys] = [0, 1, 2].map((j) => chunk.getColumnValues(j));
          for (let i = 0; i < chunk.rowCount; i++) if (inSelection(sel, Number(xs![i]), Number(ys![i]))) inside.push(Number(r![i]));
          if (k % 8 === 0) await yieldNow();
        }
        await conn.run('CREATE TEMP TABLE inside (row BIGINT)');
        if (inside.length) await conn.run('INSERT INTO inside SELECT unnest(CAST($ids AS BIGINT[]))', { ids: `[${inside.join(',')}]` });
        where = 'c.row IN (SELECT row FROM inside)';
      }
    }
    const query = `SELECT CAST(c.row AS BIGINT) AS "row", CAST(c.x AS DOUBLE) AS "x", CAST(c.y AS DOUBLE) AS "y"${list ? `, ${list}` : ''} FROM map.data c JOIN src.data s ON s.rowid = c.row WHERE ${where} ORDER BY c.row`;
    await conn.run(`COPY (${query}) TO ${quoteLiteral(out)} (FORMAT parquet)`);
    return Number((await conn.runAndReadAll(`SELECT count(*) FROM read_parquet(${quoteLiteral(out)})`)).getRowsJS()[0]![0]);
  });
}
