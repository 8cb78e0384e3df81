/**
 * The SQL worker: a sandboxed child process per workspace holding an in-memory DuckDB. At start it
 * attaches each uploaded table's file read-only and creates a view named after the table, then
 * turns external access off and locks the configuration, so queries from cells can read those
 * tables and nothing else on disk, cannot write files, cannot load extensions and cannot undo the
 * settings. (DuckDB keeps attached files writable by COPY ... TO even read-only; the files are
 * also read-only to this process's uid, see sandbox.ts.) SQL cells' named results become temporary
 * tables other SQL cells can read. Answers the supervisor over frames on stdin/stdout.
 * Effects: DuckDB; reads stdin, writes stdout.
 */
import { DuckDBInstance, DuckDBResultReader, StatementType, listValue } from '@duckdb/node-api';
import { encodeFrame, frameReader } from './wire.mjs';

let conn = null;
/** Read results a chunk per call into DuckDB, as its reader does (benchmarks' baseline). */
let chunkHops = false;

/**
 * DuckDB's threads. A query on several threads pays for waking DuckDB's other threads at each step
 * of its plan: worth it for a large query, a loss for a small one (a chain of trivial cells ran
 * 0.8x as long on one thread, a large aggregation 1.8x as long). So the worker runs a query on
 * one thread when the same text took under `smallMs` last time and so did the query before it
 * (a run of small queries; switching costs about half a millisecond), and on all of them
 * otherwise, or when it has not seen the text. Cells cannot change the number (threadsGuard).
 * PLEXUS_SQL_ADAPTIVE_THREADS=0 keeps all threads for every query (benchmarks' baseline).
 */
const threads = { max: 2, now: 2, adaptive: false, smallMs: 5, previousSmall: false, lastMs: new Map() };
const LAST_MS_KEPT = 4096;

async function useThreads(n) {
  if (n === threads.now) return;
  await conn.run(`SET threads = ${n}`);
  threads.now = n;
}

/** How long `sql` took, remembered for its next run (the oldest forgotten past LAST_MS_KEPT). */
function tookMs(sql, ms) {
  threads.lastMs.delete(sql);
  threads.lastMs.set(sql, ms);
  if (threads.lastMs.size > LAST_MS_KEPT) threads.lastMs.delete(threads.lastMs.keys().next().value);
  threads.previousSmall = ms < threads.smallMs;
}

/**
 * With the number of threads left changeable by the worker (allowed_configs), a cell's statement
 * that could change it is refused: any statement naming threads (the setting and its alias
 * `worker_threads` can only be named in full: DuckDB has no escapes in names) that DuckDB itself
 * parses as a SET (SET, RESET and PRAGMA all are), or that it cannot prepare on its own.
 */
async function threadsGuard(statement) {
  if (!threads.adaptive || !/threads/i.test(statement)) return;
  const prepared = await conn.prepare(statement);
  const type = prepared.statementType;
  prepared.destroySync();
  if (type === StatementType.SET) throw new Error('DuckDB\'s threads are set by Plexus (PLEXUS_SQL_THREADS): a cell cannot change them, or other settings in a statement naming threads');
}
const write = (msg) => process.stdout.write(encodeFrame(msg));
const q = (s) => `"${String(s).replace(/"/g, '""')}"`;
const lit = (s) => `'${String(s).replace(/'/g, "''")}'`;

/** Splits SQL into statements at semicolons outside strings, quoted names and comments. */
export function splitStatements(sql) {
  const out = [];
  let cur = '';
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === c && sql[j + 1] !== c)) j += sql[j] === c ? 2 : 1;
      cur += sql.slice(i, j + 1);
      i = j;
    } else if (c === '-' && sql[i + 1] === '-') {
      const j = sql.indexOf('\n', i);
      i = j < 0 ? sql.length : j;
      cur += '\n';
    } else if (c === '/' && sql[i + 1] === '*') {
      const j = sql.indexOf('*/', i + 2);
      i = j < 0 ? sql.length : j + 1;
      cur += ' ';
    } else if (c === ';') {
      if (cur.trim()) out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

function bindValue(name, v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'bigint') return v;
  if (Object.prototype.toString.call(v) === '[object Date]') return v.toISOString();
  if (Array.isArray(v)) return listValue(v.map((x) => bindValue(name, x)));
  throw new Error(`$${name} must be a number, string, boolean, date or an array of these (JavaScript values reach SQL only as bound parameters)`);
}

function jsValue(v) {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v;
  if (Array.isArray(v)) return v.map(jsValue);
  if (v && typeof v === 'object' && Object.prototype.toString.call(v) === '[object Object]') {
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = jsValue(x);
    return o;
  }
  return v;
}

/**
 * Runs `text` (no parameters) and reads up to `rows` rows of its last statement's result. DuckDB
 * hands the whole result over in the call (materialised), so its chunks are read here without
 * going back to its thread pool once per chunk and once more to learn there is none left: one
 * hop per query instead of three (a chain of small cells is mostly hops).
 */
async function readUntil(text, rows) {
  return readerOf(await conn.run(text), rows);
}

/** A reader over `result` (materialised: DuckDBConnection.run and DuckDBPreparedStatement.run) with `rows` read. */
async function readerOf(result, rows) {
  if (!chunkHops) {
    let next = 0;
    const count = result.chunkCount;
    result.fetchChunk = async () => (next < count ? result.getChunk(next++) : null);
  }
  const reader = new DuckDBResultReader(result);
  await reader.readUntil(rows);
  return reader;
}

async function init(msg) {
  chunkHops = msg.chunkHops === true;
  threads.max = threads.now = Math.max(1, Math.floor(msg.threads ?? 2));
  threads.adaptive = msg.adaptiveThreads !== false && threads.max > 1;
  if (Number.isFinite(msg.smallQueryMs)) threads.smallMs = msg.smallQueryMs;
  const inst = await DuckDBInstance.create(':memory:', {
    threads: String(threads.max),
    max_memory: `${msg.memoryMb ?? 512}MB`,
    temp_directory: '',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  });
  conn = await inst.connect();
  for (const t of msg.tables ?? []) {
    await conn.run(`ATTACH ${lit(t.file)} AS ${q(`upload_${t.name}`)} (READ_ONLY)`);
    await conn.run(`CREATE VIEW main.${q(t.name)} AS SELECT * FROM ${q(`upload_${t.name}`)}.main.data`);
  }
  await conn.run('SET enable_external_access = false');
  await conn.run('SET allow_community_extensions = false');
  if (threads.adaptive) await conn.run("SET allowed_configs = ['threads']");
  await conn.run('SET lock_configuration = true');
  write({ type: 'ready', pid: process.pid, tables: (msg.tables ?? []).map((t) => t.name) });
}

/** Batches the kernel sent ahead (query messages with a `batch`): called off, or stopped by a failure. */
const offBatches = new Map(); // batch -> id of the first query not to run
function callOff(batch, from = 0) {
  offBatches.set(batch, Math.min(offBatches.get(batch) ?? Infinity, from));
  // Batches run in order: only the latest few can still have queries waiting.
  if (offBatches.size > 256) offBatches.delete(offBatches.keys().next().value);
}

async function query(msg) {
  const { id, sql, params, name, maxRows, materialize, batch } = msg;
  // A query sent ahead whose batch was called off or failed earlier does not run (no answer: the
  // kernel no longer waits for it).
  if (batch && offBatches.has(batch) && id >= offBatches.get(batch)) return;
  let started = 0;
  try {
    if (threads.adaptive) {
      const last = threads.lastMs.get(sql);
      const small = last !== undefined && last < threads.smallMs && (threads.previousSmall || threads.now === 1);
      await useThreads(small ? 1 : threads.max);
    }
    started = performance.now();
    const statements = splitStatements(sql);
    if (!statements.length) throw new Error('the cell has no SQL statement');
    const values = {};
    for (const [k, v] of Object.entries(params ?? {})) values[k] = bindValue(k, v);
    // Statements without parameters skip the separate prepare step (one round trip less). Either
    // way a statement's result comes whole (materialised): read(n) reads it without more hops.
    const bindFor = async (text) => {
      if (!text.includes('$')) return { run: () => conn.run(text), read: (n) => readUntil(text, n) };
      const prepared = await conn.prepare(text);
      const wanted = {};
      for (let i = 1; i <= prepared.parameterCount; i++) {
        const p = prepared.parameterName(i);
        if (!(p in values)) throw new Error(`$${p} is not defined`);
        wanted[p] = values[p];
      }
      if (prepared.parameterCount) prepared.bind(wanted);
      return { run: () => prepared.run(), read: async (n) => readerOf(await prepared.run(), n) };
    };
    for (const s of statements.slice(0, -1)) {
      await threadsGuard(s);
      await (await bindFor(s)).run();
    }
    const last = statements[statements.length - 1];
    await threadsGuard(last);
    let reader;
    let total;
    let materialized = false;
    if (name && materialize !== false) {
      // A named cell's result becomes a temporary table other SQL cells can read. Most cells are
      // queries: try that first; a statement that is not one (SET, INSERT...) then runs as it is.
      const create = `CREATE OR REPLACE TEMP TABLE ${q(name)} AS ${last}`;
      const readBack = `SELECT * FROM temp.${q(name)}`;
      try {
        if (!last.includes('$')) {
          // Without parameters, creating the table and reading it back are one call into DuckDB.
          reader = await readUntil(`${create};\n${readBack}`, maxRows + 1);
          total = reader.done ? reader.currentRowCount : null;
        } else {
          // CREATE TABLE AS answers with the number of rows it stored.
          const created = await (await bindFor(create)).read(1);
          total = Number(created.getRowsJS()[0]?.[0] ?? 0);
          reader = await readUntil(readBack, maxRows);
        }
        materialized = true;
      } catch (e) {
        const prepared = await conn.prepare(last).catch(() => null);
        if (!prepared || prepared.statementType === StatementType.SELECT) throw e;
      }
      // More rows than were read: the count is the table's (cheap: it is materialised).
      if (materialized && total === null) total = Number((await readUntil(`SELECT count(*) FROM temp.${q(name)}`, 1)).getRowsJS()[0]?.[0] ?? 0);
    }
    if (!reader) {
      reader = await (await bindFor(last)).read(maxRows + 1);
      total = reader.currentRowCount;
    }
    const columns = reader.columnNames().map((n, i) => ({ name: n, type: reader.columnTypes()[i].toString() }));
    const rows = reader.getRowObjectsJS().slice(0, maxRows).map(jsValue);
    write({ type: 'result', id, columns, rows, totalRows: Math.max(total, rows.length), materialized });
  } catch (e) {
    if (batch) callOff(batch); // the cells after a failure in a batch do not run
    write({ type: 'error', id, error: { name: 'SQLError', message: String(e?.message ?? e) } });
  } finally {
    if (threads.adaptive && started) tookMs(sql, performance.now() - started);
  }
}

let chain = Promise.resolve();
function onMessage(msg) {
  switch (msg.type) {
    case 'init':
      chain = chain.then(() => init(msg)).catch((e) => {
        process.stderr.write(`sql worker: ${e?.message ?? e}\n`);
        process.exit(3);
      });
      return;
    case 'query':
      chain = chain.then(() => query(msg));
      return;
    case 'drop':
      chain = chain.then(async () => {
        for (const n of msg.names) await conn.run(`DROP TABLE IF EXISTS temp.${q(n)}`).catch(() => {});
      });
      return;
    case 'interrupt':
      conn?.interrupt();
      return;
    case 'cancel-batch':
      callOff(msg.batch, Number.isInteger(msg.from) ? msg.from : 0);
      return;
  }
}

process.stdin.on('data', frameReader(onMessage, (e) => {
  process.stderr.write(`sql worker: ${e.message}\n`);
  process.exit(2);
}));
process.stdin.on('end', () => process.exit(0));
