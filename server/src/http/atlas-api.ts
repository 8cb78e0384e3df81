/**
 * Atlas routes of the HTTP API (docs/api.md), read-only, open to every role with access to the
 * workspace (viewers too):
 *
 * - `GET /api/workspaces/:id/atlas/:map/points[?color=<column>]` → `application/octet-stream` in
 *   the points format of @plexus/shared (shared/src/atlas/points-format.ts: n, metadata JSON,
 *   Float32 x, y, Uint32 row, and with a colour Float32 color — the value, or the category's index
 *   for text/boolean columns with ≤ 50 distinct values; NaN when missing); every row of the map
 *   is sent (`sampled: false`). `color=cluster` (when the source has no such column) gives
 *   the map's clusters as categories. 409 while the coordinates are not done, 404 unknown map, 400
 *   unknown colour column (or one with more than 50 categories).
 * - `GET …/atlas/:map/rows?rows=3,17,42` → `{ columns: [{name,type}], rows: [{ row, ...values }] }`
 *   (at most 100 rows; a source column `row` is called `source_row`).
 * - `GET …/atlas/:map/columns` → `{ table, rows, columns: [{ name, type, numeric, distinct?, color }] }`.
 * Effects: DuckDB reads (atlas-tables.ts), document loads.
 */
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Hocuspocus } from '@hocuspocus/server';
import { getAtlasMap, getTable, type AtlasCoords, type TableColumn } from '@plexus/shared';
import { DataError, type DataLimits } from '../data/guarded-duckdb.ts';
import type { KernelManager } from '../kernel/manager.ts';
import { MAX_ROWS_PER_REQUEST, describeColumns, pointsBody, readPoints, readRows } from '../atlas/atlas-tables.ts';
import { withDoc } from './doc-access.ts';
import { HttpError, sendJson } from './respond.ts';

export interface AtlasApiDeps {
  hocuspocus: Hocuspocus;
  kernels: KernelManager | null;
  limits: DataLimits;
}

interface MapFacts {
  table: string;
  columns: TableColumn[] | null;
  coords: AtlasCoords | null;
  coordsRegistered: boolean;
}

async function mapFacts(deps: AtlasApiDeps, ws: string, mapId: string): Promise<MapFacts> {
  const facts = await withDoc(deps.hocuspocus, ws, (doc) => {
    const m = getAtlasMap(doc, mapId);
    if (!m) return null;
    const src = getTable(doc, m.table);
    return { table: m.table, columns: src?.columns ?? null, coords: m.coords, coordsRegistered: !!m.coords?.table && getTable(doc, m.coords.table) !== null };
  });
  if (!facts) throw new HttpError(404, 'not-found', `no map "${mapId}" in this workspace`);
  return facts;
}

function sourceColumns(f: MapFacts): TableColumn[] {
  if (!f.columns) throw new HttpError(404, 'no-table', `the map's table "${f.table}" is not in this workspace any more`);
  return f.columns;
}

function notReady(c: AtlasCoords | null): HttpError {
  const what = !c
    ? 'have not been started yet'
    : c.status === 'error'
      ? `could not be made: ${c.error ?? 'unknown error'}`
      : c.status === 'running' && c.progress
        ? `are being computed (${c.progress.stage} ${c.progress.done}/${c.progress.total})`
        : `are ${c.status}`;
  return new HttpError(409, c?.status === 'error' ? 'map-error' : 'not-ready', `the map's coordinates ${what}`);
}

/** `rows=3,17,42` → distinct row numbers (at most 100). */
function rowsParam(v: string | null): number[] {
  const parts = (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (!parts.length) throw new HttpError(400, 'bad-rows', 'rows must list row numbers, e.g. ?rows=3,17,42');
  const rows = parts.map(Number);
  if (rows.some((r) => !Number.isSafeInteger(r) || r < 0)) throw new HttpError(400, 'bad-rows', 'rows must be non-negative integers separated by commas');
  const distinct = [...new Set(rows)];
  if (distinct.length > MAX_ROWS_PER_REQUEST) throw new HttpError(400, 'too-many-rows', `at most ${MAX_ROWS_PER_REQUEST} rows per request (asked for ${distinct.length})`);
  return distinct;
}

/**
 * Handles `/api/workspaces/:id/atlas/<rest>` (`rest` = [mapId, route]). The caller has checked
 * that the token grants access to `id` and that the workspace exists.
 */
export async function handleAtlasApi(deps: AtlasApiDeps, req: IncomingMessage, res: ServerResponse, url: URL, ws: string, rest: string[]): Promise<void> {
  const [mapId, route] = rest;
  if (rest.length !== 2 || !mapId || !route || !['points', 'rows', 'columns'].includes(route)) throw new HttpError(404, 'not-found', `no API route ${req.method} ${url.pathname}`);
  if ((req.method ?? 'GET') !== 'GET') throw new HttpError(405, 'method-not-allowed', 'the atlas routes are read-only (GET); maps are made in the workspace document');
  if (!deps.kernels) throw new HttpError(503, 'kernel-disabled', 'the kernel is disabled on this server (PLEXUS_KERNEL=0): maps need its tables');
  const tableFile = (name: string) => path.join(deps.kernels!.tablesDir(ws), `${name}.duckdb`);
  const facts = await mapFacts(deps, ws, mapId);
  try {
    if (route === 'points') {
      const c = facts.coords;
      if (c?.status !== 'done' || !c.table) throw notReady(c);
      if (!facts.coordsRegistered) throw new HttpError(409, 'not-ready', `the map's coordinates table "${c.table}" is not registered; the map is being made again`);
      const cols = sourceColumns(facts);
      const asked = url.searchParams.get('color');
      let color: { column: string; type: string } | null = null;
      if (asked) {
        const col = cols.find((x) => x.name === asked);
        if (col) color = { column: col.name, type: col.type };
        else if (asked === 'cluster') color = { column: 'cluster', type: 'cluster' };
        else throw new HttpError(400, 'unknown-column', `table "${facts.table}" has no column "${asked}" (its columns: ${cols.map((x) => x.name).join(', ')})`);
      }
      const points = await readPoints({ source: tableFile(facts.table), coords: tableFile(c.table) }, color, deps.limits);
      const body = pointsBody(points);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'no-store', 'content-length': body.length });
      res.end(body);
      return;
    }
    sourceColumns(facts);
    if (route === 'rows') {
      const rows = rowsParam(url.searchParams.get('rows'));
      sendJson(res, 200, await readRows(tableFile(facts.table), rows, deps.limits));
      return;
    }
    sendJson(res, 200, { table: facts.table, ...(await describeColumns(tableFile(facts.table), deps.limits)) });
  } catch (e) {
    if (e instanceof DataError) throw new HttpError(e.status, e.code, e.message);
    throw e;
  }
}
