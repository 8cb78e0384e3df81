/**
 * A cell run's hard deadline: its own time counts, time waiting for the server does not (up to a
 * cap). Driven by a manual clock: the test decides when time passes and when timers fire.
 */
import { describe, expect, it } from 'vitest';
import { RunDeadline, waitForStarvedRunner, type DeadlineClock } from '../../src/kernel/run-deadline.ts';

class ManualClock implements DeadlineClock {
  t = 0;
  private timers = new Map<number, { at: number; f: () => void }>();
  private next = 1;
  now = () => this.t;
  setTimeout = (f: () => void, ms: number) => {
    const id = this.next++;
    this.timers.set(id, { at: this.t + ms, f });
    return id;
  };
  clearTimeout = (id: unknown) => void this.timers.delete(id as number);
  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, x]) => x.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = Math.max(this.t, due[1].at);
      due[1].f();
    }
    this.t = end;
  }
}

describe('run deadline', () => {
  it('expires after the budget of the cell’s own time', () => {
    const clock = new ManualClock();
    let expired = 0;
    new RunDeadline(1000, 60_000, () => expired++, clock);
    clock.advance(999);
    expect(expired).toBe(0);
    clock.advance(1);
    expect(expired).toBe(1);
    clock.advance(10_000);
    expect(expired).toBe(1);
  });

  it('does not count time waiting for the server, and counts again after the call returns', () => {
    const clock = new ManualClock();
    let expired = 0;
    const d = new RunDeadline(1000, 60_000, () => expired++, clock);
    clock.advance(600);
    d.callStarted();
    clock.advance(20_000); // a gate held, a slow sample: not the cell's time
    expect(expired).toBe(0);
    d.callStarted(); // nested calls: time stays stopped until the last returns
    d.callEnded();
    clock.advance(5_000);
    expect(expired).toBe(0);
    d.callEnded();
    expect(d.remaining()).toBe(400);
    clock.advance(399);
    expect(expired).toBe(0);
    clock.advance(1);
    expect(expired).toBe(1);
  });

  it('a cell that waits for the server forever is stopped at the cap; restart begins a new budget; stop disarms', () => {
    const clock = new ManualClock();
    let expired = 0;
    const d = new RunDeadline(1000, 30_000, () => expired++, clock);
    d.callStarted();
    clock.advance(29_999);
    expect(expired).toBe(0);
    clock.advance(1);
    expect(expired).toBe(1);

    const e = new RunDeadline(5000, 60_000, () => expired++, clock);
    clock.advance(4000);
    e.restart(1000);
    clock.advance(999);
    expect(expired).toBe(1);
    e.stop();
    clock.advance(10_000);
    expect(expired).toBe(1);
  });

  it('after it expired, the supervisor may wait more (a starved runner), but never past the cap', () => {
    const clock = new ManualClock();
    let expired = 0;
    let d!: RunDeadline;
    // The supervisor waits 500 ms more each time it finds the runner starved.
    d = new RunDeadline(1000, 3000, () => {
      expired++;
      d.extend(500);
    }, clock);
    clock.advance(1000);
    expect(expired).toBe(1);
    clock.advance(499);
    expect(expired).toBe(1);
    clock.advance(1);
    expect(expired).toBe(2);
    clock.advance(1500); // 2,000 ms more: the cap (3,000 ms in all) is reached
    expect(expired).toBe(5);
    expect(d.extend(500)).toBe(false);
    clock.advance(10_000);
    expect(expired).toBe(5);
  });

  it('a starved runner is waited for only where a soft stop is coming: in its synchronous part or after Interrupt, never after an await', () => {
    const starved = { runnable: true, cpuSinceRunningMs: 200, budgetMs: 5000 };
    expect(waitForStarvedRunner({ ...starved, syncDone: false, interrupted: false })).toBe(true); // the vm timeout will stop it softly
    expect(waitForStarvedRunner({ ...starved, syncDone: true, interrupted: true })).toBe(true); // Interrupt's own grace decides
    expect(waitForStarvedRunner({ ...starved, syncDone: true, interrupted: false })).toBe(false); // a loop after an await: only the deadline stops it
    expect(waitForStarvedRunner({ ...starved, syncDone: false, interrupted: false, cpuSinceRunningMs: 5000 })).toBe(false); // it had its time
    expect(waitForStarvedRunner({ ...starved, syncDone: false, interrupted: false, runnable: false })).toBe(false); // asleep: not starved
    expect(waitForStarvedRunner({ ...starved, syncDone: false, interrupted: false, cpuSinceRunningMs: null })).toBe(false); // /proc unreadable
  });
});
