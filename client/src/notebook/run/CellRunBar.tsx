/**
 * A code or SQL cell's run header: Run button (editors), run state (queued / running with elapsed
 * time / done / error / cancelled), execution count `[n]`, duration, who asked, and the stale
 * badge. Renders from the document only, so everyone sees the same.
 */
import { useEffect, useState } from 'react';
import type { CellRunView } from '@plexus/shared';
import { useNotebook } from '../controller.ts';

const STATE_LABEL: Record<CellRunView['state'], string> = {
  idle: 'not run', queued: 'queued', running: 'running', done: 'done', error: 'error', cancelled: 'cancelled',
};

/** "850 ms", "2.4 s", "1 min 12 s". Pure. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

function Elapsed({ since }: { since: number }) {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 200);
    return () => clearInterval(t);
  }, []);
  return <span data-testid="cell-elapsed">{formatDuration(Math.max(0, now - since))}</span>;
}

interface Props {
  cellId: string;
  run: CellRunView;
  canEdit: boolean;
}

export function CellRunBar({ cellId, run, canEdit }: Props) {
  const notebook = useNotebook();
  const { exec, pending } = run;
  const who = pending?.requestedBy ?? exec?.requestedBy ?? null;
  const waiting = run.requested && run.state !== 'queued' && run.state !== 'running';
  const title = exec?.reason ?? (waiting ? 'Run requested; waiting for the kernel' : undefined);
  return (
    <div className="run-bar">
      {canEdit && (
        <button
          className="run-btn"
          data-testid="cell-run"
          title="Run this cell and its dependents (Ctrl+Enter; Shift+Enter runs and moves on)"
          aria-label="Run cell"
          onClick={() => notebook.run(cellId)}
        >
          ▶
        </button>
      )}
      <span className="run-count" data-testid="cell-count">
        [{run.state === 'queued' ? '*' : (exec?.count ?? ' ')}]
      </span>
      <span className={`run-state run-${run.state}`} data-testid="cell-status" data-state={run.state} data-requested={waiting ? 'true' : 'false'} title={title}>
        {waiting ? 'requested' : STATE_LABEL[run.state]}
        {run.state === 'running' && exec && (
          <>
            {' '}
            <Elapsed since={exec.startedAt} />
          </>
        )}
      </span>
      {exec?.durationMs != null && run.state !== 'running' && run.state !== 'queued' && (
        <span className="run-meta" data-testid="cell-duration">
          {formatDuration(exec.durationMs)}
        </span>
      )}
      {who && (
        <span className="run-meta" data-testid="cell-by" title={`Run asked by ${who.name ?? who.id}`}>
          by {who.name ?? who.id}
        </span>
      )}
      {!who && exec && exec.trigger !== 'request' && <span className="run-meta">({exec.trigger})</span>}
      {run.stale && (
        <span className="stale-badge" data-testid="cell-stale" title={run.staleReason ?? undefined}>
          stale
        </span>
      )}
    </div>
  );
}
