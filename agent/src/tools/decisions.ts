/**
 * Proposals a tool depends on. In propose mode the agent's new cell or edit is a card until a
 * person presses Accept; a tool that needs it (running the proposed cell) waits for the decision —
 * visibly, in its activity line — instead of failing on a cell that does not exist yet, and tells
 * the model plainly when it was dismissed or is still waiting, so it never reports a result that
 * no tool produced.
 */
import { pendingProposalsFor, readProposal, type ProposalView } from '@plexus/shared';
import type { ToolContext } from './tool.ts';

export interface Decisions {
  /** Proposals that were decided while waiting (accepted, dismissed or failed). */
  decided: ProposalView[];
  /** Proposals still pending when the wait ended. */
  pending: ProposalView[];
}

const describe = (v: ProposalView) => `"${v.proposal.title}"`;

/** Waits until every pending proposal on `target` is decided, the wait times out, or the run stops. */
export async function awaitDecisions(ctx: ToolContext, target: string): Promise<Decisions> {
  const waiting = pendingProposalsFor(ctx.doc, target);
  if (waiting.length === 0) return { decided: [], pending: [] };
  ctx.progress(`waiting for a person to Accept or Dismiss ${waiting.map(describe).join(', ')}`);
  ctx.presence.focus('chat');
  await new Promise<void>((resolve, reject) => {
    const done = () => waiting.every((w) => readProposal(ctx.doc, w.messageId)?.status !== 'pending');
    const onUpdate = () => {
      if (done()) finish();
    };
    const timer = setTimeout(() => finish(), ctx.decisionWaitMs);
    const onAbort = () => {
      cleanup();
      reject(ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('stopped'));
    };
    const cleanup = () => {
      clearTimeout(timer);
      ctx.doc.off('update', onUpdate);
      ctx.signal.removeEventListener('abort', onAbort);
    };
    const finish = () => {
      cleanup();
      resolve();
    };
    ctx.doc.on('update', onUpdate);
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (done()) finish();
  });
  const now = waiting.map((w) => readProposal(ctx.doc, w.messageId) ?? w);
  return { decided: now.filter((v) => v.status !== 'pending'), pending: now.filter((v) => v.status === 'pending') };
}

/** The decisions in the words the model reads. */
export function decisionsForModel(d: Decisions): Array<Record<string, string>> {
  return [...d.decided, ...d.pending].map((v) => ({
    proposal: v.messageId,
    title: v.proposal.title,
    status: v.status,
    ...(v.outcome ? { by: v.outcome.name ?? v.outcome.by } : {}),
  }));
}
