/**
 * Chooses and opens the server's durable storage: the embedded SQLite store in the data directory
 * (the default: `plexus.db`, `plexus.snapshots.db`, `plexus.history.db`), or Postgres when
 * `PLEXUS_DATABASE_URL` names a database (workspaces, update log, snapshots, forks, checkpoints,
 * the journal and the token secret all there, so several servers can share it).
 * Effects: opens files or connects to Postgres (and migrates its schema).
 */
import path from 'node:path';
import type { ServerConfig } from '../config.ts';
import type { Logger } from '../log.ts';
import { loadOrCreateSecret } from '../auth/tokens.ts';
import { HistoryStore } from '../history/history-store.ts';
import type { HistoryStorage, WorkspaceStorage } from './storage.ts';
import { WorkspaceStore } from './workspace-store.ts';
import { PgDatabase } from './postgres/database.ts';
import { PgWorkspaceStore } from './postgres/postgres-store.ts';
import { PgHistoryStore } from './postgres/postgres-history.ts';

export interface OpenedStorage {
  store: WorkspaceStorage;
  history: HistoryStorage;
  /**
   * The secret that signs tokens when `PLEXUS_SECRET` is not set: `<dataDir>/secret.key` (created
   * on first start); with Postgres the database's, which the first server to start seeds with its
   * own, so every server of a deployment accepts every token.
   */
  tokenSecret(): Promise<Buffer>;
}

export async function openStorage(config: ServerConfig, log: Logger): Promise<OpenedStorage> {
  if (!config.databaseUrl) {
    return {
      store: new WorkspaceStore(path.join(config.dataDir, 'plexus.db'), { background: true, snapshotPartStructs: config.snapshotPartStructs }),
      history: new HistoryStore(path.join(config.dataDir, 'plexus.history.db')),
      tokenSecret: async () => loadOrCreateSecret(config.dataDir),
    };
  }
  const db = await PgDatabase.open(config.databaseUrl, {
    onIdleError: (e) => log.warn('a Postgres connection failed while idle; reconnecting on demand', { err: e }),
  });
  log.info('storage: Postgres', { database: redact(config.databaseUrl) });
  // Both stores share the pool; it ends when the second of them closes.
  return {
    store: new PgWorkspaceStore(db, { background: true, snapshotPartStructs: config.snapshotPartStructs }),
    history: new PgHistoryStore(db),
    tokenSecret: async () => Buffer.from(await db.sharedSetting('token-secret', () => loadOrCreateSecret(config.dataDir).toString('hex')), 'hex'),
  };
}

/** A database URL without its password (for logs). */
export const redact = (url: string): string => url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
