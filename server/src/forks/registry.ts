/**
 * Which workspace is a fork of which: the fork registry, stored beside the workspace registry
 * (storage.ts `forks`: a `forks` table in SQLite or Postgres), so the server finds a student's fork
 * of a hand-out (one per person), the forks a roster lists, and who may open a fork without
 * scanning documents. The document itself records its origin too (`meta.forkedFrom`); this is the
 * server's index of it.
 *
 * Access (`grantsAccess`): a token grants what it names (tokens.ts `grantsWorkspace`), and an
 * owner token of a workspace also grants owner rights in every fork made from that workspace's
 * hand-out links — the teacher opens each student's fork. Editors and viewers of the source get
 * nothing in the forks; a hand-out link grants nothing but forking.
 * Effects: storage I/O.
 */
import type { TokenClaims } from '@plexus/shared';
import { grantsWorkspace } from '../auth/tokens.ts';
import type { ForkRecord, ForkRows, WorkspaceStorage } from '../store/storage.ts';

export type { ForkRecord };

export class ForkRegistry {
  private readonly rows: ForkRows;

  constructor(private readonly store: WorkspaceStorage) {
    this.rows = store.forks;
  }

  /** Records a new fork (workspaces made with their fork record use `store.create(rec, fork)`). */
  async add(rec: ForkRecord): Promise<void> {
    await this.rows.add(rec);
  }

  /** The fork record of a workspace, or null when it is no fork (or its workspace is gone). */
  async get(id: string): Promise<ForkRecord | null> {
    const r = await this.rows.get(id);
    return r && (await this.store.get(r.id)) ? r : null;
  }

  /** A student's fork of a hand-out, if they have one. */
  async studentFork(source: string, student: string): Promise<ForkRecord | null> {
    const r = await this.rows.ofStudent(source, student);
    if (!r) return null;
    if (await this.store.get(r.id)) return r;
    await this.rows.remove(r.id); // its workspace was deleted (a crash before the row went): a new fork may take its place
    return null;
  }

  /** The forks made from a workspace's hand-out links, oldest first. */
  async handoutForks(source: string): Promise<ForkRecord[]> {
    const all = await this.rows.handouts(source);
    const live = await Promise.all(all.map(async (r) => !!(await this.store.get(r.id))));
    return all.filter((_r, i) => live[i]);
  }

  /**
   * A workspace was deleted: it is no longer a fork, and forks made from it stay (standalone: no
   * roster, no teacher access through it). Resolves to its fork record, when it was one.
   */
  async deleted(id: string): Promise<ForkRecord | null> {
    const r = await this.rows.get(id);
    await this.rows.remove(id);
    await this.rows.removeSource(id);
    return r;
  }
}

const registries = new WeakMap<WorkspaceStorage, ForkRegistry>();

/** The fork registry of a store. */
export function forkRegistry(store: WorkspaceStorage): ForkRegistry {
  let r = registries.get(store);
  if (!r) registries.set(store, (r = new ForkRegistry(store)));
  return r;
}

/**
 * True when `claims` grant access to workspace `ws`: what the token names, or, for an owner token
 * of a workspace, the forks made from that workspace's hand-out links (the teacher's access).
 */
export async function grantsAccess(store: WorkspaceStorage, claims: TokenClaims, ws: string): Promise<boolean> {
  if (grantsWorkspace(claims, ws)) return true;
  if (claims.handout || claims.role !== 'owner' || claims.ws === '*') return false;
  const fork = await forkRegistry(store).get(ws);
  return !!fork && fork.handout && fork.source === claims.ws;
}
