/** Words for analysis jobs: a stage's progress line, status labels, durations. Pure module. */
import type { JobProgress, JobRequester, JobStatus } from '@plexus/shared';

/** What one step of a stage counts (shown after "done / total"). */
const STAGE_UNITS: Record<string, string> = {
  registration: 'frames',
  extraction: 'frames',
  reading: 'frames',
  traces: 'ROIs',
  template: 'passes',
};

/** Stage names as people read them (the pipeline's own names otherwise). */
const STAGE_LABELS: Record<string, string> = { template: 'reference image', writing: 'writing results' };
/** A stage's name for people. */
export const stageLabel = (stage: string): string => STAGE_LABELS[stage] ?? stage;

/** "~12 s left", "~3 min left"; empty when unknown. */
export function etaText(eta: number | null): string {
  if (eta === null || !Number.isFinite(eta)) return '';
  if (eta < 60) return `~${Math.max(1, Math.round(eta))} s left`;
  if (eta < 3600) return `~${Math.round(eta / 60)} min left`;
  return `~${(eta / 3600).toFixed(1)} h left`;
}

/** "registration 412 / 900 frames · ~12 s left"; a one-step stage is just its name ("detection"). */
export function progressText(p: JobProgress): string {
  const name = stageLabel(p.stage);
  const parts = [p.total > 1 ? `${name} ${p.done.toLocaleString()} / ${p.total.toLocaleString()}${STAGE_UNITS[p.stage] ? ` ${STAGE_UNITS[p.stage]}` : ''}` : name];
  const eta = etaText(p.eta);
  if (eta) parts.push(eta);
  return parts.join(' · ');
}

/** The fraction of a stage done (0…1), or null for a stage that only starts and ends (an indeterminate bar). */
export function progressFraction(p: JobProgress): number | null {
  if (p.total <= 1 && p.done === 0) return null;
  return Math.max(0, Math.min(1, p.done / Math.max(1, p.total)));
}

export const STATUS_TEXT: Record<JobStatus, string> = { queued: 'queued', running: 'running', done: 'done', error: 'failed', stopped: 'stopped' };

/** "12.3 s", "4 min 5 s". */
export function durationText(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const m = Math.floor(seconds / 60);
  return `${m} min ${Math.round(seconds - m * 60)} s`;
}

/** "1 ROI", "48 ROIs". */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/**
 * Who started a job, as people know them. The server records the token's subject (and a name only
 * when the token carries one); while the person is here, their chosen name is in the presence —
 * used when exactly one name goes with that subject (a shared link may stand for several people).
 */
export function requesterLabel(r: JobRequester, people: ReadonlyArray<{ sub?: string; name: string }>): string {
  if (r.name) return r.name;
  const names = new Set(people.filter((p) => p.sub === r.id).map((p) => p.name));
  return names.size === 1 ? [...names][0]! : r.id;
}
