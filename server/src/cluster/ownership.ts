/**
 * Serving a workspace on this node (Hocuspocus extension, before persistence loads it): take the
 * workspace's lease (workspace-leases.ts) and claim its fencing token in the store, or refuse the
 * load with 1012 workspace-moved (the client reconnects and is routed to the holder). Unloading
 * gives both back. When the lease is lost (another node took it while this one was paused or cut
 * off) or the store fences a write off, the workspace is dropped here: nothing more is stored from
 * this node, every socket of it is closed with 1012 workspace-moved (its clients reconnect to the
 * holder, resending whatever was not acknowledged), its kernel stops, and until its copy has
 * unloaded the router does not serve it here again.
 * Effects: network (Redis, Postgres), closes sockets.
 */
import type { Extension, Hocuspocus, onLoadDocumentPayload, afterUnloadDocumentPayload } from '@hocuspocus/server';
import { CloseCodes } from '@plexus/shared';
import type { Logger } from '../log.ts';
import { WorkspaceNotFoundError, type StorageFencing } from '../store/storage.ts';
import { ProtocolError, closeIfTransient } from '../collab/errors.ts';
import type { WorkspaceLeases } from './workspace-leases.ts';

export interface OwnershipDeps {
  leases: WorkspaceLeases;
  fencing: StorageFencing;
  hocuspocus: () => Hocuspocus;
  log: Logger;
  /** Stops everything else this node runs for the workspace (persistence, y-websocket peers, kernel). */
  stopServing: (ws: string) => void;
}

export class Ownership implements Extension {
  extensionName = 'plexus-ownership';
  /** Before persistence (1000) loads the document. */
  priority = 1100;
  private readonly dropped = new Set<string>();
  /** Workspaces dropped so far (metrics, tests). */
  drops = 0;

  private sweeper: NodeJS.Timeout | null = null;

  constructor(private readonly deps: OwnershipDeps) {
    deps.leases.onLost = (ws) => this.drop(ws, 'lease lost');
  }

  /** Sweeps every `everyMs` (see `sweep`). */
  start(everyMs: number): void {
    this.sweeper = setInterval(() => void this.sweep().catch((e) => this.deps.log.warn('ownership sweep failed', { err: (e as Error).message })), everyMs);
    this.sweeper.unref();
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  /**
   * Gives back the leases of workspaces that are not loaded here (a load that failed after the
   * lease was taken never unloads), and drops the workspaces whose fence another node claimed in
   * the store — which this node learns even while Redis cannot tell it (cut off from Redis, its
   * leases look held).
   */
  async sweep(): Promise<void> {
    const hp = this.deps.hocuspocus();
    for (const ws of this.deps.leases.heldList()) {
      if (hp.documents.has(ws) || hp.loadingDocuments.has(ws)) continue;
      this.deps.fencing.release(ws);
      await this.deps.leases.release(ws);
    }
    for (const ws of await this.deps.fencing.verify(this.deps.leases.heldList())) this.drop(ws, 'another node claimed its fence');
  }

  async onLoadDocument({ documentName: ws, requestHeaders }: onLoadDocumentPayload): Promise<void> {
    const refuse = (e: ProtocolError): never => {
      closeIfTransient(requestHeaders, e);
      throw e;
    };
    let got;
    try {
      got = await this.deps.leases.acquire(ws);
    } catch (e) {
      return refuse(new ProtocolError(CloseCodes.LoadFailed, `coordination (Redis) unreachable: ${(e as Error).message}`));
    }
    if (!got.held) return refuse(new ProtocolError(CloseCodes.WorkspaceMoved, `served by node ${got.holder}`));
    try {
      await this.deps.fencing.claim(ws);
    } catch (e) {
      await this.deps.leases.release(ws);
      if (e instanceof WorkspaceNotFoundError) throw new ProtocolError(CloseCodes.NotFound, ws);
      return refuse(new ProtocolError(CloseCodes.LoadFailed, (e as Error).message));
    }
    this.dropped.delete(ws);
  }

  async afterUnloadDocument({ documentName: ws }: afterUnloadDocumentPayload): Promise<void> {
    this.dropped.delete(ws);
    this.deps.fencing.release(ws);
    await this.deps.leases.release(ws);
  }

  /** True while a dropped workspace's old copy is still loaded here. */
  unloading(ws: string): boolean {
    return this.dropped.has(ws);
  }

  /** Stops serving `ws` here: another node does (see the module comment). */
  drop(ws: string, why: string): void {
    const doc = this.deps.hocuspocus().documents.get(ws);
    if (doc) this.dropped.add(ws);
    this.drops++;
    this.deps.fencing.release(ws);
    void this.deps.leases.release(ws);
    this.deps.log.warn('workspace dropped: another node serves it', { ws, why, connections: doc?.getConnectionsCount() ?? 0 });
    this.deps.stopServing(ws);
    if (!doc) return;
    const { code, reason } = CloseCodes.WorkspaceMoved;
    for (const conn of doc.getConnections()) conn.webSocket.close(code, reason);
  }
}
