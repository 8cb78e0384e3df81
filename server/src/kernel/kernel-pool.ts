/**
 * The kernels one process runs: a WorkspaceKernel per workspace it was asked for, each with its
 * own uid slot (when the process runs as root) and a directory `<kernelDir>/<workspace>/` with
 * `scratch/` (children's cwd), `results/` (large outputs) and `tables/` (uploaded tables,
 * read-only files). The sync server's kernel manager (manager.ts) and a kernel process of its own
 * (kernel-service.ts) both run their kernels through one of these; what differs is who says when
 * a workspace needs its kernel, and how the kernel reaches the document: a kernel process's
 * kernels connect to the server (`serverUrl`, `token`), the server's serve its live documents in
 * place (`ensure(id, lend)`).
 * Effects: starts and stops kernels (network, processes, files), changes file modes in the data dir.
 */
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import type * as Y from 'yjs';
import type { Logger } from '../log.ts';
import type { VolumeSampler } from './js-runtime.ts';
import { WorkspaceKernel, type KernelLimits, type WorkspaceJobCaller } from './workspace-kernel.ts';
import { sandboxCaps } from './sandbox.ts';

export interface KernelPoolOptions {
  dataDir: string;
  /** Several processes share the data dir: leftovers of other processes' uploads are not cleared at start. */
  sharedDataDir?: boolean;
  /** The service token a workspace's kernel connects with (kernels that connect: see `serverUrl`). */
  token?: (ws: string) => string;
  log: Logger;
  limits: KernelLimits;
  /** Chains of trivial JavaScript cells go to the runner as one batch (default; `PLEXUS_KERNEL_AHEAD=0`: one round trip per cell). */
  runAhead?: boolean;
  /** Fast cells' runs written as one plain value (default; `PLEXUS_KERNEL_PLAIN_RUNS=0`: as a map). */
  plainRuns?: boolean;
  /** First uid of the per-workspace range (root only). */
  uidBase?: number;
  /** Most kernels at once (each has its own uid slot); default: no limit. */
  capacity?: number;
  /** Server-side volume sampling for the cells of a workspace. */
  sample?: (ws: string) => VolumeSampler;
  /** Analysis jobs for cells. */
  jobs?: WorkspaceJobCaller;
}

const UID_BASE = 200_000;

/** A document lent to a kernel in the same process (the sync server's live document). */
export interface LentDocument {
  doc: Y.Doc;
  /** Called once, after the kernel's last write. */
  release: () => Promise<void>;
}

export class KernelPool {
  private readonly kernels = new Map<string, { kernel: WorkspaceKernel; started: Promise<void>; slot: number }>();
  /** The sync server kernels connect to (unless a document is lent to them); none connect before it is known. */
  serverUrl: string | null = null;
  private closing = false;
  readonly kernelDir: string;

  constructor(private readonly opts: KernelPoolOptions) {
    this.kernelDir = chooseKernelDir(opts.dataDir, opts.log);
    fs.mkdirSync(this.kernelDir, { recursive: true, mode: 0o755 });
    fs.chmodSync(this.kernelDir, 0o755);
    if (sandboxCaps().setpriv) protectDataDir(opts.dataDir);
    const why = sandboxCaps().uidUnavailable;
    if (why) opts.log.warn(`kernel sandbox: ${why}`);
    // Uploads cut short by a crash leave their temporary files here: nothing of them may remain.
    if (!opts.sharedDataDir) for (const ws of fs.readdirSync(this.kernelDir)) fs.rmSync(path.join(this.kernelDir, ws, 'uploads-tmp'), { recursive: true, force: true });
  }

  /** Directory of a workspace's kernel files. */
  workspaceDir(id: string): string {
    return path.join(this.kernelDir, id);
  }

  /** Directory of a workspace's uploaded tables. */
  tablesDir(id: string): string {
    return path.join(this.workspaceDir(id), 'tables');
  }

  /** Kernels running (or starting). */
  get running(): number {
    return this.kernels.size;
  }

  /** Most kernels at once. */
  get capacity(): number {
    return this.opts.capacity ?? Infinity;
  }

  /** Workspaces whose kernel runs (or starts) here. */
  get workspaces(): string[] {
    return [...this.kernels.keys()];
  }

  /** The running kernel of a workspace, if any. */
  get(id: string): WorkspaceKernel | undefined {
    return this.kernels.get(id)?.kernel;
  }

  /**
   * Starts the kernel of a workspace unless it runs. Resolves when it serves requests. With `lend`
   * the kernel serves the document it gives (called only when a kernel starts); otherwise it
   * connects to `serverUrl`.
   */
  ensure(id: string, lend?: () => LentDocument): Promise<void> {
    const have = this.kernels.get(id);
    if (have) return have.started;
    if ((!lend && (!this.serverUrl || !this.opts.token)) || this.closing || this.kernels.size >= this.capacity) return Promise.resolve();
    const used = new Set([...this.kernels.values()].map((k) => k.slot));
    let slot = 0;
    while (used.has(slot)) slot++;
    const dir = this.workspaceDir(id);
    for (const sub of ['scratch', 'results', 'tables']) fs.mkdirSync(path.join(dir, sub), { recursive: true, mode: 0o755 });
    fs.chmodSync(dir, 0o755);
    fs.chmodSync(path.join(dir, 'scratch'), 0o755);
    const lent = lend?.();
    const token = this.opts.token;
    let kernel: WorkspaceKernel;
    try {
      kernel = new WorkspaceKernel({
        workspaceId: id,
        ...(lent ? { doc: lent.doc, release: lent.release } : { serverUrl: this.serverUrl!, token: () => token!(id) }),
        dir,
        tablesDir: this.tablesDir(id),
        uid: sandboxCaps().setpriv ? (this.opts.uidBase ?? UID_BASE) + slot : undefined,
        limits: this.opts.limits,
        runAhead: this.opts.runAhead,
        plainRuns: this.opts.plainRuns,
        log: this.opts.log,
        sample: this.opts.sample?.(id),
        jobs: this.opts.jobs,
      });
    } catch (e) {
      // Nothing started: the document lent to it goes back at once.
      if (lent) void lent.release();
      this.opts.log.error('kernel failed to start', { ws: id, err: e });
      return Promise.resolve();
    }
    const started = kernel.start().then(
      () => this.opts.log.info('kernel started', { ws: id }),
      (e) => {
        this.opts.log.error('kernel failed to start', { ws: id, err: e });
        this.kernels.delete(id);
        void kernel.stop();
      },
    );
    this.kernels.set(id, { kernel, started, slot });
    return started;
  }

  /** Stops a workspace's kernel (no-op when none runs). */
  async stop(id: string): Promise<void> {
    const k = this.kernels.get(id);
    if (!k) return;
    this.kernels.delete(id);
    await k.kernel.stop();
    await k.started;
    this.opts.log.info('kernel stopped', { ws: id });
  }

  /** Stops every kernel (shutdown). */
  async closeAll(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.kernels.keys()].map((id) => this.stop(id)));
  }
}

/**
 * Kernel children run as other uids and must reach `<dataDir>/kernel`: the data dir becomes
 * traversable (0711: nobody can list it), and the files that must stay private become 0600.
 */
/** The first ancestor of `dir` that other users cannot traverse (no o+x), or null. */
export function closedAncestor(dir: string): string | null {
  let p = path.resolve(dir);
  for (;;) {
    const parent = path.dirname(p);
    if (parent === p) return null;
    p = parent;
    try {
      if ((fs.statSync(p).mode & 0o001) === 0) return p;
    } catch {
      return null;
    }
  }
}

/**
 * Where kernel files live: `<dataDir>/kernel`, unless the sandbox runs cells as other users and a
 * folder above the data directory is closed to them (say the repository sits in `/root`, mode
 * 0700) — then the cells' processes could not reach their scratch folder or the uploaded tables,
 * and every SQL cell over an upload would fail. Then a root-owned folder outside is used
 * (`/var/lib/plexus/kernel-<hash of the data directory>`), and the log says so. Opening the
 * closed folder to everyone instead would expose whatever else it holds.
 */
export function chooseKernelDir(dataDir: string, log: Logger): string {
  const inside = path.join(dataDir, 'kernel');
  if (!sandboxCaps().setpriv) return inside;
  const closed = closedAncestor(dataDir);
  if (!closed) return inside;
  const outside = path.join('/var/lib/plexus', `kernel-${createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 12)}`);
  if (closedAncestor(outside)) return inside;
  log.warn('kernel files are kept outside the data directory: sandboxed cells run as other users and cannot enter it', { closed, kernelDir: outside });
  return outside;
}

function protectDataDir(dataDir: string): void {
  const st = fs.statSync(dataDir);
  if ((st.mode & 0o001) === 0) fs.chmodSync(dataDir, (st.mode & 0o770) | 0o711);
  for (const f of fs.readdirSync(dataDir)) {
    if (f === 'kernel') continue;
    const p = path.join(dataDir, f);
    const s = fs.statSync(p);
    if (s.isFile()) fs.chmodSync(p, s.mode & 0o700);
    else if (s.isDirectory()) fs.chmodSync(p, s.mode & 0o700);
  }
}
