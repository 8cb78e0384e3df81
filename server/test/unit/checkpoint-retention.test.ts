/** Which checkpoints retention forgets: named ones never; automatic ones beyond the newest few, one per day kept for a month. */
import { describe, expect, it } from 'vitest';
import type { CheckpointRecord } from '@plexus/shared';
import { checkpointsToDrop } from '../../src/history/retention.ts';

const DAY = 86_400_000;
const now = 100 * DAY;
const cp = (id: string, at: number, kind: CheckpointRecord['kind'] = 'activity'): CheckpointRecord => ({ id, label: id, kind, by: { id: 'x', kind: 'server' }, at, bytes: 1, cells: 0 });

describe('checkpoint retention', () => {
  it('keeps every named checkpoint, the newest automatic ones, and the newest of each older day within the window', () => {
    const records = [
      cp('named-old', now - 90 * DAY, 'named'),
      ...Array.from({ length: 5 }, (_, i) => cp(`recent${i}`, now - i * 1000)),
      cp('today-older-a', now - 3 * 3600_000),
      cp('today-older-b', now - 4 * 3600_000, 'agent-run'),
      cp('yesterday-late', now - DAY - 1000),
      cp('yesterday-early', now - DAY - 5 * 3600_000),
      cp('last-month', now - 40 * DAY),
    ];
    const drop = checkpointsToDrop(records, now, { keepRecent: 5, keepDays: 30 });
    expect(drop.sort()).toEqual(['last-month', 'today-older-b', 'yesterday-early']);
  });

  it('drops nothing while there are few', () => {
    expect(checkpointsToDrop([cp('a', now), cp('b', now - 1)], now)).toEqual([]);
  });
});
