/**
 * The analyses panel (a collapsible section above the notebook, beside the data panel): every
 * analysis job of the workspace, newest first, as the document holds it — so everyone sees the
 * same stage, progress bar and time left, then the summary or the error. Editors stop a running
 * job (the document's stop signal), put a result's ROI layer back into the viewer, query its
 * cells in a new SQL cell, and delete or merge ROIs (RoiList).
 * Effects: document writes; HTTP (the result dataset's layer list).
 */
import { useState } from 'react';
import {
  calciumResult,
  ensureRoiLayer,
  findRoiLayer,
  isJobFinished,
  listCells,
  requestJobStop,
  roiCellsQuery,
  tablesReplaced,
  viewerRoots,
  type Job,
  type ServedLayer,
} from '@plexus/shared';
import { useApiToken } from '../api/tokenContext.ts';
import { useCanEdit, useSession } from '../collab/context.tsx';
import type { WorkspaceSession } from '../collab/session.ts';
import { relativeTime } from '../home/relativeTime.ts';
import { requesterOf } from '../notebook/run/requester.ts';
import { useTables } from '../data/useTables.ts';
import { useYVersion } from '../collab/useY.ts';
import { ensureVolumeSession } from '../viewer/volumeSession.ts';
import { durationText, plural, progressFraction, progressText, requesterLabel, STATUS_TEXT } from './jobText.ts';
import { usePeers } from '../collab/presenceIndex.ts';
import { RoiList } from './RoiList.tsx';
import { insertCellBelowFocusAndRun as insertAndRun } from '../notebook/insertAndRun.ts';
import { useJobs } from './useJobs.ts';

/** Inserts `SELECT * FROM <rois> WHERE is_cell = 1` as a named SQL cell and runs it. */
function insertQueryCell(session: WorkspaceSession, table: string): void {
  const names = new Set(listCells(session.doc).map((c) => c.name).filter(Boolean));
  let name = 'roi_cells';
  for (let i = 2; names.has(name); i++) name = `roi_cells_${i}`;
  insertAndRun(session, { kind: 'sql', name, source: roiCellsQuery(table) });
}

/** Inserts `calcium.figure(<job>)` (the ROIs on the mean image) as a code cell and runs it. */
function insertFigureCell(session: WorkspaceSession, jobId: string): void {
  insertAndRun(session, { kind: 'code', source: `// The ROIs on the mean image ('max' and 'correlation' work too), after everyone's edits\ncalcium.figure(${JSON.stringify(jobId)}, { image: 'mean' })` });
}

/** The `rois` layer of a result dataset as the server describes it. */
async function servedRoiLayer(token: string, dataset: string): Promise<ServedLayer> {
  await ensureVolumeSession(token).catch(() => undefined);
  const res = await fetch(`/volumes/${encodeURIComponent(dataset)}/`);
  if (!res.ok) throw new Error(`the result dataset "${dataset}" answered ${res.status}`);
  const layer = ((await res.json()) as { layers?: ServedLayer[] }).layers?.find((l) => l.name === 'rois');
  if (!layer) throw new Error(`the result dataset "${dataset}" has no ROI layer`);
  return layer;
}

function Progress({ job }: { job: Job }) {
  const p = job.progress;
  if (job.status === 'queued') return <div className="muted job-progress-text" data-testid="job-progress">waiting for a free slot on the server…</div>;
  if (!p) return null;
  const f = progressFraction(p);
  const text = progressText(p);
  return (
    <div className="job-progress">
      <div
        className={`job-bar${f === null ? ' is-indeterminate' : ''}`}
        data-testid="job-progress-bar"
        role="progressbar"
        aria-label={`${job.title}: ${text}`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={f === null ? undefined : Math.round(f * 100)}
      >
        <span style={f === null ? undefined : { width: `${(f * 100).toFixed(1)}%` }} />
      </div>
      <span className="job-progress-text" data-testid="job-progress" data-stage={p.stage}>
        {text}
      </span>
    </div>
  );
}

function JobRow({ job, jobs, people }: { job: Job; jobs: Job[]; people: Array<{ sub?: string; name: string }> }) {
  const session = useSession();
  const token = useApiToken();
  const canEdit = useCanEdit();
  const tables = useTables(session.doc);
  // Whether the ROI layer is in the viewer decides the button's words.
  useYVersion(viewerRoots(session.doc).layers);
  const [roisOpen, setRoisOpen] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const result = calciumResult(job);
  const replaced = tablesReplaced(job, jobs);
  const roiTable = result && !replaced ? (tables.find((t) => t.name === result.tables.rois) ?? null) : null;
  const running = !isJobFinished(job.status);
  const by = requesterLabel(job.requestedBy, people);
  const edited = Object.keys(job.roiEdits).length;

  const showRois = () => {
    if (!result) return;
    setError(null);
    servedRoiLayer(token, result.dataset).then(
      (layer) => ensureRoiLayer(session.doc, job, layer, session.origin),
      (e: Error) => setError(e.message),
    );
  };

  return (
    <li className={`job job-${job.status}`} data-testid="job" data-job-id={job.id} data-status={job.status}>
      <div className="job-head">
        <span className={`job-status status-${job.status}`} data-testid="job-status">
          {STATUS_TEXT[job.status]}
        </span>
        <span className="job-title" data-testid="job-title" title={job.title}>
          {job.title}
        </span>
        <span className="muted job-by" data-testid="job-by">
          by {by}
          {job.requestedBy.via === 'agent' ? ' (agent)' : ''} · {relativeTime(job.created)}
        </span>
        {canEdit && running && (
          <button
            className="btn btn-small btn-danger-quiet"
            data-testid="job-stop"
            title="Stop this analysis for everyone (nothing is published)"
            disabled={!!job.stop}
            onClick={() => requestJobStop(session.doc, job.id, requesterOf(session), session.origin)}
          >
            {job.stop ? 'Stopping…' : 'Stop'}
          </button>
        )}
      </div>
      {running && <Progress job={job} />}
      {running && job.stop && (
        <div className="muted" data-testid="job-stopping">
          {job.stop.name ?? job.stop.by} asked it to stop…
        </div>
      )}
      {job.status === 'error' && (
        <div className="out-error" data-testid="job-error" role="alert">
          {job.error ?? 'the analysis failed'}
        </div>
      )}
      {job.status === 'stopped' && (
        <div className="muted" data-testid="job-error">
          {job.error ?? 'stopped'}
        </div>
      )}
      {job.kind === 'tiff-import' && job.status === 'done' && job.result && (
        <div className="job-result" data-testid="job-import-result">
          <span className="job-summary">
            Imported as <strong>{String(job.result.dataset)}</strong> · {String(job.result.width)}×{String(job.result.height)} px · {String(job.result.frames)} frames
            {typeof job.result.frameRate === 'number' ? ` at ${job.result.frameRate} Hz` : ''} — add it with <em>+ Layer</em>, or <em>Analyse</em> its movie there
          </span>
        </div>
      )}
      {result && (
        <>
          <div className="job-result">
            <span className="job-summary" data-testid="job-summary" data-rois={result.summary.rois} data-cells={result.summary.cells} data-events={result.summary.events}>
              <strong>{plural(result.summary.rois, 'ROI')}</strong> · {plural(result.summary.cells, 'cell')} · {plural(result.summary.events, 'event')}
              {edited ? ` · ${edited} edited` : ''}
            </span>
            <span className="muted">
              {result.seconds !== null ? durationText(result.seconds) : ''}
              {result.reusedRegistration ? ' · registration reused' : ''}
            </span>
            <span className="job-actions">
              {canEdit && (
                <button className="btn btn-small" data-testid="job-show-rois" title="Put this result's ROI layer into the shared viewer (with its ROI edits)" onClick={showRois}>
                  {findRoiLayer(session.doc, job) ? 'Show ROIs' : 'Add ROI layer'}
                </button>
              )}
              {canEdit && result.tables.rois && (
                <button className="btn btn-small" data-testid="job-query" title={`New SQL cell below the focused cell: ${roiCellsQuery(result.tables.rois)}`} onClick={() => insertQueryCell(session, result.tables.rois)}>
                  Query cells
                </button>
              )}
              {canEdit && (
                <button className="btn btn-small" data-testid="job-figure" title="New code cell below the focused cell drawing this result's ROIs on the mean image" onClick={() => insertFigureCell(session, job.id)}>
                  Figure
                </button>
              )}
              {roiTable && (
                <button className="btn btn-small toggle" data-testid="job-rois-toggle" aria-expanded={roisOpen} title="The ROIs of this result, with everyone's edits" onClick={() => setRoisOpen(!roisOpen)}>
                  {roisOpen ? '▾' : '▸'} ROIs
                </button>
              )}
            </span>
          </div>
          {replaced && <div className="muted">A newer analysis of this movie replaced its tables ({result.tables.rois}, …).</div>}
          {error && (
            <div className="form-error" role="alert">
              {error}
            </div>
          )}
          {roisOpen && roiTable && <RoiList job={job} table={roiTable.name} tableVersion={roiTable.created} />}
        </>
      )}
    </li>
  );
}

export function AnalysesPanel({ onClose }: { onClose: () => void }) {
  const session = useSession();
  const jobs = useJobs(session.doc);
  const canEdit = useCanEdit();
  const people = usePeers(session.awareness).map((p) => p.user);
  // Nothing to show before the first analysis (the toolbar has no toggle then either).
  if (jobs.length === 0) return null;
  return (
    <section className="data-panel analyses-panel" data-testid="analyses-panel" aria-label="Analyses">
      <div className="data-panel-head">
        <strong>Analyses</strong>
        <span className="muted analyses-hint">Run on the server, seen by everyone{canEdit ? '. Start one from a movie in the viewer’s + Layer menu.' : '.'}</span>
        <button className="icon-btn" data-testid="analyses-close" title="Close the analyses panel (the toolbar’s Analyses button opens it again)" aria-label="Close the analyses panel" onClick={onClose}>
          ✕
        </button>
      </div>
      <ul className="jobs">
        {jobs.map((j) => (
          <JobRow key={j.id} job={j} jobs={jobs} people={people} />
        ))}
      </ul>
    </section>
  );
}
