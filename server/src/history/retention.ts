/**
 * Which checkpoints to forget, so storage stays bounded while the history still reaches back:
 * named checkpoints are kept until someone deletes them; of the automatic ones the newest
 * `keepRecent` are kept, then the newest of each day for `keepDays` days, and older ones go.
 * Pure.
 */
import type { CheckpointRecord } from '@plexus/shared';

export interface RetentionPolicy {
  keepRecent: number;
  keepDays: number;
}

export const DEFAULT_RETENTION: RetentionPolicy = { keepRecent: 20, keepDays: 30 };

const DAY = 86_400_000;

/** Ids of the checkpoints the policy drops (records in any order). */
export function checkpointsToDrop(records: CheckpointRecord[], now: number, policy: RetentionPolicy = DEFAULT_RETENTION): string[] {
  const auto = records.filter((r) => r.kind !== 'named').sort((a, b) => b.at - a.at);
  const drop: string[] = [];
  const daysSeen = new Set<number>();
  auto.forEach((r, i) => {
    if (i < policy.keepRecent) return;
    const day = Math.floor(r.at / DAY);
    if (now - r.at <= policy.keepDays * DAY && !daysSeen.has(day)) daysSeen.add(day);
    else drop.push(r.id);
  });
  return drop;
}
