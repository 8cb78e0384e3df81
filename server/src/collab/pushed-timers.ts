/**
 * Timers that every update pushes back, without a timer reset per update. "Do this once nothing
 * has happened for a while" was written as clearTimeout + setTimeout on every keystroke: each
 * takes the timer's list out of Node's timer queue and puts it back (a unique duration is a list of
 * its own) and allocates a new Timeout — a visible share of the server's CPU per keystroke at two
 * clients (profiled in docs/performance.md §37). Here a push only moves a due time; the one
 * timer, when it fires early, waits for what is left.
 * Effects: timers.
 */
import type { Hocuspocus } from '@hocuspocus/server';

export interface PushedTimerOptions {
  /** A monotonic clock in ms (default `performance.now`: a wall clock set back would delay it). */
  now?: () => number;
  /** Unref the timer (it does not keep the process alive). */
  unref?: boolean;
}

const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Calls `fire` once `after(ms)` has not been called again for `ms` (the last call's `ms`). */
export class PushedTimeout {
  private timer: NodeJS.Timeout | null = null;
  /** When `fire` is due. */
  private due = 0;
  /** When the armed timer goes off (never after `due`). */
  private firesAt = 0;
  private readonly now: () => number;

  constructor(private readonly fire: () => void, private readonly opts: PushedTimerOptions = {}) {
    this.now = opts.now ?? (() => performance.now());
  }

  /** `fire` runs `ms` from now, unless pushed back again (or cancelled) before. */
  after(ms: number): void {
    const now = this.now();
    this.due = now + ms;
    // Pushed back: the armed timer finds the new due time when it goes off. Brought forward: rearm.
    if (this.timer && this.firesAt <= this.due) return;
    this.arm(ms, now);
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  get pending(): boolean {
    return this.timer !== null;
  }

  private arm(ms: number, now: number): void {
    if (this.timer) clearTimeout(this.timer);
    // Node fires a longer timeout at once (after 1 ms): wait the longest it can, then the rest.
    const wait = Math.min(Math.max(ms, 0), MAX_TIMEOUT_MS);
    this.firesAt = now + wait;
    this.timer = setTimeout(() => this.wake(), wait);
    if (this.opts.unref) this.timer.unref();
  }

  private wake(): void {
    this.timer = null;
    const now = this.now();
    const left = this.due - now;
    if (left > 0) return this.arm(left, now);
    this.fire();
  }
}

type Debouncer = Hocuspocus['debouncer'];

/**
 * Hocuspocus' debouncer (`hocuspocus.debouncer`: its store hooks, called for every update), with
 * the same contract: `debounce(id, func, ms, maxMs)` runs the latest `func` once `ms` pass without
 * another call for `id`, at once when `ms` is 0 or `maxMs` has passed since the first pending
 * call (returning that run); a run waits for the one of its id in progress; `executeNow` runs a
 * pending one now.
 * What differs: a call while one is pending moves its due time instead of resetting a timer.
 */
export function pushedDebouncer(opts: { now?: () => number } = {}): Debouncer {
  const now = opts.now ?? (() => performance.now());
  interface Pending {
    start: number;
    func: () => unknown;
    timer: PushedTimeout;
  }
  const pending = new Map<string, Pending>();
  const running = new Map<string, Promise<unknown>>();

  const run = async (id: string, func: () => unknown): Promise<unknown> => {
    const p = pending.get(id);
    if (p) {
      p.timer.cancel();
      pending.delete(id);
    }
    const before = running.get(id);
    if (before) await before.catch(() => {});
    // Called in this task, as Hocuspocus' own debouncer does (its store hook takes a mutex at once).
    let execution: Promise<unknown>;
    try {
      execution = Promise.resolve(func());
    } catch (e) {
      execution = Promise.reject(e);
    }
    running.set(id, execution);
    try {
      return await execution;
    } finally {
      if (running.get(id) === execution) running.delete(id);
    }
  };

  return {
    debounce: async (id, func, ms, maxMs) => {
      const p = pending.get(id);
      const start = p?.start ?? now();
      if (ms === 0 || now() - start >= maxMs) return run(id, func);
      if (p) {
        p.func = func;
        p.timer.after(ms);
        return undefined;
      }
      // Hocuspocus' store hook catches its own errors; anything else is reported, as it would be.
      const entry: Pending = { start, func, timer: new PushedTimeout(() => void run(id, entry.func).catch((e) => console.error(`[debounced ${id}]`, e)), { now }) };
      pending.set(id, entry);
      entry.timer.after(ms);
      return undefined;
    },
    isDebounced: (id) => pending.has(id),
    isCurrentlyExecuting: (id) => running.has(id),
    executeNow: (id) => {
      const p = pending.get(id);
      return p ? run(id, p.func) : undefined;
    },
  };
}
