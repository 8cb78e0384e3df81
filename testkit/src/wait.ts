/**
 * Waiting on conditions (polling), for tests and benchmarks. Not a timing device: tests wait for
 * states. The default limits only catch hangs, so they are generous: a 2-core machine under
 * stress-ng stretches a quiet second several times.
 */

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value (or stops throwing); fails after `timeout` ms. Returns the value. */
export async function waitFor<T>(fn: () => T | Promise<T>, { timeout = 30_000, interval = 10, message = 'condition' } = {}): Promise<T> {
  const end = Date.now() + timeout;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${message}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    await sleep(interval);
  }
}

/** Resolves when `pred` holds, polling every `interval` ms; rejects after `timeout` ms (a throw in `pred` rejects at once). */
export async function until(pred: () => boolean, timeout = 30_000, interval = 5, what = 'condition'): Promise<void> {
  const end = Date.now() + timeout;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(interval);
  }
}

/**
 * `p`, or a failure naming `what` after `timeout` ms: a hang guard for steps that have no limit of
 * their own (a client's first sync, a database restart), so a stuck step says which it was instead
 * of running into the test's own time limit.
 */
export async function within<T>(p: Promise<T>, what: string, timeout = 120_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeout / 1000} s waiting for ${what}`)), timeout);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
