/**
 * Read-only data routes of the HTTP API (docs/api.md), open to every role with access to the
 * workspace: `POST …/data/query` (one SELECT over the uploaded tables), `GET …/data/:name/describe`
 * (per-column statistics) and `GET …/data/:name/histogram` (a numeric column's histogram). The
 * tables are the ones registered in the document's `data` root, read from their stored files.
 * Effects: DuckDB reads (see src/data/), document loads.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Hocuspocus } from '@hocuspocus/server';
import { getTable, isTableName, listTables } from '@plexus/shared';
import { DataError, type DataLimits } from '../data/guarded-duckdb.ts';
import { parseQueryRequest, runReadOnlyQuery } from '../data/read-only-query.ts';
import { DEFAULT_BINS, MAX_BINS, columnHistogram, describeTable } from '../data/table-stats.ts';
import { withDoc } from './doc-access.ts';
import { HttpError, readJson, sendJson } from './respond.ts';

export interface DataReadDeps {
  hocuspocus: Hocuspocus;
  limits: DataLimits;
  /** The workspace's tables directory; throws an HttpError when the workspace or the kernel is missing. */
  tablesDir: (id: string) => string;
}

const tableFile = (dir: string, name: string) => path.join(dir, `${name}.duckdb`);

/** The stored file of registered table `name`, or a 404. */
async function registeredTableFile(deps: DataReadDeps, id: string, name: string): Promise<string> {
  const dir = deps.tablesDir(id);
  const registered = isTableName(name) && (await withDoc(deps.hocuspocus, id, (doc) => getTable(doc, name) !== null));
  const file = tableFile(dir, name);
  if (!registered || !fs.existsSync(file)) throw new HttpError(404, 'not-found', `no table "${name}" in this workspace`);
  return file;
}

function binsParam(v: string | null): number {
  const n = v === null || v === '' ? DEFAULT_BINS : Number(v);
  if (!Number.isInteger(n) || n < 1 || n > MAX_BINS) throw new HttpError(400, 'bad-bins', `bins must be an integer from 1 to ${MAX_BINS}`);
  return n;
}

/**
 * Handles `/api/workspaces/:id/data/…` read routes (`rest` starts at "data"); returns false for
 * other paths and methods. The caller has checked that the token grants access to `id`.
 */
export async function handleDataReads(deps: DataReadDeps, req: IncomingMessage, res: ServerResponse, url: URL, id: string, rest: string[]): Promise<boolean> {
  const method = req.method ?? 'GET';
  const [head, name, tail] = rest;
  if (head !== 'data') return false;
  try {
    if (rest.length === 2 && name === 'query' && method === 'POST') {
      const { sql, limit } = parseQueryRequest(await readJson(req));
      const dir = deps.tablesDir(id);
      const registered = await withDoc(deps.hocuspocus, id, (doc) => listTables(doc).map((t) => t.name));
      const tables = registered.filter(isTableName).map((n) => ({ name: n, file: tableFile(dir, n) })).filter((t) => fs.existsSync(t.file));
      sendJson(res, 200, await runReadOnlyQuery({ sql, limit, tables, limits: deps.limits }));
      return true;
    }
    if (rest.length === 3 && name !== undefined && tail === 'describe' && method === 'GET') {
      const file = await registeredTableFile(deps, id, name);
      sendJson(res, 200, await describeTable(file, name, deps.limits));
      return true;
    }
    if (rest.length === 3 && name !== undefined && tail === 'histogram' && method === 'GET') {
      const column = url.searchParams.get('column');
      if (!column) throw new HttpError(400, 'bad-request', 'the column query parameter is required (?column=<name>)');
      const bins = binsParam(url.searchParams.get('bins'));
      const file = await registeredTableFile(deps, id, name);
      sendJson(res, 200, await columnHistogram(file, column, bins, deps.limits));
      return true;
    }
  } catch (e) {
    if (e instanceof DataError) throw new HttpError(e.status, e.code, e.message);
    throw e;
  }
  return false;
}
