/**
 * Upload importer: a short-lived sandboxed child that validates an uploaded file by loading it
 * completely into a fresh DuckDB database file (table `data`), with external access limited to
 * that one input file. A malformed CSV, a truncated Parquet file or bad JSON fails here with
 * DuckDB's message; the supervisor then removes every file. Answers one frame and exits.
 * Effects: reads the input file, writes the output database file.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { encodeFrame, frameReader } from './wire.mjs';

const write = (msg) => process.stdout.write(encodeFrame(msg));
const lit = (s) => `'${String(s).replace(/'/g, "''")}'`;

function reader(format, input) {
  switch (format) {
    case 'csv':
      // The delimiter is fixed: left to the sniffer, a CSV with a malformed row reads as one text column.
      return `read_csv(${lit(input)}, header = true, delim = ',', quote = '"', strict_mode = true, compression = 'none')`;
    case 'tsv':
      return `read_csv(${lit(input)}, header = true, delim = '\\t', quote = '"', strict_mode = true, compression = 'none')`;
    case 'parquet':
      return `read_parquet(${lit(input)})`;
    case 'json':
      return `read_json_auto(${lit(input)})`;
  }
  throw new Error(`unsupported format ${format}`);
}

async function run(msg) {
  const { input, output, format, memoryMb } = msg;
  const inst = await DuckDBInstance.create(output, { threads: '2', max_memory: `${memoryMb ?? 512}MB`, temp_directory: '', autoinstall_known_extensions: 'false' });
  const conn = await inst.connect();
  let answer;
  try {
    await conn.run(`SET allowed_paths = [${lit(input)}]`);
    await conn.run('SET enable_external_access = false');
    await conn.run('SET lock_configuration = true');
    await conn.run(`CREATE TABLE data AS SELECT * FROM ${reader(format, input)}`);
    const desc = (await conn.runAndReadAll('DESCRIBE data')).getRowObjectsJS();
    const rows = Number((await conn.runAndReadAll('SELECT count(*) AS n FROM data')).getRowObjectsJS()[0].n);
    if (!desc.length) throw new Error('the file has no columns');
    await conn.run('CHECKPOINT');
    answer = { type: 'result', columns: desc.map((d) => ({ name: String(d.column_name), type: String(d.column_type) })), rows };
  } catch (e) {
    answer = { type: 'error', message: String(e?.message ?? e).split('\n')[0] };
  } finally {
    conn.closeSync();
    inst.closeSync();
  }
  // Only once the file is closed: the server moves it into place and registers it at this answer,
  // and a reader that attached it while this process still held its write lock would fail.
  write(answer);
}

process.stdin.on('data', frameReader((msg) => {
  if (msg.type === 'init') write({ type: 'ready' });
  if (msg.type === 'import') run(msg).finally(() => process.exit(0));
}, () => process.exit(2)));
