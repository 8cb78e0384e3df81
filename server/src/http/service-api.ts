/**
 * What the services running as processes of their own ask of the server, each with its own
 * token (auth/agent-token.ts):
 * - `GET /api/agent/workspaces`, `GET /api/kernel/workspaces`: the workspaces people are in
 *   (every node's), which is where an agent or a kernel is needed;
 * - `POST|DELETE /api/{agent,kernel}/workspaces/:id/lease`: one runner of each kind per workspace
 *   (collab/agent-leases.ts; Redis with several nodes); the holder is given, with its lease, the
 *   token it joins that workspace with, which names it: the server refuses its writes once another
 *   process holds the lease (app.ts, the lease fence);
 * - `POST /api/kernel/workspaces/:id/calls`: what a cell asks of the server while it runs — a
 *   sample of a served volume, an analysis job's start or status — served by the same functions a
 *   kernel inside the server calls directly, for the workspace's node (with several nodes the
 *   request is relayed there, cluster/http-relay.ts).
 * The kernel routes exist only when the server runs with PLEXUS_KERNEL=external.
 * Effects: leases; calls start analysis jobs and read volumes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Requester, TokenClaims } from '@plexus/shared';
import { isAgentClaims, isKernelProcessClaims } from '../auth/agent-token.ts';
import type { AgentLeaseStore } from '../collab/agent-leases.ts';
import type { OccupiedWorkspace } from '../collab/people.ts';
import type { VolumeSampler } from '../kernel/js-runtime.ts';
import type { WorkspaceJobCaller } from '../kernel/workspace-kernel.ts';
import { HttpError, readJson, sendJson } from './respond.ts';

export interface ServiceApiDeps {
  /** One agent runner per workspace. */
  agentLeases: AgentLeaseStore;
  /** The token the agent's lease holder joins a workspace with (it names the runner: fenced like a kernel process). */
  agentLeaseToken: (ws: string, runner: string) => string;
  /** One kernel per workspace among kernel processes. */
  kernelLeases: AgentLeaseStore;
  /** Workspaces with people in them (every node's, with several nodes). */
  occupiedWorkspaces: () => OccupiedWorkspace[] | Promise<OccupiedWorkspace[]>;
  /** Throws 404 for a workspace that does not exist. */
  requireWorkspace: (id: string) => Promise<unknown>;
  /**
   * Kernel processes of their own (PLEXUS_KERNEL=external): what cells may call, and the token a
   * lease holder connects with. Null when kernels run inside the server (or not at all): the
   * kernel routes answer 404 then.
   */
  kernelProcesses: { calls: { sample?: VolumeSampler; jobs?: WorkspaceJobCaller }; leaseToken: (ws: string, runner: string) => string; kernelDir: string } | null;
}

const SERVICES = {
  agent: { allowed: isAgentClaims, who: "the Plexus agent's service token" },
  kernel: { allowed: isKernelProcessClaims, who: "a kernel process's service token" },
} as const;

/** Handles `/api/agent/…` and `/api/kernel/…` (`parts` without the leading "api"); false for other paths. */
export async function handleServiceApi(deps: ServiceApiDeps, req: IncomingMessage, res: ServerResponse, claims: TokenClaims, parts: string[]): Promise<boolean> {
  const kind = parts[0];
  if ((kind !== 'agent' && kind !== 'kernel') || parts[1] !== 'workspaces') return false;
  const method = req.method ?? 'GET';
  const service = SERVICES[kind];
  const kernels = deps.kernelProcesses;
  if (kind === 'kernel' && !kernels) throw new HttpError(404, 'not-found', 'kernels run inside this server (start it with PLEXUS_KERNEL=external for kernel processes of their own)');
  if (!service.allowed(claims)) throw new HttpError(403, 'forbidden', `only ${service.who} may use /api/${kind}`);
  if (parts.length === 2 && method === 'GET') {
    // Kernel processes check that they keep their files where the server does.
    sendJson(res, 200, { workspaces: await deps.occupiedWorkspaces(), ...(kind === 'kernel' ? { kernelDir: kernels!.kernelDir } : {}) });
    return true;
  }
  const ws = parts[2];
  if (ws === undefined || parts.length !== 4) return false;
  if (parts[3] === 'lease') {
    await deps.requireWorkspace(ws);
    const leases = kind === 'agent' ? deps.agentLeases : deps.kernelLeases;
    const body = await readJson(req);
    const runner = typeof body.runner === 'string' && body.runner.length > 0 && body.runner.length <= 200 ? body.runner : null;
    if (!runner) throw new HttpError(400, 'bad-runner', 'runner must be a non-empty string (at most 200 characters)');
    if (method === 'POST') {
      const ttl = Number(body.ttlMs);
      if (!Number.isFinite(ttl) || ttl < 100 || ttl > 3_600_000) throw new HttpError(400, 'bad-ttl', 'ttlMs must be between 100 and 3600000');
      const answer = await leases.acquire(ws, runner, ttl);
      // The holder's token for this workspace names it: its writes are refused once it lost the lease.
      const token = answer.granted ? (kind === 'kernel' ? kernels!.leaseToken(ws, runner) : deps.agentLeaseToken(ws, runner)) : undefined;
      sendJson(res, 200, token ? { ...answer, token } : answer);
      return true;
    }
    if (method === 'DELETE') {
      sendJson(res, 200, { released: await leases.release(ws, runner) });
      return true;
    }
    return false;
  }
  if (parts[3] === 'calls' && kind === 'kernel' && method === 'POST') {
    await deps.requireWorkspace(ws);
    const body = await readJson(req);
    // Only the workspace's kernel may act for its cells: a process that lost its lease is refused.
    if (typeof body.runner !== 'string' || (await deps.kernelLeases.holder(ws)) !== body.runner)
      throw new HttpError(409, 'lease-lost', 'this kernel process does not hold the workspace\'s kernel lease');
    sendJson(res, 200, { value: await kernelCall(kernels!.calls, ws, body) });
    return true;
  }
  return false;
}

const str = (v: unknown, what: string): string => {
  if (typeof v !== 'string' || v.length === 0 || v.length > 500) throw new HttpError(400, 'bad-call', `${what} must be a non-empty string`);
  return v;
};
const record = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** One call of a cell: `{ kind: 'sample', op, dataset, layer, params }` or `{ kind: 'job', op, args, by }`. */
async function kernelCall(calls: { sample?: VolumeSampler; jobs?: WorkspaceJobCaller }, ws: string, body: Record<string, unknown>): Promise<unknown> {
  const fail = (e: unknown) => {
    throw new HttpError(422, 'call-failed', (e as Error).message ?? String(e));
  };
  if (body.kind === 'sample') {
    if (!calls.sample) throw new HttpError(501, 'not-available', 'volume sampling is not available on this server');
    const params = Object.fromEntries(Object.entries(record(body.params)).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
    return calls.sample(str(body.op, 'op'), str(body.dataset, 'dataset'), str(body.layer, 'layer'), params).catch(fail);
  }
  if (body.kind === 'job') {
    if (!calls.jobs) throw new HttpError(501, 'not-available', 'analysis jobs are not available on this server');
    const by = record(body.by);
    const requester: Requester | null = typeof by.id === 'string' ? { id: by.id.slice(0, 200), ...(typeof by.name === 'string' ? { name: by.name.slice(0, 200) } : {}) } : null;
    return calls.jobs(ws, str(body.op, 'op'), record(body.args), requester).catch(fail);
  }
  throw new HttpError(400, 'bad-call', 'kind must be "sample" or "job"');
}
