/**
 * The WebGL side of a map: one regl-scatterplot instance on a canvas, driven imperatively by
 * MapCanvas. It draws the points (normalized coordinates, palette indices), shows the shared
 * selection as selected points, switches tools (pan / lasso / rectangle; Shift+drag brushes a
 * rectangle while panning), and reports brushes (once, on release), hovers and camera moves.
 * Loaded on demand with the map (a separate chunk). Effects: WebGL, DOM events.
 */
import createScatterplot from 'regl-scatterplot';
import type { Vec2, Viewport } from './geometry.ts';
import { HOVER_COLOR, SELECTED_COLOR } from './colors.ts';

export type Tool = 'pan' | 'lasso' | 'rect';

export interface RendererEvents {
  /** A brush was released (vertices in ndc). Never called while dragging. */
  onBrush(vertices: Vec2[], kind: 'rect' | 'lasso'): void;
  onHover(index: number | null): void;
  /** The camera or the canvas size changed (at most once a frame). */
  onView(): void;
  /** The person panned or zoomed (wheel, drag) — not a programmatic move. */
  onUserMove(): void;
}

type Scatterplot = ReturnType<typeof createScatterplot>;

/** Point size for a number of points: big enough to see a few, small enough for a million. */
export const pointSizeFor = (n: number): number => (n <= 1_000 ? 7 : n <= 10_000 ? 5 : n <= 100_000 ? 3 : n <= 500_000 ? 2 : 1.5);

/** When the latest draw of points started, when the library had them (buffers, spatial index), and when it first rendered them (performance.now() ms). */
export interface DrawTiming {
  n: number;
  started: number;
  ready: number;
  rendered: number | null;
}

export class AtlasRenderer {
  private sp: Scatterplot;
  /** The latest draw's timing (read by benchmarks and tests through window.__plexusAtlas). */
  lastDraw: DrawTiming | null = null;
  private selected: number[] = [];
  private tool: Tool = 'pan';
  private brushing = false;
  private cancelled = false;
  private frame = 0;
  private drawn = false;
  /** The camera was moved (by the person, or to follow someone): resizes no longer re-fit. */
  private moved = false;
  private lastX: Float32Array | null = null;
  private lastY: Float32Array | null = null;
  private width: number;
  private height: number;
  private readonly disposers: Array<() => void> = [];

  constructor(
    canvas: HTMLCanvasElement,
    size: { width: number; height: number },
    n: number,
    private readonly events: RendererEvents,
    /** View-only: no brushing at all (Shift+drag pans like a drag). */
    readOnly = false,
  ) {
    this.width = Math.max(1, size.width);
    this.height = Math.max(1, size.height);
    this.sp = createScatterplot({
      canvas,
      width: this.width,
      height: this.height,
      pointSize: pointSizeFor(n),
      // Past two million points: squares without blending (the library's fast path).
      performanceMode: n > 2_000_000,
      backgroundColor: [1, 1, 1, 1],
      pointColorActive: SELECTED_COLOR,
      pointColorHover: HOVER_COLOR,
      pointSizeSelected: 1,
      pointOutlineWidth: 1,
      lassoColor: [0.1, 0.1, 0.1, 0.9],
      // Every mouse move extends the brush: a throttled extension still pending at mouseup is dropped.
      lassoMinDelay: 0,
      lassoMinDist: 2,
      lassoType: 'rectangle',
      // Shift+drag brushes; no rotation (a map has a north), no merge/remove modifiers.
      actionKeyMap: readOnly ? {} : { lasso: 'shift' },
      deselectOnDblClick: false,
      deselectOnEscape: false,
      showReticle: false,
    } as Parameters<typeof createScatterplot>[0]);
    if (!this.sp.isSupported) {
      this.sp.destroy();
      throw new Error("This browser's WebGL lacks features the map needs (float textures, instancing).");
    }
    const sub = <K extends Parameters<Scatterplot['subscribe']>[0]>(event: K, handler: Parameters<Scatterplot['subscribe']>[1]) => {
      const s = this.sp.subscribe(event, handler as never);
      this.disposers.push(() => this.sp.unsubscribe(s as never));
    };
    sub('lassoStart', () => this.onLassoStart());
    sub('lassoEnd', ((e: { coordinates: unknown }) => this.onLassoEnd(e.coordinates as Vec2[])) as never);
    sub('pointOver', ((i: number) => this.events.onHover(i)) as never);
    sub('pointOut', (() => this.events.onHover(null)) as never);
    sub('view', () => this.viewChanged());
    // A click on a point selects in the library: the shared selection wins. A finished brush
    // selects too, just before its lassoEnd: the points it shows are the ones about to become the
    // shared selection, so re-applying the old one (another ~100k points on a big brush, measured
    // in docs/performance.md §18) would only delay the brush; `setSelection` follows.
    sub('select', () => {
      if (!this.brushing) this.reselect();
    });
    sub('deselect', () => {
      if (!this.brushing) this.reselect();
    });
    const userMove = () => {
      this.moved = true;
      this.events.onUserMove();
    };
    const onDown = (e: PointerEvent) => {
      if (this.tool === 'pan' && !e.shiftKey) userMove();
    };
    canvas.addEventListener('wheel', userMove, { passive: true });
    canvas.addEventListener('pointerdown', onDown);
    this.disposers.push(() => {
      canvas.removeEventListener('wheel', userMove);
      canvas.removeEventListener('pointerdown', onDown);
    });
  }

  private queue: Promise<void> = Promise.resolve();

  /** Draws points (ndc) coloured by palette index `z` (draws run one after the other). */
  draw(x: Float32Array, y: Float32Array, z: Float32Array, palette: string[], active: string[]): Promise<void> {
    this.queue = this.queue.then(() => (this.destroyed ? undefined : this.drawNow(x, y, z, palette, active))).catch((e: unknown) => console.error('atlas: draw failed', e));
    return this.queue;
  }

  private async drawNow(x: Float32Array, y: Float32Array, z: Float32Array, palette: string[], active: string[]): Promise<void> {
    // Same positions (a colour or highlight change): keep the spatial index.
    const same = this.drawn && x === this.lastX && y === this.lastY;
    const timing: DrawTiming = { n: x.length, started: performance.now(), ready: 0, rendered: null };
    this.lastX = x;
    this.lastY = y;
    await this.sp.set({ colorBy: 'valueA', pointColor: palette, pointColorActive: active, pointColorHover: palette.map(() => HOVER_COLOR) } as never);
    const spatialIndex = same ? (this.sp.get('spatialIndex' as never) as ArrayBuffer | undefined) : undefined;
    await this.sp.draw({ x, y, valueA: z } as never, { zDataType: 'categorical', select: this.selected, preventFilterReset: true, ...(spatialIndex ? { spatialIndex } : {}) } as never);
    timing.ready = performance.now();
    this.lastDraw = timing;
    // The library renders them in its next frame.
    this.sp.subscribe('draw', (() => (timing.rendered = performance.now())) as never, 1);
    if (!this.drawn) this.fit(false);
    this.drawn = true;
    this.reselect();
    this.viewChanged();
  }

  /** Shows these point indices as selected (the shared selection); others fade. */
  setSelection(indices: ArrayLike<number>): void {
    this.selected = Array.from(indices);
    this.set({ opacityInactiveScale: this.selected.length ? 0.5 : 1 });
    this.reselect();
  }

  private reselect(): void {
    if (!this.drawn) return;
    if (this.selected.length) this.sp.select(this.selected, { preventEvent: true });
    else this.sp.deselect({ preventEvent: true });
  }

  setTool(tool: Tool): void {
    this.tool = tool;
    this.set({ mouseMode: tool === 'pan' ? 'panZoom' : 'lasso', lassoType: tool === 'lasso' ? 'freeform' : 'rectangle' });
  }

  /** Point opacity by local density (dense regions read as shades instead of a solid blob). */
  setDensity(on: boolean): void {
    this.set({ opacityBy: on ? 'density' : null, opacity: 1 });
  }

  resize(width: number, height: number): void {
    if (width < 1 || height < 1 || (width === this.width && height === this.height)) return;
    this.width = width;
    this.height = height;
    this.set({ width, height });
    // Until someone moves the camera, the whole map stays in view whatever the panel's size.
    if (this.drawn && !this.moved) this.fit(false);
    this.viewChanged();
  }

  viewport(): Viewport {
    return { view: (this.sp.get('cameraView' as never) as ArrayLike<number>) ?? IDENTITY, width: this.width, height: this.height };
  }

  /** Camera as the library's camera target (ndc) and distance. */
  camera(): { target: Vec2; distance: number } {
    const t = this.sp.get('cameraTarget' as never) as ArrayLike<number>;
    return { target: [t[0]!, t[1]!], distance: Number(this.sp.get('cameraDistance' as never)) };
  }

  lookAt(target: Vec2, distance: number): void {
    if (!(distance > 0) || !target.every(Number.isFinite)) return;
    this.moved = true;
    void this.sp.zoomToLocation(target, distance, { transition: false });
  }

  /** Shows all of [-1, 1]² (the library fits the height; a tall canvas needs to zoom out). */
  private fit(transition: boolean): void {
    void this.sp.zoomToLocation([0, 0], Math.max(1, this.height / this.width), transition ? { transition: true, transitionDuration: 250 } : { transition: false });
  }

  resetView(): void {
    this.moved = false;
    this.fit(true);
  }

  /** The brush in progress (Escape): ends it without a selection. */
  cancelBrush(): boolean {
    if (!this.brushing) return false;
    this.cancelled = true;
    // The button is still down: the rest of this drag must not pan (the library's camera would).
    this.set({ cameraIsFixed: true });
    // The library ends a lasso on the window's mouseup.
    window.dispatchEvent(new MouseEvent('mouseup'));
    const release = () => {
      window.removeEventListener('mouseup', release, true);
      this.set({ cameraIsFixed: false });
    };
    window.addEventListener('mouseup', release, true);
    return true;
  }

  get isBrushing(): boolean {
    return this.brushing;
  }

  private onLassoStart(): void {
    this.brushing = true;
    this.cancelled = false;
  }

  private onLassoEnd(coords: Vec2[]): void {
    this.brushing = false;
    const cancelled = this.cancelled;
    this.cancelled = false;
    if (cancelled) return this.reselect();
    const kind = this.sp.get('lassoType' as never) === 'rectangle' ? 'rect' : 'lasso';
    this.events.onBrush(coords.map((p) => [p[0], p[1]] as Vec2), kind);
  }

  private viewChanged(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.events.onView();
    });
  }

  private destroyed = false;

  /** Sets properties (nothing once destroyed; the library rejects then). */
  private set(props: Record<string, unknown>): void {
    if (!this.destroyed) this.sp.set(props as never).catch((e: unknown) => console.error('atlas: could not set', Object.keys(props), e));
  }

  destroy(): void {
    this.destroyed = true;
    cancelAnimationFrame(this.frame);
    this.disposers.forEach((d) => d());
    this.sp.destroy();
  }
}

const IDENTITY = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
