/**
 * An analysis run's shared plan, inside its chat message: how the agent understood the request
 * (clarified request, assumptions anyone may edit while it waits, parameters, alternatives as
 * chips — picked while it waits they re-plan, afterwards they ask again), the Go button, and the
 * steps as a live list: status, goal (editable while pending), what each waits for, the
 * verifier's verdict with its checks, the step's numbers and links to what it made; pending
 * steps can be removed, and anyone can add a step. Every edit is a write to the shared run, so
 * everyone sees and steers the same plan; the agent follows the latest one.
 */
import { useState } from 'react';
import {
  addPlanStep, editAssumptions, editStepGoal, getBrief, isStepFinished, listPlanSteps, pickAlternative, pressGo, removePlanStep, stepNumber,
  type PlanStepView, type ProvenanceLink, type RunView, type StepStatus, type SuggestedAction,
} from '@plexus/shared';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { useLocalUser } from '../state/user.ts';
import { runSuggestedAction } from './SuggestionBar.tsx';
import { sendChatMessage } from './send.ts';
import { useWho } from './RunBlock.tsx';

const STEP_ICON: Record<StepStatus, string> = { pending: '○', running: '', verifying: '', done: '✓', failed: '✕', skipped: '⊘' };
const STEP_LABEL: Record<StepStatus, string> = { pending: 'pending', running: 'running', verifying: 'verifying', done: 'done', failed: 'failed', skipped: 'skipped' };

/** The suggested action that follows a provenance link (focus a cell, open a table, load a view, show the analyses). */
export function provenanceAction(p: ProvenanceLink): SuggestedAction {
  switch (p.kind) {
    case 'cell':
      return { label: p.label, action: 'focus_cell', target: p.id };
    case 'table':
      return { label: p.label, action: 'open_table', target: p.id };
    case 'view':
      return { label: p.label, action: 'load_view', target: p.id };
    case 'job':
      return { label: p.label, action: 'open_viewer' };
  }
}

export function ProvenanceButtons({ links }: { links: ProvenanceLink[] }) {
  const session = useSession();
  if (!links.length) return null;
  return (
    <span className="step-links">
      {links.map((p) => (
        <button key={`${p.kind}:${p.id}`} className="link-btn" data-testid="plan-step-link" data-kind={p.kind} data-target={p.id} onClick={() => runSuggestedAction(session, provenanceAction(p))}>
          {p.label}
        </button>
      ))}
    </span>
  );
}

function GoalEditor({ runId, step }: { runId: string; step: PlanStepView }) {
  const session = useSession();
  const [editing, setEditing] = useState(false);
  if (!editing)
    return (
      <button className="step-goal link-btn" data-testid="plan-step-goal" title="Edit this step's goal (it has not started)" onClick={() => setEditing(true)}>
        {step.goal}
      </button>
    );
  return (
    <textarea
      className="step-goal-editor"
      data-testid="plan-step-goal-editor"
      autoFocus
      rows={2}
      value={step.goal}
      aria-label={`Goal of step ${step.id}`}
      onChange={(e) => editStepGoal(session.doc, runId, step.id, e.target.value, session.origin)}
      onBlur={() => setEditing(false)}
      onKeyDown={(e) => {
        if (e.key === 'Escape' || (e.key === 'Enter' && !e.shiftKey)) {
          e.preventDefault();
          setEditing(false);
        }
      }}
    />
  );
}

function StepRow({ run, step, steps }: { run: RunView; step: PlanStepView; steps: PlanStepView[] }) {
  const session = useSession();
  const canEdit = useCanEdit();
  const who = useWho();
  const [open, setOpen] = useState(false);
  const n = stepNumber(steps, step.id);
  const live = !isStepFinished(step.status);
  const editable = canEdit && step.status === 'pending' && !step.removed && (run.status === 'running' || run.status === 'queued');
  const waitsFor = step.dependsOn.map((d) => stepNumber(steps, d)).filter((x) => x > 0);
  const values = Object.entries(step.values);
  const activity = run.activity.filter((a) => a.step === step.id);
  return (
    <li className={`plan-step step-${step.status}${step.removed ? ' is-removed' : ''}`} data-testid="plan-step" data-step={step.id} data-status={step.status} data-removed={step.removed ? 'true' : undefined}>
      <div className="plan-step-head">
        <span className="step-icon" aria-label={STEP_LABEL[step.status]} title={STEP_LABEL[step.status]}>
          {step.status === 'running' || step.status === 'verifying' ? <span className="spinner" /> : STEP_ICON[step.status]}
        </span>
        <span className="step-number">{n}.</span>
        {editable ? <GoalEditor runId={run.id} step={step} /> : <span className="step-goal">{step.goal}</span>}
        {step.addedBy && <span className="muted step-by" title="Added by a person">+{step.addedBy.name ?? step.addedBy.id}</span>}
        {waitsFor.length > 0 && live && <span className="muted step-deps">after {waitsFor.join(', ')}</span>}
        {step.status === 'verifying' && <span className="muted">checking…</span>}
        {step.attempts > 1 && <span className="step-retry" title="The first attempt failed verification">retry</span>}
        {editable && (
          <button className="btn btn-small btn-danger-quiet" data-testid="plan-step-remove" title="Do not run this step" onClick={() => removePlanStep(session.doc, run.id, step.id, who, session.origin)}>
            Remove
          </button>
        )}
        {(step.verdict || activity.length > 0) && (
          <button className="link-btn" aria-expanded={open} data-testid="plan-step-toggle" onClick={() => setOpen(!open)}>
            {open ? 'less' : 'details'}
          </button>
        )}
      </div>
      {(step.summary || values.length > 0 || step.provenance.length > 0) && (step.status === 'done' || step.status === 'failed') && (
        <div className="plan-step-result" data-testid="plan-step-result">
          {step.summary && <span>{step.summary} </span>}
          {values.slice(0, 8).map(([k, v]) => (
            <code key={k} className="step-value">
              {k} = {typeof v === 'number' ? Math.round(v * 1000) / 1000 : v}
            </code>
          ))}
          <ProvenanceButtons links={step.provenance} />
        </div>
      )}
      {step.removed && step.status === 'pending' && (
        <div className="plan-step-reason" data-testid="plan-step-removed">
          removed by {step.removed.name ?? step.removed.by}: it will be skipped
        </div>
      )}
      {step.reason && step.status !== 'done' && (
        <div className={`plan-step-reason${step.status === 'failed' ? ' is-error' : ''}`} data-testid="plan-step-reason">
          {step.reason}
        </div>
      )}
      {open && step.verdict && (
        <ul className="plan-step-checks" data-testid="plan-step-checks" aria-label="Verification">
          {step.verdict.checks.map((c, i) => (
            <li key={i} className={c.passed ? 'check-ok' : 'check-failed'}>
              {c.passed ? '✓' : '✕'} <strong>{c.name}</strong> — {c.detail}
            </li>
          ))}
          {step.verdict.suggestions.map((s, i) => (
            <li key={`s${i}`} className="muted">
              suggestion: {s}
            </li>
          ))}
        </ul>
      )}
      {open && activity.length > 0 && (
        <ul className="plan-step-activity muted">
          {activity.map((a) => (
            <li key={a.id}>
              <code>{a.tool}</code> {a.summary}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

function AddStep({ run, steps }: { run: RunView; steps: PlanStepView[] }) {
  const session = useSession();
  const who = useWho();
  const [goal, setGoal] = useState('');
  const [after, setAfter] = useState<string>('');
  const add = () => {
    const g = goal.trim();
    if (!g) return;
    const dep = after || steps.at(-1)?.id;
    addPlanStep(session.doc, run.id, { goal: g, dependsOn: dep ? [dep] : [], afterId: dep ?? null }, who, session.origin);
    setGoal('');
  };
  return (
    <form
      className="plan-add"
      onSubmit={(e) => {
        e.preventDefault();
        add();
      }}
    >
      <input data-testid="plan-add-goal" placeholder="Add a step: its goal…" value={goal} maxLength={1000} onChange={(e) => setGoal(e.target.value)} aria-label="Goal of a new step" />
      <select data-testid="plan-add-after" value={after} onChange={(e) => setAfter(e.target.value)} aria-label="The step it builds on" title="The step it builds on">
        <option value="">after the last step</option>
        {steps.map((s, i) => (
          <option key={s.id} value={s.id}>
            after step {i + 1}
          </option>
        ))}
      </select>
      <button className="btn btn-small" type="submit" data-testid="plan-add" disabled={!goal.trim()}>
        Add step
      </button>
    </form>
  );
}

export function PlanView({ run }: { run: RunView }) {
  const session = useSession();
  const canEdit = useCanEdit();
  const who = useWho();
  const brief = getBrief(session.doc, run.id);
  const steps = listPlanSteps(session.doc, run.id);
  if (!brief && steps.length === 0) return null;
  const live = run.status === 'running' || run.status === 'queued';
  const waiting = !!brief?.waiting && live;
  const assumptions = brief?.assumptions ?? '';
  const params = Object.entries(brief?.parameters ?? {});
  const done = steps.filter((s) => s.status === 'done').length;
  const chooseAlternative = (alt: { label: string; request: string }) => {
    if (waiting) pickAlternative(session.doc, run.id, alt, who, session.origin);
    else sendChatMessage(session, useLocalUser.getState().user, alt.request, { toAgent: true, followUp: run.replyId ? { runId: run.id, messageId: run.replyId } : null });
  };
  return (
    <div className="plan-view" data-testid="plan-view" data-waiting={waiting ? 'true' : undefined}>
      {brief && (
        <div className="plan-brief" data-testid="plan-brief">
          <div className="plan-clarified">
            <strong>Plan:</strong> <span data-testid="plan-clarified">{brief.clarified}</span>
          </div>
          {(assumptions || waiting) && (
            <div className="plan-assumptions">
              <span className="muted">Assumptions{waiting && canEdit ? ' (edit before Go)' : ''}:</span>
              {waiting && canEdit ? (
                <textarea
                  data-testid="plan-assumptions-editor"
                  rows={Math.min(8, Math.max(2, assumptions.split('\n').length))}
                  value={assumptions}
                  aria-label="Assumptions, one per line"
                  onChange={(e) => editAssumptions(session.doc, run.id, e.target.value, session.origin)}
                />
              ) : (
                <ul data-testid="plan-assumptions">
                  {assumptions.split('\n').filter((l) => l.trim()).map((l, i) => (
                    <li key={i}>{l}</li>
                  ))}
                </ul>
              )}
            </div>
          )}
          {params.length > 0 && (
            <div className="plan-params muted" data-testid="plan-params">
              {params.map(([k, v]) => (
                <code key={k}>
                  {k} = {String(v)}
                </code>
              ))}
            </div>
          )}
          {brief.alternatives.length > 0 && canEdit && live && (
            <div className="plan-alternatives">
              <span className="muted">Or:</span>
              {brief.alternatives.map((a, i) => (
                <button key={i} className="chip" data-testid="plan-alternative" title={a.request} onClick={() => chooseAlternative(a)}>
                  {a.label}
                </button>
              ))}
            </div>
          )}
          {waiting && (
            <div className="plan-go">
              {canEdit ? (
                <button className="btn btn-primary btn-small" data-testid="plan-go" disabled={!!brief.go} onClick={() => pressGo(session.doc, run.id, who, session.origin)}>
                  {brief.go ? 'starting…' : 'Go'}
                </button>
              ) : null}
              <span className="muted">The agent waits for a Go before it runs the steps.</span>
            </div>
          )}
        </div>
      )}
      {steps.length > 0 && (
        <>
          <div className="plan-progress muted" data-testid="plan-progress">
            {done} of {steps.length} steps done
          </div>
          <ol className="plan-steps" aria-label="Plan steps">
            {steps.map((s) => (
              <StepRow key={s.id} run={run} step={s} steps={steps} />
            ))}
          </ol>
          {canEdit && live && <AddStep run={run} steps={steps} />}
        </>
      )}
    </div>
  );
}
