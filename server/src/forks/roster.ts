/**
 * The teacher's roster, pushed: while a hand-out fork is loaded, every change to it (a student's
 * edit, the kernel's results, a raised hand) schedules a recomputation of its roster entry
 * `ROSTER_PUSH_MS` later (one pending per fork, so a burst of changes costs one write); the entry
 * is written, with a server origin, into the source's document if it is loaded — someone is looking
 * at it — and reaches the teacher's browser through ordinary sync. Nothing polls.
 *
 * A source that is not loaded is not touched (loading it would start its kernel for nobody): when
 * it loads, every fork of its hand-outs is summarised once (from the live fork, or its stored
 * state) and the roster brought up to date, entries of deleted forks removed.
 * Effects: document mutation (the sources' rosters), reads stored forks, timers.
 */
import type { Extension, Hocuspocus } from '@hocuspocus/server';
import * as Y from 'yjs';
import {
  getRosterEntry, listRoster, removeRosterEntry, rosterEntryChanged, rosterStatus, serverOrigin, setRosterEntry, writerOfToken,
  type RosterEntry,
} from '@plexus/shared';
import type { WorkspaceStorage } from '../store/storage.ts';
import type { Logger } from '../log.ts';
import type { ForkRecord, ForkRegistry } from './registry.ts';

/** How long after a change in a fork its roster entry is written (well under a second). */
export const ROSTER_PUSH_MS = 100;
const ORIGIN = serverOrigin('roster');

/** Runs `run` after `ms` (tests wrap it to see what is scheduled). */
export type RosterTimer = (run: () => void, ms: number) => void;

export interface RosterDeps {
  store: WorkspaceStorage;
  registry: ForkRegistry;
  hocuspocus: () => Hocuspocus;
  log: Logger;
  timer?: RosterTimer;
  /** Several nodes: tells the node serving a source about its forks' changes (cluster/roster-relay.ts). */
  remote?: RosterRelay;
}

/** Announces a fork's change to whichever node serves its source, and hears those announcements. */
export interface RosterRelay {
  publish(source: string, fork: string, active: number | undefined): void;
  subscribe(handler: (source: string, fork: string, active: number | undefined) => void): void;
}

/** True when a transaction origin is a person's change (a browser's or a stock client's), not a service peer's. */
function byPerson(origin: unknown): boolean {
  const o = origin as { source?: unknown; connection?: { context?: { claims?: { role: string; sub: string } } } } | null;
  if (o?.source === 'yws') return true;
  const claims = o?.source === 'connection' ? o.connection?.context?.claims : undefined;
  return !!claims && writerOfToken(claims) === 'person';
}

export class Roster {
  /** Forks with a write scheduled. */
  private readonly pending = new Set<string>();
  /** Last change a person made in each fork watched since the server started. */
  private readonly active = new Map<string, number>();
  private readonly detach = new Map<string, () => void>();
  /**
   * Loaded documents, from the load hooks: Hocuspocus lists a document only once every
   * afterLoadDocument hook has run, and a source that just loaded must be written to at once.
   */
  private readonly loaded = new Map<string, Y.Doc>();
  private closed = false;
  private readonly timer: RosterTimer;

  constructor(private readonly deps: RosterDeps) {
    this.timer = deps.timer ?? ((run, ms) => void setTimeout(run, ms).unref());
    deps.remote?.subscribe((source, fork, active) => this.heard(source, fork, active));
  }

  /** Another node's fork changed: written here when this node serves its source. */
  private heard(source: string, fork: string, active: number | undefined): void {
    if (this.closed || !this.liveDoc(source)) return;
    if (active !== undefined && active > (this.active.get(fork) ?? 0)) this.active.set(fork, active);
    void (async () => {
      const rec = await this.deps.registry.get(fork);
      if (rec?.handout && rec.source === source) await this.write(rec, this.liveDoc(fork));
    })().catch((e) => this.deps.log.warn('roster update from another node failed', { fork, err: e }));
  }

  readonly extension: Extension = {
    extensionName: 'plexus-roster',
    afterLoadDocument: async ({ documentName, document }) => {
      this.loaded.set(documentName, document);
      const fork = await this.deps.registry.get(documentName);
      if (fork?.handout && this.loaded.get(documentName) === document) this.watch(fork, document);
      if ((await this.deps.registry.handoutForks(documentName)).length) setImmediate(() => void this.catchUp(documentName));
    },
    afterUnloadDocument: async ({ documentName }) => {
      this.loaded.delete(documentName);
      this.detach.get(documentName)?.();
      this.detach.delete(documentName);
    },
  };

  /** A new hand-out fork: its source's roster lists it at once when someone looks at the source. */
  added(fork: ForkRecord, doc: Y.Doc): void {
    const src = this.liveDoc(fork.source);
    if (src) this.put(fork, this.entryOf(fork, doc, getRosterEntry(src, fork.id)));
  }

  /** A workspace was deleted: when it was a hand-out fork, its entry leaves its source's roster. */
  deleted(fork: ForkRecord | null): void {
    if (!fork?.handout) return;
    this.active.delete(fork.id);
    const src = this.liveDoc(fork.source);
    if (src) removeRosterEntry(src, fork.id, ORIGIN);
  }

  close(): void {
    this.closed = true;
    for (const d of this.detach.values()) d();
    this.detach.clear();
    this.loaded.clear();
  }

  private liveDoc(ws: string): Y.Doc | null {
    return this.loaded.get(ws) ?? (this.deps.hocuspocus().documents.get(ws) as Y.Doc | undefined) ?? null;
  }

  private watch(fork: ForkRecord, doc: Y.Doc): void {
    const onUpdate = (_u: Uint8Array, origin: unknown) => {
      if (byPerson(origin)) this.active.set(fork.id, Date.now());
      this.schedule(fork.id);
    };
    doc.on('update', onUpdate);
    this.detach.get(fork.id)?.();
    this.detach.set(fork.id, () => doc.off('update', onUpdate));
    this.schedule(fork.id);
  }

  /** One write per fork at most every ROSTER_PUSH_MS, with the fork as it is then. */
  private schedule(fork: string): void {
    if (this.pending.has(fork) || this.closed) return;
    this.pending.add(fork);
    this.timer(() => {
      this.pending.delete(fork);
      if (this.closed) return;
      void (async () => {
        const rec = await this.deps.registry.get(fork);
        if (!rec) return;
        // The source is served elsewhere (several nodes): its node writes the entry.
        if (!this.liveDoc(rec.source) && this.deps.remote) this.deps.remote.publish(rec.source, fork, this.active.get(fork));
        else await this.write(rec, this.liveDoc(fork));
      })().catch((e) => this.deps.log.warn('roster update failed', { fork, err: e }));
    }, ROSTER_PUSH_MS);
  }

  /** Writes a fork's entry into its source when the source is loaded and the entry changed. */
  private async write(fork: ForkRecord, live: Y.Doc | null): Promise<void> {
    if (!this.liveDoc(fork.source)) return;
    let doc = live;
    if (!doc) {
      // As stored: a snapshot's parts and the log applied in order, not merged first (§41).
      doc = await this.deps.store.storedDoc(await this.deps.store.loadParts(fork.id));
      if (!doc) return;
    }
    try {
      const src = this.liveDoc(fork.source);
      const next = src && this.entryOf(fork, doc, getRosterEntry(src, fork.id));
      if (next) this.put(fork, next);
    } finally {
      if (doc !== live) doc.destroy();
    }
  }

  /** Writes an entry into its source's roster when the source is loaded and the entry changed. */
  private put(fork: ForkRecord, next: RosterEntry): void {
    const src = this.liveDoc(fork.source);
    if (src && rosterEntryChanged(getRosterEntry(src, fork.id), next)) setRosterEntry(src, next, ORIGIN);
  }

  /** A fork's roster entry from its document (`prev`: the entry the roster holds now). */
  private entryOf(fork: ForkRecord, doc: Y.Doc, prev: RosterEntry | null): RosterEntry {
    return {
      fork: fork.id,
      student: { id: fork.student ?? fork.by, ...(fork.byName ? { name: fork.byName.slice(0, 200) } : {}) },
      created: fork.created,
      ...rosterStatus(doc),
      active: this.active.get(fork.id) ?? prev?.active ?? fork.created,
      updated: Date.now(),
    };
  }

  /** A source just loaded: bring its roster up to date with every fork of its hand-outs. */
  private async catchUp(source: string): Promise<void> {
    const forks = await this.deps.registry.handoutForks(source);
    for (const fork of forks) {
      if (this.closed || !this.liveDoc(source)) return;
      try {
        await this.write(fork, this.liveDoc(fork.id));
      } catch (e) {
        this.deps.log.warn('roster catch-up failed for a fork', { ws: source, fork: fork.id, err: e });
      }
      await new Promise<void>((r) => setImmediate(r)); // one fork per turn: the event loop stays free
    }
    const src = this.liveDoc(source);
    if (!src || this.closed) return;
    const known = new Set(forks.map((f) => f.id));
    for (const e of listRoster(src)) if (!known.has(e.fork)) removeRosterEntry(src, e.fork, ORIGIN);
  }
}
