/**
 * Suggestions under an agent message (agent/suggestions.ts): value chips send a prepared message
 * to the agent (following up that run); action buttons do one thing for the person who clicks.
 */
import { useState } from 'react';
import { findNamedView, loadNamedView, requestRun, requestRunAll, type SuggestedAction, type Suggestions } from '@plexus/shared';
import { useCanEdit, useSession } from '../collab/context.tsx';
import type { WorkspaceSession } from '../collab/session.ts';
import { requesterOf } from '../notebook/run/requester.ts';
import { useLocalUser } from '../state/user.ts';
import { useUi } from '../state/ui.ts';
import { useAgentUi } from './agentUi.ts';
import { sendChatMessage } from './send.ts';

/** Carries out a suggested action as the local person; returns a note when it could not. */
export function runSuggestedAction(session: WorkspaceSession, a: SuggestedAction): string | null {
  const ui = useAgentUi.getState();
  switch (a.action) {
    case 'run_cell':
      if (!a.target) return 'no cell given';
      return requestRun(session.doc, a.target, requesterOf(session), session.origin) ? null : 'that cell cannot run';
    case 'run_all':
      requestRunAll(session.doc, requesterOf(session), session.origin);
      return null;
    case 'focus_cell':
      if (!a.target) return 'no cell given';
      ui.requestFocusCell(a.target);
      return null;
    case 'load_view': {
      const view = a.target ? findNamedView(session.doc, a.target) : undefined;
      if (!view) return `no view named "${a.target ?? ''}"`;
      loadNamedView(session.doc, view, session.origin);
      if (useUi.getState().viewerCollapsed) useUi.getState().toggleViewer();
      return null;
    }
    case 'open_table':
      if (!a.target) return 'no table given';
      useUi.getState().setDataOpen(true);
      ui.requestOpenTable(a.target);
      return null;
    case 'open_viewer':
      if (useUi.getState().viewerCollapsed) useUi.getState().toggleViewer();
      return null;
  }
}

/** Actions that change the document need write access; the others only move the local view. */
const WRITES = new Set(['run_cell', 'run_all', 'load_view']);

export function SuggestionBar({ suggestions, runId, messageId }: { suggestions: Suggestions; runId: string | undefined; messageId: string }) {
  const session = useSession();
  const canEdit = useCanEdit();
  const [note, setNote] = useState<string | null>(null);
  if (suggestions.values.length === 0 && suggestions.actions.length === 0) return null;
  const send = (value: string) => {
    const user = useLocalUser.getState().user;
    sendChatMessage(session, user, value, { toAgent: true, followUp: runId ? { runId, messageId } : null });
  };
  return (
    <div className="suggestions" data-testid="agent-suggestions">
      {canEdit &&
        suggestions.values.map((v, i) => (
          <button key={`v${i}`} className="chip" data-testid="agent-suggestion-value" title={v.value} onClick={() => send(v.value)}>
            {v.label}
          </button>
        ))}
      {suggestions.actions
        .filter((a) => canEdit || !WRITES.has(a.action))
        .map((a, i) => (
          <button
            key={`a${i}`}
            className="btn btn-small"
            data-testid="agent-suggestion-action"
            data-action={a.action}
            onClick={() => {
              setNote(runSuggestedAction(session, a));
            }}
          >
            {a.label}
          </button>
        ))}
      {note && (
        <span className="muted" role="status">
          {note}
        </span>
      )}
    </div>
  );
}
