/**
 * What an agent run is doing, inside its chat message: a status line (queued, running with steps
 * and elapsed time, done, stopped or error with the reason, tokens), the plan, the tool activity
 * as it happens, Stop / Undo run, and the audit of what the run changed. Everything is read from
 * the run in the document, so every collaborator sees the same.
 */
import { useEffect, useState } from 'react';
import { isFinished, MAX_ACTIVITY_ARGS_CHARS, requestRunStop, requestRunUndo, type ActivityStatus, type RunView } from '@plexus/shared';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { prettyArgs, undoneText } from './runText.ts';
import { useLocalUser } from '../state/user.ts';
import { PlanView } from './PlanView.tsx';

/** "4 s", "2 min 05 s". Pure. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/** Re-renders every second while `on`. */
function useTicker(on: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!on) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [on]);
  return on ? Math.max(now, Date.now()) : now;
}

const ACTIVITY_ICON: Record<ActivityStatus, string> = { running: '', done: '✓', error: '✕', proposed: '◇', refused: '⊘' };

function statusText(run: RunView, now: number): string {
  switch (run.status) {
    case 'queued':
      return 'queued — waiting for the agent';
    case 'running':
      return `running · step ${run.steps}${run.startedAt ? ` · ${formatDuration(now - run.startedAt)}` : ''}`;
    case 'done':
      return `done${run.startedAt && run.endedAt ? ` in ${formatDuration(run.endedAt - run.startedAt)}` : ''}`;
    case 'stopped':
      return `stopped${run.reason ? `: ${run.reason}` : ''}`;
    case 'error':
      return `error${run.reason ? `: ${run.reason}` : ''}`;
  }
}

/** One tool call: a line (tool, arguments in short, time, summary) that opens to the whole arguments and result. */
function ActivityCard({ a }: { a: RunView['activity'][number] }) {
  const [open, setOpen] = useState(false);
  const detail = !!a.args || a.summary.length > 80;
  return (
    <li className={`activity activity-${a.status}${open ? ' is-open' : ''}`} data-testid="agent-activity" data-status={a.status} data-tool={a.tool}>
      <button
        type="button"
        className="activity-head"
        aria-expanded={open}
        data-testid="agent-activity-toggle"
        disabled={!detail}
        title={detail ? (open ? 'Hide the arguments' : 'Show the whole arguments and result') : undefined}
        onClick={() => setOpen(!open)}
      >
        <span className="activity-icon" aria-label={a.status} title={a.status}>
          {a.status === 'running' ? <span className="spinner" /> : ACTIVITY_ICON[a.status]}
        </span>
        <code className="activity-tool">{a.tool}</code>
        {a.args && !open && <span className="activity-args">{a.args}</span>}
        {a.durationMs !== null && <span className="activity-time muted">{formatDuration(a.durationMs)}</span>}
      </button>
      {open && a.args && (
        <pre className="activity-args-full" data-testid="agent-activity-args">
          {prettyArgs(a.args)}
          {a.args.endsWith('…') && a.args.length >= MAX_ACTIVITY_ARGS_CHARS ? `\n(arguments cut at ${MAX_ACTIVITY_ARGS_CHARS.toLocaleString()} characters)` : ''}
        </pre>
      )}
      {a.summary && (
        <div className={`activity-summary${open ? ' is-whole' : ''}`} data-testid="agent-activity-summary" title={open ? undefined : a.summary}>
          {a.summary}
        </div>
      )}
    </li>
  );
}

/** The local person as a run requester / signaller. */
export function useWho(): { id: string; name: string } {
  const user = useLocalUser((s) => s.user);
  return { id: user.id, name: user.name };
}

/** A button that writes a signal (stop, undo) and shows it is pending until the agent acts on it. */
function SignalButton(p: { testId: string; label: string; pending: boolean; pendingText: string; className?: string; onClick(): void; children: string }) {
  return (
    <button className={`btn btn-small${p.className ? ` ${p.className}` : ''}`} data-testid={p.testId} aria-label={p.label} disabled={p.pending} onClick={p.onClick}>
      {p.pending ? p.pendingText : p.children}
    </button>
  );
}

export function RunBlock({ run }: { run: RunView }) {
  const session = useSession();
  const canEdit = useCanEdit();
  const who = useWho();
  const live = !isFinished(run.status);
  const now = useTicker(run.status === 'running');
  const [auditOpen, setAuditOpen] = useState(false);
  const stopping = live && !!run.stop;
  const undoing = !!run.undo && !run.undone;
  return (
    <div className={`run-block run-${run.status}`} data-testid="agent-run" data-run-id={run.id} data-status={run.status}>
      <div className="run-status-row">
        <span className="run-status" role="status" data-testid="agent-run-status" data-status={run.status}>
          {run.status === 'running' && <span className="spinner" aria-hidden="true" />}
          {statusText(run, now)}
        </span>
        {(run.tokens.prompt > 0 || run.tokens.completion > 0) && (
          <span className="run-tokens muted" data-testid="agent-run-tokens" title="Tokens used by this run (prompt / completion)">
            {run.tokens.prompt.toLocaleString()} / {run.tokens.completion.toLocaleString()} tokens
          </span>
        )}
        {live && canEdit && (
          <SignalButton testId="agent-run-stop" label="Stop this agent run" pending={stopping} pendingText="stopping…" className="btn-danger-quiet" onClick={() => requestRunStop(session.doc, run.id, who, session.origin)}>
            Stop
          </SignalButton>
        )}
        {isFinished(run.status) && canEdit && run.audit.length > 0 && !run.undone && (
          <SignalButton testId="agent-run-undo" label="Undo the changes of this agent run" pending={undoing} pendingText="undoing…" onClick={() => requestRunUndo(session.doc, run.id, who, session.origin)}>
            Undo run
          </SignalButton>
        )}
      </div>
      {run.undone && (
        <div className={`run-undone${run.undone.ok ? '' : ' is-error'}`} data-testid="agent-run-undone">
          {undoneText(run)}
        </div>
      )}
      <PlanView run={run} />
      {run.plan.length > 0 && (
        <ol className="run-plan" data-testid="agent-run-plan" aria-label="Plan">
          {run.plan.map((s, i) => (
            <li key={i} className={`plan-${s.status}`} data-status={s.status}>
              <span className="plan-mark" aria-label={s.status}>
                {s.status === 'done' ? '✓' : s.status === 'doing' ? '▸' : s.status === 'skipped' ? '–' : '○'}
              </span>
              {s.text}
            </li>
          ))}
        </ol>
      )}
      {run.activity.some((a) => !a.step) && (
        <ul className="run-activity" aria-label="Tool activity">
          {run.activity.filter((a) => !a.step).map((a) => (
            <ActivityCard key={a.id} a={a} />
          ))}
        </ul>
      )}
      {run.audit.length > 0 && (
        <div className="run-audit">
          <button className="link-btn" aria-expanded={auditOpen} data-testid="agent-run-audit-toggle" onClick={() => setAuditOpen(!auditOpen)}>
            {auditOpen ? '▾' : '▸'} {run.audit.length} change{run.audit.length === 1 ? '' : 's'} made
          </button>
          {auditOpen && (
            <ul data-testid="agent-run-audit">
              {run.audit.map((e, i) => (
                <li key={i}>
                  <code>{e.tool}</code> {e.change} <span className="muted">{e.target}</span>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}
