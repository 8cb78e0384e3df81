/**
 * Driving a kernel step by step on an in-memory document, with no server, no process and no
 * timing (server/src/kernel: `new WorkspaceKernel({ doc, engines, clock })`, then `begin()`):
 * - ManualClock: the kernel's timers and "laters" run only when the test settles it, in the order
 *   they are due, with time advanced to each timer's due time;
 * - ScriptedEngines: every run the kernel starts waits until the test finishes it (or ends at once
 *   with a scripted answer), and every cancel or interrupt the kernel sends is recorded.
 * So a test writes run requests and edits into the document, settles, and sees exactly what the
 * kernel did — whatever the machine's load.
 */
import type { CellOutput } from '@plexus/shared';
import type { KernelClock, KernelTimer } from '@plexus/server/kernel/kernel-clock';
import type { JsEngine, KernelEngines, SqlEngine } from '@plexus/server/kernel/engines';
import type { RunInput, RunOutcome } from '@plexus/server/kernel/js-runtime';

interface Task {
  seq: number;
  due: number;
  fn: () => void;
}

/** Lets every promise reaction already queued run (several rounds of the microtask queue and one of I/O). */
async function drainMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
  await new Promise<void>((r) => setImmediate(r));
}

export class ManualClock implements KernelClock {
  private t = 1_000_000;
  private seq = 0;
  private tasks: Task[] = [];

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): KernelTimer {
    const task = { seq: this.seq++, due: this.t + Math.max(0, ms), fn };
    this.tasks.push(task);
    return task;
  }

  clearTimeout(timer: KernelTimer | null): void {
    if (timer) this.tasks = this.tasks.filter((x) => x !== timer);
  }

  soon(fn: () => void): void {
    this.tasks.push({ seq: this.seq++, due: this.t, fn });
  }

  /** Tasks waiting (timers not yet run). */
  get pending(): number {
    return this.tasks.length;
  }

  /**
   * Runs what is due now, then advances to the next timer and runs it, and so on, letting promise
   * reactions run after each task, until nothing is left — or only timers later than
   * `untilMs` from now when given. Throws when it does not settle (a kernel that keeps itself busy).
   */
  async settle(opts: { untilMs?: number; maxSteps?: number } = {}): Promise<void> {
    const end = opts.untilMs === undefined ? Infinity : this.t + opts.untilMs;
    const max = opts.maxSteps ?? 10_000;
    await drainMicrotasks();
    for (let step = 0; ; step++) {
      if (step >= max) throw new Error(`the kernel did not settle in ${max} steps`);
      if (!this.tasks.length) return;
      this.tasks.sort((a, b) => a.due - b.due || a.seq - b.seq);
      const next = this.tasks[0]!;
      if (next.due > end) return;
      this.tasks.shift();
      this.t = Math.max(this.t, next.due);
      next.fn();
      await drainMicrotasks();
    }
  }
}

/** A run the kernel started, waiting for the test. */
export interface ScriptedRun {
  /** `js` (a code cell) or `sql`. */
  engine: 'js' | 'sql';
  /** The cell it runs (from the file name the kernel gives a JS run; SQL: null). */
  cellId: string | null;
  input: RunInput | { sql: string; params: Record<string, unknown>; name?: string };
  /** Ends the run with this outcome (defaults: ok, nothing defined, no outputs). */
  finish(outcome?: Partial<RunOutcome>): void;
  /** Ends the run with an error. */
  fail(message: string, name?: string): void;
  readonly done: boolean;
}

/**
 * Engines whose runs the test ends: `runs` lists every run in the order the kernel started it,
 * `calls` every cancel, interrupt, delete and drop. A run ends by itself with `auto(run)`'s answer
 * when that returns one.
 */
export class ScriptedEngines implements KernelEngines {
  readonly runs: ScriptedRun[] = [];
  readonly calls: string[] = [];
  /** Answers runs at once when it returns an outcome (e.g. every run of a fast cell). */
  auto: (run: ScriptedRun) => Partial<RunOutcome> | null = () => null;

  /** The runs not ended yet. */
  get open(): ScriptedRun[] {
    return this.runs.filter((r) => !r.done);
  }

  private started(run: ScriptedRun): void {
    this.runs.push(run);
    const answer = this.auto(run);
    if (answer) run.finish(answer);
  }

  private newRun<T>(engine: 'js' | 'sql', cellId: string | null, input: ScriptedRun['input'], toResult: (o: RunOutcome) => T): { run: ScriptedRun; result: Promise<T> } {
    let resolve!: (v: T) => void;
    const result = new Promise<T>((r) => (resolve = r));
    let done = false;
    const end = (o: RunOutcome) => {
      if (done) return;
      done = true;
      resolve(toResult(o));
    };
    const run: ScriptedRun = {
      engine, cellId, input,
      get done() {
        return done;
      },
      finish: (o = {}) => end({ ok: true, defines: [], outputs: [], ...o }),
      fail: (message, name = 'Error') => end({ ok: false, defines: [], outputs: [], error: { type: 'error', name, message } }),
    };
    return { run, result };
  }

  js = (): JsEngine => {
    const values = new Map<string, unknown>();
    return {
      layers: ['scripted'],
      start: async () => {},
      run: (input: RunInput) => {
        const { run, result } = this.newRun('js', /^cell-(.+)\.js$/.exec(input.filename)?.[1] ?? null, input, (o) => o);
        this.started(run);
        return result;
      },
      // As the real runtime: a cancelled run ends at once, reported cancelled.
      cancel: (runId: string) => {
        this.calls.push(`js.cancel ${runId}`);
        const run = this.runs.find((r) => !r.done && r.engine === 'js' && (r.input as RunInput).runId === runId);
        run?.finish({ ok: false, cancelled: true, defines: [] });
      },
      interrupt: () => void this.calls.push('js.interrupt'),
      get: async (names: string[]) => ({ values: Object.fromEntries(names.filter((n) => values.has(n)).map((n) => [n, values.get(n)])), missing: names.filter((n) => !values.has(n)) }),
      set: (name: string, value: unknown) => void values.set(name, value),
      delete: (names: string[]) => {
        this.calls.push(`js.delete ${names.join(',')}`);
        for (const n of names) values.delete(n);
      },
      dispose: async () => void this.calls.push('js.dispose'),
    };
  };

  sql = (): SqlEngine => ({
    query: (input) => {
      const { run, result } = this.newRun('sql', null, input, (o) =>
        o.ok
          ? { ok: true as const, columns: [], rows: [], totalRows: 0, materialized: !!input.materialize }
          : { ok: false as const, error: { name: o.error?.name ?? 'Error', message: o.error?.message ?? 'failed' } });
      this.started(run);
      return result;
    },
    interrupt: () => void this.calls.push('sql.interrupt'),
    drop: (names: string[]) => void this.calls.push(`sql.drop ${names.join(',')}`),
    dispose: async () => void this.calls.push('sql.dispose'),
  });
}

/** A text output, as a cell's value shows. */
export const textOutput = (text: string): CellOutput => ({ type: 'text', text }) as CellOutput;
