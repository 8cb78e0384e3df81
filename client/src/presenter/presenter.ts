/**
 * Presenter mode in this page: one controller per workspace session.
 *
 * Presenter: publishes the `present` awareness field — notebook anchor, focused cell, open panels,
 * a summons stamp — at most once per animation frame and only when it changed (so scrolling at
 * 60 Hz is ≤ 60 small awareness updates, each fanned out once by the server to every peer).
 * Follower (by default, on joining or when a presentation starts): applies the presenter's
 * `present` to this page (scroll, highlighted cell, panels) and follows their viewer camera through
 * the viewer binding's follow mode; publishes `following: <presenter id>` only when it starts or
 * stops following — never per presenter change, so a change costs the server O(followers), not
 * O(followers²). The follower's own wheel, touch, click or keys in the notebook, or camera move in
 * the viewer, break it away (programmatic scrolls raise none of those); Rejoin follows again.
 * The rules are pure functions in @plexus/shared (`followReducer`, `anchorIn`, `followersOf`…).
 * Effects: awareness, document writes (`meta.presentation` through the shared helpers), DOM
 * scroll and listeners, the UI store's panels, the viewer binding's mode.
 */
import {
  canWrite,
  FOLLOWING_FIELD,
  followersOf,
  followReducer,
  INITIAL_FOLLOW,
  isNewSummon,
  isPresentShortcut,
  jsonEqual,
  observePresentation,
  PRESENT_FIELD,
  presenterEntry,
  readPresence,
  readPresentation,
  startPresenting,
  stopPresenting,
  type Follower,
  type FollowerInput,
  type FollowEvent,
  type FollowState,
  type NotebookAnchor,
  type Presentation,
  type PresentedPanels,
  type PresentState,
  type UserOrigin,
} from '@plexus/shared';
import type { WorkspaceSession } from '../collab/session.ts';
import { focusedCellId } from '../notebook/controller.ts';
import { useUi } from '../state/ui.ts';
import { readViewerPresence, type NavMode, type ViewerBinding } from '../viewer/viewerBinding.ts';
import { useViewerUi } from '../viewer/viewerUi.ts';
import { readAnchor, scrollToAnchor } from './notebookAnchor.ts';

/** Frames a follower keeps re-applying an anchor while editors mount and cells change height. */
const SETTLE_FRAMES = 12;

export interface PresenterSnapshot {
  presentation: Presentation | null;
  /** This page presents. */
  isPresenter: boolean;
  /** This page may start a presentation (editors; view-only links never). */
  canPresent: boolean;
  following: boolean;
  /** Why this page stopped following, or what brought it here. */
  note: string | null;
  /** The presenter is connected and presenting (has a `present` field). */
  presenterConnected: boolean;
  /** Who follows this page (presenter only). */
  followers: Follower[];
  /** The presenter's focused cell, highlighted while following. */
  focusCellId: string | null;
}

interface AwarenessChange {
  added: number[];
  updated: number[];
  removed: number[];
}

const isFollowOf = (m: NavMode, id: string) => m.kind === 'follow' && m.userId === id;

export class PresenterController {
  private follow: FollowState = INITIAL_FOLLOW;
  private snap: PresenterSnapshot;
  private readonly listeners = new Set<() => void>();
  private readonly disposers: (() => void)[] = [];
  /** A dedicated origin object: the structural undo manager tracks the session's, not this one. */
  private readonly origin: UserOrigin;
  private scroller: HTMLElement | null = null;
  private viewer: ViewerBinding | null = null;
  private followers: Follower[] = [];
  // presenter
  private frame = 0;
  private published: PresentState | null = null;
  private summon: number | null = null;
  // follower
  private presenterClient: number | null = null;
  private connected = false;
  private applied: PresentState | null = null;
  private focusCellId: string | null = null;
  private readonly seenSummons = new Map<number, number | null>();
  private target: NotebookAnchor | null = null;
  private settleFrame = 0;
  private settleLeft = 0;
  private settingViewer = false;
  private destroyed = false;

  constructor(readonly session: WorkspaceSession) {
    this.origin = { ...session.origin };
    this.snap = this.build();
    this.disposers.push(observePresentation(session.doc, () => this.onPresentation()));
    const onAwareness = (c: AwarenessChange, origin: unknown) => this.onAwareness(c, origin);
    session.awareness.on('change', onAwareness);
    this.disposers.push(() => session.awareness.off('change', onAwareness));
    this.disposers.push(useUi.subscribe(() => this.schedule()));
    this.disposers.push(useViewerUi.subscribe((s, prev) => this.onViewerMode(s.mode, prev.mode)));
    const onKey = (e: KeyboardEvent) => {
      if (!isPresentShortcut({ key: e.key, code: e.code, ctrl: e.ctrlKey, alt: e.altKey, meta: e.metaKey })) return;
      e.preventDefault();
      e.stopPropagation();
      this.toggle();
    };
    window.addEventListener('keydown', onKey, true);
    window.addEventListener('resize', this.schedule);
    document.addEventListener('focusin', this.schedule);
    document.addEventListener('focusout', this.schedule);
    this.disposers.push(() => {
      window.removeEventListener('keydown', onKey, true);
      window.removeEventListener('resize', this.schedule);
      document.removeEventListener('focusin', this.schedule);
      document.removeEventListener('focusout', this.schedule);
    });
    session.doc.on('destroy', () => this.destroy());
    this.onPresentation();
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    cancelAnimationFrame(this.frame);
    cancelAnimationFrame(this.settleFrame);
    for (const d of this.disposers.splice(0)) d();
    this.listeners.clear();
  }

  /* ------------------------------------------------------------------------------------------ */
  /* React                                                                                       */

  subscribe = (cb: () => void): (() => void) => {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  };

  getSnapshot = (): PresenterSnapshot => this.snap;

  private build(): PresenterSnapshot {
    const p = this.follow.presentation;
    return {
      presentation: p,
      isPresenter: !!p && p.by === this.selfId(),
      canPresent: canWrite(this.session.role),
      following: this.follow.following,
      note: this.follow.note,
      presenterConnected: this.connected,
      followers: this.followers,
      focusCellId: this.follow.following ? this.focusCellId : null,
    };
  }

  private emit(): void {
    const next = this.build();
    if (jsonEqual(next, this.snap)) return;
    this.snap = next;
    this.listeners.forEach((l) => l());
  }

  /* ------------------------------------------------------------------------------------------ */
  /* Actions                                                                                     */

  private selfId(): string {
    return readPresence(this.session.awareness.getLocalState())?.user.id ?? this.session.origin.userId;
  }

  /** Starts presenting (taking over from anyone presenting). Editors only. */
  start(): void {
    if (!canWrite(this.session.role)) return;
    const me = readPresence(this.session.awareness.getLocalState())?.user;
    startPresenting(this.session.doc, { id: this.selfId(), name: me?.name ?? this.session.origin.name ?? 'Someone' }, this.origin);
  }

  /** Ends this page's presentation. */
  stop(): void {
    stopPresenting(this.session.doc, this.origin, this.selfId());
  }

  /** Ends someone else's presentation (offered when the presenter is not connected). */
  end(): void {
    const p = this.follow.presentation;
    if (p && canWrite(this.session.role)) stopPresenting(this.session.doc, this.origin, p.by);
  }

  unfollow(): void {
    this.dispatch({ type: 'stop' });
  }

  rejoin(): void {
    this.dispatch({ type: 'rejoin', selfId: this.selfId() });
  }

  /** Ctrl+Alt+P: stop presenting, stop / rejoin following, or start presenting. */
  toggle(): void {
    const s = this.snap;
    if (s.isPresenter) this.stop();
    else if (s.presentation) (s.following ? this.unfollow() : this.rejoin());
    else if (s.canPresent) this.start();
  }

  /** "Bring everyone here": everyone, followers or not, jumps to the presenter's place once. */
  bringEveryoneHere(): void {
    if (!this.snap.isPresenter) return;
    this.summon = Date.now();
    this.publishPresent();
  }

  /** The notebook's scroll container: anchor source (presenter) and target (follower). */
  attachNotebook(el: HTMLElement): () => void {
    this.scroller = el;
    const input = (i: FollowerInput) => () => this.onInput(i);
    const onWheel = input({ kind: 'wheel' });
    const onTouch = input({ kind: 'touch' });
    const onPointer = input({ kind: 'pointer' });
    const onKey = (e: KeyboardEvent) => this.onInput({ kind: 'key', key: e.key, ctrl: e.ctrlKey, alt: e.altKey, meta: e.metaKey });
    const listeners: Array<[string, EventListener]> = [
      ['scroll', this.schedule],
      ['wheel', onWheel],
      ['touchstart', onTouch],
      ['pointerdown', onPointer],
      ['keydown', onKey as EventListener],
    ];
    for (const [type, fn] of listeners) el.addEventListener(type, fn, { passive: true });
    // Editors mounting near the new place change cell heights after a follower scrolled there:
    // while following, keep the presenter's anchor at the top whenever the content resizes.
    const content = el.firstElementChild;
    const resize = new ResizeObserver(() => {
      if (this.follow.following && this.applied?.anchor && this.scroller === el && !this.target) scrollToAnchor(el, this.applied.anchor);
    });
    if (content) resize.observe(content);
    if (this.follow.following) this.locatePresenter(true);
    return () => {
      resize.disconnect();
      for (const [type, fn] of listeners) el.removeEventListener(type, fn);
      if (this.scroller === el) this.scroller = null;
    };
  }

  /** The viewer binding while the viewer panel is open: its follow mode carries the presenter's camera. */
  attachViewer(binding: ViewerBinding): () => void {
    this.viewer = binding;
    this.syncViewer();
    return () => {
      if (this.viewer === binding) this.viewer = null;
    };
  }

  /* ------------------------------------------------------------------------------------------ */
  /* Follow state                                                                                */

  private dispatch(e: FollowEvent): void {
    const prev = this.follow;
    this.follow = followReducer(prev, e);
    if (this.follow === prev) return;
    const { awareness } = this.session;
    const following = this.follow.following ? this.follow.presentation!.by : null;
    const local = awareness.getLocalState() as Record<string, unknown> | null;
    // Published on transitions only, never per presenter change.
    if ((local?.[FOLLOWING_FIELD] ?? null) !== following) awareness.setLocalStateField(FOLLOWING_FIELD, following);
    if (this.follow.following && (!prev.following || prev.presentation?.by !== this.follow.presentation?.by)) this.locatePresenter(true);
    else if (!this.follow.following && prev.following) {
      this.target = null;
      this.releaseViewer(this.follow.presentation ? 'alone' : 'shared', prev.presentation);
    }
    this.emit();
  }

  private onInput(input: FollowerInput): void {
    // The person's own navigation also ends a jump in progress (a summons).
    this.target = null;
    this.dispatch({ type: 'input', input });
  }

  private onPresentation(): void {
    if (this.destroyed) return;
    const presentation = readPresentation(this.session.doc);
    this.presenterClient = null;
    this.dispatch({ type: 'presentation', presentation, selfId: this.selfId() });
    const mine = !!presentation && presentation.by === this.selfId();
    if (mine) this.publishPresent();
    else if (this.published || (this.session.awareness.getLocalState() as Record<string, unknown> | null)?.[PRESENT_FIELD]) {
      this.published = null;
      this.session.awareness.setLocalStateField(PRESENT_FIELD, null);
    }
    if (mine) this.recomputeFollowers();
    this.locatePresenter();
    this.emit();
  }

  /* ------------------------------------------------------------------------------------------ */
  /* Presenter: publish what I show                                                              */

  private panels(): PresentedPanels {
    const ui = useUi.getState();
    return { viewer: !ui.viewerCollapsed, atlas: ui.atlasOpen, data: ui.dataOpen, analyses: ui.analysesOpen };
  }

  /** Coalesces publishing to one per animation frame. */
  private readonly schedule = (): void => {
    if (this.frame || !this.snap.isPresenter || this.destroyed) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.publishPresent();
    });
  };

  private publishPresent(): void {
    if (this.destroyed || !this.snap.isPresenter) return;
    const next: PresentState = {
      anchor: this.scroller ? readAnchor(this.scroller) : null,
      focus: focusedCellId(),
      panels: this.panels(),
      summon: this.summon,
    };
    if (jsonEqual(next, this.published)) return;
    this.published = next;
    this.session.awareness.setLocalStateField(PRESENT_FIELD, next);
  }

  private recomputeFollowers(): void {
    const next = this.snap.isPresenter || this.follow.presentation?.by === this.selfId() ? followersOf(this.session.awareness.getStates(), this.selfId()) : [];
    if (!jsonEqual(next, this.followers)) this.followers = next;
  }

  /* ------------------------------------------------------------------------------------------ */
  /* Follower: apply what the presenter shows                                                    */

  private onAwareness(c: AwarenessChange, origin: unknown): void {
    if (this.destroyed || origin === 'local') return;
    const p = this.follow.presentation;
    if (!p) return;
    if (p.by === this.selfId()) {
      this.recomputeFollowers();
      return this.emit();
    }
    // Only changes of the presenter's entry (or arrivals, while we do not know it) matter: O(changed).
    const known = this.presenterClient;
    const touches = known === null ? c.added.length + c.updated.length > 0 : c.updated.includes(known) || c.removed.includes(known) || c.added.includes(known);
    if (!touches) return;
    this.locatePresenter();
  }

  /** Finds the presenter's awareness entry; acts on a new summons; applies what they show while following (`force`: all of it). */
  private locatePresenter(force = false): void {
    const states = this.session.awareness.getStates();
    const entry = presenterEntry(states, this.follow.presentation);
    this.presenterClient = entry?.clientId ?? null;
    this.connected = !!entry && entry.user.id !== this.selfId();
    if (entry && this.connected) {
      const seen = this.seenSummons.get(entry.clientId);
      this.seenSummons.set(entry.clientId, entry.present.summon);
      if (isNewSummon(seen, entry.present.summon) && !this.follow.following) {
        // A summons: jump there once, following or not.
        this.scrollTo(entry.present.anchor);
        this.follow = { ...this.follow, note: `${entry.user.name} brought everyone here` };
      }
      if (this.follow.following) this.apply(entry.present, force);
    }
    this.syncViewer();
    this.emit();
  }

  private apply(p: PresentState, force: boolean): void {
    const a = this.applied;
    if (force || !jsonEqual(a?.anchor, p.anchor) || (p.summon !== null && p.summon !== a?.summon)) this.scrollTo(p.anchor);
    if (force || !jsonEqual(a?.panels, p.panels)) {
      const ui = useUi.getState();
      const want = { viewerCollapsed: !p.panels.viewer, atlasOpen: p.panels.atlas, dataOpen: p.panels.data, analysesOpen: p.panels.analyses };
      if (ui.viewerCollapsed !== want.viewerCollapsed || ui.atlasOpen !== want.atlasOpen || ui.dataOpen !== want.dataOpen || ui.analysesOpen !== want.analysesOpen) useUi.setState(want);
    }
    this.focusCellId = p.focus;
    this.applied = p;
  }

  /** Scrolls to `anchor` now, then re-applies it for a few frames while editors mount and cells settle. */
  private scrollTo(anchor: NotebookAnchor | null): void {
    this.target = anchor;
    this.settleLeft = SETTLE_FRAMES;
    this.settle();
  }

  private readonly settle = (): void => {
    this.settleFrame = 0;
    const el = this.scroller;
    if (!el || !this.target || this.destroyed) return;
    scrollToAnchor(el, this.target);
    if (--this.settleLeft > 0) this.settleFrame = requestAnimationFrame(this.settle);
    else this.target = null;
  };

  /** Puts the viewer in follow mode on the presenter while following and their viewer is open. */
  private syncViewer(): void {
    const p = this.follow.presentation;
    const v = this.viewer;
    if (!v || !p || !this.follow.following || this.presenterClient === null) return;
    if (!readViewerPresence(this.session.awareness.getStates().get(this.presenterClient))) return;
    if (isFollowOf(v.getMode(), p.by)) return;
    this.settingViewer = true;
    try {
      v.setMode({ kind: 'follow', userId: p.by, name: p.name });
    } finally {
      this.settingViewer = false;
    }
  }

  private releaseViewer(to: 'alone' | 'shared', presentation: Presentation | null): void {
    const v = this.viewer;
    if (!v || !presentation || !isFollowOf(v.getMode(), presentation.by)) return;
    this.settingViewer = true;
    try {
      v.setMode({ kind: to });
    } finally {
      this.settingViewer = false;
    }
  }

  /** The viewer left follow mode on the presenter: the person's own move (or choice) breaks away. */
  private onViewerMode(mode: NavMode, prev: NavMode): void {
    const p = this.follow.presentation;
    // `!this.viewer`: a binding being created reports its first mode before it is attached here.
    if (this.settingViewer || !this.viewer || !p || !this.follow.following || !isFollowOf(prev, p.by) || isFollowOf(mode, p.by)) return;
    // The binding also leaves follow mode when the presenter closes their viewer: not the person's doing.
    const presenterViewer = this.presenterClient !== null && readViewerPresence(this.session.awareness.getStates().get(this.presenterClient));
    if (presenterViewer) this.onInput({ kind: 'camera' });
  }
}

const controllers = new WeakMap<WorkspaceSession, PresenterController>();

/** The presenter controller of a session (created on first use, destroyed with the session's document). */
export function presenterFor(session: WorkspaceSession): PresenterController {
  let c = controllers.get(session);
  if (!c) {
    c = new PresenterController(session);
    controllers.set(session, c);
  }
  return c;
}
