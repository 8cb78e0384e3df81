/**
 * Step through a table of ROIs: previous / next centres the view on each row. Rows come from an
 * annotation layer of the shared viewer (points, ellipsoid centres, box and line midpoints), so
 * ROIs loaded from a table, drawn by hand or added by the agent can all be visited. The position
 * in the list is this person's own.
 */
import { useMemo, useState } from 'react';
import { isJsonObject, readViewerState, VIEWER_ROOTS, type Json, type JsonObject } from '@plexus/shared';
import { useSession } from '../collab/context.tsx';
import { useYVersion } from '../collab/useY.ts';
import type { ViewerBinding } from './viewerBinding.ts';

export interface RoiRow {
  id: string;
  label: string;
  centre: number[];
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

export function RoiStepper({ binding }: { binding: ViewerBinding | null }) {
  const session = useSession();
  const version = useYVersion(session.doc.getMap(VIEWER_ROOTS.layers), true);
  const tables = useMemo(() => {
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
  const names = [...tables.keys()];
  const [table, setTable] = useState<string | null>(null);
  const [index, setIndex] = useState(-1);
  const current = table && tables.has(table) ? table : (names[0] ?? null);
  const rows = current ? tables.get(current)! : [];
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
        {row ? `${index + 1}/${rows.length} ${row.label}` : `${rows.length} ROIs`}
      </span>
      <button className="btn btn-small" aria-label="Next ROI" title="Next ROI" data-testid="roi-next" disabled={!binding} onClick={() => go(1)}>
        ›
      </button>
    </div>
  );
}
