/**
 * The agent in one workspace: a Hocuspocus peer with a service token, its own replica (a fresh
 * Y.Doc, so a fresh random Yjs client id, every time the agent starts — never one reused with
 * older state), presence like a person's (name, colour, focus, a caret in the cell it types into),
 * and the runs: queued requests start (a few at a time), Stop signals abort, Undo signals revert
 * exactly the run's own transactions with a Y.UndoManager that tracks only that run's origin.
 * One runner per workspace: the peer joins, and takes runs, only while it holds the workspace's
 * agent lease from the server (renewed every `leasePollMs`); another agent process waits on
 * standby, unseen, and takes over when the holder releases the lease or stops renewing it — then,
 * and only then, runs left `running` belong to nobody and are failed. A holder that loses its
 * lease stops its runs and leaves.
 * Effects: network (its provider, the model, the server API), timers.
 */
import { ServicePeer } from '@plexus/peer';
import * as Y from 'yjs';
import {
  agentOrigin, findAskerState, finishRun, getRun, isFinished, listRuns, randomId, roots, setUndoOutcome, viewerRoots,
  type AgentOrigin, type ChatAuthor, type PresenceState, type RunView,
} from '@plexus/shared';
import type { AgentConfig } from '../config.ts';
import { Model } from '../llm/model.ts';
import { AgentRun } from '../run/agent-run.ts';
import type { Presence } from '../tools/tool.ts';
import { ServerApi } from './server-api.ts';
import { AgentQuota } from './quota.ts';
import { hostname } from 'node:os';

export const AGENT_USER_ID = 'agent';
/** Shortest interval between two published caret positions (ms). */
const CARET_INTERVAL_MS = 50;

interface Tracked {
  origin: AgentOrigin;
  undo: Y.UndoManager;
  run?: AgentRun;
}

export class WorkspacePeer {
  /** Its replica: a fresh one each time it joins after losing the lease (what it wrote meanwhile must never reach the server). */
  private replica = new Y.Doc();
  /** The connection while this peer holds the lease (shared with the kernel: @plexus/peer). */
  private peer: ServicePeer | null = null;
  private readonly tracked = new Map<string, Tracked>();
  private readonly active = new Map<string, AgentRun>();
  private readonly author: ChatAuthor;
  private readonly api: ServerApi;
  private synced = false;
  private closed = false;
  /** This peer's name as a lease holder (unique per peer, also across machines). */
  readonly runner = `${hostname()}:${process.pid}:${randomId(8)}`;
  private holding = false;
  /** The token this runner joins the document with, given with the lease (fenced by the server). */
  private leaseToken: string | null = null;
  private leaseExpiresAt = 0;
  private leaseTimer: NodeJS.Timeout | null = null;
  private readonly leaseAbort = new AbortController();
  private holdingWaiters: Array<() => void> = [];

  constructor(
    readonly workspaceId: string,
    private readonly config: AgentConfig,
    private readonly model: Model,
    /** The agent's service token: for the server's API (the document is joined with the lease's token). */
    token: () => string,
    private readonly log: (msg: string, extra?: Record<string, unknown>) => void,
    /** Shared by every workspace of this agent process (per-person limits span workspaces). */
    private readonly quota: AgentQuota = new AgentQuota(config.quota),
  ) {
    this.author = { id: AGENT_USER_ID, name: config.name, kind: 'agent', color: config.color };
    this.api = new ServerApi(config.serverUrl, token, workspaceId);
  }

  get doc(): Y.Doc {
    return this.replica;
  }

  /** The Yjs client id of this replica (new on every start). */
  get clientId(): number {
    return this.doc.clientID;
  }

  /** The router's model: PLEXUS_AGENT_FAST_MODEL on the same endpoint, else the main model. */
  private get fastModel(): Model {
    if (!this.config.fastModel || this.config.fastModel === this.model.config.model) return this.model;
    this.fast ??= new Model({ ...this.model.config, model: this.config.fastModel, maxTokensPerTurn: Math.min(this.model.config.maxTokensPerTurn, 512) });
    return this.fast;
  }
  private fast: Model | null = null;

  get busy(): boolean {
    return this.active.size > 0;
  }

  /** Whether this peer holds the workspace's agent lease (and so runs its agent runs). */
  get holdsLease(): boolean {
    return this.holding;
  }

  /** Resolves once this peer holds the lease and has synced (standby peers wait here). */
  whenHolding(): Promise<void> {
    return this.holding && this.synced ? Promise.resolve() : new Promise((r) => this.holdingWaiters.push(r));
  }

  /**
   * Asks for the lease; resolves once this peer holds it and has joined, or is on standby (another
   * runner holds it). Either way it keeps renewing / asking every `leasePollMs`.
   */
  async start(): Promise<void> {
    await this.leaseTick();
  }

  private get leasePollMs(): number {
    return this.config.leasePollMs ?? Math.max(100, Math.floor(this.config.leaseMs / 3));
  }

  private scheduleLease(): void {
    if (this.closed) return;
    this.leaseTimer = setTimeout(() => void this.leaseTick(), this.leasePollMs);
    this.leaseTimer.unref?.();
  }

  /** One round of the lease: renew (holder) or ask (standby); join or leave accordingly. */
  private async leaseTick(): Promise<void> {
    if (this.closed) return;
    try {
      // A renewal that hangs must not keep this runner believing it holds the lease.
      const signal = AbortSignal.any([this.leaseAbort.signal, AbortSignal.timeout(Math.max(1000, this.leasePollMs))]);
      const answer = await this.api.lease(this.runner, this.config.leaseMs, signal);
      if (this.closed) return;
      if (answer.granted) {
        this.leaseExpiresAt = answer.expiresAt;
        if (answer.token) this.leaseToken = answer.token;
        if (!this.holding) {
          this.holding = true;
          this.log('agent lease taken', { ws: this.workspaceId, runner: this.runner });
          await this.join(answer.fresh);
        }
      } else if (this.holding) {
        this.lose(`another agent process (${answer.holder}) runs this workspace now`);
      }
    } catch (e) {
      if (this.closed) return;
      // The server is unreachable: keep running until the lease would have run out, then stop.
      if (this.holding && Date.now() > this.leaseExpiresAt) this.lose('the agent could not renew its lease with the server');
      else this.log('agent lease request failed', { ws: this.workspaceId, err: String(e) });
    } finally {
      this.scheduleLease();
    }
  }

  /**
   * Lost the lease: stop every run (another runner owns them now), leave the document, and drop
   * the replica — the server refuses what this runner wrote without the lease, and a provider
   * re-sends everything its replica has on its next join, so the next join starts from a fresh one.
   */
  private lose(reason: string): void {
    this.holding = false;
    this.leaseToken = null;
    this.log('agent lease lost', { ws: this.workspaceId, runner: this.runner, reason });
    for (const run of this.active.values()) run.stop(reason, 'error');
    this.leave();
    for (const t of this.tracked.values()) t.undo.destroy();
    this.tracked.clear();
    this.replica = new Y.Doc();
  }

  private leave(): void {
    this.synced = false;
    this.unobserveRuns?.();
    this.unobserveRuns = null;
    this.peer?.close();
    this.peer = null;
  }

  private unobserveRuns: (() => void) | null = null;

  /** Joins the document as the workspace's agent. `fresh`: the lease was not ours a moment ago. */
  private async join(fresh: boolean): Promise<void> {
    this.peer = new ServicePeer({
      serverUrl: this.config.serverUrl,
      workspaceId: this.workspaceId,
      doc: this.doc,
      // The token the lease came with: the server fences this runner's writes by it.
      token: () => this.leaseToken ?? '',
      onAuthenticationFailed: (reason) => this.log('agent refused by the server', { ws: this.workspaceId, reason }),
      awareness: {
        user: { id: AGENT_USER_ID, name: this.config.name, color: this.config.color, colorLight: this.config.color + '33', role: 'service', kind: 'agent' },
        focus: { panel: 'chat', cellId: null },
        agent: { model: this.model.config.model, status: 'ready' },
      },
    });
    await this.peer.synced;
    if (this.closed || !this.holding) return;
    this.synced = true;
    if (fresh) this.recoverOrphans();
    const runs = roots(this.doc).runs;
    const onRuns = () => this.onRunsChanged();
    runs.observeDeep(onRuns);
    this.unobserveRuns = () => runs.unobserveDeep(onRuns);
    this.onRunsChanged();
    for (const w of this.holdingWaiters.splice(0)) w();
  }

  /**
   * Runs marked running by a runner that is gone (the lease was free or ran out when we took it, so
   * nobody else runs them): they will not finish. Our own active runs (after a server restart) stay.
   */
  private recoverOrphans(): void {
    for (const r of listRuns(this.doc)) {
      if (r.status === 'running' && !this.active.has(r.id)) finishRun(this.doc, r.id, 'error', 'the agent restarted during this run; partial changes are kept', agentOrigin(r.id));
      else if (r.status === 'queued' && Date.now() - r.created > this.config.maxQueueAgeMs) finishRun(this.doc, r.id, 'error', 'the agent was offline for too long; ask again', agentOrigin(r.id));
    }
  }

  private onRunsChanged(): void {
    if (!this.synced || this.closed || !this.holding) return;
    for (const r of listRuns(this.doc)) {
      const running = this.active.get(r.id);
      if (running && r.stop && !running.stopped) running.stop(`stopped by ${r.stop.name ?? r.stop.by}`);
      if (r.status === 'queued' && !running) {
        if (r.stop) finishRun(this.doc, r.id, 'stopped', `stopped by ${r.stop.name ?? r.stop.by} before it started`, agentOrigin(r.id));
        else if (this.active.size < this.config.maxConcurrentRuns) {
          const refusal = this.quota.refusal(this.workspaceId, r.request.by.id);
          if (refusal) finishRun(this.doc, r.id, 'error', refusal, agentOrigin(r.id));
          else this.begin(r);
        }
      }
      if (r.undo && !r.undone && isFinished(r.status)) this.undo(r);
    }
  }

  private begin(r: RunView): void {
    const origin = agentOrigin(r.id);
    const { cells, atlas } = roots(this.doc);
    const undo = new Y.UndoManager(
      [cells, atlas, ...Object.values(viewerRoots(this.doc))],
      { trackedOrigins: new Set([origin]), captureTimeout: 0 },
    );
    const run = new AgentRun({
      doc: this.doc,
      workspaceId: this.workspaceId,
      run: r,
      origin,
      author: this.author,
      model: this.model,
      fastModel: this.fastModel,
      forceRoute: this.config.forceRoute,
      api: this.api,
      presence: this.presence(),
      limits: this.config.limits,
      asker: () => this.askerState(r.request.by.id),
      log: this.log,
    });
    this.tracked.set(r.id, { origin, undo, run });
    this.active.set(r.id, run);
    const spent = this.quota.begin(this.workspaceId, r.request.by.id);
    this.log('run started', { ws: this.workspaceId, run: r.id });
    void run
      .execute()
      .catch((e) => this.log('run crashed', { run: r.id, err: String(e) }))
      .finally(() => {
        spent(getRun(this.doc, r.id)?.tokens.total ?? 0);
        this.active.delete(r.id);
        this.log('run ended', { ws: this.workspaceId, run: r.id, status: getRun(this.doc, r.id)?.status });
        this.trimTracked();
        this.onRunsChanged();
      });
  }

  /** Reverts exactly this run's changes (people's later edits to the same cells are kept). */
  private undo(r: RunView): void {
    const t = this.tracked.get(r.id);
    const origin = agentOrigin(r.id); // a new object: the undo itself is not tracked
    const by = r.undo!.name ?? r.undo!.by;
    if (!t) {
      setUndoOutcome(this.doc, r.id, { ok: false, at: Date.now(), by, message: 'cannot undo: the agent restarted since this run (its change history is gone)' }, origin);
      return;
    }
    let steps = 0;
    this.doc.transact(() => {
      while (t.undo.undoStack.length > 0 && steps < 10_000) {
        t.undo.undo();
        steps++;
      }
    }, origin);
    t.undo.clear();
    setUndoOutcome(this.doc, r.id, { ok: true, at: Date.now(), by, message: `undone by ${by} (${r.audit.length} change${r.audit.length === 1 ? '' : 's'} reverted)` }, origin);
  }

  /** Keeps undo history for the last 50 runs. */
  private trimTracked(): void {
    const ids = [...this.tracked.keys()];
    for (const id of ids.slice(0, Math.max(0, ids.length - 50))) {
      if (this.active.has(id)) continue;
      this.tracked.get(id)?.undo.destroy();
      this.tracked.delete(id);
    }
  }

  private askerState(userId: string): PresenceState | null {
    const aw = this.peer?.provider.awareness;
    return aw ? findAskerState(aw.getStates() as Map<number, unknown>, userId) : null;
  }

  private caretTimer: NodeJS.Timeout | null = null;
  private caretPending: (() => void) | null = null;

  /**
   * Presence setters. The caret moves with every small edit; it is published at most every
   * CARET_INTERVAL_MS (the latest position wins) so typing does not flood everyone with awareness.
   */
  private presence(): Presence {
    const publishCaret = (write: () => void) => {
      if (this.caretTimer) {
        this.caretPending = write;
        return;
      }
      write();
      this.caretTimer = setTimeout(() => {
        this.caretTimer = null;
        const next = this.caretPending;
        this.caretPending = null;
        if (next) publishCaret(next);
      }, CARET_INTERVAL_MS);
    };
    return {
      focus: (panel, cellId = null) => this.peer?.setAwarenessField('focus', { panel, cellId }),
      caret: (text, at = 0) => {
        if (!text) return publishCaret(() => this.peer?.setAwarenessField('cursor', null));
        // A relative position as given (the edit engine has it: no walk over the text's items).
        const rel = Y.relativePositionToJSON(typeof at === 'number' ? Y.createRelativePositionFromTypeIndex(text, at) : at);
        publishCaret(() => this.peer?.setAwarenessField('cursor', { anchor: rel, head: rel }));
      },
    };
  }

  /**
   * Disappears as a crashed process would (tests of what the others do then): no more lease
   * renewals, the connection dropped, runs left as they are in the document, the lease not handed
   * back.
   */
  vanish(): void {
    this.closed = true;
    if (this.leaseTimer) clearTimeout(this.leaseTimer);
    this.leaseAbort.abort();
    this.active.clear();
    this.peer?.close();
  }

  /** Stops the runs (shutdown) and disconnects. */
  async close(reason = 'the agent is shutting down'): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.leaseTimer) clearTimeout(this.leaseTimer);
    const runs = [...this.active.values()];
    for (const run of runs) run.stop(reason, 'error');
    const deadline = Date.now() + 2000;
    while (this.active.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    // Let the final writes reach the server before the socket closes.
    await new Promise((r) => setTimeout(r, 100));
    if (this.caretTimer) clearTimeout(this.caretTimer);
    this.peer?.close();
    // Hand the workspace over at once (a crash instead lets the lease run out).
    if (this.holding) await this.api.releaseLease(this.runner, AbortSignal.timeout(2000)).catch(() => {});
    this.holding = false;
    this.leaseAbort.abort();
    for (const t of this.tracked.values()) t.undo.destroy();
    this.doc.destroy();
  }
}
