/**
 * Volume routes of the HTTP API (bearer-authenticated by `api.ts` before they get here):
 * - `POST /api/volume-session` sets the `plexus_volumes` cookie (the caller's own token, HttpOnly,
 *   SameSite=Strict, Path=/volumes, until the token expires) so Neuroglancer's plain fetches of
 *   /volumes carry credentials; `DELETE` clears it.
 * - `GET /api/volumes/<dataset>/<layer>/histogram` and `/trace`: sampling (`volumes/sampling.ts`).
 * Effects: file reads, writes the response.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TokenClaims } from '@plexus/shared';
import { parseBox, scaleBox } from '../volumes/precomputed.ts';
import { circleMask, histogram, maskTrace, roiTrace, scaleOf } from '../volumes/sampling.ts';
import { checkSegment, type Volumes } from '../volumes/volume-store.ts';
import { HttpError, sendJson } from './respond.ts';
import { VOLUME_COOKIE, VOLUMES_PREFIX, volumeHttpError } from './volumes.ts';

export interface VolumeApiDeps {
  volumes: Volumes;
  /** Most voxels one sampling request may read. */
  maxSampleVoxels: number;
  publicUrl: (req: IncomingMessage) => string;
}

function sessionCookie(req: IncomingMessage, deps: VolumeApiDeps, value: string, maxAge: number): string {
  const secure = deps.publicUrl(req).startsWith('https:') ? '; Secure' : '';
  return `${VOLUME_COOKIE}=${value}; Path=${VOLUMES_PREFIX}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure}`;
}

/** A parameter as a number (integer when `integer`), `dflt` when absent; HttpError 400 otherwise. */
function num(param: (name: string) => string | null, name: string, dflt: number | undefined, integer = true): number {
  const v = param(name);
  if (v === null || v === '') {
    if (dflt === undefined) throw new HttpError(400, 'bad-request', `query parameter ${name} is required`);
    return dflt;
  }
  const n = Number(v);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) throw new HttpError(400, 'bad-request', `${name} must be ${integer ? 'an integer' : 'a number'}, got "${v}"`);
  return n;
}

function name(part: string | undefined, what: string): string {
  let d: string;
  try {
    d = decodeURIComponent(part ?? '');
    checkSegment(d);
  } catch {
    throw new HttpError(400, 'bad-path', `${what} "${part ?? ''}" is not a valid name`);
  }
  return d;
}

/** Handles /api/volume-session and /api/volumes/…; `auth` is the verified bearer token, `parts` the path segments after /api. */
export async function handleVolumeApi(deps: VolumeApiDeps, auth: { claims: TokenClaims; token: string }, req: IncomingMessage, res: ServerResponse, url: URL, parts: string[]): Promise<void> {
  const method = req.method ?? 'GET';
  if (parts[0] === 'volume-session' && parts.length === 1) {
    if (method === 'POST') {
      const maxAge = Math.max(0, auth.claims.exp - Math.floor(Date.now() / 1000));
      res.writeHead(204, { 'set-cookie': sessionCookie(req, deps, auth.token, maxAge), 'cache-control': 'no-store' }).end();
      return;
    }
    if (method === 'DELETE') {
      res.writeHead(204, { 'set-cookie': sessionCookie(req, deps, '', 0), 'cache-control': 'no-store' }).end();
      return;
    }
    throw new HttpError(405, 'method-not-allowed', 'volume-session takes POST (set the cookie) or DELETE (clear it)');
  }
  if (parts[0] !== 'volumes' || parts.length !== 4 || method !== 'GET') throw new HttpError(404, 'not-found', `no API route ${method} ${url.pathname}`);
  const result = await sampleVolume(deps, parts[1], parts[2], parts[3], (n) => url.searchParams.get(n), (status) => {
    if (status === 503) res.setHeader('retry-after', '2');
  });
  sendJson(res, 200, result);
}

/** The volume operations a caller may ask for by name (HTTP path segment or kernel request). */
export type SampleOp = 'histogram' | 'trace';

/**
 * Runs a sampling request — a histogram of a region, or the mean trace of an ROI — with its
 * parameters read through `param` (query-string names: scale, bbox, bins, min, max; labels, roi;
 * x, y, r; z0, z1). Used by the HTTP API and by notebook cells (through the kernel). Throws
 * HttpError with a clear message for bad parameters.
 */
export async function sampleVolume(
  deps: Pick<VolumeApiDeps, 'volumes' | 'maxSampleVoxels'>,
  datasetName: string | undefined,
  layerName: string | undefined,
  op: string | undefined,
  param: (name: string) => string | null,
  onErrorStatus?: (status: number) => void,
): Promise<Record<string, unknown>> {
  const dataset = name(datasetName, 'dataset');
  const layer = name(layerName, 'layer');
  const limit = { maxVoxels: deps.maxSampleVoxels };
  try {
    const volume = await deps.volumes.openLayer(dataset, layer);
    const scale = num(param, 'scale', 0);
    scaleOf(volume, scale);
    if (op === 'histogram') {
      const bbox = param('bbox');
      const min = param('min');
      const max = param('max');
      if ((min === null) !== (max === null)) throw new HttpError(400, 'bad-request', 'give both min and max for a histogram range, or neither');
      const range: [number, number] | undefined = min !== null ? [num(param, 'min', undefined, false), num(param, 'max', undefined, false)] : undefined;
      const box = bbox ? parseBox(bbox) : undefined;
      const h = await histogram(volume, scale, box, num(param, 'bins', 64), range, limit);
      const b = box ?? scaleBox(volume.info.scales[scale]!);
      return { dataset, layer, scale, bbox: [...b.min, ...b.max], ...h };
    }
    if (op === 'trace') {
      const z0 = param('z0');
      const z: [number, number] | undefined = z0 !== null ? [num(param, 'z0', undefined), num(param, 'z1', undefined)] : undefined;
      const labels = param('labels');
      let trace;
      let roi: Record<string, unknown>;
      if (labels !== null) {
        const id = num(param, 'roi', undefined);
        trace = await roiTrace(volume, await deps.volumes.openLayer(dataset, name(labels, 'labels layer')), id, { ...limit, scale, z });
        roi = { labels, roi: id };
      } else if (param('x') !== null) {
        const circle = { x: num(param, 'x', undefined, false), y: num(param, 'y', undefined, false), r: num(param, 'r', undefined, false) };
        if (circle.r > 256) throw new HttpError(400, 'bad-request', 'r must be at most 256 pixels');
        trace = await maskTrace(volume, scale, circleMask(circle.x, circle.y, circle.r), { ...limit, z });
        roi = { circle };
      } else throw new HttpError(400, 'bad-request', 'a trace needs labels=<layer>&roi=<id>, or x=&y=&r= (a circle, pixel units)');
      return { dataset, layer, scale, ...roi, ...trace };
    }
    throw new HttpError(404, 'not-found', `no volume operation ${op}: use histogram or trace`);
  } catch (e) {
    const err = volumeHttpError(e);
    if (err) onErrorStatus?.(err.status);
    throw err ?? e;
  }
}
