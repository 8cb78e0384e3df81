/**
 * Forks: a copy of a workspace — as it stands, or a checkpoint's state — stored as a new workspace
 * that the forker owns, remembering its origin (`meta.forkedFrom` in the document, the fork
 * registry on the server), with the tables and large results its cells need (fork-files.ts).
 * What was in flight in the copied state is settled first (`settleForFork`: no cell, agent run or
 * job is copied as running). Hand-out forks (one per student, made through a hand-out link) also
 * appear on the source's roster (roster.ts).
 *
 * `forkWorkspace(source, { state })` is the seam for checkpoints: give it the state to copy.
 * Effects: store, files, document mutation (the source's roster).
 */
import type { Hocuspocus } from '@hocuspocus/server';
import * as Y from 'yjs';
import { newWorkspaceId, serverOrigin, setForkedFrom, setTitle, settleForFork, type ForkOrigin } from '@plexus/shared';
import type { WorkspaceRecord, WorkspaceStorage } from '../store/storage.ts';
import type { TokenSigner } from '../auth/tokens.ts';
import type { Logger } from '../log.ts';
import { WorkspaceError, cleanName } from '../workspaces.ts';
import { diagnose } from '../collab/recovery.ts';
import { copyForkFiles, type KernelDirs } from './fork-files.ts';
import { forkRegistry, type ForkRecord, type ForkRegistry } from './registry.ts';

const ORIGIN = serverOrigin('fork');
/** What a fork says of the runs that were in flight when it was made. */
export const FORK_SETTLE_REASON = 'not run in this fork: it was running when the workspace was forked';

export interface ForksDeps {
  store: WorkspaceStorage;
  hocuspocus: () => Hocuspocus;
  signer: TokenSigner;
  log: Logger;
  /** Kernel file directories (null without a kernel: nothing to copy). */
  kernels: KernelDirs | null;
  /** How long a fork's owner token lasts (days). */
  ownerTokenDays: number;
  /** Copies the other per-workspace files (the method library's). */
  copyFiles?: (from: string, to: string) => void;
  /** A new hand-out fork exists: the source's roster lists it (roster.ts). */
  onHandoutFork?: (fork: ForkRecord, doc: Y.Doc) => void;
}

/** Who forks, as the server knows them. */
export interface Forker {
  /** Presence id: `<token subject>/<device>` (or the subject alone). */
  id: string;
  name?: string;
  /** Subject of the owner token the fork gets; null when the forker's own token already covers every workspace. */
  ownerSub: string | null;
}

export interface ForkOptions {
  by: Forker;
  /** The new workspace's name (default: "<source> (fork by <name>)"). */
  name?: unknown;
  /** The state to copy (a checkpoint's); default: the source as it stands now. */
  state?: Uint8Array;
  /** The checkpoint `state` is from (recorded in `forkedFrom`). */
  checkpoint?: string;
  /** Directory holding the table files of `state` (default: the source's current tables). */
  tablesFrom?: string;
  /** A student's fork of a hand-out: `student` identifies them (one fork each). */
  handout?: { student: string };
  /** Last changes to the new document before it is stored (server origin). */
  adjust?: (doc: Y.Doc) => void;
}

export interface ForkResult {
  workspace: WorkspaceRecord;
  forkedFrom: ForkOrigin;
  /** An owner token for the fork (null when the forker's token covers it). */
  token: string | null;
  /** A hand-out fork the student already had. */
  existing: boolean;
}

export class Forks {
  readonly registry: ForkRegistry;

  constructor(private readonly deps: ForksDeps) {
    this.registry = forkRegistry(deps.store);
  }

  /**
   * Forks workspace `source` into a new workspace owned by `opts.by`. A student's second fork of
   * the same hand-out is their first one (idempotent).
   */
  async forkWorkspace(source: string, opts: ForkOptions): Promise<ForkResult> {
    const src = await this.deps.store.get(source);
    if (!src) throw new WorkspaceError(404, 'not-found', `workspace ${source} does not exist`);
    if (opts.handout) {
      const mine = await this.registry.studentFork(source, opts.handout.student);
      if (mine) return this.existing(mine, src, opts.by);
    }
    const name = cleanName(opts.name, defaultName(src.name, opts.by.name));
    const doc = opts.state ? stateDoc(opts.state) : await this.currentDoc(source);
    try {
      const forkedFrom: ForkOrigin = {
        workspace: source, name: src.name, at: Date.now(),
        by: { id: opts.by.id, ...(opts.by.name ? { name: opts.by.name } : {}) },
        ...(opts.checkpoint ? { checkpoint: opts.checkpoint } : {}),
        ...(opts.handout ? { handout: true } : {}),
      };
      settleForFork(doc, FORK_SETTLE_REASON, ORIGIN);
      setTitle(doc, name, ORIGIN);
      setForkedFrom(doc, forkedFrom, ORIGIN);
      opts.adjust?.(doc);
      const problem = diagnose(doc);
      if (problem) throw new WorkspaceError(409, 'source-needs-recovery', `this workspace cannot be forked: ${problem.problem}`);
      const id = newWorkspaceId();
      // Files first: a crash before the workspace exists leaves only unused files behind.
      if (this.deps.kernels) copyForkFiles(this.deps.kernels, source, id, doc, opts.tablesFrom);
      this.deps.copyFiles?.(source, id);
      const record: ForkRecord = {
        id, source, by: opts.by.id, byName: opts.by.name ?? null, student: opts.handout?.student ?? null, handout: !!opts.handout, created: forkedFrom.at,
      };
      // The workspace and its fork record in one transaction. A second request of the same
      // student racing this one (another server) fails there — the registry holds one fork per
      // student and source — and answers with the fork the first one made.
      let workspace: WorkspaceRecord;
      try {
        workspace = await this.deps.store.create({ id, name, state: Y.encodeStateAsUpdate(doc), now: forkedFrom.at }, record);
      } catch (e) {
        const mine = opts.handout && (await this.registry.studentFork(source, opts.handout.student));
        if (mine) return this.existing(mine, src, opts.by);
        throw e;
      }
      this.deps.log.info('workspace forked', { ws: source, fork: id, by: opts.by.id, handout: !!opts.handout, checkpoint: opts.checkpoint });
      if (record.handout) this.deps.onHandoutFork?.(record, doc);
      return { workspace, forkedFrom, token: this.ownerToken(id, opts.by), existing: false };
    } finally {
      doc.destroy();
    }
  }

  /** A workspace was deleted: the registry forgets it (as a fork and as a source); resolves to its fork record. */
  deleted(id: string): Promise<ForkRecord | null> {
    return this.registry.deleted(id);
  }

  /**
   * A copy of the source as it is now: its live document's state when loaded, else what is stored,
   * applied as stored (`store.storedDoc`: a snapshot's parts and the log in order, not merged
   * first — merging a large snapshot stored in parts would hold the event loop, §41).
   */
  private async currentDoc(source: string): Promise<Y.Doc> {
    const live = this.deps.hocuspocus().documents.get(source);
    if (live) return stateDoc(Y.encodeStateAsUpdate(live));
    const doc = await this.deps.store.storedDoc(await this.deps.store.loadParts(source), ORIGIN);
    if (!doc) throw new WorkspaceError(409, 'empty', `workspace ${source} has no content to fork`);
    return doc;
  }

  private async existing(fork: ForkRecord, src: WorkspaceRecord, by: Forker): Promise<ForkResult> {
    const workspace = (await this.deps.store.get(fork.id))!;
    return {
      workspace,
      forkedFrom: { workspace: fork.source, name: src.name, at: fork.created, by: { id: fork.by, ...(fork.byName ? { name: fork.byName } : {}) }, handout: true },
      token: this.ownerToken(fork.id, by),
      existing: true,
    };
  }

  private ownerToken(id: string, by: Forker): string | null {
    return by.ownerSub === null ? null : this.deps.signer.sign({ ws: id, role: 'owner', sub: by.ownerSub, ttlSeconds: this.deps.ownerTokenDays * 86400 });
  }
}

/** A new document holding `state`. */
function stateDoc(state: Uint8Array): Y.Doc {
  const doc = new Y.Doc();
  try {
    Y.applyUpdate(doc, state, ORIGIN);
  } catch (e) {
    doc.destroy();
    throw e;
  }
  return doc;
}

/** "<source> (fork)", or "(fork by <name>)", within the 200 characters a name may have. */
function defaultName(source: string, by: string | undefined): string {
  const tail = by ? ` (fork by ${by.slice(0, 60)})` : ' (fork)';
  return source.slice(0, 200 - tail.length) + tail;
}
