/**
 * Who changed what, from the server's own record of who sent each update — never from what
 * clients claim in the document. Every transaction applied to a live document is summarised
 * (shared `observeChanges`) and attributed to its sender: a Hocuspocus connection (its token's
 * role and subject, refined by the presence the server stamped for that connection — `<sub>/<device>`
 * and the chosen name), a y-websocket peer (its token), or the server itself. Changes of one
 * actor merge into one journal entry per stretch of `stretchMs`; entries are written to the
 * history store when they close, when the document unloads and at shutdown.
 * Effects: observes documents, writes the history store on timers.
 */
import type { Connection, Document, Extension, afterLoadDocumentPayload, beforeUnloadDocumentPayload } from '@hocuspocus/server';
import type * as Y from 'yjs';
import {
  emptySummary, isPlexusOrigin, mergeSummary, observeChanges, readPresence, writerOfToken,
  type Actor, type ChangeSummary,
} from '@plexus/shared';
import type { ConnectionContext } from '../collab/access.ts';
import type { YwsOrigin } from '../collab/persistence.ts';
import type { Logger } from '../log.ts';
import type { HistoryStorage, JournalEntry } from '../store/storage.ts';

export const SERVER_ACTOR: Actor = { id: 'plexus', name: 'Plexus', kind: 'server' };

/** What kind of actor a token is (the schema's writer of it; viewers count as people). */
export const kindOfClaims = (claims: { role: string; sub: string }): Actor['kind'] => {
  const w = writerOfToken(claims);
  return w === 'agent' ? 'agent' : w === 'kernel' ? 'kernel' : 'person';
};

/** The actor behind a transaction's origin on a live document. */
export function actorOf(origin: unknown, document: Document | null): Actor {
  if (origin && typeof origin === 'object') {
    const o = origin as { source?: unknown; connection?: Connection };
    if (o.source === 'connection' && o.connection) {
      const claims = (o.connection.context as ConnectionContext | undefined)?.claims;
      if (!claims) return { id: 'unknown', kind: 'person' };
      const kind = kindOfClaims(claims);
      // The presence the server stamped for this connection names the person and their device.
      if (document) {
        const states = document.awareness.getStates();
        for (const client of document.getClients(o.connection)) {
          const p = readPresence(states.get(client));
          if (p && p.user.id.startsWith(`${claims.sub}/`)) return { id: p.user.id, name: p.user.name, kind };
        }
      }
      return { id: claims.sub, ...(claims.name ? { name: claims.name } : {}), kind };
    }
    if (o.source === 'yws') {
      const c = (origin as YwsOrigin).claims;
      return c ? { id: c.sub, ...(c.name ? { name: c.name } : {}), kind: kindOfClaims(c) } : { id: (origin as YwsOrigin).ownerKey, kind: 'person' };
    }
    if (isPlexusOrigin(origin)) {
      // In-process writes (direct connections carry the caller's Plexus origin).
      if (origin.kind === 'user') return { id: origin.userId, ...(origin.name ? { name: origin.name } : {}), kind: 'person' };
      if (origin.kind === 'agent') return { id: 'agent', name: 'Agent', kind: 'agent' };
      if (origin.kind === 'kernel') return { id: 'kernel', name: 'Kernel', kind: 'kernel' };
    }
  }
  return SERVER_ACTOR;
}

interface Open {
  start: number;
  end: number;
  actor: Actor;
  summary: ChangeSummary;
}

export interface AttributionOptions {
  /** Longest stretch one journal entry covers (ms). */
  stretchMs?: number;
  /** How often closed stretches are written (ms). */
  flushMs?: number;
  now?: () => number;
  /** Called after each attributed change (the checkpoints' activity trigger listens). */
  onChange?: (ws: string, actor: Actor, summary: ChangeSummary, doc: Y.Doc) => void;
}

export class Attribution {
  private readonly open = new Map<string, Map<string, Open>>();
  private readonly detach = new Map<string, () => void>();
  private readonly timer: NodeJS.Timeout;
  private readonly stretchMs: number;
  private readonly now: () => number;

  constructor(private readonly store: HistoryStorage, private readonly log: Logger, private readonly opts: AttributionOptions = {}) {
    this.stretchMs = opts.stretchMs ?? 60_000;
    this.now = opts.now ?? Date.now;
    this.timer = setInterval(() => this.flush(false), opts.flushMs ?? 15_000);
    this.timer.unref();
  }

  readonly extension: Extension = {
    extensionName: 'plexus-history-attribution',
    afterLoadDocument: async ({ documentName, document }: afterLoadDocumentPayload) => {
      this.detach.get(documentName)?.();
      this.detach.set(documentName, observeChanges(document, (tr, summary) => this.record(documentName, actorOf(tr.origin, document), summary, document)));
    },
    beforeUnloadDocument: async ({ documentName }: beforeUnloadDocumentPayload) => {
      this.detach.get(documentName)?.();
      this.detach.delete(documentName);
      this.flushWorkspace(documentName);
    },
  };

  /** Adds a change to its actor's open stretch (closing a stretch that is too long). */
  record(ws: string, actor: Actor, summary: ChangeSummary, doc: Y.Doc): void {
    const now = this.now();
    let byActor = this.open.get(ws);
    if (!byActor) this.open.set(ws, (byActor = new Map()));
    const key = `${actor.kind}:${actor.id}`;
    let o = byActor.get(key);
    if (o && now - o.start >= this.stretchMs) {
      this.write([{ ws, ...o }]);
      o = undefined;
    }
    if (!o) byActor.set(key, (o = { start: now, end: now, actor, summary: emptySummary() }));
    o.end = now;
    if (actor.name) o.actor = actor;
    mergeSummary(o.summary, summary);
    this.opts.onChange?.(ws, actor, summary, doc);
  }

  /** Stretches not yet written (newest first), for reads that must include the last minute. */
  pending(ws: string): Array<Omit<JournalEntry, 'id'>> {
    return [...(this.open.get(ws)?.values() ?? [])].map((o) => ({ ws, ...o, summary: mergeSummary(emptySummary(), o.summary) })).sort((a, b) => b.end - a.end);
  }

  private flushWorkspace(ws: string): void {
    const byActor = this.open.get(ws);
    if (!byActor) return;
    this.write([...byActor.values()].map((o) => ({ ws, ...o })));
    this.open.delete(ws);
  }

  /** Writes stretches that are over (all of them with `all`). */
  flush(all: boolean): void {
    const now = this.now();
    for (const [ws, byActor] of this.open) {
      const done = [...byActor.entries()].filter(([, o]) => all || now - o.start >= this.stretchMs);
      if (!done.length) continue;
      this.write(done.map(([, o]) => ({ ws, ...o })));
      done.forEach(([k]) => byActor.delete(k));
      if (!byActor.size) this.open.delete(ws);
    }
  }

  /** A journal write that fails loses that stretch's attribution, never the document: it is logged. */
  private write(entries: Array<Omit<JournalEntry, 'id'>>): void {
    const failed = (e: unknown) => this.log.error('could not write the history journal', { err: e, entries: entries.length });
    try {
      const written = this.store.appendJournal(entries);
      if (!(written instanceof Promise)) return;
      const w = written.catch(failed).finally(() => this.writing.delete(w));
      this.writing.add(w);
    } catch (e) {
      failed(e);
    }
  }

  /** Journal writes in flight (asynchronous storage): closing waits for them. */
  private readonly writing = new Set<Promise<void>>();

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.detach.forEach((off) => off());
    this.detach.clear();
    this.flush(true);
    await Promise.all([...this.writing]);
  }
}
