/** Texts of the run block that are worth testing alone. Pure. */
import type { RunView } from '@plexus/shared';

/**
 * The undo line: who undid the run and what it reverted, once ("Undone by Ana — 3 changes
 * reverted"), whatever the agent wrote in its outcome message ("undone by Ana (3 changes
 * reverted)" is read as the same who and detail). Pure.
 */
export function undoneText(run: Pick<RunView, 'undone' | 'undo'>): string {
  const u = run.undone;
  if (!u) return '';
  const who = run.undo?.name ?? u.by;
  let detail = (u.message ?? '').trim();
  const repeat = detail.match(/^undone by [^(]*?(?:\((.*)\))?$/i);
  if (repeat) detail = repeat[1] ?? '';
  if (!u.ok) return detail ? `Undo failed — ${detail}` : 'Undo failed';
  return detail ? `Undone by ${who} — ${detail}` : `Undone by ${who}`;
}

/** Arguments as people read them: pretty JSON when they parse, else as the model sent them. */
export function prettyArgs(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

