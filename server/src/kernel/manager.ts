/**
 * Kernel supervision on the sync server, as a Hocuspocus extension: when a workspace document is
 * loaded (someone opened it) its kernel starts on that live document — lent in place, held loaded
 * like a direct connection, so the server keeps no replica for it and sends it nothing; when only
 * the kernel is left and it is idle, the kernel stops, lets go of the document (which then
 * unloads) and its processes stop. The kernel's writes are transactions with its own origin on the
 * live document: logged and relayed like any server-side change, and checked against the
 * document schema's rules for the kernel after the fact (`schemaViolations`, logged: nothing a
 * client sends takes this way). The kernels themselves, their directories and uid slots are a
 * KernelPool's (kernel-pool.ts), which a kernel process of its own (kernel-service.ts,
 * `npm run kernel`) uses too — its kernels are peers over a socket, checked by the server like any
 * peer; with `PLEXUS_KERNEL=external` this server starts none and only keeps the directories that
 * uploads, jobs and maps write into.
 * Effects: starts and stops kernels (processes, files), holds documents loaded, changes file modes in the data dir.
 */
import type { Document, Extension, Hocuspocus, afterLoadDocumentPayload, onDisconnectPayload } from '@hocuspocus/server';
import type * as Y from 'yjs';
import { KERNEL_ORIGIN, checkTransaction, type Violation } from '@plexus/shared';
import type { TokenSigner } from '../auth/tokens.ts';
import { KERNEL_SUB } from '../auth/agent-token.ts';
import { peopleConnected } from '../collab/people.ts';
import type { WorkspaceKernel } from './workspace-kernel.ts';
import type { VolumeSampler } from './js-runtime.ts';
import { KernelPool, type KernelPoolOptions, type LentDocument } from './kernel-pool.ts';

export { chooseKernelDir, closedAncestor } from './kernel-pool.ts';

export interface KernelManagerOptions extends Omit<KernelPoolOptions, 'token' | 'sample'> {
  /** Server-side volume sampling for cells. */
  sample?: VolumeSampler;
  idleMs: number;
  /**
   * Kernels connect to this server over a socket, with a token for their workspace signed here,
   * and keep a replica — as before they served the live document (`PLEXUS_KERNEL_IN_PLACE=0`, for
   * benchmarks and for ruling the in-place kernel out).
   */
  socketPeers?: { signer: TokenSigner };
  /** Kernels run in processes of their own (`npm run kernel`): this server starts none. */
  external?: boolean;
}

export class KernelManager implements Extension {
  extensionName = 'plexus-kernel';
  priority = 10;
  readonly pool: KernelPool;
  private readonly idleTimers = new Map<string, NodeJS.Timeout>();
  private hocuspocus: Hocuspocus | null = null;
  /** The live document each running kernel holds (lent to it: counted as one direct connection). */
  private readonly held = new Map<string, Document>();
  /** Kernel writes that broke the document schema's rules for the kernel (each is logged). */
  schemaViolations = 0;
  /** Idle checks that kept a kernel running because it was busy (people gone, a cell still at work). */
  keptBusy = 0;

  constructor(private readonly opts: KernelManagerOptions) {
    const { sample, socketPeers } = opts;
    // Socket peers get a token for their one workspace (their connection is never relayed).
    const token = socketPeers ? (id: string) => socketPeers.signer.sign({ ws: id, role: 'service', sub: KERNEL_SUB, name: 'Kernel', ttlSeconds: 7 * 86400 }) : undefined;
    this.pool = new KernelPool({ ...opts, sample: sample && (() => sample), token });
  }

  /** Kernels serve the live documents (the default) rather than connect to this server as socket peers. */
  private get inPlace(): boolean {
    return !this.opts.socketPeers;
  }

  get kernelDir(): string {
    return this.pool.kernelDir;
  }

  /** Called once the server listens: documents loaded from then on get their kernel (unless kernels run elsewhere). */
  listening(serverUrl: string, hocuspocus: Hocuspocus): void {
    this.hocuspocus = hocuspocus;
    if (!this.opts.external && !this.inPlace) this.pool.serverUrl = serverUrl;
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

  async afterLoadDocument({ documentName, document }: afterLoadDocumentPayload): Promise<void> {
    // Not awaited: the load goes on while the kernel starts (its start-up writes land in this turn);
    // a kernel that cannot start never fails the load.
    try {
      void this.ensure(documentName, document);
    } catch (e) {
      this.opts.log.error('kernel failed to start', { ws: documentName, err: e });
    }
  }

  async onDisconnect({ documentName, document }: onDisconnectPayload): Promise<void> {
    if (this.othersThanServices(documentName, document) === 0) this.scheduleIdleCheck(documentName);
  }

  /**
   * Starts the kernel of a loaded workspace unless it runs (`document`: the one being loaded, not
   * yet listed by Hocuspocus). Resolves when it serves requests.
   */
  ensure(id: string, document?: Document): Promise<void> {
    if (this.opts.external || !this.hocuspocus) return Promise.resolve();
    const had = this.pool.get(id);
    const doc = document ?? this.hocuspocus.documents.get(id);
    if (!had && (!doc || doc.isDestroyed)) return Promise.resolve();
    const started = this.pool.ensure(id, this.inPlace ? () => this.lend(id, doc!) : undefined);
    if (!had && this.pool.get(id)) this.scheduleIdleCheck(id);
    return started;
  }

  /**
   * Lends a live document to its kernel: held loaded as one direct connection until the kernel
   * lets go, its kernel-origin transactions checked against the schema meanwhile.
   */
  private lend(id: string, document: Document): LentDocument {
    document.addDirectConnection();
    this.held.set(id, document);
    const check = (tr: Y.Transaction) => {
      if (tr.origin === KERNEL_ORIGIN) this.reportViolations(id, checkTransaction(tr, 'kernel'));
    };
    document.on('afterTransaction', check);
    let released = false;
    return {
      doc: document,
      release: async () => {
        if (released) return;
        released = true;
        document.off('afterTransaction', check);
        if (this.held.get(id) === document) this.held.delete(id);
        document.removeDirectConnection();
        const hocuspocus = this.hocuspocus;
        if (!hocuspocus || document.getConnectionsCount() > 0) return;
        // As a direct connection's disconnect does: run the pending (debounced) store hooks now,
        // after which Hocuspocus unloads a document nobody holds; then unload in case none was pending.
        const context = { kernel: true };
        await hocuspocus.storeDocumentHooks(document, { instance: hocuspocus, clientsCount: 0, document, documentName: document.name, lastContext: context, lastTransactionOrigin: { source: 'local', context } }, true);
        await hocuspocus.unloadDocument(document);
      },
    };
  }

  private reportViolations(ws: string, violations: Violation[]): void {
    if (!violations.length) return;
    this.schemaViolations += violations.length;
    this.opts.log.error('the kernel wrote outside the document schema', { ws, violations: violations.slice(0, 5) });
  }

  /**
   * What keeps a kernel alive besides its own work: people's connections and the server's direct
   * connections (HTTP handlers at work, y-websocket peers) — not the kernel's own hold on the
   * document, nor service peers: an agent left alone in a workspace must not keep its kernel
   * running forever.
   */
  private othersThanServices(id: string, doc: Document): number {
    return peopleConnected(doc) + doc.directConnectionsCount - (this.held.get(id) === doc ? 1 : 0);
  }

  private scheduleIdleCheck(id: string): void {
    if (this.idleTimers.has(id)) return;
    const t = setTimeout(() => {
      this.idleTimers.delete(id);
      const k = this.pool.get(id);
      if (!k) return;
      const doc = this.hocuspocus?.documents.get(id);
      if (doc && this.othersThanServices(id, doc) > 0) return this.scheduleIdleCheck(id);
      if (k.busy) {
        this.keptBusy++;
        return this.scheduleIdleCheck(id);
      }
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
