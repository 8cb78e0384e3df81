/**
 * Notebook routes of the HTTP API (docs/api.md): data uploads, table previews and deletion, large
 * cell results, `.ipynb` import, `.ipynb` and HTML report export. Document changes go through a
 * Hocuspocus direct connection with a server origin, so every connected client sees them.
 * Effects: files, child processes (importer), document mutation.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import type { Hocuspocus } from '@hocuspocus/server';
import {
  canWrite, getTable, importNotebook, ipynbToNotebook, notebookToHtml, notebookToIpynb, registerTable, serverOrigin, unregisterTable,
  getTitle, chartOutputs, storedImageOutputs, type DrawnOutput, type Json, type Role, type TokenClaims,
} from '@plexus/shared';
import { drawCharts } from '../notebook/chart-svg.ts';
import type { KernelManager } from '../kernel/manager.ts';
import { ResultStore, RESULT_REF_PATTERN } from '../kernel/results.ts';
import { UploadError, importUpload, previewTable, type UploadLimits } from '../kernel/uploads.ts';
import { HttpError, readJson, sendJson } from './respond.ts';
import { withDoc } from './doc-access.ts';
import { handleDataReads } from './data-api.ts';
import type { DataLimits } from '../data/guarded-duckdb.ts';

export interface NotebookApiDeps {
  hocuspocus: Hocuspocus;
  kernels: KernelManager | null;
  upload: UploadLimits;
  /** Limits of the read-only data routes (query, describe, histogram). */
  dataReads: DataLimits;
  /** Throws unless the workspace exists. */
  requireWorkspace: (id: string) => Promise<void>;
  /** Called before an import changes the notebook (the history takes a checkpoint). */
  beforeImport?: (id: string, claims: TokenClaims, fileLabel: string) => Promise<unknown>;
}

const int = (v: string | null, dflt: number, max: number) => {
  const n = v === null ? dflt : Number(v);
  if (!Number.isInteger(n) || n < 0) throw new HttpError(400, 'bad-range', 'offset and limit must be non-negative integers');
  return Math.min(n, max);
};

function kernelsOf(deps: NotebookApiDeps): KernelManager {
  if (!deps.kernels) throw new HttpError(503, 'kernel-disabled', 'the kernel is disabled on this server (PLEXUS_KERNEL=0)');
  return deps.kernels;
}

/**
 * Handles `/api/workspaces/:id/<rest>` for the notebook routes; returns false for other paths.
 * `role` is the caller's role in the workspace (already checked to grant access).
 */
export async function handleNotebookApi(
  deps: NotebookApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  claims: TokenClaims,
  role: Role,
  id: string,
  rest: string[],
): Promise<boolean> {
  const method = req.method ?? 'GET';
  const write = () => {
    if (!canWrite(role)) throw new HttpError(403, 'forbidden', 'viewers cannot change the workspace');
  };
  const [head, name, tail] = rest;
  if (head === 'uploads' && rest.length === 1 && method === 'POST') {
    write();
    await deps.requireWorkspace(id);
    const k = kernelsOf(deps);
    const fileName = url.searchParams.get('name') ?? '';
    const len = req.headers['content-length'] ? Number(req.headers['content-length']) : undefined;
    try {
      const t = await importUpload({
        body: req, fileName, tableName: url.searchParams.get('table') ?? undefined, contentLength: len,
        tablesDir: k.tablesDir(id), tmpDir: path.join(k.workspaceDir(id), 'uploads-tmp'), limits: deps.upload,
      });
      const table = {
        name: t.name, fileName, format: t.format, columns: t.columns, rows: t.rows, bytes: t.bytes, storedBytes: t.storedBytes,
        uploadedBy: { id: claims.sub, ...(uploaderName(claims.name, url.searchParams.get('uploader')) ?? {}) }, created: Date.now(),
      };
      try {
        await withDoc(deps.hocuspocus, id, (doc) => registerTable(doc, table, serverOrigin('upload')));
      } catch (e) {
        fs.rmSync(path.join(k.tablesDir(id), `${t.name}.duckdb`), { force: true });
        throw e;
      }
      sendJson(res, 201, { table });
    } catch (e) {
      // Drain what the client still sends so it reads our answer instead of a reset connection.
      req.resume();
      if (e instanceof UploadError) throw new HttpError(e.status, e.code, e.message);
      throw e;
    }
    return true;
  }
  await deps.requireWorkspace(id);
  const tablesDir = (w: string) => kernelsOf(deps).tablesDir(w);
  if (await handleDataReads({ hocuspocus: deps.hocuspocus, limits: deps.dataReads, tablesDir }, req, res, url, id, rest)) return true;
  if (head === 'data' && name !== undefined) {
    await deps.requireWorkspace(id);
    const k = kernelsOf(deps);
    const file = path.join(k.tablesDir(id), `${name}.duckdb`);
    if (rest.length === 3 && tail === 'preview' && method === 'GET') {
      const exists = await withDoc(deps.hocuspocus, id, (doc) => getTable(doc, name) !== null);
      if (!exists) throw new HttpError(404, 'not-found', `no table "${name}" in this workspace`);
      const offset = int(url.searchParams.get('offset'), 0, Number.MAX_SAFE_INTEGER);
      const limit = int(url.searchParams.get('limit'), 50, 1000);
      try {
        sendJson(res, 200, { name, offset, ...(await previewTable(file, offset, limit)) });
      } catch (e) {
        if (e instanceof UploadError) throw new HttpError(e.status, e.code, e.message);
        throw e;
      }
      return true;
    }
    if (rest.length === 2 && method === 'DELETE') {
      write();
      const removed = await withDoc(deps.hocuspocus, id, (doc) => unregisterTable(doc, name, serverOrigin('delete-table')));
      if (!removed) throw new HttpError(404, 'not-found', `no table "${name}" in this workspace`);
      if (/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) fs.rmSync(file, { force: true });
      res.writeHead(204).end();
      return true;
    }
  }
  if (head === 'results' && rest.length === 2 && method === 'GET') {
    await deps.requireWorkspace(id);
    const k = kernelsOf(deps);
    if (!RESULT_REF_PATTERN.test(name!)) throw new HttpError(404, 'not-found', 'no such result');
    const r = new ResultStore(path.join(k.workspaceDir(id), 'results')).get(name!);
    if (!r) throw new HttpError(404, 'not-found', 'no such result (it may have been replaced by a newer run)');
    if (r.kind === 'table' && Array.isArray(r.rows)) {
      const offset = int(url.searchParams.get('offset'), 0, Number.MAX_SAFE_INTEGER);
      const limit = int(url.searchParams.get('limit'), 100, 5000);
      sendJson(res, 200, { kind: 'table', columns: r.columns, totalRows: r.totalRows, storedRows: r.rows.length, offset, rows: r.rows.slice(offset, offset + limit) });
    } else sendJson(res, 200, r);
    return true;
  }
  if (head === 'export' && rest.length === 1 && method === 'GET') {
    await deps.requireWorkspace(id);
    const format = url.searchParams.get('format') ?? 'ipynb';
    if (format !== 'html' && format !== 'ipynb') throw new HttpError(400, 'bad-format', 'format must be "ipynb" or "html"');
    // Charts are drawn first (async, outside the document), then both writers read the same doc state.
    const wanted = await withDoc(deps.hocuspocus, id, (doc) => chartOutputs(doc));
    const stored = (ref: string) => (deps.kernels && RESULT_REF_PATTERN.test(ref) ? new ResultStore(path.join(deps.kernels.workspaceDir(id), 'results')).get(ref) : null);
    const charts: Map<string, DrawnOutput> = new Map(
      await drawCharts(wanted, (ref) => {
        const r = stored(ref);
        return r && 'spec' in r ? ((r as { spec?: Json }).spec ?? null) : null;
      }),
    );
    // Images too large for the document (a calcium figure) come back from the result store.
    for (const { key, ref } of await withDoc(deps.hocuspocus, id, (doc) => storedImageOutputs(doc))) {
      const r = stored(ref) as { mime?: unknown; data?: unknown } | null;
      if (r && typeof r.mime === 'string' && typeof r.data === 'string') charts.set(key, { image: { mime: r.mime, data: r.data } });
    }
    const { body, title } = await withDoc(deps.hocuspocus, id, (doc) => ({
      title: getTitle(doc),
      body: format === 'html' ? notebookToHtml(doc, charts) : JSON.stringify(notebookToIpynb(doc, charts), null, 1),
    }));
    const file = `${title.replace(/[^A-Za-z0-9 _-]+/g, '').trim() || 'notebook'}.${format}`;
    res.writeHead(200, {
      'content-type': format === 'html' ? 'text/html; charset=utf-8' : 'application/x-ipynb+json; charset=utf-8',
      'content-disposition': `attachment; filename="${file}"`,
      'cache-control': 'no-store',
      // The report is self-contained: no script, no remote resource.
      ...(format === 'html' ? { 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:" } : {}),
    });
    res.end(body);
    return true;
  }
  if (head === 'import' && rest.length === 1 && method === 'POST') {
    write();
    await deps.requireWorkspace(id);
    const body = await readJson(req, 32 * 1024 * 1024);
    // Converted and validated completely first, then written in one transaction: a malformed
    // notebook changes nothing.
    let nb;
    try {
      nb = ipynbToNotebook(body);
    } catch (e) {
      throw new HttpError(400, 'bad-notebook', (e as Error).message);
    }
    const cells = nb.cells;
    await deps.beforeImport?.(id, claims, typeof url.searchParams.get('name') === 'string' ? url.searchParams.get('name')! : 'a notebook');
    const ids = await withDoc(deps.hocuspocus, id, (doc) => importNotebook(doc, nb, claims.sub, serverOrigin('import-ipynb')));
    sendJson(res, 201, { imported: ids.length, cells: ids, languages: [...new Set(cells.map((c) => c.language).filter(Boolean))] });
    return true;
  }
  return false;
}

/**
 * The uploader's display name: the token's, or else the name the browser shows for its person
 * (like presence, a label the person chose — not an identity; the id stays the token's).
 */
function uploaderName(fromToken: string | undefined, given: string | null): { name: string } | null {
  const name = (fromToken ?? given ?? '').replace(/\s+/g, ' ').trim().slice(0, 100);
  return name ? { name } : null;
}
