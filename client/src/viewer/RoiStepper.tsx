/**
 * Step through a table of ROIs: previous / next centres the view on each row. Rows come from an
 * uploaded table with position columns (x/y, centroid_x/centroid_y, …; see roi-table.ts) or from
 * an annotation layer of the shared viewer (points, ellipsoid centres, box and line midpoints),
 * so ROIs from a file, drawn by hand or added by the agent can all be visited. The position in
 * the list is this person's own. Effects: fetches table rows (HTTP), moves this person's camera.
 */
import { useEffect, useMemo, useState } from 'react';
import { isJsonObject, listTables, readViewerState, roiColumns, roiRowCentre, roots, viewerRoots, type Json, type JsonObject } from '@plexus/shared';
import { apiRequest } from '../api/http.ts';
import { useSession } from '../collab/context.tsx';
import { useYVersion } from '../collab/useY.ts';
import type { ViewerBinding } from './viewerBinding.ts';

export interface RoiRow {
  id: string;
  label: string;
  /** `null` keeps the viewer's current coordinate on that axis. */
  centre: Array<number | null>;
}

/** Rows a table source offers at most (the first ones). */
const TABLE_ROWS = 1000;

async function loadTableRows(workspaceId: string, table: string, token: string): Promise<RoiRow[]> {
  const res = await apiRequest<{ columns: Array<{ name: string }>; rows: Array<Record<string, unknown>> }>(
    `/api/workspaces/${encodeURIComponent(workspaceId)}/data/${encodeURIComponent(table)}/preview?limit=${TABLE_ROWS}`,
    { token },
  );
  const cols = roiColumns(res.columns);
  if (!cols) return [];
  const rows: RoiRow[] = [];
  res.rows.forEach((r, i) => {
    const centre = roiRowCentre(r, cols);
    if (!centre) return;
    const label = cols.label !== undefined && r[cols.label] !== null && r[cols.label] !== undefined ? `${cols.label} ${String(r[cols.label])}` : `row ${i + 1}`;
    rows.push({ id: String(i), label, centre });
  });
  return rows;
}

const nums = (v: Json | undefined): number[] | null => (Array.isArray(v) && v.every((x) => typeof x === 'number') ? (v as number[]) : null);

/** The centre of an annotation, or null for kinds without one. */
export function annotationCentre(a: JsonObject): number[] | null {
  const p = nums(a.point) ?? nums(a.center);
  if (p) return p;
  const pa = nums(a.pointA);
  const pb = nums(a.pointB);
  if (pa && pb && pa.length === pb.length) return pa.map((x, i) => (x + pb[i]!) / 2);
  return null;
}

export function RoiStepper({ binding, token }: { binding: ViewerBinding | null; token: string }) {
  const session = useSession();
  const version = useYVersion(viewerRoots(session.doc).layers, true);
  const dataVersion = useYVersion(roots(session.doc).data, true);
  const tableNames = useMemo(
    () => listTables(session.doc).filter((t) => roiColumns(t.columns)).map((t) => `table: ${t.name}`),
    [session.doc, dataVersion],
  );
  const [tableRows, setTableRows] = useState<Map<string, RoiRow[]>>(new Map());
  const layers = useMemo(() => {
    const out = new Map<string, RoiRow[]>();
    for (const l of readViewerState(session.doc).layers as JsonObject[]) {
      if (!Array.isArray(l.annotations) || typeof l.name !== 'string') continue;
      const rows: RoiRow[] = [];
      l.annotations.forEach((a, i) => {
        if (!isJsonObject(a)) return;
        const c = annotationCentre(a);
        if (c) rows.push({ id: String(a.id ?? i), label: typeof a.description === 'string' && a.description ? a.description : `#${i + 1}`, centre: c });
      });
      if (rows.length) out.set(l.name, rows);
    }
    return out;
  }, [session.doc, version]);
  const names = [...tableNames, ...layers.keys()];
  const [table, setTable] = useState<string | null>(null);
  const [index, setIndex] = useState(-1);
  const current = table && names.includes(table) ? table : (names[0] ?? null);
  const isTable = !!current?.startsWith('table: ');
  // Table rows are fetched when the table is chosen (and again when it is re-uploaded).
  useEffect(() => {
    if (!current || !isTable) return;
    let live = true;
    loadTableRows(session.workspace.id, current.slice('table: '.length), token).then(
      (rows) => live && setTableRows((m) => new Map(m).set(current, rows)),
      () => live && setTableRows((m) => new Map(m).set(current, [])),
    );
    return () => {
      live = false;
    };
  }, [current, isTable, dataVersion, session.workspace.id, token]);
  const rows = current ? ((isTable ? tableRows.get(current) : layers.get(current)) ?? []) : [];
  if (!names.length) return null;

  const go = (delta: number) => {
    if (!binding || !rows.length) return;
    const next = (((index < 0 && delta < 0 ? 0 : index) + delta) % rows.length + rows.length) % rows.length;
    setIndex(next);
    binding.showCamera({ position: rows[next]!.centre });
  };
  const row = index >= 0 && index < rows.length ? rows[index] : undefined;

  return (
    <div className="roi-stepper" data-testid="roi-stepper">
      {names.length > 1 && (
        <select
          className="input input-small"
          aria-label="ROI table"
          data-testid="roi-source"
          value={current ?? ''}
          onChange={(e) => {
            setTable(e.target.value);
            setIndex(-1);
          }}
        >
          {names.map((n) => (
            <option key={n}>{n}</option>
          ))}
        </select>
      )}
      <button className="btn btn-small" aria-label="Previous ROI" title="Previous ROI" data-testid="roi-prev" disabled={!binding} onClick={() => go(-1)}>
        ‹
      </button>
      <span className="roi-label" data-testid="roi-label" title={row?.label}>
        {row ? `${index + 1}/${rows.length} ${row.label}` : isTable && !tableRows.has(current!) ? 'loading…' : `${rows.length} ROIs`}
      </span>
      <button className="btn btn-small" aria-label="Next ROI" title="Next ROI" data-testid="roi-next" disabled={!binding} onClick={() => go(1)}>
        ›
      </button>
    </div>
  );
}
