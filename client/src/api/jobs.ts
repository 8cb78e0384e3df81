/**
 * Typed calls of the analysis job endpoints (docs/api.md, "Analysis jobs"): start a calcium
 * analysis of a served movie. Progress, results and stop signals live in the workspace document
 * (`jobs` root), not here. Effects: network.
 */
import { apiRequest } from './http.ts';

/** Starts a calcium analysis of `dataset/layer` with the server's default parameters; resolves with the job id. */
export async function startCalciumJob(token: string, workspaceId: string, dataset: string, layer: string): Promise<string> {
  const r = await apiRequest<{ job: string }>(`/api/workspaces/${encodeURIComponent(workspaceId)}/jobs`, {
    token,
    method: 'POST',
    body: { kind: 'calcium', dataset, layer },
  });
  return r.job;
}
