/**
 * Gates: deterministic interleaving for kernel tests. A cell awaits a gate (its source contains
 * `gateCall('key')`, a `volumes.histogram('__gate', key)` call that reaches the server through the
 * runner's real sampling channel); the server is started with `gates.wrapSample` as its sampler
 * hook. A held gate keeps the cell running until the test opens it, so "while the cell runs" is a
 * state the test waits for, never a duration it hopes is long enough.
 */
import * as Y from 'yjs';

type Sampler = (op: string, dataset: string, layer: string, params: Record<string, string>) => Promise<unknown>;

export const GATE_DATASET = '__gate';

/** JS source that awaits the gate named by the JS expression `keyExpr` (e.g. `"'a'"` or `"w0 + '/3'"`). */
export function gateCallExpr(keyExpr: string): string {
  return `await volumes.histogram(${JSON.stringify(GATE_DATASET)}, String(${keyExpr}));`;
}

/** JS source that awaits the gate `key`. */
export function gateCall(key: string): string {
  return gateCallExpr(JSON.stringify(key));
}

export class Gates {
  private readonly held = new Map<string, { promise: Promise<void>; open: () => void }>();
  private readonly arrivals = new Map<string, number>();
  private waiters: Array<{ key: string; n: number; resolve: () => void }> = [];

  /** The server hook (`startServer(config, { wrapSample })`): gate calls here, the rest to the real sampler. */
  readonly wrapSample = (next: Sampler): Sampler => (op, dataset, layer, params) => (dataset === GATE_DATASET ? this.pass(layer) : next(op, dataset, layer, params));

  /** From now on, a cell reaching `key` waits there until `open(key)`. Keys not held pass at once. */
  hold(key: string): void {
    if (this.held.has(key)) return;
    let open!: () => void;
    const promise = new Promise<void>((r) => (open = r));
    this.held.set(key, { promise, open });
  }

  /** Releases the cells waiting at `key` (and lets later arrivals pass). */
  open(key: string): void {
    const g = this.held.get(key);
    this.held.delete(key);
    g?.open();
  }

  /** Opens every held gate (end of a test: abandoned runs may still wait). */
  openAll(): void {
    for (const key of [...this.held.keys()]) this.open(key);
  }

  /** How many times a cell has reached `key`. */
  count(key: string): number {
    return this.arrivals.get(key) ?? 0;
  }

  /** Resolves once a cell has reached `key` `n` times in all. */
  arrived(key: string, n = 1): Promise<void> {
    if (this.count(key) >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ key, n, resolve }));
  }

  private async pass(key: string): Promise<unknown> {
    this.arrivals.set(key, this.count(key) + 1);
    this.waiters = this.waiters.filter((w) => (w.key === key && this.count(key) >= w.n ? (w.resolve(), false) : true));
    await this.held.get(key)?.promise;
    return { gate: key };
  }
}

/**
 * True when `target` holds every update `source` holds, insertions and deletions alike (so a peer
 * whose replica is `target` has seen everything `source` did).
 */
export function hasAllOf(target: Y.Doc, source: Y.Doc): boolean {
  const have = Y.snapshot(target);
  const want = Y.snapshot(source);
  for (const [client, clock] of want.sv) if ((have.sv.get(client) ?? 0) < clock) return false;
  for (const [client, ranges] of want.ds.clients)
    for (const { clock, len } of ranges) for (let c = clock; c < clock + len; c++) if (!Y.isDeleted(have.ds, Y.createID(client, c))) return false;
  return true;
}
