/**
 * The process that computes one map's coordinates (started by `AtlasMaps` under `nice`, a heap
 * limit and a time limit, so a UMAP of a big table neither blocks the sync server's event loop
 * nor competes with people's typing). Reads its spec (a JSON file named on the command line),
 * opens the source table's DuckDB file read-only (in this process: the server's `fileTurn` orders
 * opens within the server process, and read-only opens of separate processes do not conflict),
 * reads the columns the method uses in row order — for an embeddings map, asks the embedding
 * service for the texts' vectors (embeddings.ts; its key comes in the environment, never in the
 * spec) — projects (projection.ts) and writes the coordinates as CSV `row,x,y,cluster`.
 *
 * `row` is the row's 0-based position in the source table: DuckDB's rowid of the stored table,
 * which is the order of the uploaded file and the order `SELECT * FROM <table>` returns its rows.
 *
 * Talks to its parent in JSON lines on stdout: `progress` {stage, done, total}, then `done`
 * {points, how, labels} or `error` {message}. SIGTERM ends it (a newer request superseded it).
 * It runs no user code: its inputs are table and column names checked against the table.
 * Effects: reads the table file, writes the CSV, stdout; network for embeddings maps.
 */
import fs from 'node:fs';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { isTextMethod, type AtlasMethod } from '@plexus/shared';
import { quoteIdent } from '../data/guarded-duckdb.ts';
import { EMBEDDINGS_KEY_ENV, embedTexts, type EmbeddingsService } from './embeddings.ts';
import { project, ProjectionError, type EmbeddingsInput, type ProjectionInput } from './projection.ts';
import { pickColumns } from './source-columns.ts';

const fail = (message: string): never => {
  throw new ProjectionError(message);
};

export interface AtlasJobSpec {
  /** The source table's stored DuckDB file (one table `data`) and its name (for messages). */
  tableFile: string;
  table: string;
  method: AtlasMethod;
  columns: string[];
  /** Where to write the coordinates CSV. */
  out: string;
  seed: number;
  umapFitRows?: number;
  /** Most rows a map is made of. */
  maxRows: number;
  /** DuckDB's memory limit while reading (MB). */
  memoryMb: number;
  /** The embedding service (embeddings maps only). */
  embeddings?: EmbeddingsService;
}

const say = (m: Record<string, unknown>) => process.stdout.write(JSON.stringify(m) + '\n');
const progress = (stage: string, done: number, total: number) => say({ type: 'progress', stage, done, total });
/** Reads the used columns in rowid order: rowids, and numbers (NaN for NULL) or texts. */
async function readColumns(conn: DuckDBConnection, cols: string[], text: boolean, n: number): Promise<{ rows: Int32Array; numbers: Float64Array[]; texts: Array<string | null> }> {
  const rows = new Int32Array(n);
  const numbers = text ? [] : cols.map(() => new Float64Array(n));
  const texts: Array<string | null> = text ? new Array(n).fill(null) : [];
  const list = cols.map((c) => (text ? `CAST(${quoteIdent(c)} AS VARCHAR)` : `CAST(${quoteIdent(c)} AS DOUBLE)`)).join(', ');
  const result = await conn.stream(`SELECT CAST(rowid AS INTEGER), ${list} FROM data ORDER BY rowid`);
  let at = 0;
  let last = 0;
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || !chunk.rowCount) break;
    const count = Math.min(chunk.rowCount, n - at);
    const ids = chunk.getColumnValues(0);
    for (let i = 0; i < count; i++) rows[at + i] = Number(ids[i]);
    cols.forEach((_, j) => {
      const v = chunk.getColumnValues(j + 1);
      if (text) for (let i = 0; i < count; i++) texts[at + i] = v[i] === null ? null : String(v[i]);
      else {
        const out = numbers[j]!;
        for (let i = 0; i < count; i++) out[at + i] = v[i] === null ? NaN : Number(v[i]);
      }
    });
    at += count;
    if (at - last >= 50_000 || at === n) {
      last = at;
      progress('reading', at, n);
    }
    if (at >= n) break;
  }
  return { rows: rows.subarray(0, at), numbers: numbers.map((c) => c.subarray(0, at)), texts: texts.slice(0, at) };
}

async function main(): Promise<void> {
  const spec = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as AtlasJobSpec;
  const service = spec.method === 'embeddings' ? (spec.embeddings ?? fail('this server has no embedding service (PLEXUS_EMBEDDINGS_URL)')) : null;
  progress('reading', 0, 1);
  const inst = await DuckDBInstance.create(spec.tableFile, { access_mode: 'READ_ONLY', threads: '1', max_memory: `${spec.memoryMb}MB`, temp_directory: '', autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const conn = await inst.connect();
  let cols: string[];
  let read: Awaited<ReturnType<typeof readColumns>>;
  try {
    const all = (await conn.runAndReadAll('DESCRIBE data')).getRowObjectsJS().map((c) => ({ name: String(c.column_name), type: String(c.column_type) }));
    cols = pickColumns(spec, all);
    const n = Number((await conn.runAndReadAll('SELECT count(*) AS n FROM data')).getRowObjectsJS()[0]!.n);
    if (!n) fail(`table "${spec.table}" has no rows`);
    if (n > spec.maxRows) fail(`table "${spec.table}" has ${n.toLocaleString('en-US')} rows; maps are made of at most ${spec.maxRows.toLocaleString('en-US')} (filter or sample it into a new table with SQL first)`);
    if (service && n > service.maxRows) fail(`table "${spec.table}" has ${n.toLocaleString('en-US')} rows; embeddings maps are made of at most ${service.maxRows.toLocaleString('en-US')} (PLEXUS_EMBEDDINGS_MAX_ROWS): sample it into a new table with SQL first, or make a TF-IDF map (computed locally)`);
    read = await readColumns(conn, cols, isTextMethod(spec.method), n);
  } finally {
    conn.closeSync();
    inst.closeSync();
  }
  const rowIds = read.rows;
  const { texts, numbers } = read;
  // The service is asked once the table is closed: its answers may take minutes.
  const input: ProjectionInput | EmbeddingsInput = service
    ? { method: 'embeddings', name: cols[0]!, texts, embeddings: await embedTexts(texts, service, process.env[EMBEDDINGS_KEY_ENV] || null, progress) }
    : isTextMethod(spec.method) ? { method: 'tfidf', name: cols[0]!, texts } : { method: spec.method as 'columns' | 'pca' | 'umap', names: cols, columns: numbers };
  const p = project(input, { seed: spec.seed, umapFitRows: spec.umapFitRows, onProgress: progress });
  progress('writing', 0, 1);
  const lines = ['row,x,y,cluster'];
  for (let i = 0; i < rowIds.length; i++) lines.push(`${rowIds[i]},${p.x[i]},${p.y[i]},${p.cluster[i]}`);
  fs.writeFileSync(spec.out, lines.join('\n') + '\n');
  progress('writing', 1, 1);
  say({ type: 'done', points: rowIds.length, how: p.how, labels: p.labels });
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    const err = e as Error;
    const known = err?.name === 'ProjectionError';
    say({ type: 'error', message: known ? err.message : `the map could not be made: ${String(err?.message ?? e).split('\n')[0]}` });
    process.exit(1);
  },
);
