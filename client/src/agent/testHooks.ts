/**
 * `window.__plexus.agent` for the browser tests: the agent's part of the document as plain JSON
 * (the bundle's classes are minified, so tests cannot use the shared helpers in the page).
 */
import { listMessages, listRuns, proposalOf, readPresence, DATA_SELECTION_FIELD, type RunView } from '@plexus/shared';
import type { WorkspaceSession } from '../collab/session.ts';

export interface AgentTestHooks {
  /** Every run, without its Y.Map. */
  runs(): Array<Omit<RunView, 'map'>>;
  /** Every proposal card: message id, action type, status, outcome. */
  proposals(): Array<{ messageId: string; type: string; status: string; outcome: unknown }>;
  /** `dataSelection` of every peer, by user name. */
  dataSelections(): Record<string, unknown>;
}

export function agentTestHooks(session: WorkspaceSession): AgentTestHooks {
  return {
    runs: () => listRuns(session.doc).map(({ map: _map, ...r }) => r),
    proposals: () =>
      listMessages(session.doc).flatMap((m) => {
        const p = proposalOf(m.map, m.id);
        return p ? [{ messageId: m.id, type: p.proposal.action.type, status: p.status, outcome: p.outcome }] : [];
      }),
    dataSelections: () => {
      const out: Record<string, unknown> = {};
      session.awareness.getStates().forEach((s) => {
        const p = readPresence(s);
        if (p && p[DATA_SELECTION_FIELD]) out[p.user.name] = p[DATA_SELECTION_FIELD];
      });
      return out;
    },
  };
}
