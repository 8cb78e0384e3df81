/**
 * Analysis job routes of the HTTP API (docs/api.md#analysis-jobs, docs/api.md#recordings):
 *   POST /api/workspaces/:id/jobs            {kind: 'calcium', dataset, layer, params?} → 201 {job}
 *   GET  /api/workspaces/:id/jobs/:job       → the job as the document holds it
 *   POST /api/workspaces/:id/jobs/:job/stop  → {stopped}
 *   POST /api/workspaces/:id/recordings?name=<file>[&dataset=&channel=&plane=&frameRate=&micronsPerPixel=]
 *        body: a TIFF recording → 202 {job, dataset} once it is stored and its import queued
 * Starting and stopping need edit rights (people, the agent's service token). Effects: stores
 * uploads, starts and stops job processes, document writes (server origin).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Hocuspocus } from '@hocuspocus/server';
import { canWrite, readJob, type JobRequester, type Role, type TokenClaims } from '@plexus/shared';
import { isJobError, type CalciumJobs } from '../analysis/calcium-jobs.ts';
import type { RecordingOptions, TiffImports } from '../analysis/tiff-jobs.ts';
import { withDoc } from './doc-access.ts';
import { HttpError, readJson, sendJson } from './respond.ts';

export interface JobsApiDeps {
  hocuspocus: Hocuspocus;
  /** Calcium analyses (null without the kernel). */
  jobs: CalciumJobs | null;
  /** Imports of uploaded TIFF recordings (null where the server has none). */
  recordings: TiffImports | null;
}

/** Who a token is, as a job requester. */
export function requesterOf(claims: TokenClaims, via?: JobRequester['via']): JobRequester {
  const agent = claims.sub === 'service:agent';
  return { id: claims.sub, ...(claims.name ? { name: claims.name } : {}), via: via ?? (agent ? 'agent' : 'person') };
}

/** Handles `/api/workspaces/:id/jobs…` and `/api/workspaces/:id/recordings`; false for other paths. */
export async function handleJobsApi(deps: JobsApiDeps, req: IncomingMessage, res: ServerResponse, url: URL, claims: TokenClaims, role: Role, id: string, rest: string[]): Promise<boolean> {
  if (rest[0] === 'recordings') return handleRecordings(deps, req, res, url, claims, role, id, rest);
  if (rest[0] !== 'jobs') return false;
  const method = req.method ?? 'GET';
  const edit = () => {
    if (!canWrite(role)) throw new HttpError(403, 'forbidden', 'viewers cannot start or stop analyses');
  };
  try {
    if (rest.length === 1 && method === 'POST') {
      // The body first: refusing before it was read resets the connection under the client.
      const body = await readJson(req, 64 * 1024);
      const jobs = deps.jobs;
      if (!jobs) throw new HttpError(503, 'kernel-disabled', 'analysis jobs need the kernel, which is disabled on this server (PLEXUS_KERNEL=0)');
      edit();
      if (body.kind !== 'calcium') throw new HttpError(400, 'bad-kind', 'kind must be "calcium" (TIFF recordings are imported by POST …/recordings)');
      if (typeof body.dataset !== 'string' || typeof body.layer !== 'string') throw new HttpError(400, 'bad-volume', 'dataset and layer (strings) name the movie to analyse');
      const job = await jobs.start(id, { dataset: body.dataset, layer: body.layer, params: body.params }, requesterOf(claims));
      sendJson(res, 201, { job });
      return true;
    }
    if (rest.length === 2 && method === 'GET') {
      const job = await withDoc(deps.hocuspocus, id, (doc) => readJob(doc, rest[1]!));
      if (!job) throw new HttpError(404, 'no-job', `there is no job "${rest[1]}" in this workspace`);
      sendJson(res, 200, job);
      return true;
    }
    if (rest.length === 3 && rest[2] === 'stop' && method === 'POST') {
      edit();
      const reason = `stopped by ${claims.name ?? claims.sub}`;
      const stopped = (deps.jobs?.stop(id, rest[1]!, reason) ?? false) || (deps.recordings?.stop(id, rest[1]!, reason) ?? false);
      sendJson(res, 200, { stopped });
      return true;
    }
  } catch (e) {
    if (isJobError(e)) throw new HttpError(e.status, e.code, e.message);
    throw e;
  }
  throw new HttpError(404, 'not-found', 'no such jobs route');
}

/** Options of `POST …/recordings` from the query: numbers as numbers (NaN when not one, for the schema to name). */
function recordingQuery(url: URL): { fileName: string; options: Record<string, unknown> } {
  const q = url.searchParams;
  const options: Record<string, unknown> = {};
  const dataset = q.get('dataset');
  if (dataset !== null) options.dataset = dataset;
  for (const k of ['channel', 'plane', 'frameRate', 'micronsPerPixel']) {
    const v = q.get(k);
    if (v !== null) options[k] = v.trim() === '' ? Number.NaN : Number(v);
  }
  return { fileName: url.searchParams.get('name') ?? '', options };
}

/**
 * `POST …/recordings`: refusals that need no body (a viewer, bad options) come after the body was
 * drained, so the client reads them; then the upload is stored and its import queued (202).
 */
async function handleRecordings(deps: JobsApiDeps, req: IncomingMessage, res: ServerResponse, url: URL, claims: TokenClaims, role: Role, id: string, rest: string[]): Promise<boolean> {
  const refuse = async (e: HttpError): Promise<never> => {
    await drain(req);
    throw e;
  };
  if (rest.length !== 1 || req.method !== 'POST') return refuse(new HttpError(404, 'not-found', 'recordings are uploaded with POST /api/workspaces/:id/recordings?name=<file name>'));
  const imports = deps.recordings;
  if (!imports) return refuse(new HttpError(503, 'no-imports', 'this server does not import recordings'));
  if (!canWrite(role)) return refuse(new HttpError(403, 'forbidden', 'viewers cannot upload recordings'));
  try {
    const { fileName, options } = recordingQuery(url);
    let checked: RecordingOptions;
    try {
      checked = imports.check(fileName, options);
    } catch (e) {
      if (isJobError(e)) return await refuse(new HttpError(e.status, e.code, e.message));
      throw e;
    }
    const len = req.headers['content-length'] !== undefined ? Number(req.headers['content-length']) : undefined;
    let tempFile: string;
    try {
      tempFile = await imports.receive(req, len);
    } catch (e) {
      // Drain what the client still sends so it reads our answer instead of a reset connection.
      req.resume();
      throw e;
    }
    const started = await imports.start(id, { tempFile, fileName, ...checked }, requesterOf(claims));
    sendJson(res, 202, started);
    return true;
  } catch (e) {
    if (isJobError(e)) throw new HttpError(e.status, e.code, e.message);
    throw e;
  }
}

/** Reads and discards the rest of a request body (up to 64 MiB; beyond that the answer goes out while it flows on). */
function drain(req: IncomingMessage, limit = 64 * 2 ** 20): Promise<void> {
  if (req.readableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    let n = 0;
    const onData = (c: Buffer) => {
      n += c.length;
      if (n > limit) done();
    };
    const done = () => {
      req.off('data', onData);
      req.resume();
      resolve();
    };
    req.on('data', onData);
    req.once('end', done);
    req.once('error', done);
    req.once('close', done);
    req.resume();
  });
}
