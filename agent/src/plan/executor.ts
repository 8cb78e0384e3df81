/**
 * The executor: runs a plan's steps as a DAG, always from the latest plan in the document — steps
 * start when every step they depend on is done (up to `maxParallel` at once), steps people remove
 * or whose dependencies failed or were skipped are skipped with the reason, steps people add or
 * edit are picked up, and dependency cycles people create are skipped rather than waited on.
 * Deterministic: it acts only on document changes and step completions, never on time, so tests
 * drive it with gates.
 */
import type * as Y from 'yjs';
import { blockedSteps, findCycle, listPlanSteps, readySteps, updatePlanStep, type Origin, type PlanStepView } from '@plexus/shared';

export interface ExecutorDeps {
  doc: Y.Doc;
  runId: string;
  origin: Origin;
  maxParallel: number;
  signal: AbortSignal;
  /** Runs one step to an end state (done, failed or skipped), writing its statuses. Sets `running` before its first await. */
  runStep(step: PlanStepView): Promise<void>;
  /** Why the run stopped (for the steps it skips). */
  stopReason(): string;
  log(msg: string, extra?: Record<string, unknown>): void;
}

/** Resolves at the next change of `map` (deep) or when `signal` aborts. */
export function nextChange(map: Y.Map<unknown>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      map.unobserveDeep(done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    map.observeDeep(done);
    signal.addEventListener('abort', done, { once: true });
    if (signal.aborted) done();
  });
}

export async function executePlan(d: ExecutorDeps, runMap: Y.Map<unknown>): Promise<void> {
  const running = new Map<string, Promise<void>>();
  const skip = (s: PlanStepView, reason: string) => updatePlanStep(d.doc, d.runId, s.id, { status: 'skipped', reason, endedAt: Date.now() }, d.origin);
  for (;;) {
    const wake = nextChange(runMap, d.signal);
    if (d.signal.aborted) break;
    const steps = listPlanSteps(d.doc, d.runId);
    const blocked = blockedSteps(steps);
    if (blocked.length) {
      d.doc.transact(() => blocked.forEach((b) => skip(b.step, b.reason)), d.origin);
      continue;
    }
    const waiting = steps.filter((s) => s.status === 'pending' && !s.removed);
    const cycle = findCycle(waiting);
    if (cycle) {
      d.doc.transact(() => waiting.filter((s) => cycle.includes(s.id)).forEach((s) => skip(s, `its dependencies form a cycle (${cycle.join(' → ')})`)), d.origin);
      continue;
    }
    for (const s of readySteps(steps)) {
      if (running.size >= d.maxParallel) break;
      if (running.has(s.id)) continue;
      const p = d
        .runStep(s)
        .catch((e) => d.log('step crashed', { run: d.runId, step: s.id, err: String((e as Error)?.stack ?? e) }))
        .finally(() => running.delete(s.id));
      running.set(s.id, p);
    }
    if (running.size === 0) {
      // Nothing runs and nothing can start: pending steps wait on steps that will never finish.
      const stuck = listPlanSteps(d.doc, d.runId).filter((s) => s.status === 'pending' && !s.removed);
      if (stuck.length === 0) break;
      const ready = readySteps(listPlanSteps(d.doc, d.runId));
      if (ready.length) continue;
      d.doc.transact(() => stuck.forEach((s) => skip(s, 'it waits for steps that cannot run')), d.origin);
      continue;
    }
    await Promise.race([wake, ...running.values()]);
  }
  await Promise.allSettled([...running.values()]);
  // Stopped: what has not run is skipped, with the reason.
  const left = listPlanSteps(d.doc, d.runId).filter((s) => s.status === 'pending' || s.status === 'running' || s.status === 'verifying');
  if (left.length) d.doc.transact(() => left.forEach((s) => skip(s, d.stopReason())), d.origin);
}
