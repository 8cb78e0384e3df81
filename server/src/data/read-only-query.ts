/**
 * Read-only SQL over a workspace's uploaded tables, for `POST /api/workspaces/:id/data/query` (the
 * agent's and any collaborator's ad-hoc questions). Each query gets a fresh in-memory DuckDB: every
 * table file is attached READ_ONLY and shown as a view named after the table, then external access
 * is turned off and the configuration locked, so no file or URL can be read or written, no
 * extension loaded and no setting changed back. On top of that exactly one statement is accepted,
 * and only if both the parser (json_serialize_sql serializes SELECT statements only) and the
 * prepared statement say it is a SELECT: COPY, EXPORT, ATTACH, INSTALL/LOAD, PRAGMA, SET, CREATE,
 * INSERT… never run. At most `limit + 1` rows are read from a streamed result (so `truncated` is
 * known without materialising the rest), under a time limit.
 * Effects: DuckDB (in memory; table files opened read-only).
 */
import { StatementType, type DuckDBConnection } from '@duckdb/node-api';
import type { Json, TableColumn } from '@plexus/shared';
import { jsonRow } from '../kernel/results.ts';
import { DataError, quoteIdent, quoteLiteral, withDuckDB, type DataLimits } from './guarded-duckdb.ts';

export const MAX_SQL_CHARS = 20_000;
export const DEFAULT_QUERY_LIMIT = 100;
export const MAX_QUERY_LIMIT = 1000;
/** Rows stop being added to an answer past this many bytes of JSON (it is then `truncated`). */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** A table the query may read: its SQL name and its stored DuckDB file (one table `data`). */
export interface QueryTable {
  name: string;
  file: string;
}

export interface QueryAnswer {
  columns: TableColumn[];
  rows: Array<Record<string, Json>>;
  rowCount: number;
  truncated: boolean;
  elapsedMs: number;
}

const notReadOnly = (what: string) => new DataError(400, 'not-read-only', `only one read-only SELECT query is allowed (${what})`);

/** Turns DuckDB's error into the answer the caller sees. */
function queryError(e: unknown): Error {
  if (e instanceof DataError) return e;
  const message = String((e as Error)?.message ?? e).slice(0, 2000);
  if (/^Permission Error/i.test(message) || /disabled by configuration/i.test(message))
    return new DataError(400, 'external-access', `queries may read only this workspace's uploaded tables; file and URL access is refused (${message})`);
  if (/^INTERRUPT Error/i.test(message)) return e as Error; // withDuckDB answers with `timeout`
  return new DataError(400, 'sql-error', message);
}

/** Validates the request body's fields; returns the SQL and the row limit. */
export function parseQueryRequest(body: Record<string, unknown>): { sql: string; limit: number } {
  const { sql, limit } = body;
  if (typeof sql !== 'string' || !sql.trim()) throw new DataError(400, 'bad-request', '"sql" must be a non-empty string');
  if (sql.length > MAX_SQL_CHARS) throw new DataError(400, 'sql-too-long', `the query is ${sql.length} characters long; at most ${MAX_SQL_CHARS} are accepted`);
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1))
    throw new DataError(400, 'bad-request', `"limit" must be a positive integer (at most ${MAX_QUERY_LIMIT})`);
  return { sql, limit: Math.min(limit ?? DEFAULT_QUERY_LIMIT, MAX_QUERY_LIMIT) };
}

/** Attaches the tables read-only, one view per table, then closes every door. */
async function prepareSandbox(conn: DuckDBConnection, tables: QueryTable[]): Promise<void> {
  for (const [i, t] of tables.entries()) {
    const alias = quoteIdent(`upload_${i}`);
    await conn.run(`ATTACH ${quoteLiteral(t.file)} AS ${alias} (READ_ONLY)`);
    await conn.run(`CREATE VIEW main.${quoteIdent(t.name)} AS SELECT * FROM ${alias}.main.data`);
  }
  await conn.run('SET enable_external_access = false');
  await conn.run('SET allow_community_extensions = false');
  await conn.run('SET lock_configuration = true');
}

/** Throws `not-read-only` unless `sql` parses as exactly one SELECT statement. */
async function requireOneSelect(conn: DuckDBConnection, sql: string): Promise<void> {
  const statements = await conn.extractStatements(sql).catch((e) => {
    throw queryError(e);
  });
  if (statements.count === 0) throw new DataError(400, 'sql-error', 'the query has no SQL statement');
  if (statements.count > 1) throw notReadOnly(`this text holds ${statements.count} statements`);
  // The parser's view, before any binding: PRAGMA and other statements that DuckDB rewrites into a
  // SELECT when preparing are refused here too.
  const parsed = await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR) AS j', [sql]);
  const verdict = JSON.parse(String(parsed.getRowObjectsJS()[0]!.j)) as { error?: boolean; error_type?: string; error_message?: string };
  if (verdict.error) {
    if (/only select/i.test(verdict.error_message ?? '')) throw notReadOnly('this statement is not a SELECT');
    throw new DataError(400, 'sql-error', String(verdict.error_message ?? 'the query could not be parsed'));
  }
}

/** Runs one read-only SELECT over `tables`, returning at most `limit` rows. */
export async function runReadOnlyQuery(input: { sql: string; limit: number; tables: QueryTable[]; limits: DataLimits }): Promise<QueryAnswer> {
  const started = performance.now();
  const { sql, limit } = input;
  return withDuckDB(':memory:', input.limits, async (conn) => {
    await prepareSandbox(conn, input.tables);
    await requireOneSelect(conn, sql);
    const prepared = await conn.prepare(sql).catch((e) => {
      throw queryError(e);
    });
    if (prepared.statementType !== StatementType.SELECT) throw notReadOnly(`this is a ${StatementType[prepared.statementType] ?? 'non-SELECT'} statement`);
    if (prepared.parameterCount > 0) throw new DataError(400, 'sql-error', 'query parameters ($1, ?) are not supported: write the values into the query');
    const reader = await prepared.streamAndReadUntil(limit + 1).catch((e) => {
      throw queryError(e);
    });
    const types = reader.columnTypes();
    const columns = reader.columnNames().map((name, i) => ({ name, type: types[i]!.toString() }));
    const rows: Array<Record<string, Json>> = [];
    let bytes = 0;
    for (const r of reader.getRowObjectsJS()) {
      if (rows.length === limit) break;
      const row = jsonRow(r);
      bytes += JSON.stringify(row).length;
      if (bytes > MAX_ANSWER_BYTES && rows.length > 0) break;
      rows.push(row);
    }
    const truncated = reader.currentRowCount > rows.length;
    return { columns, rows, rowCount: rows.length, truncated, elapsedMs: Math.round(performance.now() - started) };
  });
}
