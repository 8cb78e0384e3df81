/**
 * Analysis job routes of the HTTP API (docs/api.md#analysis-jobs):
 *   POST /api/workspaces/:id/jobs            {kind: 'calcium', dataset, layer, params?} → 201 {job}
 *   GET  /api/workspaces/:id/jobs/:job       → the job as the document holds it
 *   POST /api/workspaces/:id/jobs/:job/stop  → {stopped}
 * Starting and stopping need edit rights (people, the agent's service token). Effects: starts and
 * stops job processes, document writes (server origin).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Hocuspocus } from '@hocuspocus/server';
import { canWrite, readJob, type JobRequester, type Role, type TokenClaims } from '@plexus/shared';
import { isJobError, type CalciumJobs } from '../analysis/calcium-jobs.ts';
import { withDoc } from './doc-access.ts';
import { HttpError, readJson, sendJson } from './respond.ts';

export interface JobsApiDeps {
  hocuspocus: Hocuspocus;
  jobs: CalciumJobs | null;
}

/** Who a token is, as a job requester. */
export function requesterOf(claims: TokenClaims, via?: JobRequester['via']): JobRequester {
  const agent = claims.sub === 'service:agent';
  return { id: claims.sub, ...(claims.name ? { name: claims.name } : {}), via: via ?? (agent ? 'agent' : 'person') };
}

/** Handles `/api/workspaces/:id/jobs…`; false for other paths. */
export async function handleJobsApi(deps: JobsApiDeps, req: IncomingMessage, res: ServerResponse, claims: TokenClaims, role: Role, id: string, rest: string[]): Promise<boolean> {
  if (rest[0] !== 'jobs') return false;
  const method = req.method ?? 'GET';
  const jobs = deps.jobs;
  if (!jobs) throw new HttpError(503, 'kernel-disabled', 'analysis jobs need the kernel, which is disabled on this server (PLEXUS_KERNEL=0)');
  const edit = () => {
    if (!canWrite(role)) throw new HttpError(403, 'forbidden', 'viewers cannot start or stop analyses');
  };
  try {
    if (rest.length === 1 && method === 'POST') {
      // The body first: refusing before it was read resets the connection under the client.
      const body = await readJson(req, 64 * 1024);
      edit();
      if (body.kind !== 'calcium') throw new HttpError(400, 'bad-kind', 'kind must be "calcium"');
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
      const who = claims.name ?? claims.sub;
      sendJson(res, 200, { stopped: jobs.stop(id, rest[1]!, `stopped by ${who}`) });
      return true;
    }
  } catch (e) {
    if (isJobError(e)) throw new HttpError(e.status, e.code, e.message);
    throw e;
  }
  throw new HttpError(404, 'not-found', 'no such jobs route');
}
