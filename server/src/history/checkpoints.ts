/**
 * Checkpoints of live workspaces: the whole document's state stored in the history store, its
 * record written into the document (server origin) so everyone sees it. Made on request (a
 * person's named checkpoint, or the one a client takes before it restores), and automatically:
 * before each agent run (the state as the run was asked for, before the agent acts), before a
 * notebook import, and every `activityMs` while people (or the agent, or the kernel) change the
 * workspace. Retention (retention.ts) thins automatic ones after each new one; garbage collection
 * of the live document stays on (a checkpoint is a full copy, not a Yjs snapshot).
 * Effects: document reads and writes, the history store.
 */
import type { Extension, Hocuspocus, afterLoadDocumentPayload, beforeUnloadDocumentPayload } from '@hocuspocus/server';
import * as Y from 'yjs';
import {
  listCells, listCheckpoints, putCheckpoint, randomId, readRun, removeCheckpoints, roots, serverOrigin,
  type Actor, type CheckpointKind, type CheckpointRecord,
} from '@plexus/shared';
import { withDoc } from '../http/doc-access.ts';
import type { Logger } from '../log.ts';
import type { Awaitable, HistoryStorage } from '../store/storage.ts';
import { actorOf } from './attribution.ts';
import { checkpointsToDrop, DEFAULT_RETENTION, type RetentionPolicy } from './retention.ts';

const ORIGIN = serverOrigin('checkpoint');

export interface CheckpointInput {
  label?: string;
  kind: CheckpointKind;
  by: Actor;
  run?: string;
}

export interface CheckpointsOptions {
  /** An automatic checkpoint at most this often while a workspace changes (ms; 0: never). */
  activityMs: number;
  retention?: RetentionPolicy;
  now?: () => number;
}

const DEFAULT_LABELS: Record<CheckpointKind, string> = {
  named: 'Checkpoint',
  'agent-run': 'Before an agent run',
  activity: 'Automatic',
  import: 'Before an import',
  restore: 'Before a restore',
  fork: 'Fork point',
};

export class Checkpoints {
  private readonly lastAuto = new Map<string, number>();
  private readonly detach = new Map<string, () => void>();
  private readonly now: () => number;

  constructor(
    private readonly deps: { store: HistoryStorage; hocuspocus: () => Hocuspocus; log: Logger },
    private readonly opts: CheckpointsOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** Takes a checkpoint of workspace `ws` now (loading it if needed). */
  async create(ws: string, input: CheckpointInput): Promise<CheckpointRecord> {
    const { rec, stored } = await withDoc(this.deps.hocuspocus(), ws, (doc) => this.capture(doc, ws, input));
    rec.bytes = await stored;
    return withDoc(this.deps.hocuspocus(), ws, (doc) => this.record(doc, ws, rec));
  }

  /** The stored state of a checkpoint (a Yjs update of the whole document), or null. */
  state(ws: string, id: string): Awaitable<Uint8Array | null> {
    return this.deps.store.getState(ws, id);
  }

  /**
   * Takes the document's state now (synchronously: exactly this state) and stores it (deflated off
   * the event loop); the record is written by `record` once it is stored.
   */
  private capture(doc: Y.Doc, ws: string, input: CheckpointInput): { rec: CheckpointRecord; stored: Promise<number> } {
    const at = this.now();
    const id = `cp_${randomId(12)}`;
    const stored = this.deps.store.putState(ws, id, at, Y.encodeStateAsUpdate(doc));
    if (input.kind !== 'named') this.lastAuto.set(ws, at);
    const rec: CheckpointRecord = {
      id,
      label: (input.label?.trim() || DEFAULT_LABELS[input.kind]).slice(0, 200),
      kind: input.kind,
      by: input.by,
      at,
      bytes: 0,
      cells: listCells(doc).length,
      ...(input.run ? { run: input.run } : {}),
    };
    return { rec, stored };
  }

  private record(doc: Y.Doc, ws: string, rec: CheckpointRecord): CheckpointRecord {
    putCheckpoint(doc, rec, ORIGIN);
    if (rec.kind !== 'named') {
      const drop = checkpointsToDrop(listCheckpoints(doc), this.now(), this.opts.retention ?? DEFAULT_RETENTION);
      if (drop.length) {
        removeCheckpoints(doc, drop, ORIGIN);
        // Records first: a state left behind by a failed drop costs space, never a dangling record.
        const dropped = this.deps.store.dropStates(ws, drop);
        if (dropped instanceof Promise) dropped.catch((e) => this.deps.log.warn('could not drop old checkpoint states', { ws, err: e }));
      }
    }
    return rec;
  }

  /** Takes an automatic checkpoint of a loaded document: the state now, the record once it is stored. */
  private auto(doc: Y.Doc, ws: string, input: CheckpointInput): void {
    const failed = (e: unknown) => this.deps.log.error('could not take an automatic checkpoint', { ws, kind: input.kind, err: e });
    try {
      const { rec, stored } = this.capture(doc, ws, input);
      stored.then((bytes) => {
        if (this.detach.has(ws)) this.record(doc, ws, { ...rec, bytes });
      }, failed);
    } catch (e) {
      failed(e);
    }
  }

  /** Attribution's hook: every change may be the one that makes an activity checkpoint due. */
  onChange(ws: string, actor: Actor, doc: Y.Doc): void {
    if (!this.opts.activityMs || actor.kind === 'server' || !this.detach.has(ws)) return;
    const last = this.lastAuto.get(ws) ?? 0;
    if (this.now() - last >= this.opts.activityMs) this.auto(doc, ws, { kind: 'activity', by: actor, label: `Automatic (${actor.name ?? actor.id} was editing)` });
  }

  readonly extension: Extension = {
    extensionName: 'plexus-checkpoints',
    afterLoadDocument: async ({ documentName: ws, document }: afterLoadDocumentPayload) => {
      const newestAuto = listCheckpoints(document).find((c) => c.kind !== 'named');
      // The activity clock runs from the newest automatic checkpoint, or from now: a workspace
      // gets its first activity checkpoint after `activityMs` of work, not at its first change
      // (which would also make a short session's document change by itself right after it opens).
      this.lastAuto.set(ws, newestAuto?.at ?? this.now());
      const runs = roots(document).runs;
      const onRuns = (e: Y.YMapEvent<Y.Map<unknown>>) => {
        for (const [id, change] of e.changes.keys) {
          if (change.action !== 'add') continue;
          const m = runs.get(id);
          const run = m instanceof Y.Map ? readRun(m) : null;
          if (!run) continue;
          this.auto(document, ws, {
            kind: 'agent-run',
            run: id,
            // Who asked, as the server knows the sender (not the name the request carries).
            by: actorOf(e.transaction.origin, document),
            label: `Before the agent: “${run.request.text.replace(/\s+/g, ' ').slice(0, 80)}”`,
          });
        }
      };
      runs.observe(onRuns);
      this.detach.set(ws, () => runs.unobserve(onRuns));
    },
    beforeUnloadDocument: async ({ documentName }: beforeUnloadDocumentPayload) => {
      this.detach.get(documentName)?.();
      this.detach.delete(documentName);
      this.lastAuto.delete(documentName);
    },
  };

  close(): void {
    this.detach.forEach((off) => off());
    this.detach.clear();
  }
}
