/**
 * One workspace's JavaScript runtime: the sandboxed runner process, the per-cell time limit
 * (enforced here, in the parent: the vm timeout stops synchronous loops softly; anything still
 * running at the deadline is killed — time waiting for the server's own calls aside, run-deadline.ts), Interrupt (SIGINT, then kill), and a clear reason when the
 * process dies (timeout, out of memory, CPU limit, crash). A dead runtime stays dead: the kernel
 * starts a new one and treats every value as lost.
 * Effects: child processes, timers.
 */
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { CellOutput } from '@plexus/shared';
import { SandboxedChild, type ChildExit } from './child.ts';
import { RUNNER_DIR } from './sandbox.ts';
import { RunDeadline, waitForStarvedRunner } from './run-deadline.ts';

/** Modules a cell may `import` (resolved from the server's dependencies). */
export const CURATED_LIBRARIES = ['d3-array', 'simple-statistics'] as const;

export interface JsRuntimeOptions {
  cwd: string;
  uid?: number;
  memoryMb: number;
  timeoutMs: number;
  maxFrameBytes: number;
  /** Serves `volumes.histogram/trace` calls of cells (server-side sampling of served volumes). */
  sample?: VolumeSampler;
  /** Analysis jobs for cells (`calcium.start/status`). */
  job?: JobCaller;
}

/** Starts or reads an analysis job for a cell: `op` is `calcium-start` or `calcium-status`. */
export type JobCaller = (op: string, args: Record<string, unknown>) => Promise<unknown>;

/** Reads a served volume for a cell: `op` is `histogram` or `trace`, params as in the HTTP API. */
export type VolumeSampler = (op: string, dataset: string, layer: string, params: Record<string, string>) => Promise<unknown>;

export interface RunInput {
  runId: string;
  code: string;
  shifts: Array<{ line: number; column: number; by: number }>;
  inputs: string[];
  filename: string;
  /** Arm the vm watchdog (soft timeout, breakOnSigint) for this run. */
  watchdog: boolean;
}

export type ErrorOutput = Extract<CellOutput, { type: 'error' }>;

export interface RunOutcome {
  ok: boolean;
  defines: string[];
  outputs: CellOutput[];
  /** Full value/rows of a large output, to keep server-side. */
  full?: unknown;
  error?: ErrorOutput;
  /** The runtime died during the run (values lost): why. */
  fatal?: string;
  cancelled?: boolean;
  /** SQL cells: the result is also a temporary table. */
  table?: boolean;
  /** SQL cells: the rows were also given to the JavaScript runtime (only when a cell reads them as a value). */
  value?: boolean;
}

/** Hard deadline slack after the run message (delivery and compilation come first). */
const START_SLACK_MS = 5000;
/** Hard deadline slack after the runner said it started executing (its vm timeout fires first). */
const RUN_SLACK_MS = 2000;
/** A starved runner's deadline is checked again this often (its CPU, not the wall clock, counts). */
const STARVED_RECHECK_MS = 500;
/** Interrupt: SIGINT once the runner has run this much of its own CPU inside the watchdog (sigintSafe)… */
const SIGINT_CPU_MS = 30;
/** …or slept there this long; checked this often until then. */
const SIGINT_WAIT_MS = 100;
const SIGINT_POLL_MS = 20;
/** Longest a run may last in all, waiting for the server included (run-deadline.ts; at least 10× the cell limit). */
const HOST_WAIT_CAP_MS = 5 * 60_000;

const require = createRequire(import.meta.url);
const nodeModules = path.resolve(path.dirname(require.resolve('@duckdb/node-api/package.json')), '../..');

function libraryUrls(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of CURATED_LIBRARIES) out[name] = pathToFileURL(require.resolve(name)).href;
  return out;
}

/**
 * Whether an interrupted runner that has not stopped yet should be killed now. Pure.
 * `cpuMs`: CPU it had since the signal (null: unknown); `state`: its scheduler state.
 */
export function interruptVerdict(p: { waitedMs: number; cpuMs: number | null; state: string | null; graceMs: number; cpuGraceMs: number; maxWaitMs: number }): 'wait' | 'kill' {
  if (p.waitedMs >= p.maxWaitMs) return 'kill';
  if (p.cpuMs === null || p.state === null) return p.waitedMs >= p.graceMs ? 'kill' : 'wait';
  if (p.cpuMs >= p.cpuGraceMs) return 'kill'; // it ran, and did not stop
  if (p.waitedMs >= p.graceMs && p.state !== 'R') return 'kill'; // it sleeps where the signal does not reach
  return 'wait'; // runnable, waiting for the CPU: killing it would lose its values for nothing
}

/**
 * Whether an interrupted run may be sent SIGINT now. Pure. SIGINT stops synchronous code softly
 * only inside runInContext, where Node's watchdog handles it; while Node sets that watchdog up
 * (vm drops the runner's SIGINT listener, then starts two threads) and takes it down (joins them,
 * then leaves `SignalExit` as the handler until the listener is back), SIGINT kills the runner and
 * every value with it. So: only once the runner said `armed` (the cell's code began, inside the
 * watchdog), before it said its synchronous part returned, and once it has either run there a
 * little (`cpuSinceArmedMs`) or slept there (a native wait) — not in the moments right after
 * `armed`, when a short cell may already be leaving. Where /proc cannot be read, after `minWaitMs`.
 */
export function sigintSafe(p: { armed: boolean; syncDone: boolean; sinceArmedMs: number; cpuSinceArmedMs: number | null; state: string | null; minCpuMs: number; minWaitMs: number }): boolean {
  if (!p.armed || p.syncDone) return false;
  if (p.cpuSinceArmedMs === null || p.state === null) return p.sinceArmedMs >= p.minWaitMs;
  if (p.cpuSinceArmedMs >= p.minCpuMs) return true; // it runs the cell's code
  return p.sinceArmedMs >= p.minWaitMs && p.state !== 'R'; // asleep inside the cell (e.g. Atomics.wait)
}

/** Explains why a runner process died. */
export function deathReason(exit: ChildExit, memoryMb: number): string {
  if (exit.killedFor) return exit.killedFor;
  if (/heap out of memory|Allocation failed/i.test(exit.stderr) || exit.signal === 'SIGABRT' || exit.signal === 'SIGTRAP')
    return `the kernel ran out of memory (limit ${memoryMb} MB) and was restarted`;
  if (exit.signal === 'SIGXCPU') return 'the kernel used up its CPU-time limit and was restarted';
  if (exit.signal) return `the kernel process was killed by ${exit.signal} and was restarted`;
  return `the kernel process exited (code ${exit.code}) and was restarted`;
}

type Pending = {
  resolve: (o: RunOutcome) => void;
  onStream: (name: 'stdout' | 'stderr', text: string) => void;
  deadline: RunDeadline;
  /** The runner's CPU time when it said it started executing (null before, or where /proc cannot be read). */
  cpuAtRunning: number | null;
  /**
   * The synchronous part of the cell returned (the runner says so for cells that may loop): from
   * here no vm timeout will stop it softly, only the hard deadline.
   */
  syncDone: boolean;
  /** Interrupt was asked for: its own CPU-based grace decides whether the runner is killed. */
  interrupted: boolean;
  /** The run has the vm watchdog (breakOnSigint): its synchronous part is stopped by SIGINT. */
  watchdog: boolean;
  /** When the runner said the cell's code began inside the watchdog (`armed`), and its CPU then. */
  armed: { at: number; cpuMs: number | null } | null;
  /** A cell of a batch sent ahead (runAhead), not sent on its own. */
  ahead?: boolean;
  /** The id the runner knows the run by (a batch's cells get their own: a run id can come back with another source). */
  wire: string;
};

/** A cell sent ahead in a batch (runAhead), in the order the kernel will ask for its result. */
interface Ahead {
  runId: string;
  /** The id the runner runs it under (`runId~batchId`): its answers never match a later run of the same runId. */
  wire: string;
  /** Its place in the batch (cancel-batch calls off from the first thrown-away cell on). */
  index: number;
  code: string;
  inputs: string[];
  outcome: RunOutcome | null;
  streams: Array<['stdout' | 'stderr', string]>;
}

export class JsRuntime {
  private child: SandboxedChild | null = null;
  private run_: (Pending & { runId: string }) | null = null;
  private ahead: Ahead[] = [];
  private aheadBatch: string | null = null;
  private aheadCpuMs: number | null = null;
  /**
   * Cells sent ahead whose results were thrown away (runAhead): the runner may have run them, so
   * the values they define may be newer than what the kernel recorded.
   */
  onAheadDropped: ((runIds: string[]) => void) | null = null;
  /** Batches sent ahead, and cells whose result came from one or was thrown away (tests, benchmarks). */
  readonly stats = { batches: 0, aheadUsed: 0, aheadDropped: 0 };
  private requests = new Map<number, (v: { values: Record<string, unknown>; missing: string[]; error?: string }) => void>();
  private nextId = 1;
  private ready: Promise<void> | null = null;
  /** Set when the process died; the kernel reads it to decide whether to start a new runtime. */
  death: string | null = null;
  onDeath: ((reason: string) => void) | null = null;
  layers: string[] = [];

  constructor(private readonly opts: JsRuntimeOptions) {}

  start(): Promise<void> {
    if (this.ready) return this.ready;
    const heap = this.opts.memoryMb;
    const child = new SandboxedChild({
      cwd: this.opts.cwd,
      maxFrameBytes: this.opts.maxFrameBytes,
      launch: {
        isolateNetwork: true,
        uid: this.opts.uid,
        limits: {
          // Node reserves about 1 GiB of address space before running anything; the rest is what
          // cells may use, heap and ArrayBuffers alike.
          addressSpace: (1024 + 2 * heap) * 1024 * 1024,
          cpuSeconds: 24 * 3600,
          processes: 256,
          openFiles: 256,
          fileSize: 0,
        },
        nodeArgs: [
          '--experimental-permission',
          `--allow-fs-read=${RUNNER_DIR}${path.sep}*`,
          `--allow-fs-read=${nodeModules}${path.sep}*`,
          `--max-old-space-size=${heap}`,
          '--no-warnings',
          path.join(RUNNER_DIR, 'js-runner.mjs'),
        ],
      },
      init: { type: 'init', libs: libraryUrls() },
      onMessage: (m) => this.onMessage(m),
      describeExit: (exit) => deathReason(exit, this.opts.memoryMb),
    });
    this.child = child;
    this.layers = child.layers;
    this.ready = child.ready;
    child.death.then((reason) => {
      this.death = reason;
      this.ahead = [];
      const r = this.run_;
      this.run_ = null;
      if (r) {
        r.deadline.stop();
        r.resolve({ ok: false, defines: [], outputs: [], fatal: reason, error: { type: 'error', name: 'KernelError', message: reason } });
      }
      for (const cb of this.requests.values()) cb({ values: {}, missing: [], error: reason });
      this.requests.clear();
      this.onDeath?.(reason);
    });
    return this.ready;
  }

  get alive(): boolean {
    return !!this.child?.running && this.death === null;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  private onMessage(m: Record<string, unknown>): void {
    switch (m.type) {
      case 'stream':
        if (m.name !== 'stdout' && m.name !== 'stderr') return;
        if (this.run_ && m.runId === this.run_.wire) this.run_.onStream(m.name, String(m.text ?? ''));
        else this.ahead.find((a) => a.wire === m.runId)?.streams.push([m.name, String(m.text ?? '')]);
        return;
      case 'running': {
        const r = this.run_;
        if (!r || m.runId !== r.wire) return;
        r.deadline.restart(this.opts.timeoutMs + RUN_SLACK_MS);
        r.cpuAtRunning = this.child?.cpuState()?.cpuMs ?? null;
        return;
      }
      case 'armed': {
        const r = this.run_;
        if (r && m.runId === r.wire) r.armed = { at: Date.now(), cpuMs: this.child?.cpuState()?.cpuMs ?? null };
        return;
      }
      case 'async': {
        if (this.run_ && m.runId === this.run_.wire) this.run_.syncDone = true;
        return;
      }
      case 'done':
      case 'error': {
        const outcome: RunOutcome = m.type === 'done'
          ? { ok: true, defines: asStrings(m.defines), outputs: Array.isArray(m.outputs) ? (m.outputs as CellOutput[]) : [], full: m.full }
          : { ok: false, defines: [], outputs: [], error: sanitizeError(m.error) };
        const r = this.run_;
        if (!r || m.runId !== r.wire) {
          // A cell of the batch sent ahead, before the kernel asks for it.
          const i = this.ahead.findIndex((a) => a.wire === m.runId && !a.outcome);
          if (i < 0) return;
          this.ahead[i]!.outcome = outcome;
          // The batch stopped at this failure: the cells after it did not run.
          if (!outcome.ok) this.truncateAhead(i + 1);
          return;
        }
        this.run_ = null;
        r.deadline.stop();
        if (!outcome.ok && this.ahead.length) {
          // A cell of a batch failed: the runner stopped there, the cells after it never ran.
          this.truncateAhead(0);
          this.aheadBatch = null;
        }
        r.resolve(outcome);
        return;
      }
      case 'sample': {
        const id = m.id;
        const reply = (body: Record<string, unknown>) => this.child?.send({ type: 'sampled', id, ...body });
        const sample = this.opts.sample;
        if (!sample) return reply({ error: 'volume sampling is not available in this kernel' });
        const params: Record<string, string> = {};
        if (m.params && typeof m.params === 'object') for (const [k, v] of Object.entries(m.params)) if (v !== undefined && v !== null) params[k] = String(v);
        this.hostCall(sample(String(m.op), String(m.dataset), String(m.layer), params)).then(
          (result) => reply({ result }),
          (e: unknown) => reply({ error: e instanceof Error ? e.message : String(e) }),
        );
        return;
      }
      case 'job': {
        const id = m.id;
        const reply = (body: Record<string, unknown>) => this.child?.send({ type: 'sampled', id, ...body });
        const job = this.opts.job;
        if (!job) return reply({ error: 'analysis jobs are not available in this kernel' });
        const args = m.args && typeof m.args === 'object' && !Array.isArray(m.args) ? (m.args as Record<string, unknown>) : {};
        this.hostCall(job(String(m.op), args)).then(
          (result) => reply({ result }),
          (e: unknown) => reply({ error: e instanceof Error ? e.message : String(e) }),
        );
        return;
      }
      case 'values': {
        const cb = this.requests.get(Number(m.id));
        this.requests.delete(Number(m.id));
        cb?.({ values: (m.values ?? {}) as Record<string, unknown>, missing: asStrings(m.missing), error: typeof m.error === 'string' ? m.error : undefined });
        return;
      }
    }
  }

  /** Runs one compiled cell. Never rejects: failures are outcomes. */
  async run(input: RunInput, onStream: Pending['onStream']): Promise<RunOutcome> {
    try {
      await this.start();
      if (this.death) throw new Error(this.death);
    } catch (e) {
      const reason = this.death ?? (e as Error).message;
      return { ok: false, defines: [], outputs: [], fatal: reason, error: { type: 'error', name: 'KernelError', message: reason } };
    }
    if (this.run_) throw new Error('one cell at a time');
    const head = this.ahead[0];
    if (head && head.runId === input.runId && head.code === input.code && sameNames(head.inputs, input.inputs)) {
      // Sent ahead in a batch: its result is here, or on its way (no round trip).
      this.ahead.shift();
      if (!this.ahead.length) this.aheadBatch = null;
      this.stats.aheadUsed++;
      for (const [name, text] of head.streams) onStream(name, text);
      if (head.outcome) return head.outcome;
      return new Promise<RunOutcome>((resolve) => {
        const deadline = new RunDeadline(this.opts.timeoutMs + START_SLACK_MS, Math.max(HOST_WAIT_CAP_MS, 10 * this.opts.timeoutMs), () => this.hardTimeout());
        this.run_ = { runId: input.runId, resolve, onStream, deadline, cpuAtRunning: this.aheadCpuMs, syncDone: false, interrupted: false, watchdog: false, armed: null, ahead: true, wire: head.wire };
      });
    }
    // Anything else than the next cell sent ahead: the batch's later results no longer hold.
    this.dropAhead();
    return new Promise<RunOutcome>((resolve) => {
      // The runner's own vm timeout stops a synchronous loop softly (values kept); this hard
      // deadline only catches a runner that does not answer. It starts generous (the run message
      // and the cell's compilation come first, seconds on a starved machine) and is re-armed
      // when the runner says it started executing.
      const deadline = new RunDeadline(this.opts.timeoutMs + START_SLACK_MS, Math.max(HOST_WAIT_CAP_MS, 10 * this.opts.timeoutMs), () => this.hardTimeout());
      this.run_ = { runId: input.runId, resolve, onStream, deadline, cpuAtRunning: null, syncDone: false, interrupted: false, watchdog: input.watchdog, armed: null, wire: input.runId };
      this.child!.send({ type: 'run', ...input, timeoutMs: this.opts.timeoutMs });
    });
  }

  /**
   * Sends consecutive cells that neither loop nor call anything ahead, as one batch: the runner
   * runs them one after another with no round trip in between, and run() then finds each result
   * waiting (a chain of trivial cells in one round trip instead of one per cell). Results hold only
   * while the kernel asks for exactly these cells in this order with these sources and inputs: any
   * other run, a set, delete, cancel or interrupt throws the rest away (and stops the batch), and
   * those cells run again normally. Values the runner defined for cells thrown away are overwritten
   * when they run again; the kernel's own record of live values is what it trusts. Only when idle.
   */
  /** Results still expected from the batch sent ahead (runAhead sends another only at 0). */
  get expecting(): number {
    return this.ahead.length;
  }

  runAhead(inputs: RunInput[]): void {
    if (inputs.length < 2 || this.run_ || this.ahead.length || !this.child || !this.alive) return;
    const batchId = `b${++this.stats.batches}`;
    this.aheadBatch = batchId;
    // The runner's CPU when the batch went: what its deadline counts from (read once per batch).
    this.aheadCpuMs = this.child.cpuState()?.cpuMs ?? null;
    this.ahead = inputs.map((i, index) => ({ runId: i.runId, wire: `${i.runId}~${batchId}`, index, code: i.code, inputs: i.inputs, outcome: null, streams: [] }));
    this.child.send({ type: 'batch', batchId, timeoutMs: this.opts.timeoutMs, runs: inputs.map(({ code, shifts, inputs: names, filename }, i) => ({ runId: this.ahead[i]!.wire, code, shifts, inputs: names, filename })) });
  }

  /** Throws away the results still expected from the batch sent ahead, and stops it. */
  private dropAhead(): void {
    if (!this.ahead.length) return;
    const dropped = this.ahead.map((a) => a.runId);
    // Only from the first cell thrown away: one the kernel already waits for must still be answered.
    const from = this.ahead[0]!.index;
    this.truncateAhead(0);
    this.onAheadDropped?.(dropped);
    if (this.aheadBatch) this.child?.send({ type: 'cancel-batch', batchId: this.aheadBatch, from });
    this.aheadBatch = null;
  }

  private truncateAhead(keep: number): void {
    this.stats.aheadDropped += Math.max(0, this.ahead.length - keep);
    this.ahead.length = Math.min(this.ahead.length, keep);
  }

  /** A call the running cell made to the server: its time does not count against the cell's limit (run-deadline.ts). */
  private hostCall<T>(call: Promise<T>): Promise<T> {
    const d = this.run_?.deadline;
    if (!d) return call;
    d.callStarted();
    return call.finally(() => d.callEnded());
  }

  private hardTimeout(): void {
    // A starved runner is waited for where a soft stop is coming (run-deadline.ts): killing it
    // would lose every value for nothing. The deadline's cap still holds.
    const r = this.run_;
    const now = this.child?.cpuState();
    if (r && waitForStarvedRunner({ syncDone: r.syncDone, interrupted: r.interrupted, runnable: now?.state === 'R', cpuSinceRunningMs: now && r.cpuAtRunning !== null ? now.cpuMs - r.cpuAtRunning : null, budgetMs: this.opts.timeoutMs + RUN_SLACK_MS }) && r.deadline.extend(STARVED_RECHECK_MS)) return;
    const secs = Math.round(this.opts.timeoutMs / 100) / 10;
    // As in interrupt(): an answer already in the pipe is read before the kill (timers run before I/O).
    const child = this.child;
    setImmediate(() => {
      if (r && this.run_ !== r) return;
      child?.kill(`timed out after ${secs} s (the kernel was restarted; values of other cells were lost)`);
    });
  }

  /** Abandons a run softly (superseded): its result is ignored; the process keeps its values. */
  cancel(runId: string): void {
    const r = this.run_;
    if (!r || r.runId !== runId) return;
    this.dropAhead();
    // A cell of a batch may have run there before the batch was called off.
    if (r.ahead) this.onAheadDropped?.([r.runId]);
    this.child?.send({ type: 'cancel', runId: r.wire });
    this.run_ = null;
    r.deadline.stop();
    r.resolve({ ok: false, defines: [], outputs: [], cancelled: true });
  }

  /**
   * Interrupt. The runner is asked with a message, which it reads between two turns of its loop:
   * that abandons a cell waiting on an await (or one not yet past its synchronous part once it
   * gets there). A cell's synchronous part is stopped by SIGINT, sent only where Node's watchdog
   * handles it (`sigintSafe`: after the runner said `armed`; elsewhere SIGINT kills the runner) —
   * which a runner waiting for the CPU may reach late: nothing is signalled, and nothing killed,
   * before then (but within `maxWaitMs`). After the signal (or the request, for a run with nothing
   * to signal) a runner that answers stops within milliseconds of its own CPU time. It is killed
   * (its values lost) when it has had `cpuGraceMs` of CPU since and still runs the cell, or when
   * after `graceMs` it sleeps where no signal reaches it (a blocking native call) — but not while
   * it waits to be scheduled: on a busy machine (cells run at a lower priority) a wall-clock
   * deadline would kill a runner that was simply never given the CPU to stop. The CPU is the whole
   * runner's: a spinning cell's main thread keeps adding to it until Node's signal thread, which
   * stops it, gets a core — on a loaded machine that took over 2 s of the runner's CPU (stress
   * run), hence 5 s. Where /proc cannot be read, after `graceMs`; always within `maxWaitMs`.
   */
  interrupt(opts: { graceMs?: number; cpuGraceMs?: number; maxWaitMs?: number; sigintCpuMs?: number; sigintWaitMs?: number } = {}): void {
    this.dropAhead();
    const r = this.run_;
    const child = this.child;
    if (!r || !child || r.interrupted) return;
    // A cell of the batch the runner has not answered for: dropAhead() called off only the cells
    // after it, so the runner still answers it (the request stops it, or it ran already): the
    // ordinary interrupt below, with its grace and kill for a cell that does not stop (a getter
    // that loops). Its values are not trusted either way.
    if (r.ahead) this.onAheadDropped?.([r.runId]);
    const { graceMs = 4000, cpuGraceMs = 5000, maxWaitMs = 60_000, sigintCpuMs = SIGINT_CPU_MS, sigintWaitMs = SIGINT_WAIT_MS } = opts;
    r.interrupted = true;
    const requested = Date.now();
    child.send({ type: 'interrupt', runId: r.wire });
    // From when the runner has been asked all it will be (the signal, if its run needs one).
    let since: { at: number; cpu: { cpuMs: number } | null } | null = r.watchdog ? null : { at: requested, cpu: child.cpuState() };
    const kill = () =>
      // Timers run before I/O in Node's loop: a runner that stopped and answered, and now sleeps,
      // looks exactly like one stuck where no signal reaches — unless its answer, already in the
      // pipe, is read first. So the kill waits for this turn's I/O (a busy kernel's loop lags).
      setImmediate(() => {
        if (this.run_ === r && child.running) child.kill('interrupted (the cell did not stop; the kernel was restarted and values were lost)');
      });
    const check = (): void => {
      if (this.run_ !== r || !child.running) return;
      const now = child.cpuState();
      if (!since) {
        if (Date.now() - requested >= maxWaitMs) return void kill();
        // Its synchronous part returned without a signal: the message does the rest.
        if (r.syncDone) since = { at: Date.now(), cpu: now };
        else {
          const armed = r.armed;
          const safe = sigintSafe({
            armed: !!armed, syncDone: r.syncDone, sinceArmedMs: armed ? Date.now() - armed.at : 0,
            cpuSinceArmedMs: armed && armed.cpuMs !== null && now ? now.cpuMs - armed.cpuMs : null, state: now?.state ?? null, minCpuMs: sigintCpuMs, minWaitMs: sigintWaitMs,
          });
          if (!safe) return void setTimeout(check, SIGINT_POLL_MS).unref();
          // Not before this turn's I/O either: `async`, or the run's end, may be waiting in the pipe.
          return void setImmediate(() => {
            if (this.run_ !== r || !child.running) return;
            if (!r.syncDone) child.signal('SIGINT');
            since = { at: Date.now(), cpu: child.cpuState() };
            setTimeout(check, 200).unref();
          });
        }
      }
      const verdict = interruptVerdict({ waitedMs: Date.now() - since.at, cpuMs: since.cpu && now ? now.cpuMs - since.cpu.cpuMs : null, state: now?.state ?? null, graceMs, cpuGraceMs, maxWaitMs: Math.max(0, maxWaitMs - (since.at - requested)) });
      if (verdict === 'kill') return void kill();
      setTimeout(check, 200).unref();
    };
    setTimeout(check, since ? 200 : SIGINT_POLL_MS).unref();
  }

  /** Values of `names` (for SQL parameters). */
  async get(names: string[]): Promise<{ values: Record<string, unknown>; missing: string[]; error?: string }> {
    await this.start();
    if (this.death) return { values: {}, missing: [], error: this.death };
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.requests.set(id, resolve);
      this.child!.send({ type: 'get', id, names });
    });
  }

  set(name: string, value: unknown): void {
    this.dropAhead();
    this.child?.send({ type: 'set', name, value });
  }

  delete(names: string[]): void {
    if (!names.length) return;
    this.dropAhead();
    this.child?.send({ type: 'delete', names });
  }

  dispose(): Promise<void> {
    this.onDeath = null;
    if (!this.child) return Promise.resolve();
    this.child.kill('stopped');
    return this.child.exited.then(() => {});
  }
}

const sameNames = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

const asStrings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function sanitizeError(e: unknown): ErrorOutput {
  const o = (e && typeof e === 'object' ? e : {}) as Record<string, unknown>;
  const str = (v: unknown, max: number) => (typeof v === 'string' ? v.slice(0, max) : undefined);
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const out: ErrorOutput = { type: 'error', name: str(o.name, 200) ?? 'Error', message: str(o.message, 4000) ?? String(e) };
  const line = num(o.line);
  const column = num(o.column);
  const stack = str(o.stack, 4000);
  if (line !== undefined) out.line = line;
  if (column !== undefined) out.column = column;
  if (stack) out.stack = stack;
  return out;
}
