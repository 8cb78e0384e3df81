/**
 * `GET/HEAD /volumes/…`: volumes served as static Neuroglancer precomputed data
 * (`/volumes/<dataset>/<layer>/info`, `/volumes/<dataset>/<layer>/<scale key>/<chunk>`) or zarr v2
 * files (`.zarray`, `.zattrs`, `.zgroup`, chunks), plus
 * JSON listings at `/volumes/` (datasets) and `/volumes/<dataset>/` (layers with their info).
 * The raw request path is checked before any URL normalisation could rewrite it, so `..` in any
 * encoding, encoded slashes, backslashes, NUL and absolute paths are refused with 400.
 * Access: a valid Plexus token (any workspace, any role) as `Authorization: Bearer` or as the
 * `plexus_volumes` cookie (`POST /api/volume-session`), unless volumes are public.
 * Effects: file reads, writes the response.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { TokenClaims } from '@plexus/shared';
import { TokenError, type TokenSigner } from '../auth/tokens.ts';
import { linkRevoked, REVOKED_MESSAGE } from '../auth/link-revocation.ts';
import type { WorkspaceStorage } from '../store/storage.ts';
import type { Logger } from '../log.ts';
import { VolumeError } from '../volumes/precomputed.ts';
import { checkSegment, VolumeUnavailable, ZARR_METADATA, type Volumes } from '../volumes/volume-store.ts';
import { HttpError, sendError, sendJson } from './respond.ts';
import { sendFile } from './send-file.ts';

export const VOLUMES_PREFIX = '/volumes';
export const VOLUME_COOKIE = 'plexus_volumes';

export interface VolumeRouteDeps {
  volumes: Volumes;
  signer: TokenSigner;
  log: Logger;
  /** No token needed (PLEXUS_PUBLIC_VOLUMES=1). */
  public: boolean;
  /** Origins allowed to read volumes cross-origin (`*` for any); empty: same origin only. */
  corsOrigins: readonly string[];
  publicUrl: (req: IncomingMessage) => string;
  /** Share links revoked by their workspace's owner are refused here too. */
  store: Pick<WorkspaceStorage, 'linkGeneration'>;
}

/** True when the raw request target is under /volumes (checked before any normalisation). */
export function isVolumePath(rawUrl: string | undefined): boolean {
  return rawPath(rawUrl).toLowerCase().startsWith(VOLUMES_PREFIX);
}

/** The path part of a raw request target (origin-form or absolute-form), undecoded. */
function rawPath(rawUrl: string | undefined): string {
  let p = rawUrl ?? '/';
  const abs = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(p);
  if (abs) p = p.slice(abs[0].length) || '/';
  const q = p.search(/[?#]/);
  return q >= 0 ? p.slice(0, q) : p;
}

/** The decoded segments after /volumes; HttpError 400 for anything that could escape the directory. */
export function volumeSegments(rawUrl: string | undefined): string[] {
  const p = rawPath(rawUrl);
  const bad = (why: string) => new HttpError(400, 'bad-path', `refused volume path: ${why}`);
  if (p !== VOLUMES_PREFIX && !p.startsWith(VOLUMES_PREFIX + '/')) throw new HttpError(404, 'not-found', `no route ${p}`);
  if (/%2f|%5c|%00|\\|\0/i.test(p)) throw bad('encoded slashes, backslashes and NUL are not allowed');
  const parts = p.slice(VOLUMES_PREFIX.length + 1).split('/');
  if (parts.at(-1) === '') parts.pop(); // a trailing slash
  return parts.map((s) => {
    let d: string;
    try {
      d = decodeURIComponent(s);
    } catch {
      throw bad('malformed percent-encoding');
    }
    try {
      checkSegment(d);
    } catch (e) {
      throw bad((e as Error).message);
    }
    return d;
  });
}

function cookie(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** Verifies the bearer token or the volume cookie; HttpError 401 when absent, invalid or a revoked link. */
async function authenticate(deps: VolumeRouteDeps, req: IncomingMessage): Promise<TokenClaims | null> {
  if (deps.public) return null;
  const h = req.headers.authorization;
  const token = h?.startsWith('Bearer ') ? h.slice(7).trim() : cookie(req, VOLUME_COOKIE);
  if (!token) throw new HttpError(401, 'unauthorized', `volumes need a Plexus token: Authorization: Bearer <token>, or the ${VOLUME_COOKIE} cookie that POST /api/volume-session sets`);
  let claims: TokenClaims;
  try {
    claims = deps.signer.verify(token);
  } catch (e) {
    const err = e as TokenError;
    throw new HttpError(401, err.reason === 'expired' ? 'token-expired' : 'unauthorized', err.message);
  }
  if (claims.handout) throw new HttpError(403, 'forbidden', 'a hand-out link only makes your own fork: open your fork to see its volumes');
  if (await linkRevoked(deps.store, claims)) throw new HttpError(401, 'token-revoked', REVOKED_MESSAGE);
  return claims;
}

function corsHeaders(deps: VolumeRouteDeps, req: IncomingMessage): Record<string, string> | null {
  const origin = req.headers.origin;
  if (!origin) return {};
  if (deps.corsOrigins.includes('*')) return { 'access-control-allow-origin': '*' };
  if (deps.corsOrigins.includes(origin)) return { 'access-control-allow-origin': origin, vary: 'Origin' };
  return null;
}

const CONTENT_TYPES: Record<string, string> = { '.json': 'application/json', '.csv': 'text/csv; charset=utf-8', '.txt': 'text/plain; charset=utf-8' };

function contentType(file: string): string {
  const name = path.basename(file).replace(/\.gz$/, '');
  return name === 'info' || ZARR_METADATA.has(name) ? 'application/json' : CONTENT_TYPES[path.extname(name)] ?? 'application/octet-stream';
}

/** Maps volume errors to HTTP errors. */
export function volumeHttpError(e: unknown): HttpError | null {
  if (e instanceof HttpError) return e;
  if (e instanceof VolumeUnavailable) return new HttpError(503, 'generating', e.message);
  if (!(e instanceof VolumeError)) return null;
  const map = { 'bad-request': [400, 'bad-request'], 'not-found': [404, 'not-found'], 'too-large': [400, 'region-too-large'], corrupt: [422, 'corrupt-volume'], unsupported: [422, 'unsupported-volume'] } as const;
  const [status, code] = map[e.kind];
  return new HttpError(status, code, e.message);
}

/** Handles a request whose raw path is under /volumes (see `isVolumePath`). */
export async function handleVolumes(deps: VolumeRouteDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const cors = corsHeaders(deps, req);
  const extra: Record<string, string> = { ...(cors ?? {}), 'access-control-expose-headers': 'Content-Length, Content-Range, Content-Encoding, ETag, Last-Modified, Accept-Ranges' };
  try {
    const segments = volumeSegments(req.url);
    if (req.method === 'OPTIONS') {
      if (!cors || !req.headers.origin) throw new HttpError(403, 'cors-origin-not-allowed', `origin ${req.headers.origin ?? '(none)'} may not read volumes; see PLEXUS_VOLUMES_CORS_ORIGINS`);
      res.writeHead(204, { ...cors, 'access-control-allow-methods': 'GET, HEAD, OPTIONS', 'access-control-allow-headers': 'Authorization, Range, If-None-Match, If-Modified-Since, If-Range', 'access-control-max-age': '600' }).end();
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD, OPTIONS');
      throw new HttpError(405, 'method-not-allowed', `volumes are read-only: ${req.method} is not allowed`);
    }
    await authenticate(deps, req);
    const cache = deps.public ? 'no-cache' : 'private, no-cache';
    const base = deps.publicUrl(req);
    if (segments.length === 0) {
      const datasets = (await deps.volumes.listDatasets()).map((d) => ({ ...d, url: `${VOLUMES_PREFIX}/${encodeURIComponent(d.name)}/` }));
      return sendJsonWith(res, req, extra, { datasets });
    }
    const dataset = segments[0]!;
    deps.volumes.requireReady(dataset);
    if (segments.length === 1) {
      const d = await deps.volumes.describeDataset(dataset);
      const at = (layer: string) => `${VOLUMES_PREFIX}/${encodeURIComponent(dataset)}/${encodeURIComponent(layer)}`;
      return sendJsonWith(res, req, extra, {
        name: d.name,
        meta: d.meta,
        layers: d.layers.map((l) => ({ ...l, url: at(l.name), source: `${l.format}://${base}${at(l.name)}` })),
        tables: d.tables.map((t) => ({ name: t.replace(/\.csv$/, ''), url: `${at('tables')}/${encodeURIComponent(t)}` })),
      });
    }
    const found = await deps.volumes.resolve(segments);
    if (found.kind === 'dir') throw new HttpError(404, 'not-found', `${segments.join('/')} is a directory; layers are read through their info file and chunks`);
    await sendFile(req, res, { path: found.path, stat: found.stat, gzip: found.gzip, contentType: contentType(found.path) }, { ...extra, 'cache-control': cache });
  } catch (e) {
    const err = volumeHttpError(e);
    if (!err) {
      deps.log.error('volume request failed', { path: req.url, err: e });
      if (!res.headersSent) sendErrorWith(res, extra, 500, 'internal', 'the server could not read this volume; see its log');
      else res.destroy();
      return;
    }
    if (res.headersSent) return void res.destroy();
    if (err.status === 503) res.setHeader('retry-after', '2');
    sendErrorWith(res, extra, err.status, err.code, err.message);
  }
}

function sendJsonWith(res: ServerResponse, req: IncomingMessage, headers: Record<string, string>, body: unknown): void {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  if (req.method === 'HEAD') {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end();
    return;
  }
  sendJson(res, 200, body);
}

function sendErrorWith(res: ServerResponse, headers: Record<string, string>, status: number, code: string, message: string): void {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  sendError(res, status, code, message);
}
