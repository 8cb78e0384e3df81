/**
 * The connection to Postgres shared by the workspace store and the history store: one `pg` pool,
 * the versioned migrations (migrations.ts, recorded in `schema_migrations`, applied at start under
 * an advisory lock so servers starting together do not race), transactions, and the settings every
 * server shares (the token secret).
 *
 * Driver: `pg` (node-postgres, MIT): the maintained, most used Postgres client for Node, pure
 * JavaScript (no native build to approve), with a pool, prepared statements and binary parameters;
 * `postgres` (porsager) is also maintained but its tagged-template API would wrap every query here
 * for no gain.
 * Effects: network (Postgres).
 */
import pg from 'pg';
import { MIGRATIONS, type Migration } from './migrations.ts';

/** Advisory lock key (two-int form, first half) of the migrations; compaction uses its own (compaction.mjs). */
const MIGRATION_LOCK = 0x506c784d; // 'PlxM'

/** BIGINT columns (sequence numbers, millisecond times) as numbers: they stay below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export interface PgOptions {
  /** Connections in the pool (appends to different workspaces run in parallel). */
  poolSize?: number;
  /** Called when an idle connection fails (Postgres restarted): the pool drops it and reconnects on demand. */
  onIdleError?: (e: Error) => void;
}

/** Bytes from Postgres (`bytea` arrives as a Buffer) as a Uint8Array view. */
export const bytes = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);

export class PgDatabase {
  readonly pool: pg.Pool;
  private users = 0;
  private ended: Promise<void> | null = null;

  private constructor(readonly url: string, opts: PgOptions) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: opts.poolSize ?? 10,
      // Fail fast while Postgres is down (writes are refused with 4503 and retried by clients)
      // rather than queueing them for long; a query that hangs (a partition) fails too.
      connectionTimeoutMillis: 5_000,
      query_timeout: 60_000,
      keepAlive: true,
      types,
    });
    // Without a listener an idle connection's error (Postgres restarting) would crash the process.
    this.pool.on('error', (e) => opts.onIdleError?.(e));
  }

  /** Connects, checks the durability setting and brings the schema up to date. */
  static async open(url: string, opts: PgOptions = {}): Promise<PgDatabase> {
    const db = new PgDatabase(url, opts);
    try {
      const { rows } = await db.pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
      // With it off, Postgres acknowledges a commit before its WAL reaches disk: an update the
      // server acknowledged could be lost when Postgres (not the server) crashes.
      if (rows[0]?.synchronous_commit === 'off')
        throw new Error('synchronous_commit is off in this database: Plexus acknowledges an update once it is committed, so it needs commits to be durable (set synchronous_commit to on)');
      await migrate(db.pool);
    } catch (e) {
      await db.pool.end().catch(() => {});
      throw e;
    }
    return db;
  }

  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string | pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult<R>> {
    return typeof text === 'string' ? this.pool.query<R>(text, values) : this.pool.query<R>(text);
  }

  /**
   * Runs `fn` on a connection of its own; the connection goes back to the pool afterwards, or is
   * dropped when `fn` failed (it may be broken).
   */
  async withClient<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return withClient(this.pool, fn);
  }

  /** Runs `fn` in a transaction (READ COMMITTED) on one connection; rolls back when it throws. */
  transaction<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.withClient(async (c) => {
      await c.query('BEGIN');
      try {
        const out = await fn(c);
        await c.query('COMMIT');
        return out;
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {});
        throw e;
      }
    });
  }

  /**
   * The value of a server-wide setting, set to `initial` by the first server that asks (every
   * server then shares it).
   */
  async sharedSetting(key: string, initial: () => string): Promise<string> {
    await this.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, initial()]);
    const { rows } = await this.query<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key]);
    return rows[0]!.value;
  }

  /** Each store using the database retains it; the pool ends when the last one releases it. */
  retain(): this {
    this.users++;
    return this;
  }

  release(): Promise<void> {
    if (--this.users > 0) return Promise.resolve();
    return (this.ended ??= this.pool.end());
  }
}

/**
 * A checked-out connection for `fn`. An error it raises between queries (Postgres going away) would
 * otherwise be an uncaught exception: it is held, and the next query fails instead. Dropped from
 * the pool after a failure (it may be broken).
 */
export async function withClient<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  const hold = () => {};
  c.on('error', hold);
  let failed: Error | undefined;
  try {
    return await fn(c);
  } catch (e) {
    failed = e instanceof Error ? e : new Error(String(e));
    throw e;
  } finally {
    c.off('error', hold);
    c.release(failed);
  }
}

/** Applies the migrations this database lacks, in order, each in its own transaction. */
async function migrate(pool: pg.Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<void> {
  await withClient(pool, async (c) => {
    await c.query('SELECT pg_advisory_lock($1, 0)', [MIGRATION_LOCK]);
    try {
      await c.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)');
      const { rows } = await c.query<{ version: number }>('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((r) => r.version));
      const newest = Math.max(0, ...applied);
      const known = migrations[migrations.length - 1]?.version ?? 0;
      if (newest > known) throw new Error(`this database was migrated by a newer Plexus (schema version ${newest}; this server knows up to ${known})`);
      for (const m of migrations) {
        if (applied.has(m.version)) continue;
        await c.query('BEGIN');
        try {
          await c.query(m.sql);
          await c.query('INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)', [m.version, m.name, Date.now()]);
          await c.query('COMMIT');
        } catch (e) {
          await c.query('ROLLBACK');
          throw new Error(`migration ${m.version} (${m.name}) failed: ${(e as Error).message}`);
        }
      }
    } finally {
      await c.query('SELECT pg_advisory_unlock($1, 0)', [MIGRATION_LOCK]);
    }
  });
}
