/**
 * Keeps one embedded Neuroglancer viewer and the workspace document in step, and implements the
 * navigation modes. Effects: writes the document (origin: this person), drives the viewer,
 * publishes the `viewer` awareness field.
 *
 * Both directions are *deltas*, never whole states:
 * - viewer → document: the difference between the viewer's state at the last sync and now
 *   (`applyViewerDelta`). Keys the viewer never reported (parts of an imported state this
 *   Neuroglancer does not know) are never touched, so nothing is silently dropped.
 * - document → viewer: the difference between the document at the last apply and now, applied
 *   key by key and layer by layer. Values the viewer normalises differently are not re-applied
 *   on every unrelated change, which is what would make remote cameras jitter.
 * Echoes are impossible by construction: our own transactions are recognised by their origin
 * object, and viewer events raised while we apply remote changes are absorbed.
 *
 * Modes: `shared` — the camera is the workspace's (moves are written, throttled; remote moves are
 * applied, but never while you are dragging); `alone` — your camera is yours; `follow` — the
 * camera of another person, from awareness, until you move. Layers, shaders, annotations and
 * layout are shared in every mode.
 */
import type * as Y from 'yjs';
import type { Awareness } from 'y-protocols/awareness';
import {
  applyViewerDelta,
  CAMERA_KEYS,
  isJsonObject,
  jsonEqual,
  localizeState,
  normalizeLayers,
  overlayState,
  portableState,
  readRenderScales,
  readViewerState,
  setCamera,
  viewerRoots,
  type Camera,
  type Json,
  type NgLayer,
  type NgState,
  type Origin,
} from '@plexus/shared';
import type { NeuroglancerHost } from './neuroglancerHost.ts';

/** Top-level keys that describe one person's screen, not the shared view. */
export const PERSONAL_KEYS = new Set([
  'selectedLayer', 'selection', 'helpPanel', 'settingsPanel', 'layerListPanel', 'statistics', 'partialViewport',
  'gpuMemoryLimit', 'systemMemoryLimit', 'concurrentDownloads', 'prefetch', 'selectedStateServer', 'toolPalettes',
  'velocity', 'title',
]);
/** Layer keys that describe one person's side panels. */
const PERSONAL_LAYER_KEYS = ['tab', 'panels'];
const CAMERA = new Set<string>(CAMERA_KEYS);

/** Writes of the camera are coalesced to at most one per this many ms. */
export const WRITE_INTERVAL_MS = 25;
/** Remote camera changes wait until you have stopped moving for this long. */
const DRAG_QUIET_MS = 300;
const AWARENESS_INTERVAL_MS = 50;

export type NavMode = { kind: 'shared' } | { kind: 'alone' } | { kind: 'follow'; userId: string; name: string };

/** What each peer publishes about its viewer in the `viewer` awareness field. */
export interface ViewerPresence {
  mode: NavMode['kind'];
  following?: string;
  camera?: Camera;
  selectedLayer?: Json;
  /** Set by "bring everyone here": a timestamp others react to once. */
  summon?: number;
}

export function readViewerPresence(state: unknown): ViewerPresence | undefined {
  const v = isJsonObject(state as Json) ? (state as Record<string, unknown>).viewer : undefined;
  return v && typeof v === 'object' ? (v as ViewerPresence) : undefined;
}

function cameraOf(s: NgState): Camera {
  const c: Camera = {};
  for (const k of CAMERA_KEYS) if (s[k] !== undefined) c[k] = s[k];
  return c;
}

interface Session {
  doc: Y.Doc;
  awareness: Awareness;
}

export interface BindingOptions {
  readOnly: boolean;
  /** This page's origin: local volumes are `plexus://…` in the document. */
  pageOrigin: string;
  userId: string;
  onModeChange?: (mode: NavMode, reason?: string) => void;
}

export class ViewerBinding {
  private mode: NavMode = { kind: 'shared' };
  /** The viewer's state (portable, without personal keys) as of the last sync. */
  private lastNg: NgState = {};
  /** The document's state (same form) as of the last apply. */
  private lastDoc: NgState = {};
  private applying = false;
  /** A write of local changes is scheduled (timer or microtask). */
  private writePending = false;
  private writeTimer: ReturnType<typeof setTimeout> | undefined;
  private lastWriteAt = 0;
  private remoteScheduled = false;
  private deferTimer: ReturnType<typeof setTimeout> | undefined;
  private awarenessTimer: ReturnType<typeof setTimeout> | undefined;
  private lastLocalCameraAt = 0;
  private lastAwarenessAt = 0;
  /** The camera we last put into the viewer while following (to tell our moves from the person's). */
  private followCamera: Camera | undefined;
  private seenSummons = new Map<number, number>();
  private readonly startedAt = Date.now();
  private readonly disposers: (() => void)[] = [];
  /** Timestamps of remote document changes applied (for latency measurements). */
  lastRemoteApplyAt = 0;

  constructor(
    private readonly host: NeuroglancerHost,
    private readonly session: Session,
    /** A dedicated origin object: transactions carrying it are this binding's own. */
    private readonly origin: Origin,
    private readonly opts: BindingOptions,
  ) {}

  start(): void {
    this.applyRemote(true);
    this.disposers.push(this.host.onChange(() => this.onViewerChange()));
    const onTx = (tr: Y.Transaction) => {
      if (tr.origin === this.origin) return;
      for (const type of tr.changed.keys()) if (this.isViewerType(type)) return this.scheduleRemote();
    };
    this.session.doc.on('afterTransaction', onTx);
    this.disposers.push(() => this.session.doc.off('afterTransaction', onTx));
    const onAwareness = () => this.onAwareness();
    this.session.awareness.on('change', onAwareness);
    this.disposers.push(() => this.session.awareness.off('change', onAwareness));
    this.publish(true);
  }

  dispose(): void {
    if (this.writePending) this.flushLocal();
    clearTimeout(this.deferTimer);
    clearTimeout(this.awarenessTimer);
    for (const d of this.disposers.splice(0)) d();
    const st = this.session.awareness.getLocalState();
    if (st && 'viewer' in st) this.session.awareness.setLocalStateField('viewer', null);
  }

  getMode(): NavMode {
    return this.mode;
  }

  /** The state this person sees, in portable form (what an export or a named view records). */
  currentState(): NgState {
    return overlayState(readViewerState(this.session.doc), portableState(this.host.getState(), this.opts.pageOrigin));
  }

  setMode(mode: NavMode, reason?: string): void {
    if (this.writePending) this.flushLocal();
    this.mode = mode;
    this.followCamera = undefined;
    if (mode.kind === 'shared') {
      // Rejoin: take the workspace camera now.
      this.applyCamera(cameraOf(this.docView()));
    } else if (mode.kind === 'follow') {
      this.followLeader();
    }
    this.lastNg = this.viewerView();
    this.lastDoc = this.docView();
    this.publish(true);
    this.opts.onModeChange?.(mode, reason);
  }

  /** "Bring everyone here": the workspace camera becomes mine and everyone switches to it. */
  bringEveryoneHere(): void {
    if (this.opts.readOnly) return;
    setCamera(this.session.doc, cameraOf(this.currentState()), this.origin);
    this.lastDoc = this.docView();
    if (this.mode.kind !== 'shared') this.setMode({ kind: 'shared' });
    this.publish(true, Date.now());
  }

  /**
   * Moves this person's camera as if they had navigated there (so in the shared view it becomes
   * the workspace camera). Position entries that are `null` keep their current value.
   */
  showCamera(camera: Camera): void {
    const patch: Record<string, Json> = {};
    const current = this.host.getState();
    for (const k of CAMERA_KEYS) {
      const v = camera[k];
      if (v === undefined) continue;
      if (k === 'position' && Array.isArray(v) && Array.isArray(current.position)) {
        const cur = current.position as Json[];
        patch[k] = cur.map((c, i) => (typeof v[i] === 'number' ? v[i]! : c));
      } else patch[k] = v;
    }
    if (this.mode.kind === 'follow') this.setMode({ kind: 'alone' }, 'you moved');
    this.host.setTopLevel(patch);
    this.flushLocal();
  }

  /* ---------------------------------------------------------------------------------------- */

  private isViewerType(type: Y.AbstractType<any>): boolean {
    const doc = this.session.doc;
    const { state, layers } = viewerRoots(doc);
    return isInside(type, state) || isInside(type, layers);
  }

  /** Strips what is personal, and the camera unless this person navigates the shared camera. */
  private view(s: NgState): NgState {
    const out: NgState = {};
    const shared = this.mode.kind === 'shared';
    for (const [k, v] of Object.entries(s)) {
      if (PERSONAL_KEYS.has(k) || (!shared && CAMERA.has(k))) continue;
      out[k] = v;
    }
    if ('layers' in s) {
      out.layers = normalizeLayers(s.layers).map((l) => {
        const c = { ...l };
        for (const k of PERSONAL_LAYER_KEYS) delete c[k];
        return c as NgLayer;
      });
    }
    return out;
  }

  private viewerView(): NgState {
    return this.view(portableState(this.host.getState(), this.opts.pageOrigin));
  }

  private docView(): NgState {
    return this.view(readViewerState(this.session.doc));
  }

  /**
   * Neuroglancer keeps render scales only for dimensions it already knows, and a new layer's
   * dimensions arrive with its metadata, after the state was applied: once they are there, the
   * document's scales are applied again.
   */
  private renderScalesQueued = false;

  private catchUpRenderScales(): void {
    const want = readRenderScales(this.session.doc);
    if (!want) return;
    const have = (this.host.topLevel('relativeDisplayScales') ?? {}) as Record<string, Json>;
    const dims = (this.host.topLevel('dimensions') ?? {}) as Record<string, Json>;
    const missing = Object.entries(want).some(([k, v]) => k in dims && !jsonEqual(have[k], v));
    if (!missing) return;
    this.applying = true;
    try {
      this.host.setTopLevel({ relativeDisplayScales: want });
    } finally {
      this.applying = false;
    }
  }

  private onViewerChange(): void {
    if (this.applying) return;
    // After the change has run its course: Neuroglancer's own listeners (the render scales follow
    // the dimensions) run after ours within the same change.
    if (!this.renderScalesQueued) {
      this.renderScalesQueued = true;
      queueMicrotask(() => {
        this.renderScalesQueued = false;
        this.catchUpRenderScales();
      });
    }
    if (this.writePending) return;
    this.writePending = true;
    // Leading edge: the first change after a quiet spell is written at once (after the burst of
    // synchronous events one interaction raises); then at most one write per interval.
    const wait = WRITE_INTERVAL_MS - (Date.now() - this.lastWriteAt);
    if (wait <= 0) queueMicrotask(() => this.writePending && this.flushLocal());
    else this.writeTimer = setTimeout(() => this.flushLocal(), wait);
  }

  /** Records what changed in the viewer since the last sync. */
  private flushLocal(): void {
    clearTimeout(this.writeTimer);
    this.writeTimer = undefined;
    this.writePending = false;
    const raw = portableState(this.host.getState(), this.opts.pageOrigin);
    if (this.mode.kind === 'follow' && this.followCamera && !camerasClose(cameraOf(raw), this.followCamera)) {
      // The person moved: stop following, stay where they are.
      this.mode = { kind: 'alone' };
      this.followCamera = undefined;
      this.opts.onModeChange?.(this.mode, 'you moved');
    }
    const cur = this.view(raw);
    if (!jsonEqual(cur, this.lastNg)) {
      if (!jsonEqual(cameraOf(cur), cameraOf(this.lastNg))) this.lastLocalCameraAt = Date.now();
      if (!this.opts.readOnly) applyViewerDelta(this.session.doc, this.lastNg, cur, this.origin);
      this.lastWriteAt = Date.now();
    }
    this.lastNg = cur;
    this.publish();
  }

  private scheduleRemote(): void {
    if (this.remoteScheduled) return;
    this.remoteScheduled = true;
    queueMicrotask(() => {
      this.remoteScheduled = false;
      this.applyRemote(false);
    });
  }

  /** Applies what changed in the document since the last apply. */
  private applyRemote(initial: boolean): void {
    if (this.writePending) this.flushLocal();
    const target = this.docView();
    const base = this.lastDoc;
    const deferCamera = !initial && this.mode.kind === 'shared' && Date.now() - this.lastLocalCameraAt < DRAG_QUIET_MS;
    const top: Record<string, Json | undefined> = {};
    let deferred = false;
    for (const k of new Set([...Object.keys(base), ...Object.keys(target)])) {
      if (k === 'layers' || jsonEqual(base[k], target[k])) continue;
      if (deferCamera && CAMERA.has(k)) {
        deferred = true;
        continue;
      }
      top[k] = target[k];
    }
    const next = { ...target };
    if (deferred) {
      // Keep the old camera as "applied" so it is applied once the person stops moving.
      for (const k of CAMERA_KEYS) {
        if (base[k] !== undefined) next[k] = base[k];
        else delete next[k];
      }
    }
    this.applying = true;
    try {
      const local = (s: NgState) => localizeState(s, this.opts.pageOrigin);
      // Render scales name dimensions that a new layer may bring: they go in after the layers.
      const { relativeDisplayScales: scales, ...before } = top;
      if (Object.keys(before).length) this.host.setTopLevel(local({ ...before, layers: undefined } as never) as Record<string, Json>);
      this.applyLayers(normalizeLayers(local(base).layers), normalizeLayers(local(target).layers));
      if (scales !== undefined) this.host.setTopLevel({ relativeDisplayScales: scales });
      if (initial) {
        // A fresh viewer also takes the document's personal keys (the selected layer, panels of
        // an imported state) as a starting point, once its layers exist; after that they are each
        // person's own.
        const full = readViewerState(this.session.doc);
        const personal: Record<string, Json> = {};
        for (const k of PERSONAL_KEYS) if (full[k] !== undefined) personal[k] = full[k];
        if (Object.keys(personal).length) this.host.setTopLevel(personal);
      }
    } finally {
      this.applying = false;
    }
    // Restored dimensions are new dimensions to Neuroglancer, which forgets their render scales.
    this.catchUpRenderScales();
    this.lastDoc = next;
    this.lastNg = this.viewerView();
    if (!initial) this.lastRemoteApplyAt = performance.now();
    if (deferred) {
      clearTimeout(this.deferTimer);
      this.deferTimer = setTimeout(() => this.applyRemote(false), DRAG_QUIET_MS);
    }
  }

  private applyLayers(base: NgLayer[], target: NgLayer[]): void {
    if (jsonEqual(base, target) && target.every((l) => this.host.layerNames().includes(l.name))) return;
    const before = new Map(base.map((l) => [l.name, l]));
    const wanted = new Set(target.map((l) => l.name));
    for (const l of base) if (!wanted.has(l.name)) this.host.removeLayer(l.name);
    const present = new Set(this.host.layerNames());
    target.forEach((layer, i) => {
      const prev = before.get(layer.name);
      if (!prev || !present.has(layer.name)) return this.host.putLayer(layer, i);
      if (jsonEqual(prev, layer)) return;
      const changed: Record<string, Json | undefined> = {};
      for (const k of new Set([...Object.keys(prev), ...Object.keys(layer)])) {
        if (!jsonEqual(prev[k], layer[k])) changed[k] = layer[k];
      }
      this.host.updateLayer(layer, changed, i);
    });
    this.host.reorder(target.map((l) => l.name));
  }

  private applyCamera(camera: Camera, extra?: Record<string, Json | undefined>): void {
    this.applying = true;
    try {
      this.host.setTopLevel({ ...camera, ...extra } as Record<string, Json>);
    } finally {
      this.applying = false;
    }
  }

  /* ---------------------------------------------------------------------------------------- */
  /* Awareness: publish my camera, follow a leader, react to "bring everyone here".            */

  private publish(now = false, summon?: number): void {
    // Following, my camera is the leader's: re-publishing it on every followed move would make each
    // of N followers send an update per leader move, which the server fans out to N peers (N²).
    // The mode and whom I follow are published when they change (`now`).
    if (this.mode.kind === 'follow' && !now && summon === undefined) return;
    const send = () => {
      this.awarenessTimer = undefined;
      this.lastAwarenessAt = Date.now();
      const raw = this.currentState();
      const prev = readViewerPresence(this.session.awareness.getLocalState());
      const p: ViewerPresence = {
        mode: this.mode.kind,
        camera: cameraOf(raw),
        selectedLayer: raw.selectedLayer,
        summon: summon ?? prev?.summon,
      };
      if (this.mode.kind === 'follow') p.following = this.mode.userId;
      this.session.awareness.setLocalStateField('viewer', p);
    };
    if (now || summon !== undefined) {
      clearTimeout(this.awarenessTimer);
      return send();
    }
    if (this.awarenessTimer) return;
    const wait = AWARENESS_INTERVAL_MS - (Date.now() - this.lastAwarenessAt);
    // Leading edge at once (a timer would wait behind the frame the move is about to render).
    if (wait <= 0) return send();
    this.awarenessTimer = setTimeout(send, wait);
  }

  private onAwareness(): void {
    const me = this.session.awareness.clientID;
    for (const [clientId, state] of this.session.awareness.getStates()) {
      if (clientId === me) continue;
      const p = readViewerPresence(state);
      if (!p?.summon) continue;
      const seen = this.seenSummons.get(clientId);
      this.seenSummons.set(clientId, p.summon);
      // React once per summon, and not to summons older than this page.
      if (seen !== p.summon && p.summon > this.startedAt) {
        if (this.mode.kind !== 'shared') this.setMode({ kind: 'shared' }, 'brought here by a presenter');
        else this.applyRemote(false);
      }
    }
    if (this.mode.kind === 'follow') this.followLeader();
  }

  private leader(userId: string): ViewerPresence | undefined {
    for (const [clientId, state] of this.session.awareness.getStates()) {
      if (clientId === this.session.awareness.clientID) continue;
      const u = (state as { user?: { id?: string } }).user;
      if (u?.id === userId) return readViewerPresence(state);
    }
    return undefined;
  }

  private followLeader(): void {
    if (this.mode.kind !== 'follow') return;
    const p = this.leader(this.mode.userId);
    if (!p) {
      const name = this.mode.name;
      this.mode = { kind: 'alone' };
      this.publish(true);
      this.opts.onModeChange?.(this.mode, `${name} left`);
      return;
    }
    if (!p.camera || (this.followCamera && jsonEqual(this.followCamera, p.camera))) return;
    if (this.writePending) this.flushLocal();
    if (this.mode.kind !== 'follow') return; // the flush noticed a move of our own
    const cam = p.camera;
    this.applyCamera(cam, p.selectedLayer !== undefined ? { selectedLayer: p.selectedLayer } : undefined);
    this.followCamera = cameraOf(portableState(this.host.getState(), this.opts.pageOrigin));
    this.lastNg = this.viewerView();
    this.lastRemoteApplyAt = performance.now();
    this.publish();
  }
}

function isInside(type: Y.AbstractType<any>, root: Y.AbstractType<any> | undefined): boolean {
  if (!root) return false;
  let t: Y.AbstractType<any> | null = type;
  while (t) {
    if (t === root) return true;
    t = (t._item?.parent as Y.AbstractType<any> | null) ?? null;
  }
  return false;
}

/** Cameras equal up to float32 rounding (Neuroglancer stores positions as Float32Array). */
export function camerasClose(a: Camera, b: Camera): boolean {
  for (const k of CAMERA_KEYS) if (!close(a[k], b[k])) return false;
  return true;
}

function close(a: Json | undefined, b: Json | undefined): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) <= 1e-5 * Math.max(1, Math.abs(a), Math.abs(b));
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => close(x, b[i]));
  return jsonEqual(a, b);
}
