/**
 * Readiness of this node for new clients (`GET /api/ready`): a list of named checks — storage
 * today; a Redis or Postgres check is one more `add()` by the code that brings that dependency —
 * each run with a time limit so a dependency that hangs answers "not ready" instead of hanging the
 * probe. Effects: whatever the checks do (a trivial query each).
 */

export interface ReadinessCheck {
  /** The key in the report (`storage`, `redis`, …). */
  name: string;
  /** Resolves (or returns) when the dependency answers; throws or rejects when it does not. */
  check: () => unknown;
}

export interface CheckResult {
  ok: boolean;
  /** How long the check took (ms, 0.1 ms resolution). */
  ms: number;
  /** Why it failed (the dependency's own message). */
  error?: string;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckResult>;
  /** The names of the checks that failed. */
  failed: string[];
}

/** Longest one check may take before it counts as failed (ms). */
export const CHECK_TIMEOUT_MS = 2000;

async function runOne(c: ReadinessCheck, timeoutMs: number): Promise<CheckResult> {
  const started = performance.now();
  const ms = () => +(performance.now() - started).toFixed(1);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.resolve().then(c.check),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        timer.unref();
      }),
    ]);
    return { ok: true, ms: ms() };
  } catch (e) {
    return { ok: false, ms: ms(), error: e instanceof Error ? e.message : String(e) };
  } finally {
    clearTimeout(timer);
  }
}

export class Readiness {
  private readonly checks: ReadinessCheck[] = [];

  constructor(checks: ReadinessCheck[] = [], private readonly timeoutMs = CHECK_TIMEOUT_MS) {
    checks.forEach((c) => this.add(c));
  }

  /** Adds a check (a name may appear once). */
  add(check: ReadinessCheck): void {
    if (this.checks.some((c) => c.name === check.name)) throw new Error(`readiness check "${check.name}" is already registered`);
    this.checks.push(check);
  }

  /** Runs every check at once. */
  async run(): Promise<ReadinessReport> {
    const results = await Promise.all(this.checks.map((c) => runOne(c, this.timeoutMs)));
    const checks: Record<string, CheckResult> = {};
    this.checks.forEach((c, i) => (checks[c.name] = results[i]!));
    const failed = this.checks.filter((_, i) => !results[i]!.ok).map((c) => c.name);
    return { ready: failed.length === 0, checks, failed };
  }
}
