/**
 * A cell run's hard deadline (the supervisor's, behind the runner's own vm timeout): the run may
 * spend `budgetMs` of wall-clock time outside calls it makes to the server (volume samples,
 * analysis jobs), and `capMs` in all. Time a cell waits for the server does not count against
 * its budget — the server bounds its own work, and on a loaded machine a sample or a job start
 * can take longer than a short cell limit — but a cell cannot wait forever either: the cap.
 * Pure apart from the timers it is given.
 */
export interface DeadlineClock {
  now(): number;
  setTimeout(f: () => void, ms: number): unknown;
  clearTimeout(t: unknown): void;
}

export const systemClock: DeadlineClock = {
  now: () => performance.now(),
  setTimeout: (f, ms) => setTimeout(f, ms),
  clearTimeout: (t) => clearTimeout(t as NodeJS.Timeout),
};

export class RunDeadline {
  private timer: unknown = null;
  private spent = 0;
  private since: number;
  private readonly started: number;
  private calls = 0;
  private done = false;

  constructor(
    private budgetMs: number,
    private readonly capMs: number,
    private readonly expire: () => void,
    private readonly clock: DeadlineClock = systemClock,
  ) {
    this.started = this.since = clock.now();
    this.arm();
  }

  /** Starts the budget again (the runner said it started executing). */
  restart(budgetMs: number): void {
    this.budgetMs = budgetMs;
    this.spent = 0;
    this.since = this.clock.now();
    this.arm();
  }

  /**
   * After it expired: the supervisor chose to wait `budgetMs` more. False (and nothing changes)
   * once the cap is reached or during a call to the server.
   */
  extend(budgetMs: number): boolean {
    if (this.timer !== null) return true;
    if (this.calls > 0 || this.capMs - (this.clock.now() - this.started) <= 0) return false;
    this.done = false;
    this.restart(budgetMs);
    return true;
  }

  /** The cell called the server: its own time stops. */
  callStarted(): void {
    if (this.done || this.calls++ > 0) return;
    this.spent += this.clock.now() - this.since;
    this.arm();
  }

  /** A call returned: its own time runs again (once no call is pending). */
  callEnded(): void {
    if (this.done || this.calls === 0 || --this.calls > 0) return;
    this.since = this.clock.now();
    this.arm();
  }

  stop(): void {
    this.done = true;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /** Milliseconds until it expires as things stand (for tests and messages). */
  remaining(): number {
    const now = this.clock.now();
    const toCap = this.capMs - (now - this.started);
    if (this.calls > 0) return Math.max(0, toCap);
    return Math.max(0, Math.min(toCap, this.budgetMs - this.spent - (now - this.since)));
  }

  private arm(): void {
    if (this.done) return;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      if (this.done) return;
      // A timer may fire a little early or after a call changed the picture: check, re-arm or expire.
      if (this.remaining() > 0) this.arm();
      else {
        this.done = true;
        this.expire();
      }
    }, this.remaining());
  }
}

/**
 * At the hard deadline: whether to wait (re-check shortly) for a runner instead of killing it. Only
 * where a soft stop is coming — the vm timeout of the cell's synchronous part, or an Interrupt's
 * own grace — and only while the runner is runnable but starved (its own CPU since it started
 * executing below `budgetMs`: on a loaded machine, cells at a lower priority may not have had the
 * CPU to use their time). After the synchronous part nothing but the deadline stops a cell: never
 * wait then, or a loop after an await would run for minutes on a loaded machine.
 */
export function waitForStarvedRunner(r: { syncDone: boolean; interrupted: boolean; runnable: boolean; cpuSinceRunningMs: number | null; budgetMs: number }): boolean {
  if (r.syncDone && !r.interrupted) return false;
  return r.runnable && r.cpuSinceRunningMs !== null && r.cpuSinceRunningMs < r.budgetMs;
}
