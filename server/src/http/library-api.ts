/**
 * Method library routes of the HTTP API (docs/api.md), under `/api/workspaces/:id/library`:
 * `GET` lists the documents and note cells, `GET …/search?q=&limit=` retrieves passages,
 * `GET …/:docId` gives a document's text (everyone with access: viewers, editors, the agent's
 * service token); `POST ?name=<file>` uploads a document as the raw body (as table uploads do) and
 * `DELETE …/:docId` removes one (editors and owners).
 * Effects: files, document writes (through library-service.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { canWrite, type Role, type TokenClaims } from '@plexus/shared';
import type { Library } from '../library/library-service.ts';
import { LibraryError } from '../library/formats.ts';
import { HttpError, sendJson } from './respond.ts';

export const SEARCH_MAX_QUERY = 1000;
export const SEARCH_MAX_LIMIT = 20;

function limitParam(v: string | null): number {
  const n = v === null || v === '' ? 5 : Number(v);
  if (!Number.isInteger(n) || n < 1 || n > SEARCH_MAX_LIMIT) throw new HttpError(400, 'bad-limit', `limit must be an integer from 1 to ${SEARCH_MAX_LIMIT}`);
  return n;
}

/** The uploader's display name: the token's, else the one the browser shows (a label, not an identity). */
function uploaderName(fromToken: string | undefined, given: string | null): { name: string } | null {
  const name = (fromToken ?? given ?? '').replace(/\s+/g, ' ').trim().slice(0, 100);
  return name ? { name } : null;
}

/**
 * Handles `/api/workspaces/:id/library/<rest>` (`rest` after "library"). The caller checked that
 * the token grants access to the workspace and that it exists.
 */
export async function handleLibraryApi(
  library: Library,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  claims: TokenClaims,
  role: Role,
  id: string,
  rest: string[],
): Promise<void> {
  const method = req.method ?? 'GET';
  const write = () => {
    if (!canWrite(role)) throw new HttpError(403, 'forbidden', 'viewers cannot change the library');
  };
  try {
    if (rest.length === 0 && method === 'GET') {
      sendJson(res, 200, await library.list(id));
      return;
    }
    if (rest.length === 0 && method === 'POST') {
      try {
        write();
        const fileName = url.searchParams.get('name') ?? '';
        const len = req.headers['content-length'] ? Number(req.headers['content-length']) : undefined;
        const by = { id: claims.sub, ...(uploaderName(claims.name, url.searchParams.get('uploader')) ?? {}) };
        sendJson(res, 201, { document: await library.upload(id, { fileName, body: req, contentLength: len, by }) });
      } catch (e) {
        // Drain what the client still sends so it reads our answer instead of a reset connection.
        req.resume();
        throw e;
      }
      return;
    }
    if (rest.length === 1 && rest[0] === 'search' && method === 'GET') {
      const q = (url.searchParams.get('q') ?? '').trim();
      if (!q || q.length > SEARCH_MAX_QUERY) throw new HttpError(400, 'bad-query', `q must be 1 to ${SEARCH_MAX_QUERY} characters`);
      const limit = limitParam(url.searchParams.get('limit'));
      sendJson(res, 200, { query: q, results: await library.search(id, q, limit) });
      return;
    }
    if (rest.length === 1 && rest[0] !== 'search') {
      const docId = rest[0]!;
      if (method === 'GET') {
        const doc = await library.text(id, docId);
        if (!doc) throw new HttpError(404, 'not-found', `no library document "${docId}" in this workspace`);
        sendJson(res, 200, doc);
        return;
      }
      if (method === 'DELETE') {
        write();
        if (!(await library.remove(id, docId))) throw new HttpError(404, 'not-found', `no library document "${docId}" in this workspace`);
        res.writeHead(204).end();
        return;
      }
    }
  } catch (e) {
    if (e instanceof LibraryError) throw new HttpError(e.status, e.code, e.message);
    throw e;
  }
  throw new HttpError(404, 'not-found', `no API route ${method} ${url.pathname}`);
}
