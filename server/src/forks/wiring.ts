/**
 * Builds the forks service and the roster for a server (app.ts wires them in).
 * Effects: none until used.
 */
import type { Hocuspocus } from '@hocuspocus/server';
import type { ServerConfig } from '../config.ts';
import type { TokenSigner } from '../auth/tokens.ts';
import type { Logger } from '../log.ts';
import type { WorkspaceStorage } from '../store/storage.ts';
import { Forks } from './forks.ts';
import type { KernelDirs } from './fork-files.ts';
import { Roster, type RosterRelay, type RosterTimer } from './roster.ts';

export interface ForksWiring {
  forks: Forks;
  roster: Roster;
  /** A workspace is being deleted (before its storage goes). */
  deleted(id: string): Promise<void>;
}

export function forksWiring(deps: {
  config: ServerConfig;
  store: WorkspaceStorage;
  hocuspocus: () => Hocuspocus;
  signer: TokenSigner;
  log: Logger;
  kernels: KernelDirs | null;
  copyFiles: (from: string, to: string) => void;
  timer?: RosterTimer;
  remote?: RosterRelay;
}): ForksWiring {
  let roster: Roster | null = null;
  const forks = new Forks({
    store: deps.store, hocuspocus: deps.hocuspocus, signer: deps.signer, log: deps.log, kernels: deps.kernels,
    ownerTokenDays: deps.config.ownerTokenDays, copyFiles: deps.copyFiles,
    onHandoutFork: (fork, doc) => roster?.added(fork, doc),
  });
  roster = new Roster({ store: deps.store, registry: forks.registry, hocuspocus: deps.hocuspocus, log: deps.log, timer: deps.timer, remote: deps.remote });
  const r = roster;
  return {
    forks,
    roster: r,
    async deleted(id) {
      r.deleted(await forks.deleted(id));
    },
  };
}
