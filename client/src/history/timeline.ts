/** The history panel's list: checkpoints and journal entries interleaved, newest first. Pure. */
import type { CheckpointRecord } from '@plexus/shared';
import type { HistoryEntry } from './api.ts';

export type TimelineItem = { type: 'checkpoint'; at: number; checkpoint: CheckpointRecord } | { type: 'entry'; at: number; entry: HistoryEntry };

export function timeline(checkpoints: CheckpointRecord[], entries: HistoryEntry[]): TimelineItem[] {
  const items: TimelineItem[] = [
    ...checkpoints.map((checkpoint) => ({ type: 'checkpoint' as const, at: checkpoint.at, checkpoint })),
    ...entries.map((entry) => ({ type: 'entry' as const, at: entry.end, entry })),
  ];
  // Newest first; at the same moment the checkpoint first (it was taken after that change).
  return items.sort((a, b) => b.at - a.at || (a.type === b.type ? 0 : a.type === 'checkpoint' ? -1 : 1));
}

/** 1.2 MB, 340 kB, 12 B. */
export function formatBytes(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${Math.round(n / 1e3)} kB`;
  return `${n} B`;
}
