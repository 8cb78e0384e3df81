/**
 * Everything that touches Neuroglancer's own API lives here: create and dispose an embedded
 * viewer, read its state as JSON, and apply changes to it — top-level keys through
 * `restoreState`, layers one at a time (Neuroglancer's layer list `restoreState` rebuilds every
 * layer, which would reload data and flicker for a one-slider change). Loaded lazily (it pulls in
 * the whole Neuroglancer bundle). Effects: DOM, WebGL.
 */
import 'neuroglancer';
import { makeMinimalViewer } from 'neuroglancer/unstable/ui/minimal_viewer.js';
import { setDefaultInputEventBindings } from 'neuroglancer/unstable/ui/default_input_event_bindings.js';
import { getCachedJson } from 'neuroglancer/unstable/util/trackable.js';
import { makeLayer } from 'neuroglancer/unstable/layer/index.js';
import { isJsonObject, jsonEqual, type Json, type JsonObject, type NgLayer, type NgState } from '@plexus/shared';

/* Structural views of the parts of Neuroglancer we use (its own typings are far wider). */
interface Trackable {
  restoreState(x: unknown): void;
  reset(): void;
}
interface UserLayer {
  opacity?: Trackable;
  shaderControlState?: Trackable;
  fragmentMain?: Trackable;
  localAnnotations?: Trackable;
  toJSON(): JsonObject;
}
interface ManagedLayer {
  name: string;
  visible: boolean;
  layer: UserLayer | null;
  setVisible(v: boolean): void;
  toJSON(): JsonObject | undefined;
}
interface LayerManager {
  managedLayers: ManagedLayer[];
  getLayerByName(name: string): ManagedLayer | undefined;
  addManagedLayer(l: ManagedLayer, index?: number): void;
  removeManagedLayer(l: ManagedLayer): void;
  reorderManagedLayer(from: number, to: number): void;
}
interface NgViewer {
  state: Trackable & { changed: { add(cb: () => void): () => void }; children: Map<string, Trackable> };
  layerManager: LayerManager;
  layerSpecification: unknown;
  display: { dispose(): void; gl?: WebGL2RenderingContext };
  dispose(): void;
}

/** Layer keys applied in place; any other change to a layer re-creates that one layer. */
const IN_PLACE: Record<string, (m: ManagedLayer, v: Json | undefined) => boolean> = {
  visible: (m, v) => (m.setVisible(v !== false), true),
  opacity: (m, v) => apply(m.layer?.opacity, v),
  shaderControls: (m, v) => apply(m.layer?.shaderControlState, v ?? {}),
  shader: (m, v) => apply(m.layer?.fragmentMain, v),
  annotations: (m, v) => apply(m.layer?.localAnnotations, v ?? []),
};

function apply(t: Trackable | undefined, v: Json | undefined): boolean {
  if (!t) return false;
  if (v === undefined) t.reset();
  else t.restoreState(v);
  return true;
}

/** One embedded Neuroglancer viewer. */
export class NeuroglancerHost {
  /** Neuroglancer's Viewer (typed structurally; tests reach layers through it). */
  readonly viewer: NgViewer;
  private readonly mount: HTMLDivElement;

  constructor(container: HTMLElement) {
    // Each mount gets its own child element: Neuroglancer leaves its canvas behind on dispose.
    this.mount = document.createElement('div');
    this.mount.style.cssText = 'position:relative;width:100%;height:100%;';
    this.mount.className = 'ng-mount';
    container.appendChild(this.mount);
    this.viewer = makeMinimalViewer({
      target: this.mount,
      // With no layers left, Neuroglancer would reset the camera and write that reset everywhere.
      resetStateWhenEmpty: false,
      showHelpButton: true,
      showSettingsButton: false,
    } as never) as unknown as NgViewer;
    setDefaultInputEventBindings((this.viewer as unknown as { inputEventBindings: never }).inputEventBindings);
    this.keepFocusWithThePerson();
  }

  /**
   * Neuroglancer focuses its viewer and panels by itself — when the pointer passes over them, and
   * whenever focus falls back to the page — so keys a person types elsewhere (a view-only person,
   * whose page has nothing editable, above all) reached its shortcuts: `h` opened its help over
   * the viewer. Its self-focusing elements are the ones it makes focusable from script only
   * (`tabindex="-1"`); they stay unfocusable until the person presses a pointer inside the viewer,
   * and become so again when the focus leaves it. Its shortcuts then work exactly as before.
   */
  private keepFocusWithThePerson(): void {
    const mount = this.mount;
    const MARK = 'data-plexus-focusable';
    let engaged = false;
    const strip = () => {
      for (const el of mount.querySelectorAll('[tabindex="-1"]')) {
        el.removeAttribute('tabindex');
        el.setAttribute(MARK, '');
      }
    };
    const observer = new MutationObserver(() => {
      if (!engaged) strip();
    });
    observer.observe(mount, { subtree: true, childList: true, attributes: true, attributeFilter: ['tabindex'] });
    this.stopFocusGuard = () => observer.disconnect();
    strip();
    mount.addEventListener(
      'pointerdown',
      () => {
        engaged = true;
        for (const el of mount.querySelectorAll(`[${MARK}]`)) el.setAttribute('tabindex', '-1');
      },
      true,
    );
    mount.addEventListener('focusout', (e) => {
      if (e.relatedTarget instanceof Node && mount.contains(e.relatedTarget)) return;
      engaged = false;
      strip();
    });
  }

  private stopFocusGuard: () => void = () => {};

  /** The viewer's state as JSON (a fresh object each call). */
  getState(): NgState {
    return JSON.parse(JSON.stringify(getCachedJson(this.viewer.state as never).value ?? {})) as NgState;
  }

  /** Calls `cb` on every state change (many per interaction); returns the unsubscribe. */
  onChange(cb: () => void): () => void {
    return this.viewer.state.changed.add(cb);
  }

  /** One top-level key of the state as JSON (cheap: that key only). */
  topLevel(key: string): Json | undefined {
    const child = this.viewer.state.children.get(key) as { toJSON(): unknown } | undefined;
    return child ? (JSON.parse(JSON.stringify(child.toJSON() ?? null)) as Json) ?? undefined : undefined;
  }

  /** Sets top-level keys (not `layers`); `undefined` resets a key to Neuroglancer's default. */
  setTopLevel(patch: Record<string, Json | undefined>): void {
    const restore: JsonObject = {};
    for (const [k, v] of Object.entries(patch)) {
      if (k === 'layers') continue;
      if (v === undefined) this.viewer.state.children.get(k)?.reset();
      else restore[k] = v;
    }
    if (Object.keys(restore).length) this.viewer.state.restoreState(restore);
  }

  /** Replaces the whole state (first load, or a state too different to patch). */
  restoreAll(state: NgState): void {
    this.viewer.state.restoreState(state);
  }

  layerNames(): string[] {
    return this.viewer.layerManager.managedLayers.map((l) => l.name);
  }

  /** Removes a layer by name (no-op when absent). */
  removeLayer(name: string): void {
    const m = this.viewer.layerManager.getLayerByName(name);
    if (m) this.viewer.layerManager.removeManagedLayer(m);
  }

  /** Adds (or re-creates) a layer from its JSON at `index`. */
  putLayer(spec: NgLayer, index: number): void {
    const lm = this.viewer.layerManager;
    const existing = lm.getLayerByName(spec.name);
    let at = index;
    if (existing) {
      at = lm.managedLayers.indexOf(existing);
      lm.removeManagedLayer(existing);
    }
    const layer = makeLayer(this.viewer.layerSpecification as never, spec.name, spec as never) as unknown as ManagedLayer;
    lm.addManagedLayer(layer, Math.min(at, lm.managedLayers.length));
  }

  /**
   * Applies changed keys of one layer in place when they all allow it; otherwise re-creates the
   * layer. `changed` maps each changed key to its new value (undefined = removed).
   */
  updateLayer(spec: NgLayer, changed: Record<string, Json | undefined>, index: number): void {
    const m = this.viewer.layerManager.getLayerByName(spec.name);
    if (!m || !m.layer) return this.putLayer(spec, index);
    const keys = Object.keys(changed);
    if (keys.every((k) => k in IN_PLACE)) {
      let ok = true;
      for (const k of keys) ok = IN_PLACE[k]!(m, changed[k]) && ok;
      // Verify: a control the shader does not declare, say, may not have been taken.
      const now = m.toJSON() ?? {};
      if (ok && keys.every((k) => k === 'visible' || sameLayerValue(now[k], changed[k]))) return;
    }
    this.putLayer(spec, index);
  }

  /** Moves layers so that those named in `order` appear in that order. */
  reorder(order: string[]): void {
    const lm = this.viewer.layerManager;
    order.forEach((name, i) => {
      const from = lm.managedLayers.findIndex((l) => l.name === name);
      if (from >= 0 && from !== i && i < lm.managedLayers.length) lm.reorderManagedLayer(from, i);
    });
  }

  /** Disposes the viewer, its canvas and its WebGL context. */
  dispose(): void {
    this.stopFocusGuard();
    const gl = this.viewer.display.gl;
    this.viewer.dispose();
    this.viewer.display.dispose();
    gl?.getExtension('WEBGL_lose_context')?.loseContext();
    this.mount.remove();
  }
}

/** Neuroglancer leaves defaults out of a layer's JSON: an absent value and a default one match. */
function sameLayerValue(actual: Json | undefined, wanted: Json | undefined): boolean {
  if (wanted === undefined) return true;
  if (isJsonObject(wanted) && Object.keys(wanted).length === 0) return actual === undefined || jsonEqual(actual, wanted);
  if (Array.isArray(wanted) && wanted.length === 0) return actual === undefined || jsonEqual(actual, wanted);
  return jsonEqual(actual, wanted);
}
