/**
 * The kernel of one workspace: a peer of the workspace document (origin `kernel`) that reads run
 * requests and commands from the document, keeps the dependency graph, runs cells one at a time in
 * topological order in the sandboxed JS and SQL runtimes, and writes status and outputs back. It
 * reaches the document one of two ways: as a Hocuspocus client with a service token and a replica
 * of its own (a kernel process of its own, `npm run kernel`: a ServicePeer), or — inside the sync
 * server — on the server's live document itself (`doc` + `release`: no replica, no socket, no
 * second apply of every keystroke). No lock anywhere: every decision is taken on the document
 * between two runs, and each run writes only into its own `exec` map (docs/architecture.md,
 * "Kernel", lists each race and its outcome). Its engines and clock are replaceable: `begin()` on
 * an in-memory document with scripted engines and a manual clock is how its scheduling is tested
 * step by step.
 * Effects: network (its connection, if any), child processes (its engines), files (large results), timers (its clock).
 */
import { ServicePeer } from '@plexus/peer';
import * as Y from 'yjs';
import {
  KERNEL_COMMANDS, KERNEL_ORIGIN, MAX_STREAM_CHARS, TABLE_PREVIEW_ROWS, ackRequest, analyzeCell, ancestors, appendStream, buildGraph,
  cellSource, isRunnableCell, describeGraphError, descendants, finishExec, getCell, listCells, listTables, pendingRequests, readCommand,
  readExec, readKernelStatus, recordExec, runSource, setPending, setStale, sourceHash, staleCells, startExec, topoOrder, writeKernelStatus,
  type CellAnalysis, type CellOutput, type CellView, type KernelCommandKind, type KernelStatus, type NotebookGraph,
  type Requester, type RunTrigger, randomId, abandonKernelMarks, notebookGraphChanges, onlyEditsCellSources, requestChanges, roots,
} from '@plexus/shared';
import type { Logger } from '../log.ts';
import { compileJsCell, type CompiledCell } from './compile.ts';
import type { RunInput, RunOutcome, VolumeSampler } from './js-runtime.ts';
import type { SqlQuery } from './sql-runtime.ts';
import { sandboxedEngines, type JsEngine, type KernelEngines, type SqlEngine } from './engines.ts';
import { systemClock, type KernelClock, type KernelTimer } from './kernel-clock.ts';
import { KernelWrites } from './kernel-writes.ts';
import { ResultStore, admitOutputs, jsonRow } from './results.ts';

export interface KernelLimits {
  timeoutMs: number;
  memoryMb: number;
  sqlMemoryMb: number;
  /** DuckDB's worker threads per workspace (default 2). */
  sqlThreads?: number;
  /** Read SQL results a chunk per call into DuckDB (sql-runtime.ts, chunkHops; benchmarks' baseline). */
  sqlChunkHops?: boolean;
  /** Small SQL queries on one DuckDB thread (sql-runtime.ts, adaptiveThreads; default true). */
  sqlAdaptiveThreads?: boolean;
  /** Rows of an SQL result handed to JavaScript cells as its value. */
  sqlRowsToJs: number;
  maxFrameBytes: number;
}

export interface WorkspaceKernelOptions {
  workspaceId: string;
  /** Base URL of the sync server (http://host:port); with `token`, what start() connects to. */
  serverUrl?: string;
  token?: () => string;
  /**
   * The document to serve. Without `serverUrl`, start() serves it as it is (the sync server's live
   * document, or a test's in-memory one); with it, it is the replica the connection syncs
   * (default: a fresh one).
   */
  doc?: Y.Doc;
  /** Called once by stop() after the kernel's last write: whoever lent `doc` may let it go. */
  release?: () => Promise<void>;
  /** What cells run in (default: the sandboxed runtimes). */
  engines?: KernelEngines;
  /** Timers and "later" (default: Node's; tests drive a manual one). */
  clock?: KernelClock;
  /** Per-workspace directory: scratch (cwd of children), results, tables. */
  dir: string;
  tablesDir: string;
  uid?: number;
  limits: KernelLimits;
  log: Logger;
  /** Server-side volume sampling for cells (`volumes.histogram/trace`). */
  sample?: VolumeSampler;
  /** Analysis jobs for cells (`calcium.start/status`), for this workspace and the cell's requester. */
  jobs?: WorkspaceJobCaller;
  /** Send chains of trivial JavaScript cells to the runner ahead, one batch per chain (default true; false: one round trip per cell, the benchmarks' baseline). */
  runAhead?: boolean;
  /** Write a fast cell's run whole, and settle a run that ends into, one plain value (default true; false: every run a map of keys and outputs, the benchmarks' baseline). */
  plainRuns?: boolean;
}

/** Starts or reads an analysis job of workspace `ws` for a cell run requested by `by`. */
export type WorkspaceJobCaller = (ws: string, op: string, args: Record<string, unknown>, by: Requester | null) => Promise<unknown>;

interface QueueItem {
  cellId: string;
  runId: string;
  trigger: RunTrigger;
  requestId: string | null;
  requestedBy: Requester | null;
  queuedAt: number;
}

/** A cell whose values live in the current runtimes. */
interface Live {
  defs: string[];
  runId: string;
  kind: 'code' | 'sql';
  /** SQL cells: whether its result is also a temporary table (only when an SQL cell reads it). */
  table?: boolean;
  /** SQL cells: whether its rows are also a JavaScript value (only when a cell reads them as one). */
  value?: boolean;
}

/** A cell's source (`src`), what its run records (`run`: SQL cells with their name) and that's hash. */
interface CellSourceParts {
  src: string;
  run: string;
  hash: string;
}

interface Running {
  item: QueueItem;
  hash: string;
  kind: 'code' | 'sql';
  cancelled: string | null;
}

/** The names a cell reads that other cells define, and those of them more than one cell defines. */
function inputsOf(a: CellAnalysis, g: NotebookGraph): { inputs: string[]; duplicated: string[] } {
  const inputs = a.refs.filter((r) => g.definers.has(r) && !a.defs.includes(r));
  return { inputs, duplicated: inputs.filter((r) => g.definers.get(r)!.length > 1) };
}

const STREAM_FLUSH_MS = 100;
/** Most trivial cells sent to the runner ahead in one batch. */
const AHEAD_MAX_CELLS = 256;
const START_WRITE_DELAY_MS = 15;

export class WorkspaceKernel {
  readonly doc: Y.Doc;
  private readonly clock: KernelClock;
  private readonly engines: KernelEngines;
  private readonly writes: KernelWrites;
  /** Its connection to the document (the same kind as the agent's: @plexus/peer). */
  private peer: ServicePeer | null = null;
  private js!: JsEngine;
  private sql!: SqlEngine;
  private readonly results: ResultStore;
  private generation = 0;
  private count = 0;
  private handled: KernelStatus['handled'] = {};
  private queue: QueueItem[] = [];
  private running: Running | null = null;
  private readonly live = new Map<string, Live>();
  /** Last analysis per cell (kept after a delete until the delete is processed). */
  private readonly analyses = new Map<string, { hash: string; kind: string; a: CellAnalysis }>();
  private graphCache: NotebookGraph | null = null;
  /** What each runnable cell brought to the cached graph (its definitions and references, as one key). */
  private readonly graphInputs = new Map<string, string>();
  /** Cells whose source text was edited since the graph was built: their part is checked when it is next read. */
  private readonly graphEdited = new Set<string>();
  /** How often the dependency graph was built (tests: an edit that keeps what a cell defines and reads keeps the graph). */
  graphBuilds = 0;
  /**
   * What the next tick must look at again (onTransaction): whether cells were added or removed
   * (deletions), and the cells whose run request changed ('all': every cell). A tick that a viewer's
   * camera or a chat message brings then costs nothing per cell of a long notebook.
   */
  private cellsChanged = true;
  private asked: 'all' | Set<string> = 'all';
  /** Ticks that read every cell's run request, and cells read one by one otherwise (tests). */
  readonly requestReads = { everyCell: 0, cells: 0 };
  private tickScheduled = false;
  private readonly cells: object;
  private draining = false;
  private stopped = false;
  private tablesKey = '';
  private readonly cellRefs = new Map<string, string[]>();
  /** Each JavaScript cell's compiled form, for its source and inputs (compiled once when sent ahead). */
  private readonly compiled = new Map<string, { key: string; c: CompiledCell }>();
  private readonly sources = new Map<string, CellSourceParts>();
  /** The cells of the batch last sent ahead, by run id. */
  private aheadRuns = new Map<string, string>();
  private message: string | undefined;

  constructor(private readonly opts: WorkspaceKernelOptions) {
    this.doc = opts.doc ?? new Y.Doc();
    this.cells = roots(this.doc).cells;
    this.clock = opts.clock ?? systemClock;
    this.engines = opts.engines ?? sandboxedEngines;
    this.writes = new KernelWrites(this.doc, this.clock, () => this.status());
    this.results = new ResultStore(`${opts.dir}/results`);
    this.newRuntimes();
  }

  get id(): string {
    return this.opts.workspaceId;
  }

  /** True while a cell runs or waits. */
  get busy(): boolean {
    return this.running !== null || this.queue.length > 0;
  }

  /** Large results of this workspace (HTTP `GET /results/:ref`). */
  get resultStore(): ResultStore {
    return this.results;
  }

  private newRuntimes(): void {
    const { limits, dir, uid } = this.opts;
    const scratch = `${dir}/scratch`;
    this.js = this.engines.js({ cwd: scratch, uid, memoryMb: limits.memoryMb, timeoutMs: limits.timeoutMs, maxFrameBytes: limits.maxFrameBytes, sample: this.opts.sample,
      job: (op, args) => (this.opts.jobs ? this.opts.jobs(this.opts.workspaceId, op, args, this.running?.item.requestedBy ?? null) : Promise.reject(new Error('analysis jobs are not available in this kernel'))) });
    this.js.onAheadDropped = (runIds) => this.aheadDropped(runIds);
    this.tablesKey = this.tablesSignature();
    this.sql = this.engines.sql({
      cwd: scratch, uid, memoryMb: limits.sqlMemoryMb, threads: limits.sqlThreads, chunkHops: limits.sqlChunkHops, adaptiveThreads: limits.sqlAdaptiveThreads, timeoutMs: limits.timeoutMs, maxFrameBytes: limits.maxFrameBytes,
      tables: listTables(this.doc).map((t) => ({ name: t.name, file: `${this.opts.tablesDir}/${t.name}.duckdb` })),
    });
    this.sql.onAheadDropped = (cellIds) => this.sqlAheadDropped(cellIds);
    this.js.start().catch(() => {});
  }

  private tablesSignature(): string {
    return listTables(this.doc).map((t) => `${t.name}:${t.created}`).join(',');
  }

  /**
   * Starts serving requests: on the document it was given (no server URL), or once connected and
   * synced (server URL and token).
   */
  async start(): Promise<void> {
    const { serverUrl, token } = this.opts;
    if (!serverUrl && this.opts.doc) return this.begin();
    if (!serverUrl || !token) throw new Error('a kernel needs a document to serve, or a server URL and a token to connect with');
    this.peer = new ServicePeer({ serverUrl, workspaceId: this.opts.workspaceId, doc: this.doc, token });
    // A stop while connecting (server shutting down) closes the peer, which ends this wait.
    await this.peer.synced;
    this.begin();
  }

  /**
   * Starts serving requests on the replica as it is now (start() calls it once synced; a test
   * calls it on an in-memory document). Picks up where the last kernel of the workspace left off.
   */
  begin(): void {
    if (this.stopped) return;
    const prev = readKernelStatus(this.doc);
    this.count = prev.count;
    this.generation = prev.generation + 1;
    this.handled = { ...prev.handled };
    // Tables registered before we synced: the SQL runtime must see them.
    if (this.tablesSignature() !== this.tablesKey) this.replaceSqlRuntime();
    // Queued or running marks left by a kernel that died: those runs will not happen.
    this.writes.now(() => {
      for (const c of listCells(this.doc)) abandonKernelMarks(this.doc, c, 'the kernel stopped during this run', KERNEL_ORIGIN);
    });
    this.writes.publishStatus(true);
    this.doc.on('afterTransaction', this.onTransaction);
    this.scheduleTick();
  }

  private readonly onTransaction = (tr: Y.Transaction) => {
    // Hocuspocus echoes our own updates back: they change nothing and must cost nothing.
    if (tr.origin === KERNEL_ORIGIN || tr.changed.size === 0) return;
    // An edit inside cells' sources drops only those cells' cached sources, and the graph only if
    // what they define or read changed (graph()): re-running an edited cell does not read every
    // cell's source again nor rebuild the graph. Anything else about the cells drops both.
    const changes = notebookGraphChanges(this.doc, tr);
    if (changes === 'cells') {
      this.graphCache = null;
      this.sources.clear();
      this.cellsChanged = true;
    } else {
      for (const id of changes) {
        this.sources.delete(id);
        this.graphEdited.add(id);
      }
    }
    // Typing asks nothing of the kernel (a run is a request on the cell, a key): no tick.
    if (onlyEditsCellSources(this.cells, tr)) return;
    if (this.asked !== 'all') {
      const asked = requestChanges(this.doc, tr);
      if (asked === 'all') this.asked = 'all';
      else for (const id of asked) this.asked.add(id);
    }
    this.scheduleTick();
  };

  /** Writes its last status, lets go of the document (disconnects, or releases a lent one), and stops the runtimes. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    try {
      // Results of cells that ended just before (still in the write batch) are theirs to keep.
      this.writes.flush();
    } catch {
      /* the document may be gone */
    }
    this.writes.close();
    try {
      writeKernelStatus(this.doc, { ...this.status(), state: 'offline', current: null, queue: [] }, KERNEL_ORIGIN);
      this.writes.now(() => {
        for (const item of this.queue) {
          const c = getCell(this.doc, item.cellId);
          if (c) setPending(this.doc, c, null, KERNEL_ORIGIN);
        }
      });
      // Let the last writes reach the server before the socket closes (a lent document has them).
      if (this.peer) await new Promise((r) => setTimeout(r, 50));
    } catch {
      /* the document may be gone */
    }
    this.queue = [];
    this.writes.seal();
    this.doc.off('afterTransaction', this.onTransaction);
    this.peer?.close();
    await this.opts.release?.().catch((e) => this.opts.log.warn('releasing the kernel\'s document failed', { ws: this.id, err: e }));
    await Promise.all([this.js.dispose(), this.sql.dispose()]);
    // A document given to us belongs to whoever gave it.
    if (!this.opts.doc) this.doc.destroy();
  }

  // -------------------------------------------------------------------------------------------
  // status

  private status(): KernelStatus {
    return {
      state: this.running || this.queue.length ? 'busy' : 'idle',
      generation: this.generation,
      count: this.count,
      current: this.running?.item.cellId ?? null,
      queue: this.queue.map((q) => q.cellId),
      handled: this.handled,
      limits: { timeoutMs: this.opts.limits.timeoutMs, memoryMb: this.opts.limits.memoryMb },
      sandbox: [...this.js.layers].sort(),
      updatedAt: this.clock.now(),
      ...(this.message ? { message: this.message } : {}),
    };
  }

  // -------------------------------------------------------------------------------------------
  // analysis and graph

  /**
   * A cell's source text, what a run records of it (SQL: with its name) and its hash, kept until a
   * transaction changes what the graph is built from (onTransaction: every source edit, rename,
   * re-kind, cell added or removed) — a chain asks for each several times, and reading a Y.Text is
   * a walk over its items.
   */
  private source(cell: CellView): CellSourceParts {
    let s = this.sources.get(cell.id);
    if (!s) {
      const src = cellSource(cell);
      const run = runSource(cell);
      s = { src, run, hash: sourceHash(run) };
      this.sources.set(cell.id, s);
    }
    return s;
  }

  private analysis(cell: CellView): CellAnalysis {
    const { hash } = this.source(cell);
    const hit = this.analyses.get(cell.id);
    if (hit && hit.hash === hash && hit.kind === cell.kind) return hit.a;
    const a = cell.kind === 'markdown' ? { defs: [], refs: [] } : analyzeCell(cell.kind, this.source(cell).src, cell.name);
    this.analyses.set(cell.id, { hash, kind: cell.kind, a });
    return a;
  }

  private graph(): NotebookGraph {
    if (this.graphCache && this.graphEdited.size) {
      // Kept while every edited cell defines and reads what it did (or is still no part of it).
      for (const id of this.graphEdited) {
        const c = getCell(this.doc, id);
        if ((c && isRunnableCell(c) ? this.graphNode(c).key : undefined) !== this.graphInputs.get(id)) {
          this.graphCache = null;
          break;
        }
      }
    }
    this.graphEdited.clear();
    if (this.graphCache) return this.graphCache;
    // Markdown and code Plexus cannot run (imported Python, R, …) are not part of the graph.
    const nodes = listCells(this.doc).filter(isRunnableCell).map((c) => this.graphNode(c));
    this.graphInputs.clear();
    for (const n of nodes) {
      this.cellRefs.set(n.id, [...n.refs]);
      this.graphInputs.set(n.id, n.key);
    }
    this.graphCache = buildGraph(nodes);
    this.graphBuilds++;
    return this.graphCache;
  }

  /** A runnable cell's part of the graph: what it defines and what it reads, and both as one key. */
  private graphNode(c: CellView): { id: string; defs: string[]; refs: string[]; key: string } {
    const a = this.analysis(c);
    const defs = a.error && c.kind === 'code' ? [] : a.defs;
    return { id: c.id, defs, refs: a.refs, key: JSON.stringify([defs, a.refs]) };
  }

  private label(id: string): string {
    const c = getCell(this.doc, id);
    if (!c) return 'a deleted cell';
    const i = listCells(this.doc).findIndex((x) => x.id === id);
    return c.kind === 'sql' && c.name ? `cell ${i + 1} (${c.name})` : `cell ${i + 1}`;
  }

  // -------------------------------------------------------------------------------------------
  // reacting to the document

  private scheduleTick(): void {
    if (this.tickScheduled || this.stopped) return;
    this.tickScheduled = true;
    this.clock.soon(() => {
      this.tickScheduled = false;
      if (this.stopped) return;
      try {
        this.tick();
      } catch (e) {
        this.opts.log.error('kernel tick failed', { ws: this.id, err: e });
      }
    });
  }

  private tick(): void {
    this.writes.flush();
    if (this.tablesSignature() !== this.tablesKey && !this.running) this.tablesChanged();
    if (this.cellsChanged) {
      this.cellsChanged = false;
      this.processDeletions();
    }
    for (const key of KERNEL_COMMANDS) {
      const cmd = readCommand(this.doc, key);
      if (cmd && cmd.id !== this.handled[key]) {
        this.handled = { ...this.handled, [key]: cmd.id };
        this.command(key, { id: cmd.by, name: cmd.name }, cmd.id);
      }
    }
    this.processRequests();
    this.writes.publishStatus();
    void this.drain();
  }

  /** Cells gone from the document: forget their values and mark their readers stale. */
  private processDeletions(): void {
    const present = new Set<string>(listCells(this.doc).map((c) => c.id));
    const removed: string[] = [];
    for (const [id, live] of this.live) {
      if (present.has(id)) continue;
      this.live.delete(id);
      removed.push(...live.defs);
      this.forget(live);
    }
    for (const id of [...this.analyses.keys()]) if (!present.has(id)) this.analyses.delete(id);
    for (const id of [...this.compiled.keys()]) if (!present.has(id)) this.compiled.delete(id);
    if (removed.length) this.namesRemoved(removed, (n) => `${n} ${removed.length > 1 ? 'are' : 'is'} no longer defined: the cell defining it was deleted`);
  }

  private forget(live: Live): void {
    this.js.delete(live.defs);
    if (live.kind === 'sql') this.sql.drop(live.defs);
  }

  /** Names no cell defines any more: readers whose last output used them are marked stale. */
  private namesRemoved(names: string[], why: (list: string) => string): void {
    const g = this.graph();
    const gone = names.filter((n) => !g.definers.has(n));
    if (!gone.length) return;
    this.writes.now(() => {
      for (const c of listCells(this.doc)) {
        if (c.kind === 'markdown' || !readExec(c)) continue;
        const used = (this.cellRefs.get(c.id) ?? []).filter((r) => gone.includes(r));
        if (used.length) setStale(this.doc, c, { reason: why(used.join(', ')), names: used, at: this.clock.now() }, KERNEL_ORIGIN);
      }
    });
  }

  private command(key: KernelCommandKind, by: Requester, id: string): void {
    const g = this.graph();
    switch (key) {
      case 'runAll':
        this.enqueue(g.order, 'run-all', id, by);
        return;
      case 'runStale': {
        const stale = staleCells(this.doc);
        this.enqueue(stale, 'run-stale', id, by);
        return;
      }
      case 'interrupt':
        this.dropQueue();
        if (this.running) {
          this.running.cancelled = 'interrupted';
          if (this.running.kind === 'code') this.js.interrupt();
          else this.sql.interrupt();
        }
        return;
      case 'restart':
        this.dropQueue();
        if (this.running) this.running.cancelled = 'the kernel was restarted';
        void this.restart('the kernel was restarted');
        return;
    }
  }

  private processRequests(): void {
    const asked = this.asked;
    this.asked = new Set();
    if (asked !== 'all' && !asked.size) return;
    const reqs = asked === 'all' ? pendingRequests(this.doc) : pendingRequests(this.doc, asked);
    if (asked === 'all') this.requestReads.everyCell++;
    else this.requestReads.cells += asked.size;
    if (!reqs.length) return;
    const roots: Array<{ id: string; requestId: string; by: Requester }> = [];
    this.writes.now(() => {
      for (const { cell, request } of reqs) {
        ackRequest(this.doc, cell, request.id, KERNEL_ORIGIN);
        if (!isRunnableCell(cell)) continue; // e.g. an imported Python cell: nothing to run
        const { hash } = this.source(cell);
        if (this.queue.some((q) => q.cellId === cell.id)) continue; // queued: that run will use the newest source
        const r = this.running;
        if (r && r.item.cellId === cell.id && !r.cancelled) {
          // Pressed without having seen this run start (concurrent presses): it is that run.
          if (request.seen !== r.item.runId && r.hash === hash) continue;
        } else {
          const exec = readExec(cell);
          if (exec && request.seen !== exec.runId && exec.sourceHash === hash && exec.generation === this.generation && exec.state !== 'cancelled' && this.live.has(cell.id)) continue;
        }
        roots.push({ id: cell.id, requestId: request.id, by: { id: request.by, name: request.name } });
      }
    });
    for (const r of roots) this.enqueue([r.id], 'request', r.requestId, r.by);
  }

  // -------------------------------------------------------------------------------------------
  // the queue

  /**
   * Adds `roots`, their dependents, and the inputs they lack (ancestors with no live value) to the
   * queue, keeping it in topological order with each cell once. A running cell that is among them
   * is superseded: cancelled now, and run again in its place.
   */
  private enqueue(rootIds: string[], trigger: RunTrigger, requestId: string | null, by: Requester | null): void {
    const g = this.graph();
    const roots = rootIds.filter((id) => g.upstream.has(id));
    if (!roots.length) return;
    const want = new Set([...roots, ...descendants(g, roots)]);
    const inputs = new Set<string>();
    for (const a of ancestors(g, want)) {
      if (want.has(a) || g.errors.has(a)) continue;
      const live = this.live.get(a);
      // An SQL result kept only as a value must become a table when an SQL cell now reads it, and
      // one kept only as a table a value when a cell now reads it as one.
      const readers = live?.kind === 'sql' ? [...g.downstream.get(a)!].filter((d) => want.has(d)) : [];
      const needsTable = !live?.table && readers.some((d) => getCell(this.doc, d)?.kind === 'sql');
      const needsValue = !live?.value && readers.some((d) => this.readsAsValue(d, live!.defs));
      if (live && !needsTable && !needsValue) continue;
      if (this.running?.item.cellId === a && !this.running.cancelled) continue;
      inputs.add(a);
    }
    const r = this.running;
    if (r && !r.cancelled && want.has(r.item.cellId)) {
      r.cancelled = 'superseded by a newer run';
      if (r.kind === 'code') this.js.cancel(r.item.runId);
      else this.sql.interrupt();
    }
    const existing = new Map(this.queue.map((q) => [q.cellId, q]));
    const all = new Set([...existing.keys(), ...want, ...inputs]);
    const ordered = topoOrder(g, all);
    const now = this.clock.now();
    const next: QueueItem[] = [];
    const fresh: QueueItem[] = [];
    for (const id of ordered) {
      let item = existing.get(id);
      if (!item) {
        item = { cellId: id, runId: `x_${randomId()}`, trigger: inputs.has(id) ? 'inputs' : roots.includes(id) ? trigger : 'upstream', requestId, requestedBy: by, queuedAt: now };
        fresh.push(item);
      }
      next.push(item);
    }
    this.queue = next;
    // Cells that cannot be ordered (in a cycle, or downstream of one) fail at once with the reason.
    const placed = new Set(ordered);
    const unordered = [...want].filter((id) => !placed.has(id));
    this.writes.now(() => {
      for (const item of fresh) {
        const c = getCell(this.doc, item.cellId);
        if (c) setPending(this.doc, c, { runId: item.runId, requestId: item.requestId, trigger: item.trigger, requestedBy: item.requestedBy, queuedAt: item.queuedAt }, KERNEL_ORIGIN);
      }
      for (const id of unordered) {
        const c = getCell(this.doc, id);
        if (!c) continue;
        const err = g.errors.get(id);
        const message = err ? describeGraphError(err, (x) => this.label(x)) : 'this cell reads a cell that is part of a cycle';
        this.failWithoutRunning(c, { cellId: id, runId: `x_${randomId()}`, trigger, requestId, requestedBy: by, queuedAt: now }, 'error', message, 'CycleError');
      }
    });
    this.writes.publishStatus();
  }

  private dropQueue(): void {
    const q = this.queue;
    this.queue = [];
    this.writes.now(() => {
      for (const item of q) {
        const c = getCell(this.doc, item.cellId);
        if (c) setPending(this.doc, c, null, KERNEL_ORIGIN);
      }
    });
    this.writes.publishStatus();
  }

  /** Records a run that could not start (structural error, failed input) with its reason. */
  private failWithoutRunning(cell: CellView, item: QueueItem, state: 'error' | 'cancelled', message: string, name = 'Error'): void {
    const source = this.source(cell);
    this.writes.now(() => recordExec(this.doc, cell, this.execInfo(item, source, false), { state, reason: message, outputs: [{ type: 'error', name, message }] }, KERNEL_ORIGIN));
  }

  private execInfo(item: QueueItem, { run: src, hash }: CellSourceParts, counted: boolean) {
    return {
      runId: item.runId,
      requestId: item.requestId,
      trigger: item.trigger,
      requestedBy: item.requestedBy,
      count: counted ? ++this.count : this.count,
      generation: this.generation,
      startedAt: this.clock.now(),
      sourceHash: hash,
      source: src.length > 64 * 1024 ? src.slice(0, 64 * 1024) : src,
      defines: [],
    };
  }

  private async drain(): Promise<void> {
    if (this.draining || this.stopped) return;
    this.draining = true;
    const failed = new Set<string>();
    try {
      while (this.queue.length && !this.stopped) {
        const item = this.queue.shift()!;
        const cell = getCell(this.doc, item.cellId);
        if (!cell || !isRunnableCell(cell)) continue;
        const g = this.graph();
        const err = g.errors.get(cell.id);
        if (err) {
          this.failWithoutRunning(cell, item, 'error', describeGraphError(err, (x) => this.label(x)), err.kind === 'cycle' ? 'CycleError' : 'DuplicateDefinitionError');
          failed.add(cell.id);
          continue;
        }
        const badInput = [...g.upstream.get(cell.id)!].find((u) => failed.has(u));
        if (badInput) {
          this.failWithoutRunning(cell, item, 'cancelled', `not run: ${this.label(badInput)}, whose values this cell reads, failed`);
          failed.add(cell.id);
          continue;
        }
        this.sendAhead(cell, item, g, failed);
        const result = await this.runCell(cell, item);
        // A superseded run is queued again: its dependents wait for that run, they did not fail.
        if (result === 'failed') failed.add(cell.id);
        else failed.delete(cell.id);
        await new Promise<void>((r) => this.clock.soon(r)); // let document updates in between runs
      }
    } finally {
      this.draining = false;
      this.writes.flush();
      this.writes.publishStatus();
      // Tables registered while cells ran (a job's tables, ROI edits written in) were left for now.
      if (this.tablesSignature() !== this.tablesKey) this.scheduleTick();
    }
  }

  /**
   * A JavaScript cell that neither loops nor calls anything, followed in the queue by more such
   * cells: they go to the runner ahead, as one batch (js-runtime.ts, runAhead), so a chain of
   * trivial cells costs one round trip. Each cell is still run, recorded and written by runCell
   * in turn; the runner has its result ready. Only the cells the queue holds now and whose source
   * compiles as it will when their turn comes are sent; anything that changes meanwhile makes the
   * runtime throw the rest away.
   */
  private sendAhead(cell: CellView, item: QueueItem, g: NotebookGraph, failed: ReadonlySet<string>): void {
    if (this.opts.runAhead === false) return;
    if (cell.kind === 'sql') return this.sendSqlAhead(cell, item, g, failed);
    if (!this.js.runAhead || this.js.expecting) return;
    const batch = this.batchFrom(cell, item, g, failed, (c, it) => this.trivialRun(c, it, g));
    if (!batch.length) return;
    this.aheadRuns = new Map(batch.map(({ entry, cellId }) => [entry.runId, cellId]));
    this.js.runAhead(batch.map((b) => b.entry));
  }

  /**
   * `cell` and the queued cells after it, as long as `entry` makes something of each (and none
   * has a graph error or a failed input): what one batch sent ahead holds.
   */
  private batchFrom<T>(cell: CellView, item: QueueItem, g: NotebookGraph, failed: ReadonlySet<string>, entry: (c: CellView, item: QueueItem) => T | null): Array<{ entry: T; cellId: string }> {
    const first = entry(cell, item);
    if (!first) return [];
    const batch = [{ entry: first, cellId: cell.id }];
    for (const next of this.queue) {
      if (batch.length >= AHEAD_MAX_CELLS) break;
      const c = getCell(this.doc, next.cellId);
      if (!c || g.errors.has(c.id) || [...g.upstream.get(c.id) ?? []].some((u) => failed.has(u))) break;
      const e = entry(c, next);
      if (!e) break;
      batch.push({ entry: e, cellId: c.id });
    }
    return batch;
  }

  /**
   * The same for SQL cells without parameters (sql-runtime.ts, queryAhead): consecutive queued SQL
   * cells go to the worker as one batch; each is still run and recorded in turn by runCell.
   */
  private sendSqlAhead(cell: CellView, item: QueueItem, g: NotebookGraph, failed: ReadonlySet<string>): void {
    if (!this.sql.queryAhead || this.sql.expecting) return;
    const uploaded = new Set(listTables(this.doc).map((t) => t.name));
    const batch = this.batchFrom(cell, item, g, failed, (c) => this.plainQuery(c, g, uploaded));
    if (batch.length) this.sql.queryAhead(batch.map(({ entry, cellId }) => ({ ...entry, tag: cellId })));
  }

  /** What an SQL cell without parameters sends its worker (null: not such a cell, or it cannot run as it is). */
  private plainQuery(cell: CellView, g: NotebookGraph, uploaded: ReadonlySet<string>): SqlQuery | null {
    if (cell.kind !== 'sql' || !isRunnableCell(cell)) return null;
    const a = this.analysis(cell);
    if (a.error || a.params?.length) return null;
    const name = cell.name && a.defs.includes(cell.name) ? cell.name : undefined;
    if (name && uploaded.has(name)) return null;
    if (inputsOf(a, g).duplicated.length) return null;
    return this.sqlQuery(cell, g, name, {});
  }

  private sqlQuery(cell: CellView, g: NotebookGraph, name: string | undefined, params: Record<string, unknown>): SqlQuery {
    // Materialise the result as a table only if an SQL cell reads it (CREATE TABLE AS costs a copy).
    const materialize = !!name && [...g.downstream.get(cell.id)!].some((d) => getCell(this.doc, d)?.kind === 'sql');
    return { sql: this.source(cell).src, params, name, maxRows: this.opts.limits.sqlRowsToJs, materialize };
  }

  /**
   * Cells sent ahead whose results the runtime threw away may have run there: their values may no
   * longer be the ones their outputs show, so they are not live any more (a reader runs them again).
   */
  private aheadDropped(runIds: string[]): void {
    for (const runId of runIds) {
      const cellId = this.aheadRuns.get(runId);
      if (cellId && this.live.get(cellId)?.kind === 'code') this.live.delete(cellId);
    }
  }

  /** SQL cells sent ahead and thrown away may have replaced their tables: not live any more. */
  private sqlAheadDropped(cellIds: string[]): void {
    for (const cellId of cellIds) if (this.live.get(cellId)?.kind === 'sql') this.live.delete(cellId);
  }

  /** The runner's input for `cell` if it is a JavaScript cell that cannot loop or call anything. */
  private trivialRun(cell: CellView, item: QueueItem, g: NotebookGraph): RunInput | null {
    if (cell.kind !== 'code' || !isRunnableCell(cell)) return null;
    const a = this.analysis(cell);
    if (a.error || a.mayLoop !== false) return null;
    const { inputs, duplicated } = inputsOf(a, g);
    return duplicated.length ? null : this.jsInput(cell, item, a, inputs);
  }

  private jsInput(cell: CellView, item: QueueItem, a: CellAnalysis, inputs: string[]): RunInput {
    const { src } = this.source(cell);
    const key = `${inputs.join(',')}\n${src}`;
    let hit = this.compiled.get(cell.id);
    if (!hit || hit.key !== key) this.compiled.set(cell.id, (hit = { key, c: compileJsCell(src, a, inputs) }));
    return { runId: item.runId, code: hit.c.code, shifts: hit.c.shifts, inputs, filename: `cell-${cell.id}.js`, watchdog: a.mayLoop !== false };
  }

  // -------------------------------------------------------------------------------------------
  // running one cell

  private async runCell(cell: CellView, item: QueueItem): Promise<'ok' | 'failed' | 'cancelled'> {
    const source = this.source(cell);
    const a = this.analysis(cell);
    const kind = cell.kind === 'sql' ? 'sql' : 'code';
    const running: Running = { item, hash: source.hash, kind, cancelled: null };
    const generation = this.generation;
    this.running = running;
    this.writes.publishStatus();
    const info = this.execInfo(item, source, true);
    // The `running` state is written only if the run takes a while: a fast cell's start and end
    // travel as one update.
    let run: Y.Map<unknown> | null = null;
    const begin = () => (run ??= startExec(this.doc, cell, info, KERNEL_ORIGIN));
    const startTimer = this.clock.setTimeout(() => {
      if (!running.cancelled) this.writes.now(() => begin());
    }, START_WRITE_DELAY_MS);
    let streamed = 0;
    let buffer: Array<{ name: 'stdout' | 'stderr'; text: string }> = [];
    let flushTimer: KernelTimer | null = null;
    const flush = () => {
      flushTimer = null;
      if (!buffer.length || running.cancelled) return;
      const parts = buffer;
      buffer = [];
      this.writes.now(() => {
        const m = begin();
        for (const p of parts) appendStream(m, p.name, p.text, KERNEL_ORIGIN);
      });
    };
    const onStream = (name: 'stdout' | 'stderr', text: string) => {
      if (streamed >= MAX_STREAM_CHARS) return;
      streamed += text.length;
      if (streamed >= MAX_STREAM_CHARS) text = text.slice(0, text.length - (streamed - MAX_STREAM_CHARS)) + '\n… output truncated\n';
      buffer.push({ name, text });
      flushTimer ??= this.clock.setTimeout(flush, STREAM_FLUSH_MS);
    };

    let outcome: RunOutcome;
    const g = this.graph();
    const { inputs, duplicated } = inputsOf(a, g);
    if (a.error) outcome = { ok: false, defines: [], outputs: [], error: { type: 'error', name: 'SyntaxError', message: a.error.message, line: a.error.line, column: a.error.column } };
    else if (duplicated.length) outcome = { ok: false, defines: [], outputs: [], error: { type: 'error', name: 'ReferenceError', message: `${duplicated.join(', ')} ${duplicated.length > 1 ? 'are' : 'is'} defined by more than one cell` } };
    else if (kind === 'code') outcome = await this.js.run(this.jsInput(cell, item, a, inputs), onStream);
    else outcome = await this.runSql(cell, a);
    this.clock.clearTimeout(startTimer);
    this.clock.clearTimeout(flushTimer);
    this.running = null;

    const stillThere = getCell(this.doc, cell.id);
    // Runs written as maps stay maps when they end only in the benchmarks' baseline (plainRuns: false).
    const settle = this.opts.plainRuns !== false;
    if (running.cancelled) {
      // Superseded or interrupted: record it on this run's own map, which a newer run replaces.
      if (run || running.cancelled !== 'superseded by a newer run') {
        this.writes.now(() => {
          const m = begin();
          finishExec(m, { state: 'cancelled', reason: running.cancelled!, outputs: outcome.error && running.cancelled === 'interrupted' ? [{ type: 'error', name: 'Interrupted', message: 'the run was stopped before it finished' }] : [] }, KERNEL_ORIGIN, { settle });
        });
      }
    } else {
      const { outputs, refs } = admitOutputs(outcome.ok ? outcome.outputs : [outcome.error], outcome.full, this.results);
      const end = { state: outcome.ok ? ('done' as const) : ('error' as const), defines: outcome.defines, outputs };
      this.writes.soon(() => {
        // Nothing of this run written yet (a fast cell): its final record in one go.
        if (!run && !buffer.length && this.opts.plainRuns !== false) return recordExec(this.doc, cell, info, end, KERNEL_ORIGIN);
        const m = begin();
        if (buffer.length) for (const p of buffer.splice(0)) appendStream(m, p.name, p.text, KERNEL_ORIGIN);
        finishExec(m, end, KERNEL_ORIGIN, { settle });
      });
      this.dropOldRefs(cell.id, refs);
    }
    if (outcome.fatal) {
      // Unless a restart already replaced the runtime this run used, or the kernel is stopping
      // (stop() disposing the runtime is what ended this run).
      if (this.generation === generation && !this.stopped) await this.restart(outcome.fatal, cell.id);
      return 'failed';
    }
    if (outcome.ok && !running.cancelled) {
      const prev = this.live.get(cell.id);
      if (!stillThere) {
        // Deleted while it ran: its values must not outlive it.
        this.forget({ defs: outcome.defines, runId: item.runId, kind });
        if (prev) this.live.delete(cell.id);
        return 'ok';
      }
      this.live.set(cell.id, { defs: outcome.defines, runId: item.runId, kind, table: outcome.table, value: outcome.value });
      const dropped = (prev?.defs ?? []).filter((d) => !outcome.defines.includes(d));
      if (dropped.length) {
        this.forget({ defs: dropped, runId: prev!.runId, kind: prev!.kind });
        this.namesRemoved(dropped, (n) => `${n} ${dropped.length > 1 ? 'are' : 'is'} no longer defined: ${this.label(cell.id)} does not define it any more`);
      }
    }
    return running.cancelled ? 'cancelled' : outcome.ok ? 'ok' : 'failed';
  }

  private readonly refsOfCell = new Map<string, string[]>();
  private dropOldRefs(cellId: string, refs: string[]): void {
    const old = this.refsOfCell.get(cellId);
    if (old) this.results.drop(old);
    this.refsOfCell.set(cellId, refs);
  }

  private async runSql(cell: CellView, a: CellAnalysis): Promise<RunOutcome> {
    const name = cell.name && a.defs.includes(cell.name) ? cell.name : undefined;
    if (name && listTables(this.doc).some((t) => t.name === name))
      return { ok: false, defines: [], outputs: [], error: { type: 'error', name: 'NameError', message: `"${name}" is the name of an uploaded table; choose another name for this cell` } };
    const params: Record<string, unknown> = {};
    if (a.params?.length) {
      const got = await this.js.get(a.params);
      if (got.error) return { ok: false, defines: [], outputs: [], error: { type: 'error', name: 'KernelError', message: got.error } };
      if (got.missing.length) return { ok: false, defines: [], outputs: [], error: { type: 'error', name: 'ReferenceError', message: `${got.missing.map((m) => `$${m}`).join(', ')} ${got.missing.length > 1 ? 'are' : 'is'} not defined` } };
      Object.assign(params, got.values);
    }
    const res = await this.sql.query(this.sqlQuery(cell, this.graph(), name, params));
    if (!res.ok) {
      if (res.fatal) this.replaceSqlRuntime();
      return { ok: false, defines: [], outputs: [], error: { type: 'error', name: res.error.name, message: res.error.message } };
    }
    const rows = res.rows;
    const table: CellOutput = { type: 'table', columns: res.columns, rows: rows.slice(0, TABLE_PREVIEW_ROWS).map(jsonRow), totalRows: res.totalRows };
    const full = rows.length > TABLE_PREVIEW_ROWS ? { columns: res.columns, rows: rows.map(jsonRow), totalRows: res.totalRows } : undefined;
    // The rows become a JavaScript value only if a cell reads them as one now (a copy to the
    // runner per cell otherwise: a chain of SQL cells would send every result there). A reader
    // that comes later runs this cell again (enqueue, needsValue).
    const value = !!name && [...this.graph().downstream.get(cell.id)!].some((d) => this.readsAsValue(d, [name]));
    if (value) this.js.set(name!, rows);
    else if (name && this.live.get(cell.id)?.value) this.js.delete([name]); // no stale value left behind
    return { ok: true, defines: name ? [name] : [], outputs: [table], full, table: res.materialized, value };
  }

  /** Whether cell `id` reads one of `names` as a JavaScript value (a code cell, or an SQL cell's `$param`). */
  private readsAsValue(id: string, names: string[]): boolean {
    const c = getCell(this.doc, id);
    if (!c) return false;
    if (c.kind === 'sql') return !!this.analysis(c).params?.some((p) => names.includes(p));
    return isRunnableCell(c);
  }

  /**
   * Tables were registered, replaced or removed: a fresh SQL runtime sees them, and the SQL cells
   * that ran over a table registered anew run again with their dependents, as after an edit
   * upstream (a re-run analysis, people's ROI edits written into its tables, a new upload of a
   * name). Readers of a removed table are left as they are (running them would only fail).
   */
  private tablesChanged(): void {
    const before = new Set(this.tablesKey.split(','));
    const changed = new Set(listTables(this.doc).filter((t) => !before.has(`${t.name}:${t.created}`)).map((t) => t.name.toLowerCase()));
    this.replaceSqlRuntime();
    if (!changed.size) return;
    const g = this.graph();
    const readers = listCells(this.doc)
      .filter((c) => c.kind === 'sql' && readExec(c) && (g.unresolved.get(c.id) ?? []).some((n) => changed.has(n.toLowerCase())))
      .map((c) => c.id);
    if (readers.length) this.enqueue(readers, 'upstream', null, null);
  }

  /** Starts a fresh SQL runtime (new upload, or the old one died): SQL values are lost. */
  private replaceSqlRuntime(): void {
    // A stopped kernel starts nothing: stop() has disposed the runtimes it had, and no one would stop a new one.
    if (this.stopped) return;
    const old = this.sql;
    void old.dispose();
    this.tablesKey = this.tablesSignature();
    this.sql = this.engines.sql({
      cwd: `${this.opts.dir}/scratch`, uid: this.opts.uid, memoryMb: this.opts.limits.sqlMemoryMb, threads: this.opts.limits.sqlThreads, chunkHops: this.opts.limits.sqlChunkHops, adaptiveThreads: this.opts.limits.sqlAdaptiveThreads, timeoutMs: this.opts.limits.timeoutMs,
      maxFrameBytes: this.opts.limits.maxFrameBytes,
      tables: listTables(this.doc).map((t) => ({ name: t.name, file: `${this.opts.tablesDir}/${t.name}.duckdb` })),
    });
    this.sql.onAheadDropped = (cellIds) => this.sqlAheadDropped(cellIds);
    // SQL results are gone from DuckDB; they stay live in JS, and SQL cells reading them re-run them
    // (their inputs are missing) — so mark SQL cells as not live.
    for (const [id, l] of this.live) if (l.kind === 'sql') this.live.delete(id);
  }

  /** Replaces both runtimes: every value is lost; outputs of other cells are marked stale. */
  private async restart(reason: string, except?: string): Promise<void> {
    // As replaceSqlRuntime(): runtimes started after stop() would outlive the kernel.
    if (this.stopped) return;
    const olds = [this.js, this.sql];
    this.generation++;
    this.newRuntimes();
    this.live.clear();
    this.dropQueue();
    this.message = reason;
    await Promise.all(olds.map((o) => o.dispose()));
    this.writes.now(() => {
      for (const c of listCells(this.doc)) {
        if (c.id === except || c.kind === 'markdown') continue;
        const ex = readExec(c);
        if (ex && ex.state === 'done') setStale(this.doc, c, { reason: `${reason}: values are gone, run again`, at: this.clock.now() }, KERNEL_ORIGIN);
      }
    });
    this.writes.publishStatus(true);
  }
}
