/**
 * The closing message of an analysis: how many steps were done, failed or skipped; each step's
 * key numbers and what it produced as links (`[cell 3](plexus:cell/<id>)`: the chat renders them
 * as buttons that focus the cell, open the table, load the view or show the job); what failed
 * and why; and the method notes the plan drew on. Written from the plan in the document, so it
 * states only what the steps recorded. Pure.
 */
import type { PlanStepView, ProvenanceLink } from '@plexus/shared';

const ICON: Record<PlanStepView['status'], string> = { pending: '·', running: '…', verifying: '…', done: '✓', failed: '✕', skipped: '⊘' };

const oneLine = (s: string, n: number) => {
  const f = s.replace(/\s+/g, ' ').trim();
  return f.length <= n ? f : f.slice(0, n - 1) + '…';
};

export const provenanceHref = (p: ProvenanceLink): string => `plexus:${p.kind}/${encodeURIComponent(p.id)}`;

const fmtValue = (v: number | string) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000)) : oneLine(v, 60));

export function analysisSummary(steps: PlanStepView[], opts: { stopped: string | null; sources: string[] }): string {
  const count = (s: PlanStepView['status']) => steps.filter((x) => x.status === s).length;
  const done = count('done');
  const failed = count('failed');
  const skipped = count('skipped');
  const head = opts.stopped
    ? `**Analysis stopped** — ${done} of ${steps.length} steps done before it stopped (${opts.stopped}).`
    : `**Analysis ${failed ? 'finished with failures' : 'done'}** — ${done} of ${steps.length} steps done${failed ? `, ${failed} failed` : ''}${skipped ? `, ${skipped} skipped` : ''}.`;
  const lines = [head, ''];
  steps.forEach((s, i) => {
    const values = Object.entries(s.values).slice(0, 6).map(([k, v]) => `\`${k} = ${fmtValue(v)}\``).join(', ');
    const links = s.provenance.slice(0, 6).map((p) => `[${p.label}](${provenanceHref(p)})`).join(' ');
    let detail: string;
    if (s.status === 'done') detail = `${oneLine(s.summary, 300)}${values ? ` ${values}` : ''}${links ? ` → ${links}` : ''}`;
    else if (s.status === 'failed') detail = `failed: ${oneLine(s.reason ?? s.verdict?.issues.join('; ') ?? '', 300)}${links ? ` → ${links}` : ''}`;
    else if (s.status === 'skipped') detail = `skipped: ${oneLine(s.reason ?? '', 200)}`;
    else detail = s.status;
    const retried = s.attempts > 1 ? ' (retried once)' : '';
    lines.push(`${i + 1}. ${ICON[s.status]} **${oneLine(s.goal, 120)}**${retried} — ${detail}`);
  });
  if (opts.sources.length) lines.push('', `Method notes used: ${opts.sources.map((s) => `(from ${s})`).join(', ')}`);
  return lines.join('\n');
}
