/**
 * The ROIs of one finished calcium analysis (rows of its `rois` table: id, soma decision, SNR,
 * events) with everyone's edits: a deleted ROI is struck through for everyone, a merged one says
 * where it went, a reclassified one shows its new decision with a star. Editors delete, restore
 * and merge ROIs and overrule the soma decision (click "cell" / "not a cell"); each edit also sets
 * which segments the shared ROI layer shows, in the same transaction (`applyRoiEdit`).
 * Effects: fetches the table's rows (HTTP); document writes.
 */
import { useEffect, useMemo, useState } from 'react';
import { applyRoiEdit, effectiveRoiIds, findRoiLayer, jobRoiIds, roiIsCell, type Job, type Json, type RoiEdit } from '@plexus/shared';
import { fetchPreview } from '../api/notebook.ts';
import { useApiToken } from '../api/tokenContext.ts';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { useLocalUser } from '../state/user.ts';

/** Rows read at most (the preview endpoint's limit). */
const MAX_ROWS = 1000;

interface RoiRow {
  id: number;
  /** The pipeline's decision (a table with edits written in keeps it in `pipeline_is_cell`). */
  isCell: boolean;
  /** Why the soma rule said no (empty for cells). */
  reason: string;
  snr: number | null;
  events: number | null;
}

const asNumber = (v: Json | undefined): number | null => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : null;
};
const truthy = (v: Json | undefined) => v === true || v === 1 || v === '1' || v === 'true';

export function RoiList({ job, table, tableVersion }: { job: Job; table: string; tableVersion: number }) {
  const session = useSession();
  const token = useApiToken();
  const canEdit = useCanEdit();
  const [rows, setRows] = useState<RoiRow[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [cellsOnly, setCellsOnly] = useState(false);

  useEffect(() => {
    const ctl = new AbortController();
    setError(null);
    fetchPreview(token, session.workspace.id, table, 0, MAX_ROWS, ctl.signal).then(
      (page) => {
        setTotal(page.totalRows);
        setRows(
          page.rows
            .map((r) => ({ id: asNumber(r.id) ?? 0, isCell: truthy('pipeline_is_cell' in r ? r.pipeline_is_cell : r.is_cell), reason: typeof r.reason === 'string' ? r.reason : '', snr: asNumber(r.snr), events: asNumber(r.events) }))
            .filter((r) => Number.isInteger(r.id) && r.id > 0),
        );
      },
      (e: Error) => e.name !== 'AbortError' && setError(e.message),
    );
    return () => ctl.abort();
  }, [token, session, table, tableVersion]);

  const after = useMemo(() => effectiveRoiIds(jobRoiIds(job), job.roiEdits), [job]);
  const edit = (roiId: number, e: RoiEdit | null) => {
    const user = useLocalUser.getState().user;
    const stamped: RoiEdit | null = e && { ...e, by: session.origin.userId, name: user.name, at: Date.now() };
    applyRoiEdit(session.doc, job.id, findRoiLayer(session.doc, job), roiId, stamped, jobRoiIds(job), session.origin);
  };

  if (error) return <div className="out-error">{error}</div>;
  if (!rows) return <div className="muted">Loading ROIs…</div>;
  const shown = cellsOnly ? rows.filter((r) => roiIsCell(r.id, r.isCell, job.roiEdits)) : rows;
  const removed = Object.keys(job.roiEdits).length;
  return (
    <div className="roi-list" data-testid="roi-list">
      <div className="roi-list-head">
        <label className="muted">
          <input type="checkbox" checked={cellsOnly} onChange={(e) => setCellsOnly(e.target.checked)} /> cells only
        </label>
        <span className="muted">
          {total > rows.length ? `first ${rows.length.toLocaleString()} of ${total.toLocaleString()} · ` : ''}
          {removed ? `${removed} edited · ` : ''}
          {canEdit ? 'deleting an ROI hides it in the viewer for everyone; click cell / not a cell to overrule the soma rule' : 'people who edit can delete, merge and reclassify ROIs'}
        </span>
      </div>
      <div className="roi-scroll">
        <table className="roi-table">
          <thead>
            <tr>
              <th scope="col">ROI</th>
              <th scope="col">cell</th>
              <th scope="col">SNR</th>
              <th scope="col">events</th>
              <th scope="col" aria-label="edits" />
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => {
              const e = job.roiEdits[String(r.id)];
              const target = after.get(r.id);
              const state = e?.action === 'delete' || target === undefined ? 'deleted' : e?.action === 'merge' ? 'merged' : 'live';
              const isCell = roiIsCell(r.id, r.isCell, job.roiEdits);
              const overruled = e?.action === 'classify';
              const who = e ? ` by ${e.name ?? e.by}` : '';
              return (
                <tr key={r.id} data-testid="roi-row" data-roi={r.id} data-state={state} className={`roi-${state}`}>
                  <td className="roi-id">#{r.id}</td>
                  <td data-testid="roi-cell" data-cell={isCell ? 'true' : 'false'}>
                    {canEdit && state === 'live' ? (
                      <button
                        className={`link-btn roi-classify${overruled ? ' roi-overruled' : ''}`}
                        data-testid="roi-classify"
                        title={
                          (overruled ? `${isCell ? 'Marked a cell' : 'Marked not a cell'}${who}; the pipeline said ${r.isCell ? 'cell' : 'not a cell'}. ` : '') +
                          (r.reason ? `Soma rule: ${r.reason}. ` : '') +
                          `Click: mark ROI ${r.id} as ${isCell ? 'not a cell' : 'a cell'} for everyone`
                        }
                        onClick={() => edit(r.id, isCell === r.isCell ? { action: 'classify', cell: !isCell, by: '', at: 0 } : null)}
                      >
                        {isCell ? 'cell' : 'not a cell'}
                        {overruled ? ' *' : ''}
                      </button>
                    ) : isCell ? (
                      'cell'
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                  <td className="num">{r.snr === null ? '' : r.snr.toFixed(1)}</td>
                  <td className="num">{r.events ?? ''}</td>
                  <td className="roi-actions">
                    {state !== 'live' && (
                      <span className="muted roi-note" data-testid="roi-note">
                        {e?.action === 'merge' ? `merged into #${e.into}${who}` : e ? `deleted${who}` : `deleted with #${target ?? '?'}`}
                      </span>
                    )}
                    {canEdit && e && e.action !== 'classify' && (
                      <button className="link-btn" data-testid="roi-restore" title={`Undo: bring ROI ${r.id} back for everyone`} onClick={() => edit(r.id, null)}>
                        Undo {e.action === 'merge' ? 'merge' : 'delete'}
                      </button>
                    )}
                    {canEdit && (!e || e.action === 'classify') && state === 'live' && (
                      <>
                        <select
                          className="roi-merge"
                          data-testid="roi-merge"
                          aria-label={`Merge ROI ${r.id} into another ROI`}
                          title={`Merge ROI ${r.id} into another ROI (drawn as one in the viewer)`}
                          value=""
                          onChange={(ev) => {
                            const into = Number(ev.target.value);
                            if (into > 0) edit(r.id, { action: 'merge', into, by: '', at: 0 });
                          }}
                        >
                          <option value="">Merge into…</option>
                          {rows
                            .filter((o) => o.id !== r.id && after.get(o.id) === o.id)
                            .map((o) => (
                              <option key={o.id} value={o.id}>
                                #{o.id}
                              </option>
                            ))}
                        </select>
                        <button className="btn btn-small btn-danger-quiet" data-testid="roi-delete" title={`Delete ROI ${r.id} for everyone (hidden in the viewer's ROI layer)`} onClick={() => edit(r.id, { action: 'delete', by: '', at: 0 })}>
                          Delete
                        </button>
                      </>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </div>
  );
}
