/**
 * What every HTTP read of uploaded tables shares: a clear error type, DuckDB settings that keep a
 * private instance small and closed (one thread, a memory cap, no spilling to disk, no extension
 * autoloading), a gate so at most two such reads run at once, and a time limit that interrupts the
 * connection. DuckDB work runs on libuv's thread pool, which the server's file I/O needs too: the
 * gate keeps those threads from all being taken by long queries.
 * Effects: DuckDB instances (in memory, or table files opened read-only), timers.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

export class DataError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface DataLimits {
  /** Time limit of one read (ms); the connection is interrupted then. */
  timeoutMs: number;
  /** DuckDB's memory limit for one read (MB). */
  memoryMb: number;
}

/** Instance settings for every read: `path` is ':memory:' or a table file (then opened read-only). */
function instanceOptions(path: string, memoryMb: number): Record<string, string> {
  return {
    ...(path === ':memory:' ? {} : { access_mode: 'READ_ONLY' }),
    threads: '1',
    max_memory: `${memoryMb}MB`,
    temp_directory: '',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  };
}

/** At most `size` holders at once; at most `queue` waiting (then 503). */
class Gate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly size: number,
    private readonly queue: number,
  ) {}

  async acquire(): Promise<() => void> {
    if (this.active >= this.size) {
      if (this.waiting.length >= this.queue) throw new DataError(503, 'busy', 'too many data queries are running; try again in a few seconds');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }
}

const gate = new Gate(2, 32);

const turns = new Map<string, Promise<void>>();
/**
 * Waits for this process's turn on a DuckDB file and returns its release. DuckDB refuses a second
 * instance on a file the same process already has open ("Conflicting lock is held in <this
 * process>"), so two people previewing one table at once got a 500: opens of one file take turns.
 * ':memory:' needs no turn.
 */
export async function fileTurn(file: string): Promise<() => void> {
  if (file === ':memory:') return () => {};
  const prev = turns.get(file) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((r) => (done = r));
  const tail = prev.then(() => mine);
  turns.set(file, tail);
  await prev;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    done();
    if (turns.get(file) === tail) turns.delete(file);
  };
}

const interrupted = (e: unknown) => /^INTERRUPT Error/i.test((e as Error)?.message ?? '');

/**
 * Opens a private DuckDB instance on `path` (':memory:' or a table file, read-only), runs `use` on
 * a connection under the time limit, and closes it. A read still running at the limit is
 * interrupted and answered with 400 `timeout`; should DuckDB not stop within 2 s, the answer does
 * not wait for it (the instance is closed, and the gate released, when it does stop).
 */
export async function withDuckDB<T>(path: string, limits: DataLimits, use: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  // The file's turn first: waiting on a busy file must not hold one of the gate's few slots.
  const releaseFile = await fileTurn(path);
  let releaseGate: () => void;
  try {
    releaseGate = await gate.acquire();
  } catch (e) {
    releaseFile();
    throw e;
  }
  const release = () => {
    releaseFile();
    releaseGate();
  };
  let inst: DuckDBInstance;
  let conn: DuckDBConnection;
  try {
    inst = await DuckDBInstance.create(path, instanceOptions(path, limits.memoryMb));
    conn = await inst.connect();
  } catch (e) {
    release();
    throw e;
  }
  const secs = Math.round(limits.timeoutMs / 100) / 10;
  const timeout = () => new DataError(400, 'timeout', `the query took longer than ${secs} s and was stopped; narrow it (filter, aggregate, LIMIT) and try again`);
  const interrupt = setTimeout(() => conn.interrupt(), limits.timeoutMs);
  const work = use(conn);
  void work
    .catch(() => {})
    .finally(() => {
      clearTimeout(interrupt);
      conn.closeSync();
      inst.closeSync();
      release();
    });
  let giveUp: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    giveUp = setTimeout(() => reject(timeout()), limits.timeoutMs + 2000);
  });
  try {
    return await Promise.race([work, deadline]);
  } catch (e) {
    // Only our timer interrupts these connections.
    throw interrupted(e) ? timeout() : e;
  } finally {
    clearTimeout(giveUp);
  }
}

/** DuckDB's quoting of an identifier. */
export const quoteIdent = (s: string): string => `"${s.replace(/"/g, '""')}"`;

/** DuckDB's quoting of a string literal. */
export const quoteLiteral = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** True for DuckDB's numeric column types (integers of every width, floats, decimals). */
export const isNumericType = (type: string): boolean => /^(U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|FLOAT|DOUBLE|REAL|DECIMAL(\(\d+,\s*\d+\))?)$/i.test(type.trim());
