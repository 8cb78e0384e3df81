/**
 * History routes of the HTTP API (docs/api.md), under `/api/workspaces/:id`:
 * - `GET …/history[?from=&to=&limit=]` → `{ entries, checkpoints, usage }`: who changed what
 *   (the attribution journal, newest first, the stretches still open included) and the checkpoints;
 * - `POST …/checkpoints` `{ label?, kind?: 'named' | 'restore', name? }` → 201 `{ checkpoint }`:
 *   takes a checkpoint now (editors and owners; the server stamps who from the token — `name` is
 *   the display name the browser shows, a label, not an identity);
 * - `GET …/checkpoints/:cid` → `application/octet-stream`: the checkpoint's state as one Yjs
 *   update (everyone with access: viewers preview and compare, editors restore from it).
 * Effects: document writes (checkpoint records), the history store.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { canWrite, listCheckpoints, type Actor, type Role, type TokenClaims } from '@plexus/shared';
import type { Hocuspocus } from '@hocuspocus/server';
import { kindOfClaims, type Attribution } from '../history/attribution.ts';
import type { Checkpoints } from '../history/checkpoints.ts';
import type { HistoryStorage } from '../store/storage.ts';
import { withDoc } from './doc-access.ts';
import { HttpError, readJson, sendJson } from './respond.ts';

export interface HistoryApiDeps {
  hocuspocus: Hocuspocus;
  store: HistoryStorage;
  checkpoints: Checkpoints;
  attribution: Attribution;
}

const MAX_ENTRIES = 2000;

function intParam(url: URL, key: string, dflt: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = url.searchParams.get(key);
  if (v === null || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new HttpError(400, `bad-${key}`, `${key} must be an integer from 0 to ${max}`);
  return n;
}

/** Who asks, from the token (the display name is the browser's label when the token has none). */
export function requester(claims: TokenClaims, given: unknown): Actor {
  const name = (claims.name ?? (typeof given === 'string' ? given : '')).replace(/\s+/g, ' ').trim().slice(0, 100);
  return { id: claims.sub, ...(name ? { name } : {}), kind: kindOfClaims(claims) };
}

/** Handles `/api/workspaces/:id/<history|checkpoints>/…` (`rest` from that word on). The caller checked access. */
export async function handleHistoryApi(deps: HistoryApiDeps, req: IncomingMessage, res: ServerResponse, url: URL, claims: TokenClaims, role: Role, id: string, rest: string[]): Promise<void> {
  const method = req.method ?? 'GET';
  if (rest[0] === 'history' && rest.length === 1 && method === 'GET') {
    const from = intParam(url, 'from', 0);
    const to = intParam(url, 'to', Number.MAX_SAFE_INTEGER);
    const limit = intParam(url, 'limit', 500, MAX_ENTRIES);
    const open = deps.attribution.pending(id).filter((e) => e.end >= from && e.start <= to);
    const stored = await deps.store.journal(id, from, to, limit);
    const checkpoints = await withDoc(deps.hocuspocus, id, (doc) => listCheckpoints(doc));
    sendJson(res, 200, { entries: [...open.map((e) => ({ ...e, open: true })), ...stored].slice(0, limit), checkpoints, usage: await deps.store.usage(id) });
    return;
  }
  if (rest[0] === 'checkpoints' && rest.length === 1 && method === 'GET') {
    sendJson(res, 200, { checkpoints: await withDoc(deps.hocuspocus, id, (doc) => listCheckpoints(doc)), usage: await deps.store.usage(id) });
    return;
  }
  if (rest[0] === 'checkpoints' && rest.length === 1 && method === 'POST') {
    if (!canWrite(role)) throw new HttpError(403, 'forbidden', 'viewers cannot make checkpoints');
    const body = await readJson(req);
    const kind = body.kind === undefined ? 'named' : body.kind;
    if (kind !== 'named' && kind !== 'restore') throw new HttpError(400, 'bad-kind', 'kind must be "named" or "restore" (other checkpoints are automatic)');
    if (body.label !== undefined && (typeof body.label !== 'string' || body.label.length > 200)) throw new HttpError(400, 'bad-label', 'label must be a string of at most 200 characters');
    const checkpoint = await deps.checkpoints.create(id, { kind, by: requester(claims, body.name), ...(typeof body.label === 'string' ? { label: body.label } : {}) });
    sendJson(res, 201, { checkpoint });
    return;
  }
  if (rest[0] === 'checkpoints' && rest.length === 2 && method === 'GET') {
    const state = await deps.checkpoints.state(id, rest[1]!);
    if (!state) throw new HttpError(404, 'not-found', `no checkpoint ${rest[1]} in workspace ${id}`);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'private, max-age=31536000, immutable', 'content-length': state.length });
    res.end(Buffer.from(state.buffer, state.byteOffset, state.byteLength));
    return;
  }
  throw new HttpError(404, 'not-found', `no API route ${method} ${url.pathname}`);
}
