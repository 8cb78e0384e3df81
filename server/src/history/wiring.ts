/**
 * Builds the server's history from its parts: the history store beside the workspace store, the
 * attribution journal of every loaded document, and the checkpoints (automatic ones after each
 * `checkpointActivityMs` of changes, before agent runs and imports). The store comes from
 * store/open-storage.ts (SQLite `<data dir>/plexus.history.db`, or Postgres). Effects: none until
 * documents load.
 */
import type { Hocuspocus } from '@hocuspocus/server';
import type { ServerConfig } from '../config.ts';
import type { Logger } from '../log.ts';
import { Attribution } from './attribution.ts';
import { Checkpoints } from './checkpoints.ts';
import type { Awaitable, HistoryStorage } from '../store/storage.ts';

export interface History {
  store: HistoryStorage;
  attribution: Attribution;
  checkpoints: Checkpoints;
  /** Forgets a deleted workspace's history. */
  deleted(ws: string): Awaitable<void>;
  /** Writes what is pending (the journal's open stretches) and closes the store. */
  close(): Promise<void>;
}

export function historyWiring(deps: { config: ServerConfig; store: HistoryStorage; hocuspocus: () => Hocuspocus; log: Logger }): History {
  const store = deps.store;
  const checkpoints = new Checkpoints({ store, hocuspocus: deps.hocuspocus, log: deps.log }, { activityMs: deps.config.checkpointActivityMs });
  const attribution = new Attribution(store, deps.log, { onChange: (ws, actor, _summary, doc) => checkpoints.onChange(ws, actor, doc) });
  return {
    store,
    attribution,
    checkpoints,
    deleted: (ws) => store.deleteWorkspace(ws),
    close: async () => {
      checkpoints.close();
      await attribution.close();
      await store.close();
    },
  };
}
