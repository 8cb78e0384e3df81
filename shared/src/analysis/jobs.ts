/**
 * The `jobs` root: long analyses (a calcium pipeline run, a TIFF import) that the server runs for a
 * workspace, outside any cell's time limit, with their progress, outcome and results in the shared
 * document — everyone sees the same progress bar and anyone who may edit can stop a job.
 * Writers: the server creates a job and writes its status, progress and result; people and the
 * agent write only the stop signal and ROI edits (delete or merge an ROI of a calcium result).
 * Pure module.
 */
import * as Y from 'yjs';
import type { Origin } from '../origin.ts';
import { roots } from '../schema.ts';

export const JOB_KINDS = ['calcium', 'tiff-import'] as const;
export type JobKind = (typeof JOB_KINDS)[number];
export const JOB_STATUSES = ['queued', 'running', 'done', 'error', 'stopped'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Who asked for a job, and how. */
export interface JobRequester {
  id: string;
  name?: string;
  via: 'person' | 'agent' | 'cell';
}

/** What a job works on (a served volume layer, or an uploaded file's name). */
export interface JobInput {
  dataset?: string;
  layer?: string;
  fileName?: string;
  /** The parameters as asked for, in a canonical form (a job with the same input and key is the same analysis). */
  paramsKey?: string;
}

export interface JobProgress {
  stage: string;
  done: number;
  total: number;
  /** Seconds left at the current pace (null until known). */
  eta: number | null;
  at: number;
}

/** A stop request (anyone who may edit). */
export interface JobSignal {
  by: string;
  name?: string;
  at: number;
}

/**
 * A person's (or the agent's) edit of one ROI of a calcium result: delete it, merge it into
 * another, or overrule the pipeline's soma / not-soma decision (`classify`).
 */
export type RoiEdit = ({ action: 'delete' } | { action: 'merge'; into: number } | { action: 'classify'; cell: boolean }) & { by: string; name?: string; at: number };

/** Results: JSON the job chose (dataset and layers written, tables registered, summary figures). */
export type JobResult = { [key: string]: import('../json.ts').Json };

export interface Job {
  id: string;
  kind: JobKind;
  title: string;
  input: JobInput;
  params: import('../json.ts').Json;
  requestedBy: JobRequester;
  created: number;
  status: JobStatus;
  progress: JobProgress | null;
  error: string | null;
  result: JobResult | null;
  stop: JobSignal | null;
  roiEdits: Record<string, RoiEdit>;
}

const FINISHED: ReadonlySet<JobStatus> = new Set(['done', 'error', 'stopped']);
/** True when a job has ended (done, error or stopped). */
export const isJobFinished = (status: JobStatus): boolean => FINISHED.has(status);

/** Creates a queued job. Server only. */
export function createJob(doc: Y.Doc, init: Pick<Job, 'id' | 'kind' | 'title' | 'input' | 'params' | 'requestedBy' | 'created'>, origin: Origin): void {
  doc.transact(() => {
    const m = new Y.Map<unknown>();
    roots(doc).jobs.set(init.id, m);
    m.set('id', init.id);
    m.set('kind', init.kind);
    m.set('title', init.title);
    m.set('input', init.input);
    m.set('params', init.params);
    m.set('requestedBy', init.requestedBy);
    m.set('created', init.created);
    m.set('status', 'queued');
    m.set('roiEdits', new Y.Map<unknown>());
  }, origin);
}

/** Updates a job's status, progress, error or result (server only); false when the job is gone. */
export function updateJob(doc: Y.Doc, id: string, patch: Partial<Pick<Job, 'status' | 'progress' | 'error' | 'result' | 'params'>>, origin: Origin): boolean {
  const m = roots(doc).jobs.get(id);
  if (!(m instanceof Y.Map)) return false;
  doc.transact(() => {
    for (const [k, v] of Object.entries(patch)) if (v !== undefined) m.set(k, v);
  }, origin);
  return true;
}

/** Asks a running job to stop (anyone who may edit); false when it is gone or already ended. */
export function requestJobStop(doc: Y.Doc, id: string, who: { id: string; name?: string }, origin: Origin): boolean {
  const m = roots(doc).jobs.get(id);
  const job = readJob(doc, id);
  if (!(m instanceof Y.Map) || !job || isJobFinished(job.status)) return false;
  const signal: JobSignal = { by: who.id, at: Date.now(), ...(who.name ? { name: who.name } : {}) };
  doc.transact(() => m.set('stop', signal), origin);
  return true;
}

/** Deletes or merges an ROI of a calcium result, or (edit null) takes that back. */
export function setRoiEdit(doc: Y.Doc, jobId: string, roiId: number, edit: RoiEdit | null, origin: Origin): boolean {
  const m = roots(doc).jobs.get(jobId);
  const edits = m instanceof Y.Map ? m.get('roiEdits') : null;
  if (!(edits instanceof Y.Map)) return false;
  if (!Number.isInteger(roiId) || roiId <= 0) throw new Error(`ROI ids are positive integers (got ${roiId})`);
  if (edit?.action === 'merge' && (!Number.isInteger(edit.into) || edit.into <= 0 || edit.into === roiId)) throw new Error('an ROI merges into another ROI');
  doc.transact(() => {
    if (edit) edits.set(String(roiId), edit);
    else edits.delete(String(roiId));
  }, origin);
  return true;
}

/** Removes a job from the list (its results stay). */
export function removeJob(doc: Y.Doc, id: string, origin: Origin): boolean {
  if (!roots(doc).jobs.has(id)) return false;
  doc.transact(() => roots(doc).jobs.delete(id), origin);
  return true;
}

/** One job as plain data, or null. */
export function readJob(doc: Y.Doc, id: string): Job | null {
  const m = roots(doc).jobs.get(id);
  if (!(m instanceof Y.Map)) return null;
  const g = (k: string) => m.get(k) as never;
  const edits = m.get('roiEdits');
  return {
    id,
    kind: g('kind'),
    title: g('title') ?? '',
    input: g('input') ?? {},
    params: g('params') ?? null,
    requestedBy: g('requestedBy') ?? { id: '', via: 'person' },
    created: g('created') ?? 0,
    status: g('status') ?? 'queued',
    progress: g('progress') ?? null,
    error: g('error') ?? null,
    result: g('result') ?? null,
    stop: g('stop') ?? null,
    roiEdits: edits instanceof Y.Map ? (edits.toJSON() as Record<string, RoiEdit>) : {},
  };
}

/** Every job, newest first. */
export function listJobs(doc: Y.Doc): Job[] {
  const out: Job[] = [];
  roots(doc).jobs.forEach((_, id) => {
    const j = readJob(doc, id);
    if (j) out.push(j);
  });
  return out.sort((a, b) => b.created - a.created);
}

/**
 * Whether ROI `id` counts as a cell after the edits: a person's `classify` overrules the
 * pipeline's decision `pipelineSays` (deleted and merged ROIs: see `effectiveRoiIds`).
 */
export function roiIsCell(id: number, pipelineSays: boolean, edits: Readonly<Record<string, RoiEdit>>): boolean {
  const e = edits[String(id)];
  return e?.action === 'classify' ? e.cell : pipelineSays;
}

/** The ROI ids a person sees after the edits: deleted ones gone, merged ones mapped to their target (a reclassified ROI stays itself). */
export function effectiveRoiIds(ids: readonly number[], edits: Readonly<Record<string, RoiEdit>>): Map<number, number> {
  const out = new Map<number, number>();
  for (const id of ids) {
    let target = id;
    const seen = new Set<number>();
    for (;;) {
      const e = edits[String(target)];
      if (!e || seen.has(target)) break;
      seen.add(target);
      if (e.action === 'delete') {
        target = 0;
        break;
      }
      if (e.action !== 'merge') break;
      target = e.into;
    }
    if (target > 0) out.set(id, target);
  }
  return out;
}
