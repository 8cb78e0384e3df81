/**
 * A sandboxed child process speaking length-prefixed JSON frames on stdin/stdout. Everything it
 * sends is untrusted: frames are size-capped (a child that sends an oversized or malformed frame
 * is killed), stderr is kept only as a short tail for diagnostics.
 * Effects: spawns and kills a process.
 */
import fs from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { encodeFrame, frameReader } from './runner/wire.mjs';
import { launchCommand, minimalEnv, type LaunchSpec } from './sandbox.ts';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Last few KiB of stderr. */
  stderr: string;
  /** Why the supervisor killed it, if it did. */
  killedFor: string | null;
}

export interface ChildOptions {
  launch: LaunchSpec;
  cwd: string;
  maxFrameBytes: number;
  /** First message sent; the child answers `{ type: 'ready' }` when it serves requests. */
  init: unknown;
  onMessage: (msg: Record<string, unknown>) => void;
  /** Turns an exit into the reason shown to people. */
  describeExit: (exit: ChildExit) => string;
}

const STDERR_TAIL = 8 * 1024;
/** Linux's USER_HZ: /proc reports CPU time in these ticks (100 on every mainstream platform). */
const CLOCK_TICKS = 100;

export class SandboxedChild {
  readonly proc: ChildProcess;
  readonly layers: string[];
  readonly exited: Promise<ChildExit>;
  /** Resolves when the child said it is ready; rejects if it died first. */
  readonly ready: Promise<void>;
  /** Resolves with the reason once the child is gone. */
  readonly death: Promise<string>;
  private stderr = '';
  private killedFor: string | null = null;
  private alive = true;

  constructor(opts: ChildOptions) {
    const { cmd, args, layers } = launchCommand(opts.launch);
    this.layers = layers;
    this.proc = spawn(cmd, args, { cwd: opts.cwd, env: minimalEnv(opts.cwd), stdio: ['pipe', 'pipe', 'pipe'], detached: false });
    let onReady!: () => void;
    const onMessage = (m: Record<string, unknown>) => (m.type === 'ready' ? onReady() : opts.onMessage(m));
    this.proc.stdout!.on('data', frameReader(onMessage, (e) => this.kill(`protocol violation: ${e.message}`), opts.maxFrameBytes));
    this.proc.stderr!.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString('utf8')).slice(-STDERR_TAIL);
    });
    this.proc.stdin!.on('error', () => {}); // EPIPE when the child died; the exit handler reports it
    this.exited = new Promise((resolve) => {
      this.proc.once('error', (e) => {
        this.alive = false;
        resolve({ code: null, signal: null, stderr: String(e), killedFor: this.killedFor });
      });
      this.proc.once('exit', (code, signal) => {
        this.alive = false;
        // Let stderr drain so the tail holds the reason (e.g. V8's out-of-memory report).
        setTimeout(() => resolve({ code, signal, stderr: this.stderr, killedFor: this.killedFor }), 20);
      });
    });
    this.death = this.exited.then(opts.describeExit);
    this.ready = new Promise<void>((resolve, reject) => {
      onReady = resolve;
      this.exited.then((exit) => reject(new Error(`${opts.describeExit(exit)}: ${exit.stderr.trim().split('\n').slice(-3).join(' ')}`)));
    });
    this.ready.catch(() => {});
    this.send(opts.init);
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  /**
   * CPU time the child has used (user + system, ms) and its scheduler state ('R' runnable, 'S'
   * sleeping, 'D' in I/O, …), from /proc on Linux; null where that cannot be read. Lets a
   * supervisor tell a child that ran and did not stop, or sleeps where no signal reaches it, from
   * one the machine has not scheduled yet.
   */
  cpuState(): { cpuMs: number; state: string } | null {
    if (!this.alive || !this.proc.pid) return null;
    const fields = (stat: string) => stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    try {
      // Fields after the command name (which may hold spaces) start at the last ')'.
      const f = fields(fs.readFileSync(`/proc/${this.proc.pid}/stat`, 'utf8'));
      const ticks = Number(f[11]) + Number(f[12]); // utime, stime of every thread (fields 14 and 15)
      if (!Number.isFinite(ticks)) return null;
      // Runnable when any thread is: a main thread asleep in a native wait is woken by Node's
      // signal thread, which on a busy machine may itself still be waiting for a CPU.
      let state = f[0] ?? '?';
      if (state !== 'R') {
        try {
          for (const t of fs.readdirSync(`/proc/${this.proc.pid}/task`)) {
            if (fields(fs.readFileSync(`/proc/${this.proc.pid}/task/${t}/stat`, 'utf8'))[0] === 'R') {
              state = 'R';
              break;
            }
          }
        } catch {
          // a thread gone meanwhile: the process's own state stands
        }
      }
      return { cpuMs: (ticks * 1000) / CLOCK_TICKS, state };
    } catch {
      return null;
    }
  }

  get running(): boolean {
    return this.alive;
  }

  send(msg: unknown): void {
    if (this.alive) this.proc.stdin!.write(encodeFrame(msg));
  }

  signal(sig: NodeJS.Signals): void {
    if (this.alive) this.proc.kill(sig);
  }

  /** Kills the child (SIGKILL) and records why. */
  kill(reason: string): void {
    if (!this.alive) return;
    this.killedFor ??= reason;
    this.proc.kill('SIGKILL');
  }
}
