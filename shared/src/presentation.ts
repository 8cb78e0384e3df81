/**
 * Presenter mode: one person presents, everyone else follows by default.
 *
 * Who presents is shared state: `meta.presentation` = `{ by, name, since }` (the presenter's
 * presence id, their name, when they started), written only through the helpers below. People
 * (owner and editor tokens) may start, take over and end a presentation; viewers write nothing
 * (view-only connections are read-only on the server), neither the agent nor the kernel presents
 * (see `doc-schema/workspace-schema.ts`).
 *
 * What the presenter shows travels by awareness, never the document:
 * - the presenter publishes `present` (`PresentState`): the notebook anchor (the top visible cell
 *   and how far into it, as a fraction of its height, so windows of other sizes follow
 *   sensibly), the focused cell, the open panels and a one-shot `summon` stamp; the viewer's
 *   camera and selected layer ride on the `viewer` field the viewer binding already publishes, and
 *   the presenter's text selection on the editors' caret fields (`cursor`, `tiptapCursor`);
 * - each follower publishes `following: <presenter id>` once, when it starts or stops following.
 *
 * Also the pure rules the client applies: where the anchor is, what breaks a follower away, who
 * follows, which awareness entry is the presenter's, when a summons is new. Pure module.
 */
import type * as Y from 'yjs';
import type { Origin } from './origin.ts';
import { readPresence, type PresenceUser } from './presence.ts';
import { roots } from './schema.ts';

// ---------------------------------------------------------------------------------------------
// the document record

export interface Presentation {
  /** The presenter's presence id (`user.id` in awareness). */
  by: string;
  name: string;
  /** When this presentation started (ms since the epoch, the presenter's clock). */
  since: number;
}

const PRESENTATION_KEY = 'presentation';

function asPresentation(v: unknown): Presentation | null {
  if (!v || typeof v !== 'object') return null;
  const p = v as Record<string, unknown>;
  return typeof p.by === 'string' && p.by !== '' && typeof p.name === 'string' && typeof p.since === 'number' ? { by: p.by, name: p.name, since: p.since } : null;
}

/** Who presents in this workspace, or null. */
export function readPresentation(doc: Y.Doc): Presentation | null {
  return asPresentation(roots(doc).meta.get(PRESENTATION_KEY));
}

/** Starts presenting as `who` (taking over from anyone presenting). */
export function startPresenting(doc: Y.Doc, who: { id: string; name: string }, origin: Origin, now = Date.now()): Presentation {
  const p: Presentation = { by: who.id, name: who.name.slice(0, 200), since: now };
  doc.transact(() => roots(doc).meta.set(PRESENTATION_KEY, p), origin);
  return p;
}

/**
 * Ends the presentation. With `onlyBy`, only if that person is still the presenter (so a stop that
 * crosses someone's take-over does not end theirs). Returns true when it ended one.
 */
export function stopPresenting(doc: Y.Doc, origin: Origin, onlyBy?: string): boolean {
  const cur = readPresentation(doc);
  if (!cur && !roots(doc).meta.has(PRESENTATION_KEY)) return false;
  if (onlyBy !== undefined && cur?.by !== onlyBy) return false;
  doc.transact(() => roots(doc).meta.delete(PRESENTATION_KEY), origin);
  return true;
}

/** Calls `cb` with the presentation whenever it changes; returns the unsubscribe function. */
export function observePresentation(doc: Y.Doc, cb: (p: Presentation | null) => void): () => void {
  const { meta } = roots(doc);
  const handler = (e: Y.YMapEvent<unknown>) => {
    if (e.keysChanged.has(PRESENTATION_KEY)) cb(readPresentation(doc));
  };
  meta.observe(handler);
  return () => meta.unobserve(handler);
}

// ---------------------------------------------------------------------------------------------
// awareness fields

/** Awareness field of the presenter: what they show (`PresentState`). */
export const PRESENT_FIELD = 'present';
/** Awareness field of a follower: the presence id of the presenter they follow, or null. */
export const FOLLOWING_FIELD = 'following';

/** Where the presenter is in the notebook: the top visible cell and how far into it (0–1 of its height). */
export interface NotebookAnchor {
  cellId: string;
  ratio: number;
}

/** The panels followers open or close with the presenter (each person's chat stays their own). */
export interface PresentedPanels {
  viewer: boolean;
  atlas: boolean;
  data: boolean;
  analyses: boolean;
}
export const PANEL_NAMES = ['viewer', 'atlas', 'data', 'analyses'] as const;

export interface PresentState {
  anchor: NotebookAnchor | null;
  /** The cell the presenter's keyboard focus is in. */
  focus: string | null;
  panels: PresentedPanels;
  /** "Bring everyone here": a new value makes everyone jump to the presenter's place once. */
  summon: number | null;
}

/** The `present` field of an awareness state, or null. */
export function readPresent(state: unknown): PresentState | null {
  const v = state && typeof state === 'object' ? (state as Record<string, unknown>)[PRESENT_FIELD] : undefined;
  if (!v || typeof v !== 'object') return null;
  const p = v as Record<string, unknown>;
  const a = p.anchor as Record<string, unknown> | null | undefined;
  const anchor = a && typeof a.cellId === 'string' && typeof a.ratio === 'number' && Number.isFinite(a.ratio) ? { cellId: a.cellId, ratio: clamp01(a.ratio) } : null;
  const rawPanels = (p.panels && typeof p.panels === 'object' ? p.panels : {}) as Record<string, unknown>;
  const panels = Object.fromEntries(PANEL_NAMES.map((k) => [k, rawPanels[k] === true])) as unknown as PresentedPanels;
  return {
    anchor,
    focus: typeof p.focus === 'string' ? p.focus : null,
    panels,
    summon: typeof p.summon === 'number' && Number.isFinite(p.summon) ? p.summon : null,
  };
}

/** The `following` field of an awareness state, or null. */
export function readFollowing(state: unknown): string | null {
  const v = state && typeof state === 'object' ? (state as Record<string, unknown>)[FOLLOWING_FIELD] : undefined;
  return typeof v === 'string' && v !== '' ? v : null;
}

// ---------------------------------------------------------------------------------------------
// the notebook anchor

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/** A rendered cell: its id, top (px from the top of the scrolled content) and height. */
export interface CellBox {
  id: string;
  top: number;
  height: number;
}

/**
 * The anchor of a scroll position: the last cell starting at or above `scrollTop` (binary search,
 * boxes in document order), and the fraction of it scrolled past (rounded to 1/10,000 so sub-pixel
 * jitter publishes nothing). Above the first cell: the first cell at 0. No cells: null.
 */
export function anchorAt(boxes: readonly CellBox[], scrollTop: number): NotebookAnchor | null {
  return anchorIn(boxes.length, (i) => boxes[i]!, scrollTop);
}

/** `anchorAt` over `count` boxes read on demand (a page measures only the O(log n) cells the search visits). */
export function anchorIn(count: number, box: (i: number) => CellBox, scrollTop: number): NotebookAnchor | null {
  if (count === 0) return null;
  const first = box(0);
  if (scrollTop <= first.top) return { cellId: first.id, ratio: 0 };
  let lo = 0;
  let hi = count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (box(mid).top <= scrollTop) lo = mid;
    else hi = mid - 1;
  }
  const b = box(lo);
  const ratio = b.height > 0 ? clamp01((scrollTop - b.top) / b.height) : 0;
  return { cellId: b.id, ratio: Math.round(ratio * 10_000) / 10_000 };
}

/** The scroll position that puts `anchor` at the top, given where its cell is in this window. */
export function scrollTopFor(anchor: NotebookAnchor, box: Pick<CellBox, 'top' | 'height'>): number {
  return box.top + clamp01(anchor.ratio) * box.height;
}

// ---------------------------------------------------------------------------------------------
// following: who, whom, and what breaks it

/** Something the follower did (never a scroll: programmatic scrolls and layout shifts raise those too). */
export type FollowerInput =
  | { kind: 'wheel' }
  | { kind: 'touch' }
  | { kind: 'pointer' }
  | { kind: 'key'; key: string; ctrl?: boolean; alt?: boolean; meta?: boolean }
  /** The viewer binding reports the person's own camera move. */
  | { kind: 'camera' };

const MODIFIER_KEYS = new Set(['Shift', 'Control', 'Alt', 'Meta', 'AltGraph', 'CapsLock', 'Fn', 'OS']);

/** True for the presenter-mode shortcut (Ctrl+Alt+P), which toggles following itself. */
export const isPresentShortcut = (e: { key?: string; code?: string; ctrl?: boolean; alt?: boolean; meta?: boolean }): boolean =>
  !!(e.ctrl || e.meta) && !!e.alt && (e.code === 'KeyP' || e.key?.toLowerCase() === 'p');

/** Why this input breaks a follower away from the presenter, or null when it does not. */
export function breakAwayReason(input: FollowerInput): string | null {
  switch (input.kind) {
    case 'wheel':
    case 'touch':
      return 'you scrolled';
    case 'pointer':
      return 'you clicked';
    case 'camera':
      return 'you moved the view';
    case 'key':
      if (MODIFIER_KEYS.has(input.key)) return null;
      if (isPresentShortcut({ key: input.key, ctrl: input.ctrl, alt: input.alt, meta: input.meta })) return null;
      return 'you used the keyboard';
  }
}

export interface Follower {
  /** The follower's presence id; several tabs of one person count once. */
  id: string;
  name: string;
}

/** Who follows `presenterId`, one entry per person, by name. O(states). */
export function followersOf(states: Iterable<[number, unknown]>, presenterId: string): Follower[] {
  const out = new Map<string, Follower>();
  for (const [, state] of states) {
    if (readFollowing(state) !== presenterId) continue;
    const p = readPresence(state);
    if (!p || p.user.id === presenterId || out.has(p.user.id)) continue;
    out.set(p.user.id, { id: p.user.id, name: p.user.name });
  }
  return [...out.values()].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}

export interface PresenterEntry {
  clientId: number;
  user: PresenceUser;
  present: PresentState;
}

/**
 * The awareness entry of the presentation's presenter that carries a `present` field (the lowest
 * client id when they present from several tabs), or null while they are not connected.
 */
export function presenterEntry(states: Iterable<[number, unknown]>, presentation: Presentation | null): PresenterEntry | null {
  if (!presentation) return null;
  let best: PresenterEntry | null = null;
  for (const [clientId, state] of states) {
    const p = readPresence(state);
    if (!p || p.user.id !== presentation.by) continue;
    const present = readPresent(state);
    if (present && (!best || clientId < best.clientId)) best = { clientId, user: p.user, present };
  }
  return best;
}

/**
 * Whether a presenter's `summon` is one to act on: it changed since this page last saw that
 * presenter (`seen`; `undefined` = never seen, so a summons made before this page arrived is not
 * replayed).
 */
export function isNewSummon(seen: number | null | undefined, summon: number | null): boolean {
  return seen !== undefined && summon !== null && summon !== seen;
}

// ---------------------------------------------------------------------------------------------
// the follower's state machine

export interface FollowState {
  /** The presentation as this page last saw it. */
  presentation: Presentation | null;
  /** This page follows the presenter (false for the presenter themself). */
  following: boolean;
  /** Why following stopped, for the bar ("you scrolled"), or null. */
  note: string | null;
}

export type FollowEvent =
  | { type: 'presentation'; presentation: Presentation | null; selfId: string }
  | { type: 'input'; input: FollowerInput }
  | { type: 'rejoin'; selfId: string }
  | { type: 'stop' };

export const INITIAL_FOLLOW: FollowState = { presentation: null, following: false, note: null };

const samePresentation = (a: Presentation | null, b: Presentation | null) => a === b || (!!a && !!b && a.by === b.by && a.since === b.since);

/**
 * Follow by default: a page joining a presentation, or seeing one start (or change presenter),
 * follows, unless it is the presenter's own; its own scroll, click, keys or camera move break it
 * away; Rejoin follows again; the end of the presentation ends following.
 */
export function followReducer(s: FollowState, e: FollowEvent): FollowState {
  switch (e.type) {
    case 'presentation': {
      const p = e.presentation;
      if (!p) return s.presentation ? { presentation: null, following: false, note: 'the presentation ended' } : s;
      if (p.by === e.selfId) return { presentation: p, following: false, note: null };
      if (samePresentation(s.presentation, p)) return s.presentation === p ? s : { ...s, presentation: p };
      return { presentation: p, following: true, note: null };
    }
    case 'input': {
      if (!s.following) return s;
      const reason = breakAwayReason(e.input);
      return reason ? { ...s, following: false, note: reason } : s;
    }
    case 'rejoin':
      return s.presentation && s.presentation.by !== e.selfId ? { ...s, following: true, note: null } : s;
    case 'stop':
      return s.following ? { ...s, following: false, note: 'you stopped following' } : s;
  }
}
