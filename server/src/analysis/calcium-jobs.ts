/**
 * Calcium analysis jobs of every workspace: a job is a record in the workspace's `jobs` root
 * (everyone sees it queued, its stage, frames done and time left, then its result or error), and a
 * child process that runs the pipeline (`calcium-job-main.ts`) under `nice` with its own heap
 * limit and time limit. Anyone who may edit stops it (the `stop` signal in the document, or the
 * HTTP endpoint); a re-run of the same movie reuses its cached registration. When a job is done its
 * result dataset is moved into the served volumes (a new name per job, so no viewer shows stale
 * chunks), its tables are registered in the workspace (`<prefix>_rois`, `_traces`, `_events`,
 * `_shifts`, replaced by a re-run so dependent SQL cells re-run), and its ROI layer is added to the
 * viewer. Effects: processes, files, document writes (server origin).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { addLayer, createJob, listJobs, layerForServedVolume, serverOrigin, updateJob, type Job, type JobRequester } from '@plexus/shared';
import type * as Y from 'yjs';
import type { Logger } from '../log.ts';
import { checkSegment, type Volumes } from '../volumes/volume-store.ts';
import { readMeta, type LayerMeta } from '../volumes/meta.ts';
import type { CalciumJobSpec } from './calcium-job-main.ts';
import { RESULT_TABLES } from './calcium-results.ts';
import { JobError, JobSlots, outOfMemory, runJobProcess, type JobSlot } from './job-runner.ts';

/** Parameters a person, a cell or the agent may give (validated; defaults come from the recording). */
export const calciumParamsSchema = z.strictObject({
  frameRate: z.number().positive().max(10_000).optional(),
  tauDecay: z.union([z.number().positive().max(60), z.string().max(40)]).optional(),
  diameter: z.number().min(3).max(500).optional(),
  maxShift: z.number().int().min(1).max(200).optional(),
  blockSize: z.number().int().min(16).max(4096).optional(),
  binSeconds: z.number().positive().max(60).optional(),
  neuropilCoefficient: z.number().min(0).max(2).optional(),
  baselineSeconds: z.number().positive().max(3600).optional(),
  onsetLagFrames: z.number().int().min(0).max(10).optional(),
  detection: z
    .strictObject({
      seedThreshold: z.number().min(0.5).max(50).optional(),
      growFraction: z.number().min(0.05).max(0.95).optional(),
      minCorrelation: z.number().min(0).max(0.99).optional(),
      anatomical: z.boolean().optional(),
      anatomicalThreshold: z.number().min(0.5).max(50).optional(),
      maxRois: z.number().int().min(1).max(20_000).optional(),
    })
    .optional(),
});
export type CalciumParams = z.infer<typeof calciumParamsSchema>;

export interface CalciumJobsOptions {
  dataDir: string;
  /** Where job work directories go (this node's own folder when several nodes share the data dir); default `dataDir`. */
  scratchDir?: string;
  volumes: Volumes;
  log: Logger;
  /** Heap of the job process (MiB), wall-clock limit (ms), nice level (0–19), jobs at once per server. */
  limits: { memoryMb: number; timeoutMs: number; nice: number; concurrent: number };
  /** Runs `f` on the live document of a workspace (loading it if needed). */
  change: <T>(ws: string, f: (doc: Y.Doc) => T) => Promise<T>;
  /** The live document of a workspace if it is loaded (for stop signals), else null. */
  live: (ws: string) => Y.Doc | null;
  /** Registers a CSV file as table `name` of workspace `ws` (replacing one of that name). */
  registerTable: (ws: string, name: string, csvFile: string, by: JobRequester) => Promise<void>;
  /** Tests only: adjusts a job's spec before it runs (e.g. to hold it at a frame). */
  wrapSpec?: (spec: CalciumJobSpec) => CalciumJobSpec;
}

export { JobError, isJobError } from './job-runner.ts';

interface Queued {
  ws: string;
  id: string;
  spec: CalciumJobSpec;
  prefix: string;
  by: JobRequester;
}

const MAIN = fileURLToPath(new URL('./calcium-job-main.ts', import.meta.url));

export class CalciumJobs {
  private readonly slots: JobSlots<Queued>;
  private readonly workDir: string;
  private readonly cacheDir: string;
  private closed = false;

  constructor(private readonly opts: CalciumJobsOptions) {
    this.slots = new JobSlots<Queued>({
      concurrent: opts.limits.concurrent,
      live: opts.live,
      run: (job, slot) => this.run(job, slot),
      dropped: (job, reason) => this.finish(job.ws, job.id, { status: 'stopped', error: reason }),
    });
    this.workDir = path.join(opts.scratchDir ?? opts.dataDir, 'jobs');
    this.cacheDir = path.join(opts.dataDir, 'analysis-cache');
    // Work directories of jobs a crash interrupted: nothing of them may remain.
    fs.rmSync(this.workDir, { recursive: true, force: true });
    fs.mkdirSync(this.workDir, { recursive: true });
    fs.mkdirSync(this.cacheDir, { recursive: true });
  }

  /**
   * Validates the request, records the job (queued) and starts it when a slot is free. Returns its
   * id. With `reuse`, a job of this workspace with the same movie and parameters that is queued,
   * running or done is returned instead (a notebook's Run all does not redo finished analyses).
   */
  async start(ws: string, input: { dataset: string; layer: string; params?: unknown; reuse?: boolean }, by: JobRequester): Promise<string> {
    if (this.closed) throw new JobError(503, 'closing', 'the server is shutting down');
    const parsed = calciumParamsSchema.safeParse(input.params ?? {});
    if (!parsed.success) throw new JobError(400, 'bad-params', `invalid parameters: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')}`);
    for (const s of [input.dataset, input.layer]) {
      try {
        checkSegment(s);
      } catch {
        throw new JobError(400, 'bad-volume', `"${s}" is not a dataset or layer name`);
      }
    }
    const summary = (await this.opts.volumes.listDatasets()).find((d) => d.name === input.dataset);
    if (!summary) throw new JobError(404, 'no-dataset', `there is no dataset "${input.dataset}" on this server`);
    if (summary.status !== 'ready') throw new JobError(409, 'not-ready', `dataset "${input.dataset}" is still being prepared; try again in a moment`);
    if (!summary.layers.includes(input.layer)) throw new JobError(404, 'no-layer', `dataset "${input.dataset}" has no layer "${input.layer}" (it has ${summary.layers.join(', ')})`);
    const layerDir = path.join(this.opts.volumes.root, input.dataset, input.layer);
    const meta = await readMeta<LayerMeta>(path.join(layerDir, 'plexus.json'));
    if (meta && meta.axes.z !== 's') throw new JobError(400, 'not-a-movie', `${input.dataset}/${input.layer} is not a movie (its third axis is not time); pick the movie layer`);
    const params = parsed.data;
    const paramsKey = canonicalJson(params);
    if (input.reuse) {
      const same = await this.opts.change(ws, (doc) =>
        listJobs(doc).find((j) => j.kind === 'calcium' && j.input.dataset === input.dataset && j.input.layer === input.layer && j.input.paramsKey === paramsKey && ['queued', 'running', 'done'].includes(j.status)),
      );
      if (same) return same.id;
    }
    const frameRate = params.frameRate ?? meta?.frameRate;
    if (!frameRate) throw new JobError(400, 'no-frame-rate', `${input.dataset}/${input.layer} does not say its frame rate: give frameRate (frames per second)`);
    const id = `j_${randomBytes(5).toString('hex')}`;
    const source = `${input.dataset}/${input.layer}`;
    const title = `Calcium analysis of ${source}`;
    await this.opts.change(ws, (doc) => createJob(doc, { id, kind: 'calcium', title, input: { dataset: input.dataset, layer: input.layer, paramsKey }, params: { ...params, frameRate } as never, requestedBy: by, created: Date.now() }, serverOriginFor('calcium')));
    const dir = path.join(this.workDir, id);
    fs.mkdirSync(dir, { recursive: true });
    const cacheKey = `${input.dataset}__${input.layer}__${params.maxShift ?? 'auto'}__${params.blockSize ?? 'rigid'}`.replace(/[^A-Za-z0-9_.-]/g, '_');
    const spec: CalciumJobSpec = { layerDir, source, title, frameRate, params: { ...params, frameRate }, outDir: path.join(dir, 'out'), registrationCache: path.join(this.cacheDir, `${cacheKey}.registration`) };
    fs.mkdirSync(spec.outDir);
    const prefix = input.dataset.toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '').replace(/^(?=[0-9])/, 't_').slice(0, 40) || 'calcium';
    this.slots.add({ ws, id, spec, prefix, by });
    return id;
  }

  /** Stops a job (queued or running); false when it is not running here. */
  stop(ws: string, id: string, reason: string): boolean {
    return this.slots.stop(ws, id, reason);
  }

  /** Jobs running or queued (for tests and status). */
  active(): string[] {
    return this.slots.active();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.slots.close();
  }

  private async run(job: Queued, r: JobSlot): Promise<void> {
    const { ws, id, spec } = job;
    const dir = path.join(this.workDir, id);
    const started = Date.now();
    try {
      await this.opts.change(ws, (doc) => updateJob(doc, id, { status: 'running', progress: { stage: 'starting', done: 0, total: 1, eta: null, at: started } }, serverOriginFor('calcium')));
      const specFile = path.join(dir, 'spec.json');
      fs.writeFileSync(specFile, JSON.stringify(this.opts.wrapSpec ? this.opts.wrapSpec(spec) : spec));
      const { limits } = this.opts;
      const { child, end } = runJobProcess(MAIN, specFile, limits, {
        progress: (progress) => void this.opts.change(ws, (doc) => updateJob(doc, id, { progress }, serverOriginFor('calcium'))).catch(() => {}),
        timeout: () => (r.stopped = `the analysis took longer than ${Math.round(limits.timeoutMs / 1000)} s (PLEXUS_JOB_TIMEOUT_MS)`),
      });
      r.child = child;
      const { code, outcome, stderr } = await end;
      const o = outcome as { type: string; summary?: Record<string, number>; params?: unknown; message?: string; reusedRegistration?: boolean; timings?: Record<string, number> } | null;
      if (r.stopped) return void (await this.finish(ws, id, { status: 'stopped', error: r.stopped }));
      if (!o || o.type !== 'done' || code !== 0) {
        const oom = outOfMemory(stderr);
        const message = o?.message ?? (oom ? `the analysis ran out of memory (${limits.memoryMb} MiB; PLEXUS_JOB_MEMORY_MB)` : `the analysis process ended unexpectedly (exit ${code})`);
        this.opts.log.warn('calcium job failed', { ws, job: id, code, stderr: stderr.slice(-800) });
        return void (await this.finish(ws, id, { status: 'error', error: message }));
      }
      // Publish: the dataset (a new name per job), the tables, the viewer layer.
      await this.opts.change(ws, (doc) => updateJob(doc, id, { progress: { stage: 'publishing', done: 0, total: 1, eta: null, at: Date.now() } }, serverOriginFor('calcium')));
      const dataset = `${spec.source.split('/')[0]}-${id.replace(/^j_/, 'calcium-')}`;
      const target = path.join(this.opts.volumes.root, dataset);
      fs.renameSync(spec.outDir, target);
      const tables: Record<string, string> = {};
      for (const t of Object.keys(RESULT_TABLES)) {
        const name = `${job.prefix}_${t}`;
        await this.opts.registerTable(ws, name, path.join(target, 'tables', `${t}.csv`), job.by);
        tables[t] = name;
      }
      const rois = (await this.opts.volumes.describeDataset(dataset)).layers.find((l) => l.name === 'rois');
      await this.opts.change(ws, (doc) => {
        if (rois) addLayer(doc, layerForServedVolume(dataset, rois, `ROIs (${spec.source.split('/')[0]})`), serverOriginFor('calcium'));
      });
      await this.finish(ws, id, {
        status: 'done',
        result: { dataset, layers: ['rois', 'mean', 'max', 'correlation'], tables, summary: o.summary ?? {}, reusedRegistration: !!o.reusedRegistration, seconds: Math.round((Date.now() - started) / 100) / 10 } as never,
        params: o.params as never,
      });
    } catch (e) {
      this.opts.log.error('calcium job failed', { ws, job: id, err: e });
      await this.finish(ws, id, { status: 'error', error: e instanceof Error ? e.message : String(e) }).catch(() => {});
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  private async finish(ws: string, id: string, patch: Partial<Pick<Job, 'status' | 'error' | 'result' | 'params'>>): Promise<void> {
    await this.opts.change(ws, (doc) => updateJob(doc, id, { ...patch, progress: null as never }, serverOriginFor('calcium')));
  }
}

const serverOriginFor = (reason: string) => serverOrigin(reason);

/** JSON with object keys sorted (the same parameters give the same text). */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().filter((k) => (v as Record<string, unknown>)[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}
