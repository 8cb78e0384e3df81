/**
 * Background compactions of each workspace, one at a time, shared by both stores.
 *
 * A request made while a compaction of the same workspace runs is not handed that one's result:
 * it may have read the log before the caller's entries were stored (one client's unload starts a
 * compaction, the next client stores an entry and leaves, its unload asks to fold everything), and
 * the caller would take the log for folded when it is not (seen: one entry left after SIGTERM). Such a request runs once the current one has ended;
 * every request made meanwhile shares that next run (it reads the log after all of them).
 * Effects: none of its own (it calls `run`).
 */
export class CompactionRuns {
  /** Workspaces with a compaction running, and what starts the one queued after it (if any). */
  private readonly runs = new Map<string, { next: Promise<number> | null; startNext: (() => void) | null }>();

  constructor(private readonly run: (ws: string) => Promise<number>) {}

  /** Folds every entry of `ws` stored when this is called (or gives up, as `run` does); resolves with the number folded. */
  request(ws: string): Promise<number> {
    const running = this.runs.get(ws);
    if (!running) return this.start(ws);
    return (running.next ??= new Promise<number>((resolve, reject) => {
      running.startNext = () => void this.start(ws).then(resolve, reject);
    }));
  }

  private start(ws: string): Promise<number> {
    const state: { next: Promise<number> | null; startNext: (() => void) | null } = { next: null, startNext: null };
    this.runs.set(ws, state);
    let running: Promise<number>;
    try {
      running = this.run(ws);
    } catch (e) {
      running = Promise.reject(e);
    }
    const ended = () => {
      this.runs.delete(ws);
      state.startNext?.();
    };
    running.then(ended, ended);
    return running;
  }
}
