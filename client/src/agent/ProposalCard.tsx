/**
 * A proposal card: a change the agent proposes (agent/actions.ts), with a preview of what it
 * would do — a line diff for cell edits, the source of new or deleted cells, before/after values
 * for viewer changes — and Accept / Dismiss for writers. Accepting applies the action as the
 * person who clicks (their origin: their undo); everyone sees the outcome on the card.
 */
import { useState } from 'react';
import {
  acceptProposal,
  dismissProposal,
  recordProposalOutcome,
  type AgentAction,
  type Json,
  type ProposalOutcome,
  type ProposalView,
} from '@plexus/shared';
import { deleteTable } from '../api/notebook.ts';
import { useApiToken } from '../api/tokenContext.ts';
import { useCanEdit, useSession } from '../collab/context.tsx';
import type { WorkspaceSession } from '../collab/session.ts';
import { useAgentUi } from './agentUi.ts';
import { lineDiff } from './lineDiff.ts';
import { useWho } from './RunBlock.tsx';

const short = (v: Json | null | undefined) => (v === undefined || v === null ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

function BeforeAfter({ rows }: { rows: Array<{ key: string; before: Json | null | undefined; after: Json | null | undefined }> }) {
  return (
    <table className="proposal-table" data-testid="proposal-before-after">
      <thead>
        <tr>
          <th />
          <th>before</th>
          <th>after</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key}>
            <th>{r.key}</th>
            <td>{short(r.before)}</td>
            <td>{short(r.after)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Source({ text, label }: { text: string; label: string }) {
  return (
    <pre className="proposal-source" data-testid="proposal-source" aria-label={label}>
      {text}
    </pre>
  );
}

/** What the action would do, shown before anyone accepts it. */
export function ActionPreview({ action: a }: { action: AgentAction }) {
  switch (a.type) {
    case 'edit_cell':
      return (
        <pre className="proposal-diff" data-testid="proposal-diff" aria-label="Proposed change">
          {lineDiff(a.base, a.proposed).map((l, i) => (
            <div key={i} className={`diff-${l.op}`}>
              <span aria-hidden="true">{l.op === 'add' ? '+' : l.op === 'del' ? '−' : ' '}</span>
              {l.text || ' '}
            </div>
          ))}
        </pre>
      );
    case 'create_cell':
      return (
        <>
          <div className="muted">
            new <strong>{a.kind}</strong> cell{a.name ? ` “${a.name}”` : ''}
          </div>
          <Source text={a.source} label="Source of the new cell" />
        </>
      );
    case 'delete_cell':
      return (
        <>
          <div className="muted">this cell would be deleted:</div>
          <Source text={a.source} label="Source of the cell to delete" />
        </>
      );
    case 'set_camera':
      return (
        <BeforeAfter
          rows={[
            ...Object.keys(a.camera).map((k) => ({ key: k, before: a.before?.[k as keyof typeof a.camera], after: a.camera[k as keyof typeof a.camera] })),
            ...(a.layout ? [{ key: 'layout', before: a.layoutBefore ?? null, after: a.layout }] : []),
          ]}
        />
      );
    case 'set_layer':
      return <BeforeAfter rows={Object.keys(a.props).map((k) => ({ key: k, before: a.before?.[k], after: a.props[k] }))} />;
    case 'set_shader_control':
      return <BeforeAfter rows={[{ key: `${a.layer}: ${a.control}`, before: a.before, after: a.value }]} />;
    case 'add_layer':
      return (
        <div className="muted" data-testid="proposal-layer">
          layer <strong>{a.layer.name}</strong> from <code>{short(a.layer.source as Json | undefined)}</code>
        </div>
      );
    case 'add_annotations':
      return (
        <div className="muted" data-testid="proposal-annotations">
          {a.annotations.length} annotation{a.annotations.length === 1 ? '' : 's'} on <strong>{a.layer}</strong>
          {a.annotations.length > 0 && (
            <ul>
              {a.annotations.slice(0, 3).map((x, i) => (
                <li key={i}>
                  <code>{short((x.point ?? x.pointA ?? x.center ?? x) as Json)}</code>
                </li>
              ))}
              {a.annotations.length > 3 && <li>…</li>}
            </ul>
          )}
        </div>
      );
    case 'atlas_highlight':
      return (
        <div className="muted" data-testid="proposal-atlas">
          {a.rows.length ? (
            <>
              highlight {a.rows.length.toLocaleString()} row{a.rows.length === 1 ? '' : 's'} on the map as <strong>{a.label}</strong>
            </>
          ) : (
            'clear the map’s highlight'
          )}
        </div>
      );
    case 'atlas_save':
      return (
        <div className="muted" data-testid="proposal-atlas">
          save {a.rows.length.toLocaleString()} row{a.rows.length === 1 ? '' : 's'} as the category <strong>{a.category}</strong>
          {a.note ? ` — ${a.note}` : ''}
        </div>
      );
    case 'remove_layer':
    case 'remove_table':
    case 'move_cell':
    case 'save_view':
    case 'edit_roi':
      return null;
  }
}

export function outcomeText(o: ProposalOutcome): string {
  const who = o.name ?? o.by;
  if (o.status === 'accepted') return `Accepted by ${who}${o.message ? ` — ${o.message}` : ''}`;
  if (o.status === 'dismissed') return `Dismissed by ${who}`;
  return `Failed: ${o.message}`;
}

/** Records the outcome of a proposal whose action was carried out elsewhere (a data API call). */
function recordOutcome(session: WorkspaceSession, messageId: string, outcome: ProposalOutcome): void {
  recordProposalOutcome(session.doc, messageId, outcome, session.origin);
}

export function ProposalCard({ view }: { view: ProposalView }) {
  const session = useSession();
  const token = useApiToken();
  const canEdit = useCanEdit();
  const who = useWho();
  const [busy, setBusy] = useState(false);
  const { proposal: p, outcome } = view;

  const accept = async () => {
    const a = p.action;
    session.undoManager.stopCapturing();
    if (a.type === 'remove_table') {
      // Deleting the stored file is the server's job: the data API first, then the outcome.
      setBusy(true);
      const base = { by: who.id, name: who.name, at: Date.now() };
      try {
        await deleteTable(token, session.workspace.id, a.table);
        recordOutcome(session, view.messageId, { ...base, status: 'accepted', message: `removed table "${a.table}"` });
      } catch (e) {
        recordOutcome(session, view.messageId, { ...base, status: 'failed', message: e instanceof Error ? e.message : String(e) });
      } finally {
        setBusy(false);
      }
      return;
    }
    const o = acceptProposal(session.doc, view.messageId, who, session.origin);
    if (o?.status === 'accepted' && a.type === 'create_cell') useAgentUi.getState().requestFocusCell(a.cellId);
    if (o?.status === 'accepted' && a.type === 'edit_cell') useAgentUi.getState().requestFocusCell(a.cellId);
  };

  return (
    <div className={`proposal proposal-${view.status}`} data-testid="agent-proposal" data-status={view.status} data-action={p.action.type}>
      <div className="proposal-head">
        <strong className="proposal-title">{p.title}</strong>
        {p.destructive && (
          <span className="badge badge-danger" data-testid="proposal-destructive" title="Needs a person’s Accept whatever the agent mode">
            {p.destructive}
          </span>
        )}
      </div>
      {p.why && <div className="proposal-why">{p.why}</div>}
      <ActionPreview action={p.action} />
      {outcome ? (
        <div className={`proposal-outcome is-${outcome.status}`} data-testid="proposal-outcome" role="status">
          {outcomeText(outcome)}
        </div>
      ) : (
        canEdit && (
          <div className="proposal-actions">
            <button className="btn btn-small btn-primary" data-testid="proposal-accept" disabled={busy} onClick={() => void accept()}>
              Accept
            </button>
            <button className="btn btn-small" data-testid="proposal-dismiss" disabled={busy} onClick={() => dismissProposal(session.doc, view.messageId, who, session.origin)}>
              Dismiss
            </button>
          </div>
        )
      )}
    </div>
  );
}
