/**
 * The server's side of the atlas: it follows the `atlas` root of every loaded workspace document
 * and keeps each map's tables in step with it.
 *
 * - A map appears (or is replaced), or its source table is registered anew: its coordinates are
 *   computed in a child process (atlas-job-main.ts, under the job limits: `nice`, a heap limit, a
 *   time limit), never on the event loop. An embeddings map asks the configured embedding service
 *   from that process (its key in the process's environment only); without a service it ends in
 *   an error that says so and offers the local TF-IDF map. `coords` goes queued → running
 *   {stage, done, total} → done (table, points, labels, how) or error (a message for people). One job per map at a time;
 *   a newer request supersedes the running one (its process is ended, its results dropped). At
 *   most PLEXUS_JOBS maps compute at once; the others wait, queued.
 * - The coordinates become table `<source>_map` (`_map_2`, … for further maps of one table;
 *   table-names.ts): `row` (0-based position in the source table, its DuckDB rowid), `x`, `y`,
 *   `cluster`, imported and registered the way uploads are (so the data panel lists it and SQL
 *   cells read it).
 * - The selection (a released brush: geometry in map coordinates), or the coordinates, change:
 *   the source rows inside it, with `row`, `x`, `y`, become table `<map table>_selection`
 *   (registered again, so SQL cells over it re-run). One write per map at a time; changes that
 *   arrive meanwhile are taken together by the next one. No selection: the table has the columns
 *   and no rows. A marker file per map remembers what the table holds, so a reload rewrites nothing.
 * - Then, for a map of a table of ROIs (a calcium analysis's `rois`, or a table that names its
 *   segmentation), the ROIs of the selected and highlighted rows show in the shared viewer: their
 *   ids are read from the selection table and the source (segment-ids.ts) and written with
 *   `writeAtlasViewer` (shared/src/atlas/atlas-viewer.ts), dropped when the map moved on since.
 * - A map removed: its two tables are unregistered and their files deleted.
 * - A source table removed: the map's coordinates say so (error).
 * Every document write goes through the shared helpers with origin serverOrigin('atlas').
 * Effects: child processes, files, DuckDB, document writes.
 */
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Extension } from '@hocuspocus/server';
import type * as Y from 'yjs';
import {
  atlasViewerBasis, clearAtlasViewer, getAtlasMap, getTable, listAtlasMaps, observeAtlas, registerTable, segmentTableOf, serverOrigin, setAtlasCoords, unregisterTable, writeAtlasViewer,
  type AtlasChange, type AtlasCoords, type AtlasMapView, type AtlasSelection,
} from '@plexus/shared';
import { fileTurn, type DataLimits } from '../data/guarded-duckdb.ts';
import { redactServerPaths } from '../http/respond.ts';
import { importUpload, type UploadLimits } from '../kernel/uploads.ts';
import type { Logger } from '../log.ts';
import { outOfMemory, runJobProcess, type JobProcessLimits } from '../analysis/job-runner.ts';
import type { AtlasJobSpec } from './atlas-job-main.ts';
import { EMBEDDINGS_KEY_ENV, type EmbeddingsConfig, type EmbeddingsService } from './embeddings.ts';
import { exportSelection } from './atlas-tables.ts';
import { DEFAULT_SEED } from './projection.ts';
import { readSegmentIds } from './segment-ids.ts';
import { pickColumns } from './source-columns.ts';
import { chooseMapTableName, selectionTableName } from './table-names.ts';

/** Most rows a map is made of (more: an error that says to filter or sample first). */
export const MAX_MAP_ROWS = 1_000_000;

const ORIGIN = serverOrigin('atlas');
const MAIN = fileURLToPath(new URL('./atlas-job-main.ts', import.meta.url));

export interface AtlasMapsOptions {
  log: Logger;
  /** Runs `f` on the live document of a workspace (loading it if needed). */
  change: <T>(ws: string, f: (doc: Y.Doc) => T) => Promise<T>;
  /** The workspace's tables directory (`<name>.duckdb` files), and a directory of its own for work files. */
  tablesDir: (ws: string) => string;
  workspaceDir: (ws: string) => string;
  /** The job process's limits, and maps computed at once on this server. */
  limits: JobProcessLimits & { concurrent: number };
  /** Limits of the import of the map's tables (as uploads). */
  upload: UploadLimits;
  /** Limits of the DuckDB reads that export a selection. */
  reads: DataLimits;
  /** The embedding service of embeddings maps (null or absent: none). */
  embeddings?: EmbeddingsConfig | null;
  seed?: number;
  umapFitRows?: number;
  maxRows?: number;
}

interface MapJob {
  ws: string;
  id: string;
  /** Bumped by every request, removal or source removal: work of an older generation is dropped. */
  gen: number;
  wanted: boolean;
  loop: Promise<void> | null;
  child: ChildProcess | null;
  /** The coordinates table this map holds (chosen on its first run, kept while it exists). */
  table: string | null;
  /** Coordinate writes, in order. */
  writes: Promise<unknown>;
  sel: { loop: Promise<void> | null; again: boolean };
}

/** At most `size` holders at once, others wait in order. */
class Slots {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly size: number) {}
  async acquire(): Promise<() => void> {
    if (this.active >= this.size) await new Promise<void>((r) => this.waiting.push(r));
    else this.active++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }
}

/** The service as the job's spec file holds it: the key goes in the process's environment only. */
function withoutKey(c: EmbeddingsConfig): EmbeddingsService {
  const { apiKey: _key, ...service } = c;
  return service;
}

const geometry = (s: AtlasSelection | null) => (!s ? null : s.kind === 'rect' ? [s.x0, s.y0, s.x1, s.y1] : s.points);

export class AtlasMaps {
  private readonly jobs = new Map<string, MapJob>();
  private readonly slots: Slots;
  private readonly detach = new Map<string, () => void>();
  private closed = false;

  /** Follows the atlas of each document the server loads. */
  readonly extension: Extension = {
    afterLoadDocument: async ({ documentName, document }) => {
      this.detach.get(documentName)?.();
      this.detach.set(documentName, this.attach(documentName, document));
    },
    afterUnloadDocument: async ({ documentName }) => {
      this.detach.get(documentName)?.();
      this.detach.delete(documentName);
    },
  };

  constructor(private readonly opts: AtlasMapsOptions) {
    this.slots = new Slots(Math.max(1, opts.limits.concurrent));
  }

  /** Follows a loaded document's maps; catches up on maps whose coordinates were interrupted. Returns the detach. */
  attach(ws: string, doc: Y.Doc): () => void {
    const off = observeAtlas(doc, (c) => this.changed(ws, doc, c));
    for (const m of listAtlasMaps(doc)) {
      const job = this.job(ws, m.id);
      job.table ??= m.coords?.table ?? null;
      if (job.loop) continue;
      if (!m.coords || m.coords.status === 'queued' || m.coords.status === 'running') this.request(ws, m.id);
      else if (m.coords.status === 'done') this.requestSelection(ws, m.id);
    }
    return off;
  }

  /** Resolves when no map of `ws` (or of any workspace) is computing or writing its selection (tests, shutdown). */
  async idle(ws?: string): Promise<void> {
    for (;;) {
      const busy = [...this.jobs.values()].filter((j) => (!ws || j.ws === ws) && (j.loop || j.sel.loop));
      if (!busy.length) return;
      await Promise.all(busy.flatMap((j) => [j.loop, j.sel.loop, j.writes]));
    }
  }

  /** Ends every job (their processes too) and waits for the writes under way. */
  async close(): Promise<void> {
    this.closed = true;
    for (const off of this.detach.values()) off();
    this.detach.clear();
    for (const j of this.jobs.values()) {
      j.gen++;
      j.wanted = false;
      j.sel.again = false;
      j.child?.kill('SIGTERM');
    }
    await this.idle().catch(() => {});
  }

  private key = (ws: string, id: string) => `${ws}\u0000${id}`;

  private job(ws: string, id: string): MapJob {
    const k = this.key(ws, id);
    let j = this.jobs.get(k);
    if (!j) this.jobs.set(k, (j = { ws, id, gen: 0, wanted: false, loop: null, child: null, table: null, writes: Promise.resolve(), sel: { loop: null, again: false } }));
    return j;
  }

  private changed(ws: string, doc: Y.Doc, c: AtlasChange): void {
    if (this.closed) return;
    for (const id of c.removed) this.removed(ws, id);
    for (const id of c.maps) this.request(ws, id);
    for (const id of c.selections) this.requestSelection(ws, id);
    if (!c.tables.length) return;
    const maps = listAtlasMaps(doc);
    for (const name of c.tables) {
      const registered = getTable(doc, name) !== null;
      for (const m of maps) {
        if (m.table === name) {
          if (registered) this.request(ws, m.id);
          else this.sourceGone(ws, m.id, name);
        } else if (!registered && m.coords?.status === 'done' && m.coords.table === name) this.request(ws, m.id);
        else if (!registered && m.coords?.table && selectionTableName(m.coords.table) === name) {
          fs.rmSync(this.marker(ws, m.id), { force: true });
          this.requestSelection(ws, m.id);
        }
      }
    }
  }

  /** (Re)computes a map's coordinates: supersedes a job under way. */
  request(ws: string, id: string): void {
    if (this.closed) return;
    const job = this.job(ws, id);
    job.gen++;
    job.wanted = true;
    job.child?.kill('SIGTERM');
    void this.setCoords(job, job.gen, (m) => ({ status: 'queued', ...this.tableField(job, m), at: Date.now() }));
    // The loop ends in the same turn that finds nothing wanted, so a request never waits on a loop that is ending.
    if (!job.loop) job.loop = Promise.resolve().then(() => this.loop(job));
  }

  /** Rewrites a map's selection table (coalesced: one write at a time, then the latest state). */
  requestSelection(ws: string, id: string): void {
    if (this.closed) return;
    const job = this.job(ws, id);
    job.sel.again = true;
    if (!job.sel.loop) job.sel.loop = Promise.resolve().then(() => this.selectionLoop(job));
  }

  private tableField(job: MapJob, m: AtlasMapView): { table?: string } {
    const t = job.table ?? m.coords?.table;
    return t ? { table: t } : {};
  }

  private async loop(job: MapJob): Promise<void> {
    for (;;) {
      if (!job.wanted || this.closed) {
        job.loop = null;
        return;
      }
      job.wanted = false;
      const gen = job.gen;
      const release = await this.slots.acquire();
      try {
        if (gen === job.gen && !this.closed) await this.compute(job, gen);
      } catch (e) {
        this.opts.log.error('atlas map failed', { ws: job.ws, map: job.id, err: e });
        await this.setCoords(job, gen, () => ({ status: 'error', error: redactServerPaths(e instanceof Error ? e.message : String(e)).slice(0, 4000), ...(job.table ? { table: job.table } : {}), at: Date.now() }));
      } finally {
        release();
      }
    }
  }

  /** Writes a map's coordinates record (in order; dropped once a newer generation exists or the map is gone). */
  private setCoords(job: MapJob, gen: number, make: (m: AtlasMapView) => AtlasCoords): Promise<void> {
    const p = job.writes.then(() =>
      this.opts.change(job.ws, (doc) => {
        if (job.gen !== gen) return;
        const m = getAtlasMap(doc, job.id);
        if (m) setAtlasCoords(doc, job.id, make(m), ORIGIN);
      }),
    );
    job.writes = p.catch((e: Error) => this.opts.log.warn('atlas coordinates not written', { ws: job.ws, map: job.id, err: e.message }));
    return job.writes as Promise<void>;
  }

  private tablePath = (ws: string, name: string) => path.join(this.opts.tablesDir(ws), `${name}.duckdb`);
  private workDir = (ws: string) => path.join(this.opts.workspaceDir(ws), 'atlas');
  private marker = (ws: string, id: string) => path.join(this.workDir(ws), `${id}.selection.json`);

  /** A name no other map holds and no other table has. */
  private chooseName(ws: string, doc: Y.Doc, m: AtlasMapView): string {
    const maps = listAtlasMaps(doc);
    const mine = (name: string) => name === m.coords?.table;
    return chooseMapTableName(m.table, (name) =>
      (!mine(name) && getTable(doc, name) !== null) ||
      maps.some((o) => o.id !== m.id && o.coords?.table === name) ||
      [...this.jobs.values()].some((j) => j.ws === ws && j.id !== m.id && j.table === name),
    );
  }

  private async compute(job: MapJob, gen: number): Promise<void> {
    const { ws, id } = job;
    const err = (message: string): AtlasCoords => ({ status: 'error', error: message.slice(0, 4000), ...(job.table ? { table: job.table } : {}), at: Date.now() });
    // What to compute, checked against the registered table; the table name reserved at once.
    type Plan = { error: string } | { method: AtlasMapView['method']; columns: string[]; source: string; by: string };
    const plan = await this.opts.change(ws, (doc): Plan | null => {
      if (job.gen !== gen) return null;
      const m = getAtlasMap(doc, id);
      if (!m) return null;
      const src = getTable(doc, m.table);
      if (!src) return { error: `there is no table "${m.table}" in this workspace (it was removed, or never uploaded)` };
      let columns: string[];
      try {
        columns = pickColumns({ method: m.method, columns: m.columns, table: m.table }, src.columns);
      } catch (e) {
        return { error: (e as Error).message };
      }
      if (m.method === 'embeddings' && !this.opts.embeddings)
        return { error: `this server has no embedding service (its administrator sets PLEXUS_EMBEDDINGS_URL), so it cannot make an embeddings map: make a TF-IDF map of "${columns[0]}" instead (computed locally)` };
      job.table ??= m.coords?.table ?? this.chooseName(ws, doc, m);
      return { method: m.method, columns, source: m.table, by: m.createdBy || 'atlas' };
    });
    if (!plan) return;
    if ('error' in plan) {
      const message = plan.error;
      return void (await this.setCoords(job, gen, () => err(message)));
    }
    const table = job.table!;
    await this.setCoords(job, gen, () => ({ status: 'running', table, progress: { stage: 'starting', done: 0, total: 1 }, at: Date.now() }));
    const dir = this.workDir(ws);
    fs.mkdirSync(dir, { recursive: true });
    const stem = path.join(dir, `${id}-${randomBytes(4).toString('hex')}`);
    const embeddings = plan.method === 'embeddings' ? (this.opts.embeddings ?? null) : null;
    const spec: AtlasJobSpec = {
      tableFile: this.tablePath(ws, plan.source), table: plan.source, method: plan.method, columns: plan.columns, out: `${stem}.csv`,
      seed: this.opts.seed ?? DEFAULT_SEED, umapFitRows: this.opts.umapFitRows, maxRows: this.opts.maxRows ?? MAX_MAP_ROWS, memoryMb: this.opts.reads.memoryMb,
      ...(embeddings ? { embeddings: withoutKey(embeddings) } : {}),
    };
    try {
      fs.writeFileSync(`${stem}.json`, JSON.stringify(spec));
      let timedOut = false;
      const { limits } = this.opts;
      const { child, end } = runJobProcess(MAIN, `${stem}.json`, limits, {
        progress: (p) => void this.setCoords(job, gen, () => ({ status: 'running', table, progress: { stage: p.stage, done: p.done, total: p.total }, at: Date.now() })),
        timeout: () => (timedOut = true),
      }, embeddings?.apiKey ? { [EMBEDDINGS_KEY_ENV]: embeddings.apiKey } : {});
      job.child = child;
      const { code, outcome, stderr } = await end;
      if (job.child === child) job.child = null;
      if (job.gen !== gen) return; // superseded, or the map was removed
      const o = outcome as { type: string; message?: string; points?: number; how?: string; labels?: AtlasCoords['labels'] } | null;
      if (!o || o.type !== 'done' || code !== 0) {
        const message = o?.message ?? (timedOut
          ? `the map took longer than ${Math.round(limits.timeoutMs / 1000)} s (PLEXUS_JOB_TIMEOUT_MS)`
          : outOfMemory(stderr) ? `the map ran out of memory (${limits.memoryMb} MiB; PLEXUS_JOB_MEMORY_MB)` : `the map's process ended unexpectedly (exit ${code})`);
        if (!o?.message) this.opts.log.warn('atlas job failed', { ws, map: id, code, stderr: stderr.slice(-800) });
        return void (await this.setCoords(job, gen, () => err(redactServerPaths(message))));
      }
      await this.setCoords(job, gen, () => ({ status: 'running', table, progress: { stage: 'registering', done: 0, total: 1 }, at: Date.now() }));
      const registered = await this.register(ws, table, spec.out, 'csv', plan.by, (doc) => job.gen === gen && getAtlasMap(doc, id) !== null);
      if (!registered || job.gen !== gen) return;
      await this.setCoords(job, gen, () => ({ status: 'done', table, points: o.points ?? 0, labels: (o.labels ?? []).slice(0, 200), how: o.how ?? '', at: Date.now() }));
      this.requestSelection(ws, id);
    } finally {
      if (job.gen === gen) job.child = null;
      for (const f of [`${stem}.json`, `${stem}.csv`]) fs.rmSync(f, { force: true });
    }
  }

  /**
   * Imports `file` as table `name` (as uploads are) and registers it, unless `still(doc)` says no
   * (checked under the table's lock, just before). Returns whether it did.
   */
  private async register(ws: string, name: string, file: string, format: 'csv' | 'parquet', by: string, still: (doc: Y.Doc) => boolean): Promise<boolean> {
    const release = await fileTurn(this.tablePath(ws, name));
    try {
      if (!(await this.opts.change(ws, still))) return false;
      const size = fs.statSync(file).size;
      const fileName = `${name}.${format}`;
      const t = await importUpload({
        body: fs.createReadStream(file), fileName, tableName: name, contentLength: size,
        tablesDir: this.opts.tablesDir(ws), tmpDir: path.join(this.opts.workspaceDir(ws), 'uploads-tmp'),
        limits: { ...this.opts.upload, maxBytes: Math.max(this.opts.upload.maxBytes, size) },
      });
      await this.opts.change(ws, (doc) =>
        registerTable(doc, { name: t.name, fileName, format: t.format, columns: t.columns, rows: t.rows, bytes: t.bytes, storedBytes: t.storedBytes, uploadedBy: { id: by }, created: Date.now() }, ORIGIN),
      );
      return true;
    } finally {
      release();
    }
  }

  private async selectionLoop(job: MapJob): Promise<void> {
    for (;;) {
      if (!job.sel.again || this.closed) {
        job.sel.loop = null;
        return;
      }
      job.sel.again = false;
      await this.writeSelection(job).catch((e: Error) => this.opts.log.warn('atlas selection table not written', { ws: job.ws, map: job.id, err: e.message }));
      await this.writeViewer(job).catch((e: Error) => this.opts.log.warn('atlas viewer highlight not written', { ws: job.ws, map: job.id, err: e.message }));
    }
  }

  /** What the selection table of a map with done coordinates must hold (`key`, as its marker says), or null. */
  private selectionState(doc: Y.Doc, id: string) {
    const m = getAtlasMap(doc, id);
    const coordsTable = m?.coords?.status === 'done' ? m.coords.table : undefined;
    if (!m || !coordsTable) return null;
    const src = getTable(doc, m.table);
    const coords = getTable(doc, coordsTable);
    if (!src || !coords) return null;
    const name = selectionTableName(coordsTable);
    const key = JSON.stringify({ table: name, selection: geometry(m.selection), coords: coords.created, source: src.created });
    return { m: { table: m.table, selection: m.selection, by: m.createdBy || 'atlas' }, coordsTable, name, key, registered: getTable(doc, name) !== null };
  }

  /** Whether the registered selection table holds `state` (its marker says so). */
  private holds(ws: string, id: string, state: { key: string; registered: boolean }): boolean {
    const marker = this.marker(ws, id);
    return state.registered && fs.existsSync(marker) && fs.readFileSync(marker, 'utf8') === state.key;
  }

  private async writeSelection(job: MapJob): Promise<void> {
    const { ws, id } = job;
    const state = await this.opts.change(ws, (doc) => this.selectionState(doc, id));
    if (!state) return;
    const marker = this.marker(ws, id);
    if (this.holds(ws, id, state)) return;
    fs.mkdirSync(this.workDir(ws), { recursive: true });
    const out = path.join(this.workDir(ws), `${id}-selection-${randomBytes(4).toString('hex')}.parquet`);
    try {
      await exportSelection({ source: this.tablePath(ws, state.m.table), coords: this.tablePath(ws, state.coordsTable) }, state.m.selection, out, this.opts.reads);
      const done = await this.register(ws, state.name, out, 'parquet', state.m.by, (doc) => getAtlasMap(doc, id)?.coords?.table === state.coordsTable);
      if (done) fs.writeFileSync(marker, state.key);
    } finally {
      fs.rmSync(out, { force: true });
    }
  }

  /**
   * The ROIs of a map's selected and highlighted rows in the viewer (maps of ROI tables only):
   * their ids read from the selection table (once it holds the current selection) and from the
   * source table, then written unless the map moved on meanwhile (the loop comes back for that).
   */
  private async writeViewer(job: MapJob): Promise<void> {
    const { ws, id } = job;
    const plan = await this.opts.change(ws, (doc) => {
      const state = this.selectionState(doc, id);
      const m = getAtlasMap(doc, id);
      if (!state || !m) return null;
      if (!segmentTableOf(doc, m.table)) {
        // Not (or no longer) a table of ROIs: nothing of it shows in the viewer.
        clearAtlasViewer(doc, m.map, ORIGIN);
        return null;
      }
      return { state, basis: atlasViewerBasis(doc, id)! };
    });
    if (!plan || !this.holds(ws, id, plan.state)) return;
    const found = await readSegmentIds({ source: this.tablePath(ws, plan.state.m.table), selection: this.tablePath(ws, plan.state.name) }, plan.basis.highlight ?? [], this.opts.reads);
    await this.opts.change(ws, (doc) => writeAtlasViewer(doc, id, found, plan.basis, ORIGIN));
  }

  /** A map was removed: its job ends and its tables go (unless a map of that id is back, e.g. undone). */
  private removed(ws: string, id: string): void {
    const job = this.jobs.get(this.key(ws, id));
    if (!job) return;
    job.gen++;
    job.wanted = false;
    job.sel.again = false;
    job.child?.kill('SIGTERM');
    const table = job.table;
    this.jobs.delete(this.key(ws, id));
    fs.rmSync(this.marker(ws, id), { force: true });
    if (table) void this.dropTables(ws, id, table).catch((e: Error) => this.opts.log.warn('atlas tables not removed', { ws, map: id, err: e.message }));
  }

  private async dropTables(ws: string, id: string, table: string): Promise<void> {
    for (const name of [table, selectionTableName(table)]) {
      const file = this.tablePath(ws, name);
      const release = await fileTurn(file);
      try {
        const gone = await this.opts.change(ws, (doc) => {
          if (getAtlasMap(doc, id) || listAtlasMaps(doc).some((m) => m.coords?.table === table)) return false;
          return unregisterTable(doc, name, ORIGIN);
        });
        if (gone) fs.rmSync(file, { force: true });
      } finally {
        release();
      }
    }
  }

  /** The map's source table was removed: its job ends, and its coordinates say why. */
  private sourceGone(ws: string, id: string, name: string): void {
    const job = this.job(ws, id);
    job.gen++;
    job.wanted = false;
    job.child?.kill('SIGTERM');
    void this.setCoords(job, job.gen, () => ({ status: 'error', error: `table "${name}" was removed from this workspace; upload it again to see this map`, ...(job.table ? { table: job.table } : {}), at: Date.now() }));
    // Its rows' ROIs leave the viewer with it.
    void this.opts.change(ws, (doc) => {
      const m = getAtlasMap(doc, id);
      if (m) clearAtlasViewer(doc, m.map, ORIGIN);
    }).catch((e: Error) => this.opts.log.warn('atlas viewer highlight not cleared', { ws, map: id, err: e.message }));
  }
}
