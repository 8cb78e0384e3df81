/**
 * Kernel supervision on the sync server, as a Hocuspocus extension: when a workspace document is
 * loaded (someone opened it) a kernel peer connects to it; when only the kernel is left and it is
 * idle, the kernel disconnects and its processes stop. The kernels themselves, their directories
 * and uid slots are a KernelPool's (kernel-pool.ts), which a kernel process of its own
 * (kernel-service.ts, `npm run kernel`) uses the same way; with `PLEXUS_KERNEL=external` this
 * server starts none and only keeps the directories that uploads, jobs and maps write into.
 * Effects: starts and stops kernels (network, processes, files), changes file modes in the data dir.
 */
import type { Document, Extension, Hocuspocus, afterLoadDocumentPayload, onDisconnectPayload } from '@hocuspocus/server';
import { peopleConnected } from '../collab/people.ts';
import type { TokenSigner } from '../auth/tokens.ts';
import type { WorkspaceKernel } from './workspace-kernel.ts';
import type { VolumeSampler } from './js-runtime.ts';
import { KernelPool, type KernelPoolOptions } from './kernel-pool.ts';

export { chooseKernelDir, closedAncestor } from './kernel-pool.ts';

export interface KernelManagerOptions extends Omit<KernelPoolOptions, 'token' | 'sample'> {
  /** Server-side volume sampling for cells. */
  sample?: VolumeSampler;
  signer: TokenSigner;
  idleMs: number;
  /** Kernels run in processes of their own (`npm run kernel`): this server starts none. */
  external?: boolean;
}

export class KernelManager implements Extension {
  extensionName = 'plexus-kernel';
  priority = 10;
  readonly pool: KernelPool;
  private readonly idleTimers = new Map<string, NodeJS.Timeout>();
  private hocuspocus: Hocuspocus | null = null;

  constructor(private readonly opts: KernelManagerOptions) {
    // A kernel started here has a token for its one workspace (the connection is never relayed).
    const { sample } = opts;
    this.pool = new KernelPool({ ...opts, sample: sample && (() => sample), token: (id) => opts.signer.sign({ ws: id, role: 'service', sub: 'service:kernel', name: 'Kernel', ttlSeconds: 7 * 86400 }) });
  }

  get kernelDir(): string {
    return this.pool.kernelDir;
  }

  /** Called once the server listens: kernels connect to it as peers (unless they run elsewhere). */
  listening(serverUrl: string, hocuspocus: Hocuspocus): void {
    this.hocuspocus = hocuspocus;
    if (!this.opts.external) this.pool.serverUrl = serverUrl;
  }

  /** Directory of a workspace's kernel files. */
  workspaceDir(id: string): string {
    return this.pool.workspaceDir(id);
  }

  /** Directory of a workspace's uploaded tables. */
  tablesDir(id: string): string {
    return this.pool.tablesDir(id);
  }

  /** Kernels running (or starting) in this process. */
  get running(): number {
    return this.pool.running;
  }

  /** The running kernel of a workspace, if any. */
  get(id: string): WorkspaceKernel | undefined {
    return this.pool.get(id);
  }

  async afterLoadDocument({ documentName }: afterLoadDocumentPayload): Promise<void> {
    this.ensure(documentName);
  }

  async onDisconnect({ documentName, document }: onDisconnectPayload): Promise<void> {
    if (othersThanServices(document) === 0) this.scheduleIdleCheck(documentName);
  }

  /** Starts the kernel of a workspace unless it runs. Resolves when it serves requests. */
  ensure(id: string): Promise<void> {
    const had = this.pool.get(id);
    const started = this.pool.ensure(id);
    if (!had && this.pool.get(id)) this.scheduleIdleCheck(id);
    return started;
  }

  private scheduleIdleCheck(id: string): void {
    if (this.idleTimers.has(id)) return;
    const t = setTimeout(() => {
      this.idleTimers.delete(id);
      const k = this.pool.get(id);
      if (!k) return;
      const doc = this.hocuspocus?.documents.get(id);
      if ((doc && othersThanServices(doc) > 0) || k.busy) return this.scheduleIdleCheck(id);
      void this.stop(id);
    }, this.opts.idleMs);
    t.unref();
    this.idleTimers.set(id, t);
  }

  /** Stops a workspace's kernel (no-op when none runs). */
  async stop(id: string): Promise<void> {
    const t = this.idleTimers.get(id);
    if (t) clearTimeout(t);
    this.idleTimers.delete(id);
    await this.pool.stop(id);
  }

  /** Stops every kernel (server shutdown). */
  async closeAll(): Promise<void> {
    for (const t of this.idleTimers.values()) clearTimeout(t);
    this.idleTimers.clear();
    await this.pool.closeAll();
  }
}

/**
 * What keeps a kernel alive besides its own work: people's connections and the server's direct
 * connections (HTTP handlers at work, y-websocket peers). Service peers — the kernel itself, the
 * agent — do not: an agent left alone in a workspace must not keep its kernel running forever.
 */
function othersThanServices(doc: Document): number {
  return peopleConnected(doc) + doc.directConnectionsCount;
}
