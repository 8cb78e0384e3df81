/**
 * Background compactions of a workspace run one at a time, and a request made while one runs is
 * never handed that one's result (it may have read the log before the caller's entries): it runs
 * after it. The shutdown flake of postgres-store.test.ts (one entry left after SIGTERM) was an
 * unload's request merged into the previous unload's compaction, which had already read the log.
 */
import { describe, expect, it } from 'vitest';
import { CompactionRuns } from '../../src/store/compaction-runs.ts';

/** A `run` whose calls the test settles by hand. */
function manualRuns() {
  const calls: Array<{ ws: string; resolve: (n: number) => void; reject: (e: Error) => void }> = [];
  const runs = new CompactionRuns(
    (ws) =>
      new Promise<number>((resolve, reject) => {
        calls.push({ ws, resolve, reject });
      }),
  );
  return { runs, calls };
}

const settled = async <T>(p: Promise<T>) => {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  p.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  await new Promise((r) => setImmediate(r));
  return state;
};

describe('compaction runs', () => {
  it('a request made while one runs waits for it and runs after it; requests made meanwhile share that run', async () => {
    const { runs, calls } = manualRuns();
    const first = runs.request('w');
    expect(calls).toHaveLength(1);
    const second = runs.request('w');
    const third = runs.request('w');
    expect(calls).toHaveLength(1); // nothing more runs while the first does
    calls[0]!.resolve(10);
    expect(await first).toBe(10);
    expect(calls).toHaveLength(2); // the next run starts as the first ends…
    expect(await settled(second)).toBe('pending'); // …and the later requests get its result, not the first's
    calls[1]!.resolve(3);
    expect(await second).toBe(3);
    expect(await third).toBe(3);
    // Idle again: a new request runs at once.
    const fourth = runs.request('w');
    expect(calls).toHaveLength(3);
    calls[2]!.resolve(0);
    expect(await fourth).toBe(0);
  });

  it('workspaces do not wait for each other; a failed run still lets the next one run', async () => {
    const { runs, calls } = manualRuns();
    const a = runs.request('a');
    const b = runs.request('b');
    expect(calls.map((c) => c.ws)).toEqual(['a', 'b']);
    const again = runs.request('a');
    calls[0]!.reject(new Error('storage failed'));
    await expect(a).rejects.toThrow('storage failed');
    expect(calls.map((c) => c.ws)).toEqual(['a', 'b', 'a']);
    calls[2]!.resolve(5);
    expect(await again).toBe(5);
    calls[1]!.resolve(1);
    expect(await b).toBe(1);
  });

  it('a run that throws at once is a rejected request', async () => {
    const runs = new CompactionRuns(() => {
      throw new Error('no worker');
    });
    await expect(runs.request('w')).rejects.toThrow('no worker');
    await expect(runs.request('w')).rejects.toThrow('no worker');
  });
});
