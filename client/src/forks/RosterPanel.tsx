/**
 * The class roster (a section above the notebook, opened from the header's Class button): each
 * student's fork from this workspace's hand-out links — who, how its cells ran, the last error
 * (cell and message), a raised hand, the last activity — and a link that opens the fork. The
 * server writes the roster into this document as the forks change, so it updates by itself.
 */
import { type RosterEntry } from '@plexus/shared';
import { rememberTokenFor } from '../api/tokens.ts';
import { useSession } from '../collab/context.tsx';
import { workspacePath } from '../app/router.ts';
import { relativeTime } from '../home/relativeTime.ts';
import { useRoster, useRosterPanel } from './useClassroom.ts';
import './forks.css';

type RosterState = 'error' | 'running' | 'not-run' | 'ok' | 'partial';

function stateOf(e: RosterEntry): RosterState {
  if (e.cells.errors > 0) return 'error';
  if (e.cells.running > 0) return 'running';
  if (e.cells.ran === 0) return 'not-run';
  return e.cells.ok === e.cells.total ? 'ok' : 'partial';
}

const STATE_TEXT: Record<RosterState, string> = { error: 'errors', running: 'running', 'not-run': 'not run yet', ok: 'all ran', partial: 'some ran' };

function cellsText(e: RosterEntry): string {
  const { total, ran, errors } = e.cells;
  return `${ran}/${total} ran${errors ? ` · ${errors} with ${errors === 1 ? 'an error' : 'errors'}` : ''}`;
}

function RosterRow({ entry, token }: { entry: RosterEntry; token: string }) {
  const state = stateOf(entry);
  const href = workspacePath(entry.fork);
  return (
    <tr className={`roster-row roster-${state}${entry.hand ? ' has-hand' : ''}`} data-testid="roster-row" data-fork={entry.fork} data-state={state}>
      <td className="roster-who">{entry.student.name ?? 'Someone'}</td>
      <td>
        <span className={`roster-state state-${state}`}>{STATE_TEXT[state]}</span> <span className="muted">{cellsText(entry)}</span>
      </td>
      <td className="roster-error" data-testid="roster-error">
        {entry.lastError ? (
          <>
            <span className="muted">Cell {entry.lastError.index}:</span> <code>{entry.lastError.message}</code>
          </>
        ) : (
          <span className="muted">—</span>
        )}
      </td>
      <td data-testid="roster-hand">{entry.hand ? <span className="roster-hand" title={`Raised ${relativeTime(entry.hand.at)}`}>✋ raised</span> : null}</td>
      <td className="muted">{relativeTime(entry.active)}</td>
      <td>
        <a href={href} target="_blank" rel="noopener" data-testid="roster-open" onClick={() => rememberTokenFor(entry.fork, token)}>
          Open
        </a>
      </td>
    </tr>
  );
}

export function RosterPanel({ token }: { token: string }) {
  const session = useSession();
  const roster = useRoster(session.doc);
  const open = useRosterPanel((s) => s.open);
  const setOpen = useRosterPanel((s) => s.setOpen);
  if (!open || roster.length === 0) return null;
  return (
    <section className="data-panel roster-panel" data-testid="roster-panel" aria-label="Class">
      <div className="data-panel-head">
        <strong>Class</strong>
        <span className="muted roster-hint">Each student’s copy from your hand-out link, updated as they work.</span>
        <button className="icon-btn" data-testid="roster-close" aria-label="Close the class roster" title="Close (the header’s Class button opens it again)" onClick={() => setOpen(false)}>
          ✕
        </button>
      </div>
      <table className="roster">
        <thead>
          <tr>
            <th>Student</th>
            <th>Cells</th>
            <th>Last error</th>
            <th>Hand</th>
            <th>Active</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {roster.map((e) => (
            <RosterRow key={e.fork} entry={e} token={token} />
          ))}
        </tbody>
      </table>
    </section>
  );
}
