/**
 * Posting a chat message, addressed to the agent or not. A message to the agent and its run
 * request are written in ONE transaction with the person's origin: everyone (and the agent) sees
 * the message and the queued run together, and one undo step covers both. Pure apart from the
 * document write.
 */
import { postMessage, randomId, requestAgentRun, type MessageId } from '@plexus/shared';
import type { WorkspaceSession } from '../collab/session.ts';
import type { LocalUser } from '../state/user.ts';

export interface SendOptions {
  /** Address the agent: a run is requested for the message. */
  toAgent: boolean;
  /** The agent answer this follows up (its run and message). */
  followUp?: { runId: string; messageId: string } | null;
}

/** Posts `text` as `user`; returns the message id and the run id (when addressed to the agent). Throws ChatMessageError. */
export function sendChatMessage(session: WorkspaceSession, user: LocalUser, text: string, opts: SendOptions): { messageId: MessageId; runId: string | null } {
  const { doc, origin } = session;
  const runId = opts.toAgent ? `r_${randomId()}` : null;
  const follow = opts.toAgent ? opts.followUp ?? null : null;
  session.undoManager.stopCapturing();
  let messageId = '' as MessageId;
  doc.transact(() => {
    messageId = postMessage(
      doc,
      {
        author: { id: user.id, name: user.name, kind: 'person', color: user.color },
        text,
        ...(runId ? { runId } : {}),
        ...(follow ? { replyTo: follow.messageId as MessageId } : {}),
      },
      origin,
    );
    if (runId) requestAgentRun(doc, { id: runId, by: { id: user.id, name: user.name }, messageId, text, ...(follow ? { followUp: follow.runId } : {}) }, origin);
  }, origin);
  return { messageId, runId };
}
