/**
 * Timers pushed back by every update (collab/pushed-timers.ts), on Vitest's fake clock: no real
 * time passes, so nothing here depends on the machine's speed. The debouncer is checked against
 * Hocuspocus' own, which it replaces, on the same script of calls.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Hocuspocus } from '@hocuspocus/server';
import { PushedTimeout, pushedDebouncer } from '../../src/collab/pushed-timers.ts';

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('PushedTimeout', () => {
  it('fires once, `ms` after the last push, with one timer armed however often it is pushed', () => {
    const fired: number[] = [];
    const t = new PushedTimeout(() => fired.push(Date.now()));
    const armed = vi.spyOn(globalThis, 'setTimeout');
    const start = Date.now();
    for (let i = 0; i < 100; i++) {
      t.after(1000);
      vi.advanceTimersByTime(10);
    }
    // 100 pushes over 1 s armed one timer (it went off once early and waited for the rest).
    expect(armed.mock.calls.length).toBeLessThanOrEqual(2);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(989);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([start + 990 + 1000]);
    expect(t.pending).toBe(false);
    vi.advanceTimersByTime(5000);
    expect(fired.length).toBe(1);
    armed.mockRestore();
  });

  it('waits out a delay longer than a Node timeout can (2^31 - 1 ms) instead of firing at once', () => {
    let fired = 0;
    const t = new PushedTimeout(() => fired++);
    t.after(2 ** 32);
    vi.advanceTimersByTime(2 ** 31);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(2 ** 32 - 2 ** 31);
    expect(fired).toBe(1);
  });

  it('fires earlier when brought forward, and not at all when cancelled', () => {
    const fired: number[] = [];
    const t = new PushedTimeout(() => fired.push(Date.now()));
    const start = Date.now();
    t.after(1000);
    vi.advanceTimersByTime(100);
    t.after(50);
    vi.advanceTimersByTime(50);
    expect(fired).toEqual([start + 150]);
    t.after(100);
    vi.advanceTimersByTime(99);
    t.cancel();
    vi.advanceTimersByTime(1000);
    expect(fired.length).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('pushedDebouncer', () => {
  type Step = { at: number; op: 'debounce'; id: string; payload: number; ms: number; maxMs: number } | { at: number; op: 'executeNow'; id: string };

  /** Runs `steps` against a debouncer; records each run (time, id, payload) and what the queries said. */
  async function play(debouncer: Hocuspocus['debouncer'], steps: Step[], until: number) {
    const runs: string[] = [];
    const seen: string[] = [];
    const t0 = Date.now();
    for (const s of steps) {
      await vi.advanceTimersByTimeAsync(t0 + s.at - Date.now());
      if (s.op === 'debounce') {
        void debouncer.debounce(s.id, async () => {
          runs.push(`${Date.now() - t0} ${s.id} ${s.payload}`);
          // A store hook takes a while: runs of one id must not overlap.
          await new Promise((r) => setTimeout(r, 30));
          runs.push(`${Date.now() - t0} ${s.id} ${s.payload} done`);
        }, s.ms, s.maxMs);
      } else void debouncer.executeNow(s.id);
      seen.push(`${s.at} ${debouncer.isDebounced('a')} ${debouncer.isDebounced('b')} ${debouncer.isCurrentlyExecuting('a')}`);
    }
    await vi.advanceTimersByTimeAsync(t0 + until - Date.now());
    return { runs, seen };
  }

  it('runs what Hocuspocus\' own debouncer runs, when it runs it, for a script of typing, pauses, limits and unloads', async () => {
    const steps: Step[] = [];
    let at = 0;
    let payload = 0;
    // Typing into two documents 25 ms apart with pauses, a debounce of 200 ms capped at 1 s, a
    // few immediate stores (ms 0) and unloads (executeNow), one while a store of `a` still runs.
    for (let i = 0; i < 200; i++) {
      // Pauses every 17 keys, except from key 120 on: 2 s of typing without one (the 1 s cap).
      at += i % 17 === 16 && i < 120 ? 400 : 25;
      const id = i % 3 === 0 ? 'b' : 'a';
      steps.push({ at, op: 'debounce', id, payload: ++payload, ms: i % 29 === 28 ? 0 : 200, maxMs: 1000 });
      if (i % 23 === 22) steps.push({ at: at + 5, op: 'executeNow', id: 'a' });
    }
    const theirs = await play(new Hocuspocus({ quiet: true }).debouncer, steps, at + 5000);
    vi.setSystemTime(1_000_000);
    const ours = await play(pushedDebouncer(), steps, at + 5000);
    expect(theirs.runs.length).toBeGreaterThan(20);
    expect(ours.runs).toEqual(theirs.runs);
    expect(ours.seen).toEqual(theirs.seen);
  });

  it('arms one timer for a stretch of typing instead of one per update', () => {
    const d = pushedDebouncer();
    const armed = vi.spyOn(globalThis, 'setTimeout');
    for (let i = 0; i < 200; i++) {
      void d.debounce('ws', () => undefined, 10_000, 60_000);
      vi.advanceTimersByTime(25);
    }
    expect(armed.mock.calls.length).toBe(1);
    armed.mockRestore();
  });
});
