/**
 * The kernel part of the notebook toolbar: Run all, Run stale, Interrupt, Restart (editors) and
 * the kernel's status for everyone (starting / idle / busy / restarting / offline, with a one-line
 * explanation when offline). Commands go into the document through the shared helpers.
 */
import { requestInterrupt, requestRestart, requestRunAll, requestRunStale, type KernelState } from '@plexus/shared';
import { useCanEdit, useSession, useSessionSnapshot } from '../../collab/context.tsx';
import { requesterOf } from './requester.ts';
import { useKernelStatus } from './useCellRun.ts';

const ACTIONS = [
  { id: 'run-all', label: 'Run all', title: 'Run every code and SQL cell in dependency order', f: requestRunAll },
  { id: 'run-stale', label: 'Run stale', title: 'Run the cells whose output is stale or missing (and their dependents)', f: requestRunStale },
  { id: 'interrupt', label: 'Interrupt', title: 'Stop the running cell and drop the queue', f: requestInterrupt },
  { id: 'restart', label: 'Restart', title: 'Fresh kernel: every value forgotten, every output marked stale', f: requestRestart },
] as const;

const STATE_TEXT: Record<KernelState, string> = { starting: 'starting', idle: 'idle', busy: 'busy', restarting: 'restarting', offline: 'offline' };

export function KernelBar() {
  const session = useSession();
  const canEdit = useCanEdit();
  const status = useKernelStatus(session.doc);
  const connection = useSessionSnapshot().status;
  const busyWith = status.state === 'busy' && status.queue.length ? ` · ${status.queue.length} queued` : '';
  return (
    <div className="kernel-bar">
      {canEdit &&
        ACTIONS.map((a) => (
          <button
            key={a.id}
            className={`btn btn-small${a.id === 'interrupt' ? ' btn-danger-quiet' : ''}`}
            data-testid={`kernel-${a.id}`}
            title={a.title}
            onClick={() => a.f(session.doc, requesterOf(session), session.origin)}
          >
            {a.label}
          </button>
        ))}
      <span className={`kernel-status kernel-${status.state}`} data-testid="kernel-status" data-state={status.state} title={`Kernel: ${STATE_TEXT[status.state]}${status.message ? ` — ${status.message}` : ''}`} aria-label={`Kernel ${STATE_TEXT[status.state]}`}>
        <span className="kernel-dot" /> {STATE_TEXT[status.state]}
        {busyWith}
      </span>
      {connection !== 'connected' ? (
        <span className="muted kernel-offline" data-testid="kernel-offline-reason">
          Not connected to the server: cells run once it is back (run requests made now are kept).
        </span>
      ) : (
        status.state === 'offline' && (
          <span className="muted kernel-offline" data-testid="kernel-offline-reason">
            {status.message ?? 'No kernel has joined this workspace yet: run requests wait until one starts.'}
          </span>
        )
      )}
    </div>
  );
}
