/**
 * Data uploads into a workspace: the file name is checked (no paths), the body is streamed to a
 * temporary file under a size cap (gzip is decompressed while streaming, under the same cap, so a
 * gzip bomb stops at the cap), the sandboxed importer loads it completely into a fresh DuckDB file,
 * which then replaces the table's file atomically (read-only, mode 0444) and is registered in the
 * document's `data` registry. Any failure removes every file it made: nothing is left behind.
 * Previews read the stored table. Effects: files, child processes, document writes (by the caller).
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createGunzip } from 'node:zlib';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { fileTurn } from '../data/guarded-duckdb.ts';
import { isTableName, tableNameFromFile, type DataFormat, type TableColumn } from '@plexus/shared';
import { SandboxedChild } from './child.ts';
import { RUNNER_DIR } from './sandbox.ts';
import { jsonRow } from './results.ts';

export class UploadError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * DuckDB's and Node's messages name the files they touched, which here are the server's temporary
 * files: name the upload (or what a file is) instead, so no server path reaches the client.
 */
export function withoutServerPaths(message: string, names: ReadonlyArray<readonly [path: string, label: string]>): string {
  let out = message;
  for (const [p, label] of [...names].sort((a, b) => b[0].length - a[0].length)) if (p) out = out.split(p).join(label);
  return out;
}

export interface UploadLimits {
  maxBytes: number;
  timeoutMs: number;
  memoryMb: number;
}

/** Format and compression from a file name; throws UploadError for names that are paths or unknown types. */
export function parseUploadName(fileName: string): { format: DataFormat; gzip: boolean } {
  if (!fileName || fileName.length > 255) throw new UploadError(400, 'bad-name', 'the file name must be 1 to 255 characters');
  if (/[/\\\0]/.test(fileName) || fileName === '.' || fileName === '..' || fileName.includes('..'))
    throw new UploadError(400, 'bad-name', `"${fileName}" is not a plain file name (no paths, no "..")`);
  const lower = fileName.toLowerCase();
  const gzip = lower.endsWith('.gz');
  const base = gzip ? lower.slice(0, -3) : lower;
  const ext = base.slice(base.lastIndexOf('.') + 1);
  const formats: Record<string, DataFormat> = { csv: 'csv', tsv: 'tsv', tab: 'tsv', parquet: 'parquet', json: 'json', jsonl: 'json', ndjson: 'json' };
  const format = formats[ext];
  if (!format || base.lastIndexOf('.') < 0) throw new UploadError(415, 'unsupported-type', `"${fileName}": upload CSV, TSV, Parquet or JSON files (.csv, .tsv, .parquet, .json, .jsonl; CSV/TSV/JSON may be .gz)`);
  if (gzip && format === 'parquet') throw new UploadError(415, 'unsupported-type', 'Parquet files are compressed already: upload them without .gz');
  return { format, gzip };
}

/** A transform that fails once more than `max` bytes went through. */
function cap(max: number, what: string): Transform {
  let n = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      n += chunk.length;
      if (n > max) cb(new UploadError(413, 'too-large', `${what} is larger than the ${Math.round(max / 1024 / 1024)} MiB limit (PLEXUS_UPLOAD_MAX_BYTES)`));
      else cb(null, chunk);
    },
  });
}

export interface ImportedTable {
  name: string;
  format: DataFormat;
  columns: TableColumn[];
  rows: number;
  bytes: number;
  storedBytes: number;
}

/**
 * Streams `body` into the workspace's tables as table `tableName` (derived from the file name when
 * omitted). Throws UploadError; on any failure no file of this upload remains.
 */
export async function importUpload(input: {
  body: Readable;
  fileName: string;
  tableName?: string;
  contentLength?: number;
  tablesDir: string;
  tmpDir: string;
  limits: UploadLimits;
}): Promise<ImportedTable> {
  const { format, gzip } = parseUploadName(input.fileName);
  const name = input.tableName ?? tableNameFromFile(input.fileName);
  if (!isTableName(name)) throw new UploadError(400, 'bad-table-name', `"${name}" is not a valid table name (letters, digits and _, not starting with a digit)`);
  if (input.contentLength !== undefined && input.contentLength > input.limits.maxBytes)
    throw new UploadError(413, 'too-large', `the upload is larger than the ${Math.round(input.limits.maxBytes / 1024 / 1024)} MiB limit (PLEXUS_UPLOAD_MAX_BYTES)`);
  fs.mkdirSync(input.tmpDir, { recursive: true });
  fs.mkdirSync(input.tablesDir, { recursive: true, mode: 0o755 });
  const stem = path.join(input.tmpDir, `${Date.now()}-${randomBytes(6).toString('hex')}`);
  const raw = `${stem}.upload`;
  const out = `${stem}.duckdb`;
  const names = [[raw, input.fileName], [out, 'the new table'], [input.tmpDir, 'the upload folder'], [input.tablesDir, 'the tables folder']] as const;
  const cleanup = () => {
    for (const f of [raw, out, `${out}.wal`, `${out}.tmp`]) fs.rmSync(f, { force: true });
  };
  try {
    let received = 0;
    const count = new Transform({
      transform(chunk: Buffer, _e, cb) {
        received += chunk.length;
        cb(null, chunk);
      },
    });
    const stages: NodeJS.ReadWriteStream[] = [count, cap(input.limits.maxBytes, 'the upload')];
    if (gzip) stages.push(createGunzip(), cap(input.limits.maxBytes, 'the decompressed file'));
    try {
      await pipeline(input.body, ...(stages as [Transform]), fs.createWriteStream(raw, { mode: 0o600 }));
    } catch (e) {
      if (e instanceof UploadError) throw e;
      const msg = withoutServerPaths((e as Error).message, names);
      if (gzip && /header|incorrect|invalid|unexpected end/i.test(msg)) throw new UploadError(400, 'bad-gzip', `"${input.fileName}" is not a valid gzip file: ${msg}`);
      throw new UploadError(400, 'upload-interrupted', `the upload did not complete: ${msg}`);
    }
    if (fs.statSync(raw).size === 0) throw new UploadError(400, 'empty', `"${input.fileName}" is empty`);
    const result = await runImporter(raw, out, format, input.limits, (m) => withoutServerPaths(m, names));
    fs.rmSync(raw, { force: true });
    const dest = path.join(input.tablesDir, `${name}.duckdb`);
    fs.chmodSync(out, 0o444);
    fs.renameSync(out, dest);
    return { name, format, columns: result.columns, rows: result.rows, bytes: received, storedBytes: fs.statSync(dest).size };
  } finally {
    cleanup();
  }
}

function runImporter(
  inputFile: string,
  output: string,
  format: DataFormat,
  limits: UploadLimits,
  clean: (message: string) => string,
): Promise<{ columns: TableColumn[]; rows: number }> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (f: () => void) => {
      if (!settled) (settled = true), f();
    };
    const child = new SandboxedChild({
      cwd: path.dirname(output),
      maxFrameBytes: 1024 * 1024,
      launch: {
        isolateNetwork: true,
        limits: {
          addressSpace: (2048 + 3 * limits.memoryMb) * 1024 * 1024,
          cpuSeconds: Math.ceil(limits.timeoutMs / 1000) + 5,
          processes: 4096,
          openFiles: 256,
          // The stored table is never much larger than its source; a file past this stops the importer.
          fileSize: 4 * limits.maxBytes + 64 * 1024 * 1024,
        },
        nodeArgs: ['--no-warnings', path.join(RUNNER_DIR, 'importer.mjs')],
      },
      init: { type: 'init' },
      onMessage: (m) => {
        if (m.type === 'result') done(() => resolve({ columns: (m.columns as TableColumn[]) ?? [], rows: Number(m.rows ?? 0) }));
        if (m.type === 'error') done(() => reject(new UploadError(422, 'invalid-file', `the file could not be read as ${format.toUpperCase()}: ${clean(String(m.message)).slice(0, 1000)}`)));
      },
      describeExit: (exit) =>
        exit.killedFor ?? (exit.signal === 'SIGXFSZ' ? 'the table is too large' : exit.signal ? `the importer was killed by ${exit.signal}` : `the importer exited (code ${exit.code})`),
    });
    const timer = setTimeout(() => child.kill(`validating the file took longer than ${Math.round(limits.timeoutMs / 1000)} s`), limits.timeoutMs);
    child.ready.then(() => child.send({ type: 'import', input: inputFile, output, format, memoryMb: limits.memoryMb }), () => {});
    child.death.then((reason) => {
      clearTimeout(timer);
      done(() => reject(new UploadError(422, 'invalid-file', `the file could not be imported: ${clean(reason)}`)));
    });
  });
}

/** Rows of a stored table (for the data panel), read-only. */
export async function previewTable(file: string, offset: number, limit: number): Promise<{ columns: TableColumn[]; rows: Array<Record<string, unknown>>; totalRows: number }> {
  if (!fs.existsSync(file)) throw new UploadError(404, 'not-found', 'no such table');
  const release = await fileTurn(file);
  let inst: DuckDBInstance;
  let conn: DuckDBConnection;
  try {
    inst = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY', threads: '1', max_memory: '256MB' });
    conn = await inst.connect();
  } catch (e) {
    release();
    throw e;
  }
  try {
    const reader = await conn.runAndReadAll(`SELECT * FROM data LIMIT ${Math.max(0, Math.min(1000, limit))} OFFSET ${Math.max(0, offset)}`);
    const total = Number((await conn.runAndReadAll('SELECT count(*) AS n FROM data')).getRowObjectsJS()[0]!.n);
    const types = reader.columnTypes();
    return { columns: reader.columnNames().map((n, i) => ({ name: n, type: types[i]!.toString() })), rows: reader.getRowObjectsJS().map(jsonRow), totalRows: total };
  } finally {
    conn.closeSync();
    inst.closeSync();
    release();
  }
}
