/**
 * A service's connection to one workspace document — what the kernel and the agent both are: a
 * Hocuspocus provider on its own socket (`<server>/collab`), a service token asked for afresh on
 * every (re)connect, reconnecting quickly (100 ms … 2 s) after the server restarts, and a promise
 * for the first sync that a close ends too (a service stopped while it connects must not wait for
 * a sync that cannot come).
 * Effects: network (one WebSocket), timers (the provider's reconnects).
 */
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import type * as Y from 'yjs';
import { QuietWebSocket } from './quiet-ws.ts';

export interface ServicePeerOptions {
  /** Base URL of the sync server (http://host:port); the socket goes to `<ws url>/collab`. */
  serverUrl: string;
  workspaceId: string;
  /** The replica; its writes go to the server, the server's come into it. */
  doc: Y.Doc;
  /** The service token, asked for on every connect (a token file may be rewritten meanwhile). */
  token: () => string;
  /** Awareness fields published at once (presence: user, focus, …). */
  awareness?: Record<string, unknown>;
  /** The server refused the token. */
  onAuthenticationFailed?: (reason: string) => void;
}

export class ServicePeer {
  readonly provider: HocuspocusProvider;
  private readonly socket: HocuspocusProviderWebsocket;
  /** True once the replica first synced with the server; false if closed before that. */
  readonly synced: Promise<boolean>;
  private endWait!: (synced: boolean) => void;
  private closed = false;

  constructor(opts: ServicePeerOptions) {
    const url = opts.serverUrl.replace(/^http/, 'ws') + '/collab';
    this.socket = new HocuspocusProviderWebsocket({ url, WebSocketPolyfill: QuietWebSocket, delay: 100, minDelay: 100, maxDelay: 2000 } as never);
    this.synced = new Promise<boolean>((r) => (this.endWait = r));
    this.provider = new HocuspocusProvider({
      websocketProvider: this.socket,
      name: opts.workspaceId,
      document: opts.doc,
      token: opts.token,
      onSynced: () => this.endWait(true),
      onAuthenticationFailed: ({ reason }) => opts.onAuthenticationFailed?.(reason),
    });
    this.provider.attach();
    for (const [k, v] of Object.entries(opts.awareness ?? {})) this.provider.setAwarenessField(k, v);
  }

  /** Whether close() was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  setAwarenessField(key: string, value: unknown): void {
    if (!this.closed) this.provider.setAwarenessField(key, value);
  }

  /** Leaves the document: the provider and its socket are destroyed; a pending `synced` gives false. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.endWait(false);
    this.provider.destroy();
    this.socket.destroy();
  }
}
