/**
 * TIFF recordings uploaded to a workspace become served datasets, as jobs everyone sees: the upload
 * is streamed to a temporary file under a size cap (`receive`), then `start` picks the dataset's
 * name (from the file name, made unique: `name`, `name-2`, …, reserved in this process), records a
 * `tiff-import` job in the workspace's `jobs` root and runs the import in its own process
 * (`tiff-import-main.ts`, under the server's job limits) while the dataset answers 503
 * "generating". Everyone sees it queued, reading frames with the time left, then its result (the
 * dataset's layers, size, frame rate) or the importer's error; anyone who may edit stops it (the
 * `stop` signal in the document, or the HTTP endpoint). Whatever the outcome, the upload is deleted,
 * and a failed or stopped import leaves no dataset directory behind, not even a hidden one.
 * Effects: files, processes, document writes (server origin).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { createJob, serverOrigin, updateJob, type Job, type JobRequester } from '@plexus/shared';
import type * as Y from 'yjs';
import type { Logger } from '../log.ts';
import type { Volumes } from '../volumes/volume-store.ts';
import { JobError, JobSlots, outOfMemory, runJobProcess, type JobProcessLimits, type JobSlot } from './job-runner.ts';
import type { TiffImportSpec } from './tiff-import-main.ts';
import type { TiffImportResult } from './tiff-import.ts';

/** Import options a person may give with an upload (the file's metadata fills in the rest). */
export const recordingOptionsSchema = z.strictObject({
  dataset: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'a dataset name is 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or digit').optional(),
  channel: z.number().int().min(0).max(4095).optional(),
  plane: z.number().int().min(0).max(4095).optional(),
  frameRate: z.number().positive().max(100_000).optional(),
  micronsPerPixel: z.number().positive().max(100_000).optional(),
});
export type RecordingOptions = z.infer<typeof recordingOptionsSchema>;

/** An uploaded recording to import: the stored upload, its original name and the options. */
export interface RecordingRequest extends RecordingOptions {
  tempFile: string;
  fileName: string;
}

export interface TiffImportsOptions {
  dataDir: string;
  /** Where uploads wait for their import (this node's own folder when several nodes share the data dir); default `dataDir`. */
  scratchDir?: string;
  volumes: Volumes;
  log: Logger;
  /** The job limits of the server (PLEXUS_JOB_*), imports at once. */
  limits: JobProcessLimits & { concurrent: number };
  /** Largest upload, bytes (PLEXUS_RECORDING_MAX_BYTES). */
  maxBytes: number;
  /** Runs `f` on the live document of a workspace (loading it if needed). */
  change: <T>(ws: string, f: (doc: Y.Doc) => T) => Promise<T>;
  /** The live document of a workspace if it is loaded (for stop signals), else null. */
  live: (ws: string) => Y.Doc | null;
  /** Tests only: adjusts an import's spec before it runs (e.g. to hold it at a frame). */
  wrapSpec?: (spec: TiffImportSpec) => TiffImportSpec;
}

/** What the result of a done import holds (TiffImportResult less the byte count). */
const RESULT_KEYS = ['dataset', 'layers', 'width', 'height', 'frames', 'frameRate', 'sampleType', 'channels', 'planes', 'droppedPages'] as const;

interface Queued {
  ws: string;
  id: string;
  spec: TiffImportSpec;
  /** Ends the dataset's "generating" state. */
  settle: () => void;
}

const MAIN = fileURLToPath(new URL('./tiff-import-main.ts', import.meta.url));
const origin = () => serverOrigin('tiff-import');

/**
 * A dataset name from an uploaded file's name: the extension dropped, lower case, runs of anything
 * but letters, digits, `_` and `.` made one `-`, at most 60 characters; `recording` when nothing is left.
 */
export function datasetNameFrom(fileName: string): string {
  const base = fileName.replace(/^.*[/\\]/, '').replace(/\.(ome\.)?(tiff?|btf|tf8)$/i, '');
  const plain = base
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_.]+/g, '-')
    .replace(/^[-._]+/, '')
    .slice(0, 60)
    .replace(/[-.]+$/, '');
  return plain || 'recording';
}

/** Checks an upload's file name (a plain name of a TIFF file); throws JobError. */
export function checkRecordingName(fileName: string): void {
  if (!fileName || fileName.length > 255) throw new JobError(400, 'bad-name', 'name (the file name) must be 1 to 255 characters');
  if (/[/\\\u0000-\u001f\u007f]/.test(fileName) || fileName.includes('..')) throw new JobError(400, 'bad-name', `${JSON.stringify(fileName)} is not a plain file name (no paths, no "..")`);
  if (!/\.(tiff?|btf|tf8)$/i.test(fileName)) throw new JobError(415, 'unsupported-type', `${JSON.stringify(fileName)}: upload a multi-page TIFF recording (.tif, .tiff, .btf, .tf8)`);
}

/** "8 GiB", "200 MiB". */
const size = (bytes: number) => (bytes >= 2 ** 30 ? `${+(bytes / 2 ** 30).toFixed(1)} GiB` : `${Math.round(bytes / 2 ** 20)} MiB`);

export class TiffImports {
  /** Where uploads wait for their import (`<dataDir>/jobs/uploads-tmp`). */
  readonly uploadDir: string;
  private readonly slots: JobSlots<Queued>;
  /** Dataset names given to imports not yet ended. */
  private readonly reserved = new Set<string>();
  private closed = false;

  constructor(private readonly opts: TiffImportsOptions) {
    this.slots = new JobSlots<Queued>({
      concurrent: opts.limits.concurrent,
      live: opts.live,
      run: (job, slot) => this.run(job, slot),
      dropped: async (job, reason) => {
        this.release(job, false);
        await this.finish(job.ws, job.id, { status: 'stopped', error: reason });
      },
    });
    this.uploadDir = path.join(opts.scratchDir ?? opts.dataDir, 'jobs', 'uploads-tmp');
    // Uploads and specs of imports a crash interrupted: nothing of them may remain.
    fs.rmSync(this.uploadDir, { recursive: true, force: true });
  }

  /** Validates the options of an upload (before its body is stored); throws JobError. */
  check(fileName: string, options: unknown): RecordingOptions {
    checkRecordingName(fileName);
    const parsed = recordingOptionsSchema.safeParse(options);
    if (!parsed.success) throw new JobError(400, 'bad-params', `invalid parameters: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')}`);
    return Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined)) as RecordingOptions;
  }

  /**
   * Streams an upload into a new temporary file under the size cap and returns its path. Throws
   * JobError (413 too large, 400 empty or interrupted); then no file remains. The body is drained
   * after a refusal, so the client reads the answer instead of a reset connection.
   */
  async receive(body: Readable, contentLength?: number): Promise<string> {
    const max = this.opts.maxBytes;
    const tooLarge = () => new JobError(413, 'too-large', `the recording is larger than the ${size(max)} limit (PLEXUS_RECORDING_MAX_BYTES)`);
    if (this.closed) throw new JobError(503, 'closing', 'the server is shutting down');
    if (contentLength !== undefined && contentLength > max) throw tooLarge();
    fs.mkdirSync(this.uploadDir, { recursive: true, mode: 0o700 });
    const file = path.join(this.uploadDir, `${Date.now()}-${randomBytes(6).toString('hex')}.tif`);
    try {
      const n = await streamToFile(body, file, max, tooLarge);
      if (n === 0) throw new JobError(400, 'empty', 'the upload is empty: send the TIFF file as the request body');
      return file;
    } catch (e) {
      fs.rmSync(file, { force: true });
      throw e;
    }
  }

  /**
   * Records an import of the stored upload `input.tempFile` (queued) and starts it when a slot is
   * free; returns the job's id and the dataset's name. From here on the upload is this class's:
   * it is deleted when the import ends, or now if the request is refused.
   */
  async start(ws: string, input: RecordingRequest, by: JobRequester): Promise<{ job: string; dataset: string }> {
    let dataset: string | null = null;
    try {
      if (this.closed) throw new JobError(503, 'closing', 'the server is shutting down');
      const { tempFile, fileName, ...rest } = input;
      const options = this.check(fileName, rest);
      dataset = this.reserve(fileName, options.dataset);
      const id = `j_${randomBytes(5).toString('hex')}`;
      const { dataset: _wanted, ...params } = options;
      await this.opts.change(ws, (doc) =>
        createJob(doc, { id, kind: 'tiff-import', title: `Import of ${fileName}`, input: { fileName }, params: { dataset, ...params }, requestedBy: by, created: Date.now() }, origin()),
      );
      let settle!: () => void;
      this.opts.volumes.track(dataset, new Promise<void>((resolve) => (settle = resolve)));
      const spec: TiffImportSpec = { file: tempFile, volumesDir: this.opts.volumes.root, dataset, sourceName: fileName, ...params };
      this.slots.add({ ws, id, spec, settle });
      return { job: id, dataset };
    } catch (e) {
      if (dataset !== null) this.reserved.delete(dataset);
      fs.rmSync(input.tempFile, { force: true });
      throw e;
    }
  }

  /** Stops an import (queued or running); false when it is not running here. */
  stop(ws: string, id: string, reason: string): boolean {
    return this.slots.stop(ws, id, reason);
  }

  /** Imports running or queued (for tests and status). */
  active(): string[] {
    return this.slots.active();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.slots.close();
  }


  /** Reserves the dataset name: the one asked for (409 if taken), else one made from the file name. */
  private reserve(fileName: string, wanted: string | undefined): string {
    // Synchronous from check to reservation, so two uploads of one name cannot both get it.
    const taken = (n: string) => {
      if (this.reserved.has(n) || this.opts.volumes.isGenerating(n)) return true;
      try {
        fs.lstatSync(path.join(this.opts.volumes.root, n));
        return true;
      } catch {
        return false;
      }
    };
    let name: string;
    if (wanted !== undefined) {
      if (taken(wanted)) throw new JobError(409, 'exists', `a dataset named "${wanted}" already exists: choose another name`);
      name = wanted;
    } else {
      const base = datasetNameFrom(fileName);
      let k = 1;
      while (taken((name = k === 1 ? base : `${base}-${k}`))) k++;
    }
    this.reserved.add(name);
    return name;
  }

  /** Deletes the upload (and, unless the import succeeded, any trace of the dataset) and frees the name. */
  private release(job: Queued, succeeded: boolean, pid?: number): void {
    fs.rmSync(job.spec.file, { force: true });
    if (!succeeded && pid !== undefined) {
      // The importer removes its temporary directory itself, unless it was killed (time limit, memory).
      const prefix = `.${job.spec.dataset}.tmp-${pid}-`;
      try {
        for (const name of fs.readdirSync(this.opts.volumes.root).filter((n) => n.startsWith(prefix))) fs.rmSync(path.join(this.opts.volumes.root, name), { recursive: true, force: true });
      } catch (e) {
        this.opts.log.warn('could not remove what a failed TIFF import left', { dataset: job.spec.dataset, err: e });
      }
    }
    this.reserved.delete(job.spec.dataset);
    job.settle();
  }

  private async run(job: Queued, r: JobSlot): Promise<void> {
    const { ws, id, spec } = job;
    const specFile = `${spec.file}.spec.json`;
    let released = false;
    const release = (succeeded: boolean, pid?: number) => {
      if (released) return;
      released = true;
      fs.rmSync(specFile, { force: true });
      this.release(job, succeeded, pid);
    };
    try {
      await this.opts.change(ws, (doc) => updateJob(doc, id, { status: 'running', progress: { stage: 'starting', done: 0, total: 1, eta: null, at: Date.now() } }, origin()));
      fs.writeFileSync(specFile, JSON.stringify(this.opts.wrapSpec ? this.opts.wrapSpec(spec) : spec), { mode: 0o600 });
      const { limits } = this.opts;
      const { child, end } = runJobProcess(MAIN, specFile, limits, {
        progress: (progress) => void this.opts.change(ws, (doc) => updateJob(doc, id, { progress }, origin())).catch(() => {}),
        timeout: () => (r.stopped = `the import took longer than ${Math.round(limits.timeoutMs / 1000)} s (PLEXUS_JOB_TIMEOUT_MS)`),
      });
      r.child = child;
      const { code, outcome, stderr } = await end;
      const o = outcome as { type: string; result?: TiffImportResult; message?: string } | null;
      // A stop that came after the dataset was in place is too late: the import is done.
      const succeeded = o?.type === 'done' && code === 0 && !!o.result;
      // Files first: whoever sees the job end finds the dataset served, or nothing left of it.
      release(succeeded, child.pid);
      if (r.stopped && !succeeded) return void (await this.finish(ws, id, { status: 'stopped', error: r.stopped }));
      if (!succeeded) {
        const message = o?.message ?? (outOfMemory(stderr) ? `the import ran out of memory (${limits.memoryMb} MiB; PLEXUS_JOB_MEMORY_MB)` : `the import process ended unexpectedly (exit ${code})`);
        this.opts.log.warn('TIFF import failed', { ws, job: id, code, stderr: stderr.slice(-800) });
        return void (await this.finish(ws, id, { status: 'error', error: this.forPerson(message, spec) }));
      }
      const result = Object.fromEntries(RESULT_KEYS.map((k) => [k, o!.result![k]]));
      await this.finish(ws, id, { status: 'done', result: result as never });
    } catch (e) {
      release(false);
      this.opts.log.error('TIFF import failed', { ws, job: id, err: e });
      await this.finish(ws, id, { status: 'error', error: this.forPerson(e instanceof Error ? e.message : String(e), spec) }).catch(() => {});
    } finally {
      release(false);
    }
  }

  /** The message with the server's paths replaced by what they are (the importer's own never has any). */
  private forPerson(message: string, spec: TiffImportSpec): string {
    const names: Array<[string, string]> = [[spec.file, spec.sourceName], [this.uploadDir, 'the upload folder'], [spec.volumesDir, 'the volumes folder'], [this.opts.dataDir, '<data dir>']];
    let out = message;
    for (const [p, label] of names) out = out.split(p).join(label);
    return out;
  }

  private async finish(ws: string, id: string, patch: Partial<Pick<Job, 'status' | 'error' | 'result'>>): Promise<void> {
    await this.opts.change(ws, (doc) => updateJob(doc, id, { ...patch, progress: null as never }, origin()));
  }
}

/**
 * Writes `body` to the new file `file`, failing once more than `max` bytes came. The body is not
 * destroyed on a failure (that would reset the connection before the answer): it is drained.
 */
function streamToFile(body: Readable, file: string, max: number, tooLarge: () => JobError): Promise<number> {
  return new Promise((resolve, reject) => {
    let n = 0;
    let settled = false;
    const out = fs.createWriteStream(file, { flags: 'wx', mode: 0o600 });
    const fail = (e: JobError) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      body.resume();
      out.destroy();
      reject(e);
    };
    const onData = (chunk: Buffer) => {
      n += chunk.length;
      if (n > max) return fail(tooLarge());
      if (!out.write(chunk)) {
        body.pause();
        out.once('drain', () => body.resume());
      }
    };
    const interrupted = () => fail(new JobError(400, 'upload-interrupted', 'the upload did not complete'));
    body.on('data', onData);
    body.once('end', () => !settled && out.end());
    body.once('error', interrupted);
    body.once('aborted', interrupted);
    out.once('error', (e: NodeJS.ErrnoException) => fail(new JobError(e.code === 'ENOSPC' ? 507 : 500, 'upload-failed', `the upload could not be stored (${e.code ?? 'error'})`)));
    out.once('finish', () => {
      if (settled) return;
      settled = true;
      resolve(n);
    });
  });
}
