/**
 * Decides which cells get a real editor. An IntersectionObserver (rootMargin ~800px around the
 * notebook viewport) marks cells as wanted or not; editors are then mounted a few at a time per
 * animation frame, nearest to the viewport first, so a long notebook becomes visible at once and
 * interactive shortly after, instead of freezing while dozens of editors are built.
 */
import { flushSync } from 'react-dom';

type Setter = (mounted: boolean) => void;

interface Entry {
  el: Element;
  set: Setter;
  mounted: boolean;
  wanted: boolean;
  /** Never unmount (focused or just created). */
  pinned: boolean;
}

/** Milliseconds of mounting work per frame before yielding to the browser. */
const FRAME_BUDGET_MS = 10;
/**
 * While the notebook scrolls, (un)mounting waits until it has been still this long: building
 * editors for cells that fly past only makes scrolling stutter; the previews stand in meanwhile.
 */
const SCROLL_SETTLE_MS = 90;

export class MountScheduler {
  private io: IntersectionObserver;
  private entries = new Map<string, Entry>();
  private byEl = new WeakMap<Element, string>();
  private queue = new Set<string>();
  private frame = 0;
  /** Cells that must render their editor from their very first render (just created here). */
  private eager = new Set<string>();
  /** Cells the notebook opens with at its top: their editors come with its first render (not pinned). */
  private first = new Set<string>();
  private lastScroll = 0;
  private settleTimer: ReturnType<typeof setTimeout> | undefined;
  private onScroll = () => {
    this.lastScroll = performance.now();
  };

  constructor(private readonly root: HTMLElement, margin = 800) {
    this.io = new IntersectionObserver((records) => this.onIntersect(records), {
      root,
      rootMargin: `${margin}px 0px ${margin}px 0px`,
    });
    root.addEventListener('scroll', this.onScroll, { passive: true });
  }

  /** Marks a cell that does not exist yet to start mounted and pinned (a cell the user adds). */
  mountEagerly(cellId: string): void {
    this.eager.add(cellId);
  }

  /**
   * The cells at the top of a notebook that has just opened: they render their editors in its
   * first render, so the first keys can be typed as soon as it is on screen, instead of a frame
   * or two later, once the intersection observer has seen them and the next frame has mounted
   * them. Not pinned: scrolled away, they lose their editors like any other cell.
   */
  mountFirst(cellIds: string[]): void {
    for (const id of cellIds) this.first.add(id);
  }

  /** Whether a cell should render its editor on its first render. */
  startsMounted(cellId: string): boolean {
    return this.eager.has(cellId) || this.first.has(cellId) || this.isMounted(cellId);
  }

  observe(cellId: string, el: Element, set: Setter): void {
    const old = this.entries.get(cellId);
    if (old && old.el !== el) this.io.unobserve(old.el);
    const eager = this.eager.delete(cellId);
    const first = this.first.delete(cellId);
    this.entries.set(cellId, {
      el,
      set,
      mounted: eager || first || (old?.mounted ?? false),
      wanted: old?.wanted ?? false,
      pinned: eager || (old?.pinned ?? false),
    });
    this.byEl.set(el, cellId);
    this.io.observe(el);
  }

  unobserve(cellId: string, el: Element): void {
    const e = this.entries.get(cellId);
    if (e && e.el === el) {
      this.io.unobserve(el);
      this.entries.delete(cellId);
      this.queue.delete(cellId);
    }
  }

  /** Mount now and keep mounted while pinned (a cell being edited must never lose its editor). */
  pin(cellId: string, pinned: boolean): void {
    const e = this.entries.get(cellId);
    if (!e) return;
    e.pinned = pinned;
    if (pinned) this.apply(cellId, e, true);
    else if (!e.wanted) this.schedule(cellId);
  }

  isMounted(cellId: string): boolean {
    return this.entries.get(cellId)?.mounted ?? false;
  }

  private onIntersect(records: IntersectionObserverEntry[]): void {
    for (const r of records) {
      const id = this.byEl.get(r.target);
      const e = id !== undefined ? this.entries.get(id) : undefined;
      if (!id || !e) continue;
      e.wanted = r.isIntersecting;
      if (e.wanted !== e.mounted) this.schedule(id);
    }
  }

  private schedule(id?: string): void {
    if (id !== undefined) this.queue.add(id);
    if (!this.frame && this.queue.size) this.frame = requestAnimationFrame(() => this.flush());
  }

  private apply(id: string, e: Entry, mounted: boolean, sync = false): void {
    this.queue.delete(id);
    if (e.mounted === mounted) return;
    e.mounted = mounted;
    // In the frame loop each mount renders synchronously so the time budget measures real work.
    if (sync) flushSync(() => e.set(mounted));
    else e.set(mounted);
  }

  private flush(): void {
    this.frame = 0;
    const start = performance.now();
    const sinceScroll = start - this.lastScroll;
    if (sinceScroll < SCROLL_SETTLE_MS) {
      // Pinned cells (being edited, just created) never wait.
      for (const id of this.queue) {
        const e = this.entries.get(id);
        if (e?.pinned && !e.mounted) this.apply(id, e, true);
      }
      clearTimeout(this.settleTimer);
      this.settleTimer = setTimeout(() => this.schedule(), SCROLL_SETTLE_MS - sinceScroll + 5);
      return;
    }
    const view = this.root.getBoundingClientRect();
    const centre = view.top + view.height / 2;
    // Unmounts are cheap and free memory: do them all. Mounts: cells on screen all at once (one
    // React commit, so one layout), then the ones in the margin nearest first, within a budget.
    const onScreen: Array<[string, Entry]> = [];
    const margin: Array<[string, Entry, number]> = [];
    for (const id of this.queue) {
      const e = this.entries.get(id);
      if (!e) {
        this.queue.delete(id);
        continue;
      }
      const want = e.wanted || e.pinned;
      if (!want) this.apply(id, e, false);
      else if (!e.mounted) {
        const box = e.el.getBoundingClientRect();
        if (box.bottom > view.top && box.top < view.bottom) onScreen.push([id, e]);
        else margin.push([id, e, Math.abs(box.top + Math.min(box.height, 200) / 2 - centre)]);
      } else this.queue.delete(id);
    }
    if (onScreen.length) {
      flushSync(() => {
        for (const [id, e] of onScreen) this.apply(id, e, true);
      });
    }
    margin.sort((a, b) => a[2] - b[2]);
    for (const [id, e] of margin) {
      if (performance.now() - start > FRAME_BUDGET_MS) break;
      this.apply(id, e, true, true);
    }
    if (this.queue.size) this.frame = requestAnimationFrame(() => this.flush());
  }

  destroy(): void {
    cancelAnimationFrame(this.frame);
    clearTimeout(this.settleTimer);
    this.root.removeEventListener('scroll', this.onScroll);
    this.io.disconnect();
    this.entries.clear();
    this.queue.clear();
    this.first.clear();
  }
}
