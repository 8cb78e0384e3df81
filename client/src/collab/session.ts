/**
 * One workspace session: the Y.Doc, its IndexedDB copy, the Hocuspocus provider and the
 * awareness, plus a small observable snapshot (connection status, readiness, problems) for React.
 * Created inside a useEffect (never useMemo: StrictMode's double mount would reuse a destroyed
 * provider) and destroyed on unmount.
 */
import * as Y from 'yjs';
import { Awareness } from 'y-protocols/awareness';
import { HocuspocusProvider } from '@hocuspocus/provider';
import {
  createUserUndoManager,
  HOCUSPOCUS_PATH,
  lightColor,
  roots,
  stampPresenceUser,
  userOrigin,
  type Violation,
  type PresenceState,
  type PresenceUser,
  type Role,
  type TokenClaims,
  type UserOrigin,
} from '@plexus/shared';
import { decodeClaims } from '../api/tokens.ts';
import type { Workspace } from '../api/workspaces.ts';
import type { LocalUser } from '../state/user.ts';
import { classifyAuthFailure, classifyProblem, type SessionProblem } from './problems.ts';
import { markLocalCopy } from './localCopies.ts';
import { applyWithoutUpdateEvent, quietTransactions } from './quietApply.ts';
import { unpackStateParts } from '@plexus/shared/state-parts';
import { LocalCopy } from './localCopy.ts';

export type ConnectionStatus = 'connected' | 'connecting' | 'offline';

export interface SessionSnapshot {
  status: ConnectionStatus;
  /** The document has content to show: synced from the server, fetched while opening, or restored from IndexedDB. */
  ready: boolean;
  /** Synced with the server at least once in this session. */
  serverSynced: boolean;
  problem: SessionProblem | null;
}

export const idbName = (workspaceId: string, epoch: string | number) => `plexus:${workspaceId}:${epoch}`;

/** How long we wait for the server before showing an IndexedDB copy that looks empty. */
const OFFLINE_READY_MS = 4000;
const RESET_GUARD_KEY = 'plexus.lastReset';
/** Back-off for rejoining a document the server closed while the socket stayed open. */
const REJOIN_MIN_MS = 1000;
const REJOIN_MAX_MS = 30_000;
/** Longest the socket waits for the document fetched while opening before it connects anyway. */
const EARLY_STATE_WAIT_MS = 15_000;
/** How long the socket waits for this browser's copy of the document to load before it connects anyway. */
const LOCAL_COPY_WAIT_MS = 3_000;
/**
 * After the document fetched while opening is applied, the notebook waits this long at most for
 * the socket's sync before it renders (the first screen stays meanwhile). The sync is one round
 * trip to a server that has the document (a few ms), but the page handles the answer only between
 * its tasks: started first, the notebook's render and its first editors (hundreds of ms on a slow
 * machine) would hold it, and a key typed then would reach the others only after them.
 */
const SYNC_BEFORE_RENDER_MS = 150;

/**
 * This person's presence, built exactly as the server stamps it (`stampPresenceUser`): the id under
 * the token's subject, the token's name when it has one. So what we show for ourselves is what
 * others see, and the stamp changes nothing.
 */
export function presenceUser(user: LocalUser, role: Role, claims: Pick<TokenClaims, 'sub' | 'name'> | null): PresenceUser {
  const mine: PresenceUser = { id: user.id, name: user.name, color: user.color, colorLight: lightColor(user.color), role, kind: 'person' };
  if (!claims || typeof claims.sub !== 'string') return mine;
  return stampPresenceUser(mine as unknown as Record<string, unknown>, { sub: claims.sub, role, ...(typeof claims.name === 'string' ? { name: claims.name } : {}) }) as unknown as PresenceUser;
}

/** Runs `f` once the page is idle (at the latest after `timeoutMs`). */
function whenIdle(f: () => void, timeoutMs = 2000): void {
  if (typeof requestIdleCallback === 'function') requestIdleCallback(f, { timeout: timeoutMs });
  else setTimeout(f, 200);
}

export class WorkspaceSession {
  readonly doc = new Y.Doc();
  readonly awareness: Awareness;
  readonly provider: HocuspocusProvider;
  /** This browser's copy of the document (IndexedDB). */
  readonly idb: LocalCopy;
  /** The local user's origin for every helper write; one object per session (undo compares identity). */
  readonly origin: UserOrigin;
  /** Structural undo (cells added/deleted/moved/re-kinded, title, chat) of this user only. */
  readonly undoManager: Y.UndoManager;

  /** Local changes that broke the document schema (none, unless this page has a bug). */
  readonly schemaProblems: Violation[] = [];
  /** Local changes made before the schema checker had loaded (not checked here; the server checks them). */
  schemaUnchecked = 0;
  /** The schema checker has loaded and checks every local change from now on. */
  schemaChecking = false;

  /** The token's claims as decoded here (the server stamps presence from the verified ones). */
  private readonly claims: TokenClaims | null;
  private snap: SessionSnapshot = { status: 'connecting', ready: false, serverSynced: false, problem: null };
  private listeners = new Set<() => void>();
  private wsStatus: 'connecting' | 'connected' | 'disconnected' = 'connecting';
  private idbSynced = false;
  /** The document fetched while opening has been applied, and the sync waited for (content to show before the sync). */
  private stateShown = false;
  private destroyed = false;
  private offlineTimer: ReturnType<typeof setTimeout>;
  private rejoinTimer: ReturnType<typeof setTimeout> | undefined;
  private rejoinDelay = REJOIN_MIN_MS;
  private earlyStateTimer: ReturnType<typeof setTimeout> | undefined;
  private showTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly workspace: Workspace,
    readonly role: Role,
    token: string,
    user: LocalUser,
    /** The document as the server had it a moment ago (`GET …/state`), applied when it comes unless the socket has synced first. */
    initialState: Promise<Uint8Array | null> | null = null,
  ) {
    // Marks for performance measurements (DevTools, bench/browser-load.ts): when the session began.
    performance.mark('plexus:session-start');
    this.origin = userOrigin(user.id, user.name);
    this.awareness = new Awareness(this.doc);
    // Presence is set before the provider exists so the very first awareness message already
    // carries the role the server expects for this connection.
    this.claims = decodeClaims(token);
    const state: PresenceState = { user: presenceUser(user, role, this.claims), focus: { panel: null, cellId: null } };
    this.awareness.setLocalState(state);

    // Viewers keep their own copy: an editor's unsynced offline edits in this browser must never
    // be replayed through a view-only connection (the server would refuse them forever).
    this.idb = new LocalCopy(idbName(workspace.id, workspace.epoch) + (role === 'viewer' ? ':view' : ''), this.doc);
    // A copy that turns out not to be kept (no IndexedDB, or it failed) is no copy to wait for next time.
    void this.idb.whenSettled.then(() => {
      if (!this.idb.keeping && !this.destroyed && role !== 'viewer') markLocalCopy(workspace.id, false);
    });
    this.idb.whenSynced.then(() => {
      // Marks for performance measurements (visible in DevTools and to Playwright).
      performance.mark('plexus:idb-synced');
      this.idbSynced = true;
      this.update();
    });

    const proto = window.location.protocol === 'https:' ? 'wss' : 'ws';
    let admit = () => {};
    const admitted = new Promise<void>((resolve) => (admit = resolve));
    this.provider = new HocuspocusProvider({
      url: `${proto}://${window.location.host}${HOCUSPOCUS_PATH}?epoch=${encodeURIComponent(String(workspace.epoch))}`,
      name: workspace.id,
      // With a document fetched while opening, the socket opens at once (its handshake overlaps the
      // fetch and the apply), but the provider sends its token, and right after it its sync, only
      // once that document is applied (`admit`): the sync then says "I have all this" and the
      // server sends only what changed since, instead of the whole document a second time. They
      // leave before the notebook renders, so the server answers while it does.
      token: initialState ? () => admitted.then(() => token) : token,
      document: this.doc,
      awareness: this.awareness,
    });
    // Presence leaves only once the server has accepted this connection's token: the provider
    // would send every change of it (the caret, the focused cell) over a socket that is open but
    // not yet admitted, ahead of the token — which waits for the document fetched or kept here.
    // The provider's own sync sends presence right after the token; a change made after that and
    // before the answer is sent once the answer has come.
    const sendPresence = this.provider.boundAwarenessUpdateHandler;
    let presenceSent = false;
    const holdPresence = () => {
      presenceSent = false;
      this.awareness.off('update', sendPresence);
    };
    holdPresence();
    this.provider.on('status', ({ status }: { status: 'connecting' | 'connected' | 'disconnected' }) => {
      this.wsStatus = status;
      if (status !== 'connected') holdPresence();
      this.update();
    });
    this.provider.on('authenticated', () => {
      if (!presenceSent && !this.destroyed) {
        presenceSent = true;
        this.awareness.on('update', sendPresence);
        if (this.awareness.getLocalState()) sendPresence({ added: [], updated: [this.doc.clientID], removed: [] }, null);
      }
      this.update();
    });
    this.provider.on('synced', () => {
      performance.mark('plexus:server-synced');
      // Viewers' copies are kept apart (':view'); only an editor's copy spares the early fetch.
      // (Only while the copy is kept: a browser without IndexedDB must not wait for one next time.)
      if (role !== 'viewer' && this.idb.keeping) markLocalCopy(workspace.id, true);
      this.rejoinDelay = REJOIN_MIN_MS;
      // A transient refusal has healed: drop its notice.
      const healed = this.snap.problem?.action === 'notice' && this.snap.problem.reason !== 'read-only';
      if (healed) this.snap = { ...this.snap, problem: null };
      this.update();
      if (healed) this.listeners.forEach((l) => l());
    });
    this.provider.on('authenticationFailed', ({ reason }: { reason: string }) => this.onProblem(classifyAuthFailure(reason)));
    this.provider.on('close', ({ event }: { event: { code: number; reason: string } }) => {
      const p = classifyProblem(event?.reason, event?.code);
      if (p) this.onProblem(p);
      else this.update();
    });

    this.undoManager = createUserUndoManager(this.doc, this.origin);
    // The browser checks its own writes against the document schema, as the server will: a change
    // it would refuse (4423) shows up here first, with the place and the rule broken. The checker
    // (the schema, and zod under it: about 110 KB of the code the page would start with) comes as its own
    // chunk once the page is idle, not before the notebook: local changes made before it has come
    // are counted, not checked (the server checks every one anyway).
    const watchSchema = ({ checkTransaction }: typeof import('./schemaCheck.ts')) => {
      if (this.destroyed) return;
      this.doc.off('afterTransaction', countUnchecked);
      this.schemaChecking = true;
      this.doc.on('afterTransaction', (tr: Y.Transaction) => {
        if (!tr.local) return;
        const v = checkTransaction(tr, 'person');
        if (!v.length) return;
        this.schemaProblems.push(...v);
        console.error('Plexus: a change made in this tab breaks the workspace document schema; the server will refuse it', v);
      });
    };
    const countUnchecked = (tr: Y.Transaction) => {
      if (tr.local) this.schemaUnchecked++;
    };
    this.doc.on('afterTransaction', countUnchecked);
    whenIdle(() => void import('./schemaCheck.ts').then(watchSchema, (e) => console.warn('Plexus: the document schema checker could not be loaded', e)));
    this.offlineTimer = setTimeout(() => this.update(true), OFFLINE_READY_MS);
    if (initialState) {
      // Applied as if it came through the provider (that origin): the provider never sends it back,
      // which matters for viewers, whose socket may not write; undo does not track it.
      // Until the socket connects, the local copy is loaded without an 'update' event too (nothing
      // is there to send it; the socket's sync then carries whatever the server lacks).
      const loud = quietTransactions(this.doc, this.idb);
      const connect = () => {
        clearTimeout(this.earlyStateTimer);
        loud();
        admit();
      };
      // A request that hangs must not keep the socket closed.
      this.earlyStateTimer = setTimeout(connect, EARLY_STATE_WAIT_MS);
      void initialState.then((state) => {
        if (state && !this.destroyed && !this.provider.isSynced) {
          try {
            performance.mark('plexus:state-fetched');
            // Applied without an 'update' event: the local copy is handed the bytes as they came
            // (stored now, or when its database opens).
            // A large document comes as several updates in one body (its stored parts).
            const updates = unpackStateParts(state);
            try {
              applyWithoutUpdateEvent(this.doc, updates, this.provider);
            } catch (e) {
              // Some parts may be in: the local copy keeps what the document holds, so that it
              // matches what the socket's sync then adds.
              if (updates.length > 1 && this.doc.store.clients.size) this.idb.keep(Y.encodeStateAsUpdate(this.doc));
              throw e;
            }
            // Copies: each part is a view into the body, and IndexedDB would store the whole body for each.
            for (const u of updates) this.idb.keep(updates.length > 1 ? u.slice() : u);
            performance.mark('plexus:state-applied');
            // The token and the sync leave in this task's microtasks (or once the socket's opening
            // has been handled); the notebook renders when the sync is done ('synced' above), or
            // SYNC_BEFORE_RENDER_MS from now if it is slower.
            connect();
            this.showTimer = setTimeout(() => {
              this.stateShown = true;
              this.update();
            }, SYNC_BEFORE_RENDER_MS);
            return;
          } catch (e) {
            console.warn('Plexus: the document fetched while opening could not be applied; the sync will bring it', e);
          }
        } else if (!state && !this.destroyed && !this.idb.synced) {
          // Nothing fetched because this browser keeps a copy: the copy first, then the socket,
          // whose sync is then what changed since, not the whole document a second time while the
          // copy loads — waiting for a copy that is slow to open (IndexedDB can hang) only so long.
          clearTimeout(this.earlyStateTimer);
          this.earlyStateTimer = setTimeout(connect, LOCAL_COPY_WAIT_MS);
          void this.idb.whenSettled.then(connect);
          return;
        }
        connect();
      }, connect);
    }
  }

  subscribe = (cb: () => void): (() => void) => {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  };

  getSnapshot = (): SessionSnapshot => this.snap;

  /** Updates the `user` presence field (name edits), keeping the server-given role. */
  setUser(user: LocalUser): void {
    this.awareness.setLocalStateField('user', presenceUser(user, this.role, this.claims));
  }

  private onProblem(p: SessionProblem): void {
    if (this.destroyed) return;
    if (p.action === 'fatal') this.provider.disconnect();
    // The local copy holds a change the server refused: discard it so a reload starts clean.
    if (p.reason === 'read-only') {
      markLocalCopy(this.workspace.id, false);
      void this.idb.clearData();
    }
    if (p.action === 'reset-local') void this.resetLocal();
    if (p.action === 'notice') this.scheduleRejoin();
    this.update(false, p);
  }

  /**
   * The server may close just this document (a Hocuspocus CLOSE message) and keep the socket
   * open; the provider then never authenticates again by itself. Rejoin, backing off.
   */
  private scheduleRejoin(): void {
    clearTimeout(this.rejoinTimer);
    this.rejoinTimer = setTimeout(() => {
      const socket = this.provider.configuration.websocketProvider;
      if (this.destroyed || this.snap.problem?.action === 'fatal') return;
      if (socket.status === 'connected' && !this.provider.isAuthenticated) {
        void this.provider.sendToken().then(() => this.provider.startSync());
      }
    }, this.rejoinDelay);
    this.rejoinDelay = Math.min(this.rejoinDelay * 2, REJOIN_MAX_MS);
  }

  /** Drops the IndexedDB copy of an outdated epoch and reloads (once; a loop shows the error). */
  private async resetLocal(): Promise<void> {
    const last = Number(sessionStorage.getItem(RESET_GUARD_KEY) ?? 0);
    this.provider.disconnect();
    if (Date.now() - last < 15_000) {
      this.update(false, {
        reason: 'stale-local-state',
        action: 'fatal',
        message: 'The server keeps refusing this workspace’s local state. Reload the page to try again.',
      });
      return;
    }
    sessionStorage.setItem(RESET_GUARD_KEY, String(Date.now()));
    try {
      markLocalCopy(this.workspace.id, false);
      await this.idb.clearData();
    } finally {
      window.location.reload();
    }
  }

  private update(offlineTimeout = false, problem?: SessionProblem): void {
    if (this.destroyed) return;
    const prev = this.snap;
    const fatal = (problem ?? prev.problem)?.action === 'fatal';
    const status: ConnectionStatus =
      fatal || this.wsStatus === 'disconnected'
        ? 'offline'
        : this.wsStatus === 'connected' && this.provider.isAuthenticated
          ? 'connected'
          : 'connecting';
    const serverSynced = prev.serverSynced || this.provider.isSynced;
    const hasContent = roots(this.doc).meta.size > 0 || roots(this.doc).cells.size > 0;
    // An empty local copy is not worth showing while the server may still answer.
    const ready =
      prev.ready || serverSynced || this.stateShown || (this.idbSynced && (hasContent || offlineTimeout || status === 'offline' || fatal));
    const next: SessionSnapshot = { status, ready, serverSynced, problem: problem ?? prev.problem };
    if (
      next.status !== prev.status ||
      next.ready !== prev.ready ||
      next.serverSynced !== prev.serverSynced ||
      next.problem !== prev.problem
    ) {
      this.snap = next;
      this.listeners.forEach((l) => l());
    }
  }

  dismissProblem(): void {
    if (this.snap.problem?.action === 'notice') {
      this.snap = { ...this.snap, problem: null };
      this.listeners.forEach((l) => l());
    }
  }

  destroy(): void {
    this.destroyed = true;
    clearTimeout(this.offlineTimer);
    clearTimeout(this.rejoinTimer);
    clearTimeout(this.earlyStateTimer);
    clearTimeout(this.showTimer);
    this.undoManager.destroy();
    this.provider.destroy();
    void this.idb.destroy();
    this.doc.destroy();
    this.listeners.clear();
  }
}
