/**
 * A Node Yjs peer that plays the agent's part in browser tests (no agent process, no model):
 * connected with a service token (only service connections may present as `kind: 'agent'`),
 * optionally present in awareness, writing what the agent would write through the shared helpers.
 */
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import { Awareness } from 'y-protocols/awareness';
import WebSocket from 'ws';
import * as Y from 'yjs';
import { agentOrigin, listRuns, postMessage, startRun, type AgentOrigin, type ChatAuthor, type MessageId, type RunView } from '@plexus/shared';
import { TokenSigner } from '../../server/src/auth/tokens.ts';
import { E2E_SECRET } from './server.ts';
import { until, type Plexus } from './plexus.ts';

export const AGENT_AUTHOR: ChatAuthor = { id: 'agent', name: 'Agent', kind: 'agent', color: '#6b5bd6' };

/** A service-role token for one workspace, signed like the e2e server signs (its fixed secret). */
export function serviceToken(workspaceId: string, sub = 'service:agent'): string {
  return new TokenSigner(Buffer.from(E2E_SECRET, 'utf8')).sign({ ws: workspaceId, role: 'service', sub, name: 'Agent', ttlSeconds: 3600 });
}

export class AgentPeer {
  readonly doc = new Y.Doc();
  readonly awareness = new Awareness(this.doc);
  private socket: HocuspocusProviderWebsocket;
  private provider: HocuspocusProvider;
  private failure: string | null = null;

  private constructor(plexus: Plexus, workspaceId: string, present: { model: string } | null) {
    if (present) {
      this.awareness.setLocalState({
        user: { id: AGENT_AUTHOR.id, name: AGENT_AUTHOR.name, color: AGENT_AUTHOR.color!, role: 'service', kind: 'agent' },
        agent: { model: present.model },
      });
    } else this.awareness.setLocalState(null);
    this.socket = new HocuspocusProviderWebsocket({ url: plexus.url.replace(/^http/, 'ws') + '/collab', WebSocketPolyfill: WebSocket, maxAttempts: 3 } as never);
    this.provider = new HocuspocusProvider({
      websocketProvider: this.socket,
      name: workspaceId,
      document: this.doc,
      token: serviceToken(workspaceId),
      awareness: this.awareness,
      onAuthenticationFailed: ({ reason }) => (this.failure = `authentication failed: ${reason}`),
      onClose: ({ event }) => (this.failure ??= event.reason ? `closed: ${event.reason}` : null),
    });
    this.provider.attach();
  }

  /** Connects and waits for the server's state. `present`: show up in awareness as the agent. */
  static async connect(plexus: Plexus, workspaceId: string, present: { model: string } | null = null): Promise<AgentPeer> {
    const peer = new AgentPeer(plexus, workspaceId, present);
    await until(() => {
      if (peer.failure) throw new Error(peer.failure);
      return peer.provider.isSynced;
    }, 'the agent peer to sync');
    return peer;
  }

  /** Waits until the server acknowledged every change of this peer. */
  async flush(): Promise<void> {
    await until(() => {
      if (this.failure) throw new Error(this.failure);
      return this.provider.unsyncedChanges === 0;
    }, "the server to acknowledge the agent peer's changes");
  }

  /** Waits for a run matching `pred` in this peer's copy. */
  async waitRun(pred: (r: RunView) => boolean, what = 'a run'): Promise<RunView> {
    let found: RunView | undefined;
    await until(() => !!(found = listRuns(this.doc).find(pred)), what);
    return found!;
  }

  /** Starts answering the run asked by `messageId`: posts the reply (streaming unless `text` is given) and starts the run. */
  async answer(messageId: string, text = ''): Promise<{ run: RunView; replyId: string; origin: AgentOrigin }> {
    const run = await this.waitRun((r) => r.request.messageId === messageId, `the run of ${messageId}`);
    const origin = agentOrigin(run.id);
    const replyId = postMessage(this.doc, { author: AGENT_AUTHOR, text, status: text ? 'done' : 'streaming', replyTo: messageId as MessageId, runId: run.id }, origin);
    startRun(this.doc, run.id, { replyId, model: 'test-model' }, origin);
    return { run, replyId, origin };
  }

  async close(): Promise<void> {
    this.awareness.setLocalState(null);
    this.provider.destroy();
    this.socket.destroy();
    this.doc.destroy();
  }
}
