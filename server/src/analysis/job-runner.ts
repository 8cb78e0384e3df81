/**
 * What every long job of the server (a calcium analysis, a TIFF import) shares: the errors a request
 * to start one gets, and the child process that does its work — a Node process under `nice` with its
 * own heap limit and a wall-clock limit, talking in JSON lines on stdout (`progress` with a stage,
 * frames done and total, then `done` or `error`), so a long job neither blocks the sync server's
 * event loop nor competes with people's typing. Progress is thinned to one report per 400 ms (the
 * first and the last of a stage always pass) and given an estimate of the time left.
 * Effects: spawns processes, timers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { readJob, type JobProgress } from '@plexus/shared';
import type * as Y from 'yjs';

/** A request to start or stop a job that is refused: an HTTP status, a code and a message for the person. */
export class JobError extends Error {
  override readonly name = 'JobError';
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

/** True for a JobError (by name: module copies under test runners break `instanceof`). */
export const isJobError = (e: unknown): e is JobError => e instanceof Error && e.name === 'JobError';

/** Heap of the job process (MiB), wall-clock limit (ms), nice level (0–19). */
export interface JobProcessLimits {
  memoryMb: number;
  timeoutMs: number;
  nice: number;
}

/** The last `done` or `error` line of a job process. */
export interface JobOutcome {
  type: string;
  [k: string]: unknown;
}

export interface JobProcessEnd {
  /** Exit code; -1 when it could not start, -2 when a signal ended it. */
  code: number | null;
  outcome: JobOutcome | null;
  /** The last 4000 characters of its stderr. */
  stderr: string;
}

export interface JobProcess {
  child: ChildProcess;
  /** Resolves when the process has exited and its output is closed. */
  end: Promise<JobProcessEnd>;
}

/**
 * Starts `node --import tsx <main> <specFile>` under the limits. `onProgress` gets the thinned
 * progress; `onTimeout` runs just before a process past its time limit is killed (SIGKILL). The
 * process's environment is PATH and `env` (secrets it needs go there, never in its spec file).
 */
export function runJobProcess(
  main: string,
  specFile: string,
  limits: JobProcessLimits,
  on: { progress: (p: JobProgress) => void; timeout: () => void },
  env: Record<string, string> = {},
): JobProcess {
  const nodeArgs = [`--max-old-space-size=${limits.memoryMb}`, '--import', 'tsx', main, specFile];
  const cmd = limits.nice > 0 && hasNice() ? 'nice' : process.execPath;
  const args = cmd === 'nice' ? ['-n', String(limits.nice), process.execPath, ...nodeArgs] : nodeArgs;
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, PATH: process.env.PATH ?? '', NODE_OPTIONS: '' } });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr = (stderr + b.toString('utf8')).slice(-4000)));
  let outcome: JobOutcome | null = null;
  let buf = '';
  let lastWrite = 0;
  const stageStart = new Map<string, number>();
  child.stdout!.on('data', (b: Buffer) => {
    buf += b.toString('utf8');
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let m: { type: string; stage?: string; done?: number; total?: number; [k: string]: unknown };
      try {
        m = JSON.parse(line);
      } catch {
        continue;
      }
      if (m.type === 'progress' && typeof m.stage === 'string') {
        const now = Date.now();
        const first = !stageStart.has(m.stage);
        if (first) stageStart.set(m.stage, now);
        const done = Number(m.done) || 0;
        const total = Math.max(1, Number(m.total) || 1);
        const elapsed = (now - stageStart.get(m.stage)!) / 1000;
        const eta = done > 0 && elapsed > 0.5 ? Math.round((elapsed / done) * (total - done)) : null;
        if (now - lastWrite < 400 && done !== total && !first) continue;
        lastWrite = now;
        on.progress({ stage: m.stage, done, total, eta, at: now });
      } else if (m.type === 'done' || m.type === 'error') outcome = m;
    }
  });
  const timeout = setTimeout(() => {
    on.timeout();
    child.kill('SIGKILL');
  }, limits.timeoutMs);
  const end = new Promise<number | null>((resolve) => {
    child.on('error', (e) => {
      stderr += String(e.message);
      resolve(-1);
    });
    child.on('close', (c, sig) => resolve(c ?? (sig ? -2 : null)));
  }).then((code) => {
    clearTimeout(timeout);
    return { code, outcome, stderr };
  });
  return { child, end };
}

/** True when the job ran out of heap (its stderr says so). */
export const outOfMemory = (stderr: string): boolean => /heap out of memory|Allocation failed/i.test(stderr);

let niceWorks: boolean | null = null;
function hasNice(): boolean {
  if (niceWorks === null) {
    try {
      niceWorks = fs.existsSync('/usr/bin/nice') || fs.existsSync('/bin/nice');
    } catch {
      niceWorks = false;
    }
  }
  return niceWorks;
}

/** A job that holds a slot: its process once started, and why it was stopped (null while not). */
export interface JobSlot {
  ws: string;
  id: string;
  child: ChildProcess | null;
  stopped: string | null;
}

/**
 * The queue and running slots of one kind of job, shared by analyses and imports: at most
 * `concurrent` run at once, others wait in order; a stop ends a queued job at once (`dropped`) or
 * signals a running one's process; stop signals people write in the live documents are polled
 * while any job is queued or running.
 */
export class JobSlots<Q extends { ws: string; id: string }> {
  private readonly queue: Q[] = [];
  private readonly running = new Map<string, JobSlot>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly o: {
      concurrent: number;
      live: (ws: string) => Y.Doc | null;
      /** Runs a job in its slot (the slot is freed when this settles). */
      run: (job: Q, slot: JobSlot) => Promise<void>;
      /** Ends a job stopped before it ran. */
      dropped: (job: Q, reason: string) => Promise<void>;
    },
  ) {}

  /** Queues a job; it starts when a slot is free. */
  add(job: Q): void {
    this.queue.push(job);
    this.pump();
    this.watchStops();
  }

  /** Stops a job (queued or running); false when it is not here. */
  stop(ws: string, id: string, reason: string): boolean {
    const q = this.queue.findIndex((j) => j.ws === ws && j.id === id);
    if (q >= 0) {
      const [job] = this.queue.splice(q, 1);
      void this.o.dropped(job!, reason).catch(() => {});
      return true;
    }
    const r = this.running.get(id);
    if (!r || r.ws !== ws) return false;
    r.stopped = reason;
    r.child?.kill('SIGTERM');
    return true;
  }

  /** Jobs running or queued. */
  active(): string[] {
    return [...this.running.keys(), ...this.queue.map((j) => j.id)];
  }

  /** Ends queued jobs and stops running ones (server shutdown). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const j of this.queue.splice(0)) await this.o.dropped(j, 'the server stopped').catch(() => {});
    for (const r of this.running.values()) {
      r.stopped = 'the server stopped';
      r.child?.kill('SIGTERM');
    }
  }

  private pump(): void {
    while (this.running.size < this.o.concurrent && this.queue.length) {
      const job = this.queue.shift()!;
      const slot: JobSlot = { ws: job.ws, id: job.id, child: null, stopped: null };
      this.running.set(job.id, slot);
      void this.o.run(job, slot).finally(() => {
        this.running.delete(job.id);
        this.pump();
      });
    }
  }

  private watchStops(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      const all = [...this.running.values(), ...this.queue];
      if (!all.length) {
        clearInterval(this.timer!);
        this.timer = null;
        return;
      }
      for (const j of all) {
        const doc = this.o.live(j.ws);
        const stop = doc ? readJob(doc, j.id)?.stop : null;
        if (stop) this.stop(j.ws, j.id, `stopped by ${stop.name ?? stop.by}`);
      }
    }, 300);
    this.timer.unref();
  }
}
