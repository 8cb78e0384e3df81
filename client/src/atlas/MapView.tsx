/**
 * One map: its status while the server computes the coordinates, then the points (MapCanvas,
 * loaded on demand), colour-by and its legend, tools, and below the map what everyone shares —
 * the selection ("N rows selected by Ada — read them in SQL as `…_selection`"), the highlight,
 * saved categories, the ROIs they light up in the viewer (maps of ROI tables) — and who else looks
 * at this map (follow their camera).
 * Effects: HTTP (points, rows, columns), document writes through the atlas helpers, awareness.
 */
import { lazy, Suspense, useEffect, useMemo, useRef, useState } from 'react';
import {
  isPresenceOf,
  listTables,
  removeAtlasCategory,
  saveAtlasCategory,
  setAtlasColorBy,
  setAtlasHighlight,
  setAtlasSelection,
  MAX_ATLAS_ROWS,
  type AtlasMapView,
  type AtlasSelection,
  type AtlasViewerHighlight,
} from '@plexus/shared';
import { ApiError } from '../api/http.ts';
import { useApiToken } from '../api/tokenContext.ts';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { usePeers } from '../collab/presenceIndex.ts';
import { useLocalUser } from '../state/user.ts';
import { fetchColumns, fetchPoints, RowCache, type AtlasColumn, type AtlasRow } from './api.ts';
import { coloring, HIGHLIGHT_COLOR, SELECTED_COLOR } from './colors.ts';
import { brushToSelection, mapToNdc, ndcToMap, normalizeAll, normalizer, pointsInSelection, type Vec2 } from './geometry.ts';
import { Legend } from './Legend.tsx';
import { rowIndex, type AtlasPoints } from './points.ts';
import { useAtlasPeers, type AtlasPresencePublisher } from './presence.ts';
import type { Tool } from './renderer.ts';
import { isNumericType } from './NewMapForm.tsx';
import { webglProblem } from './webgl.ts';

const MapCanvas = lazy(() => import('./MapCanvas.tsx'));

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;
const EMPTY = new Uint32Array(0);

function progressText(coords: AtlasMapView['coords']): string {
  if (!coords || coords.status === 'queued') return 'Waiting for the server to compute the coordinates…';
  if (coords.status === 'running') {
    const p = coords.progress;
    if (!p) return 'Computing the coordinates…';
    return p.total > 0 ? `${p.stage}: ${p.done.toLocaleString()} of ${p.total.toLocaleString()}` : `${p.stage}…`;
  }
  if (coords.status === 'error') return coords.error ?? 'The coordinates could not be computed.';
  return coords.how ?? '';
}

export function MapView({ map, publisher, onRemove }: { map: AtlasMapView; publisher: AtlasPresencePublisher; onRemove?: () => void }) {
  const session = useSession();
  const token = useApiToken();
  const canEdit = useCanEdit();
  const userName = useLocalUser((s) => s.user.name);
  const workspaceId = session.workspace.id;
  const coords = map.coords;
  const status = coords?.status ?? 'queued';

  // ---- points -------------------------------------------------------------------------------
  const [points, setPoints] = useState<AtlasPoints | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [retry, setRetry] = useState(0);
  const [colorProblem, setColorProblem] = useState<string | null>(null);
  useEffect(() => {
    if (status !== 'done') return;
    const ac = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    setLoading(true);
    const colorBy = map.colorBy;
    fetchPoints(token, workspaceId, map.id, colorBy, ac.signal)
      .then(
        (p) => {
          setColorProblem(null);
          return p;
        },
        (e: unknown) => {
          // A column the points cannot be coloured by (too many categories, gone): plain points, and say why.
          if (!(colorBy && e instanceof ApiError && e.status === 400)) throw e;
          setColorProblem(`Cannot colour by “${colorBy}”: ${e.message}`);
          return fetchPoints(token, workspaceId, map.id, null, ac.signal);
        },
      )
      .then(
        (p) => {
          setPoints(p);
          setLoadError(null);
          setLoading(false);
        },
        (e: unknown) => {
          if ((e as Error).name === 'AbortError') return;
          setLoading(false);
          if (e instanceof ApiError && e.status === 409 && retry < 20) {
            // The document says done before the server serves them (or a recompute began): ask again.
            setLoadError('The coordinates are not ready yet…');
            timer = setTimeout(() => setRetry((r) => r + 1), Math.min(8000, 500 * 2 ** Math.min(retry, 4)));
          } else setLoadError(`The points could not be loaded: ${(e as Error).message}`);
        },
      );
    return () => {
      ac.abort();
      clearTimeout(timer);
    };
  }, [token, workspaceId, map.id, map.colorBy, status, coords?.at, retry]);

  // Positions only change with new coordinates: a new colour keeps them (and the renderer's spatial index).
  const boundsKey = points ? points.meta.bounds.join(',') : '';
  const nz = useMemo(() => (points ? normalizer(points.meta.bounds, map.method !== 'columns') : null), [boundsKey, map.method]); // eslint-disable-line react-hooks/exhaustive-deps
  const positionsKey = points ? `${coords?.at}:${points.n}:${boundsKey}:${points.row[0]}:${points.row[points.n - 1]}` : '';
  const ndc = useMemo(() => (points && nz ? normalizeAll(nz, points.x, points.y) : null), [positionsKey, nz]); // eslint-disable-line react-hooks/exhaustive-deps
  const rowIdx = useMemo(() => (points ? rowIndex(points) : null), [points]);
  const highlight = map.highlight;
  const highlightIdx = useMemo(() => {
    if (!highlight || !rowIdx) return null;
    const s = new Set<number>();
    for (const r of highlight.rows) {
      const i = r < rowIdx.length ? rowIdx[r]! : -1;
      if (i >= 0) s.add(i);
    }
    return s;
  }, [highlight, rowIdx]);
  const colors = useMemo(() => (points ? coloring(points, highlightIdx) : null), [points, highlightIdx]);

  // ---- the shared selection -----------------------------------------------------------------
  const selection = map.selection;
  const selectedIdx = useMemo(() => (selection && points ? pointsInSelection(selection, points.x, points.y) : EMPTY), [selection, points]);
  const people = usePeers(session.awareness);
  const nameOf = (id: string, stored?: string) => (id === session.origin.userId ? 'you' : (stored ?? people.find((p) => isPresenceOf(p.user, id))?.user.name ?? 'someone'));

  const onBrush = (vertices: Vec2[], kind: 'rect' | 'lasso') => {
    if (!nz || !canEdit) return;
    const sel = brushToSelection(nz, vertices, kind, { by: session.origin.userId, name: userName, at: Date.now() });
    if (sel) setAtlasSelection(session.doc, map.id, sel, session.origin);
  };
  const clearSelection = () => setAtlasSelection(session.doc, map.id, null, session.origin);

  // ---- hover, tooltip, awareness ------------------------------------------------------------
  const rowCache = useMemo(() => new RowCache(token, workspaceId, map.id), [token, workspaceId, map.id]);
  const [hover, setHover] = useState<number | null>(null);
  const [hoverRow, setHoverRow] = useState<AtlasRow | null>(null);
  useEffect(() => {
    if (hover === null || !points) return setHoverRow(null);
    const row = points.row[hover]!;
    const hit = rowCache.peek(row);
    setHoverRow(hit ?? null);
    if (hit) return;
    let live = true;
    const t = setTimeout(() => rowCache.get(row).then((r) => live && setHoverRow(r)), 60);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [hover, points, rowCache]);
  const onHover = (i: number | null) => {
    setHover(i);
    publisher.update({ mapId: map.id, hover: i === null || !points ? null : points.row[i]! });
  };
  const onCamera = (target: Vec2, distance: number) => {
    if (nz) publisher.update({ mapId: map.id, camera: { center: ndcToMap(nz, target), distance } });
  };
  useEffect(() => {
    publisher.update({ mapId: map.id });
  }, [publisher, map.id]);

  // ---- following someone's camera -----------------------------------------------------------
  const peers = useAtlasPeers(session.awareness, map.id);
  const [follow, setFollow] = useState<{ id: string; name: string } | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const leader = follow ? peers.find((p) => p.user.id === follow.id) : undefined;
  useEffect(() => {
    if (follow && !leader) {
      setNotice(`${follow.name} left this map: you look around on your own again.`);
      setFollow(null);
    }
  }, [follow, leader]);
  useEffect(() => {
    publisher.update({ mapId: map.id, following: follow?.id });
  }, [publisher, map.id, follow]);
  const leaderCam = leader?.atlas.camera ?? null;
  const followCamera = useMemo(() => (leaderCam && nz ? { target: mapToNdc(nz, leaderCam.center), distance: leaderCam.distance } : null), [leaderCam, nz]);

  // ---- colour-by ----------------------------------------------------------------------------
  const [columns, setColumns] = useState<AtlasColumn[] | null>(null);
  useEffect(() => {
    if (status !== 'done') return;
    const ac = new AbortController();
    fetchColumns(token, workspaceId, map.id, ac.signal).then(setColumns, () => undefined);
    return () => ac.abort();
  }, [token, workspaceId, map.id, status]);
  const columnChoices = useMemo(() => {
    const list: AtlasColumn[] = columns?.length
      ? columns.filter((c) => c.color !== false || c.name === map.colorBy)
      : (listTables(session.doc).find((x) => x.name === map.table)?.columns ?? []).map((c) => ({ name: c.name, type: c.type, numeric: isNumericType(c.type) }));
    // The map's own clusters, unless the table has a column of that name.
    return list.some((c) => c.name === 'cluster') ? list : [...list, { name: 'cluster', type: 'cluster', numeric: false, label: 'clusters of the map' }];
  }, [columns, session.doc, map.table, map.colorBy]);

  // ---- local view options -------------------------------------------------------------------
  const [tool, setTool] = useState<Tool>('pan');
  const [density, setDensity] = useState(false);
  const [renderError, setRenderError] = useState<string | null>(null);
  const glProblem = useMemo(() => webglProblem(), []);
  const resetRef = useRef<(() => void) | null>(null);

  // ---- categories ---------------------------------------------------------------------------
  const [saving, setSaving] = useState(false);
  const [catName, setCatName] = useState('');
  const [catNote, setCatNote] = useState('');
  const selectedRows = useMemo(() => (points ? Array.from(selectedIdx.subarray(0, MAX_ATLAS_ROWS), (i) => points.row[i]!) : []), [selectedIdx, points]);
  const saveCategory = () => {
    const name = catName.trim();
    if (!name || !selectedRows.length) return;
    saveAtlasCategory(session.doc, map.id, name, { rows: selectedRows, note: catNote.trim(), by: session.origin.userId, name: userName, at: Date.now() }, session.origin);
    setSaving(false);
    setCatName('');
    setCatNote('');
  };
  const categories = Object.entries(map.categories).sort((a, b) => a[1].at - b[1].at);

  const selectionTable = coords?.table ? `${coords.table}_selection` : `${map.table}_map_selection`;
  const sampled = points?.meta.sampled ? points : null;

  return (
    <div className="atlas-map" data-map-id={map.id}>
      <div className="atlas-status-row">
        <div className={`atlas-status is-${status}`} data-testid="atlas-status" data-status={status} role="status" aria-live="polite">
          {status === 'running' && coords?.progress && coords.progress.total > 0 && (
            <span className="atlas-progress" role="progressbar" aria-label="Computing the coordinates" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round((100 * coords.progress.done) / coords.progress.total)}>
              <span style={{ width: `${((100 * coords.progress.done) / coords.progress.total).toFixed(1)}%` }} />
            </span>
          )}
          <span className="atlas-status-text">
            <span data-testid={status === 'done' ? 'atlas-how' : undefined}>{progressText(coords)}</span>
            {status === 'done' && points && (
              <span className="muted atlas-points" data-testid="atlas-points">
                {' '}
                · {sampled ? `${plural(points.n, 'point')} shown of ${plural(points.meta.total, 'row')} (a sample)` : plural(points.n, 'row')}
              </span>
            )}
          </span>
        </div>
        {onRemove && (
          <button className="btn btn-small atlas-remove" aria-label="Delete this map" title="Delete this map for everyone" onClick={onRemove}>
            Delete map
          </button>
        )}
      </div>

      {status === 'done' && (
        <div className="atlas-toolbar" role="toolbar" aria-label="Map tools">
          {canEdit && (
            <div className="btn-group" role="group" aria-label="Mouse tool">
              {(
                [
                  ['pan', 'Pan', 'Drag to pan, wheel to zoom; Shift+drag brushes a rectangle'],
                  ['lasso', 'Lasso', 'Drag a free-form lasso to select (Escape cancels)'],
                  ['rect', 'Rectangle', 'Drag a rectangle to select (Escape cancels)'],
                ] as const
              ).map(([t, label, title]) => (
                <button key={t} className={`btn btn-small toggle${tool === t ? ' is-on' : ''}`} data-testid={`atlas-tool-${t}`} aria-pressed={tool === t} title={title} onClick={() => setTool(t)}>
                  {label}
                </button>
              ))}
            </div>
          )}
          <label className="atlas-color-pick">
            <span>Colour</span>
            <select data-testid="atlas-color" aria-label="Colour the points by" value={map.colorBy ?? ''} disabled={!canEdit} onChange={(e) => setAtlasColorBy(session.doc, map.id, e.target.value || null, session.origin)}>
              <option value="">(none)</option>
              {columnChoices.map((c) => (
                <option key={c.name} value={c.name}>
                  {'label' in c ? String(c.label) : c.name}
                </option>
              ))}
            </select>
          </label>
          <button className={`btn btn-small toggle${density ? ' is-on' : ''}`} data-testid="atlas-density" aria-pressed={density} title="Point opacity by density: dense regions show as shades" onClick={() => setDensity(!density)}>
            Density
          </button>
          <button className="icon-btn" aria-label="Reset the view" title="Reset the view: the whole map" onClick={() => resetRef.current?.()}>
            ⤢
          </button>
        </div>
      )}

      <div className="atlas-stage">
        {status !== 'done' ? (
          <div className={`atlas-placeholder${status === 'error' ? ' is-error' : ''}`}>{status === 'error' ? 'No map: the server could not compute the coordinates (above).' : 'The map appears here once the coordinates are computed.'}</div>
        ) : glProblem || renderError ? (
          <div className="atlas-placeholder is-error" data-testid="atlas-webgl-error" role="alert">
            {glProblem ?? renderError}
          </div>
        ) : !points || !ndc || !nz || !colors ? (
          <div className="atlas-placeholder" data-testid="atlas-loading">
            {loadError ?? (loading ? 'Loading the points…' : '')}
          </div>
        ) : (
          <Suspense fallback={<div className="atlas-placeholder">Loading the map renderer…</div>}>
            <MapCanvas
              key={`${map.id}:${coords?.at ?? 0}`}
              points={points}
              nz={nz}
              ndc={ndc}
              colors={colors}
              selected={selectedIdx}
              selection={selection}
              labels={coords?.labels ?? []}
              peers={peers}
              rowIdx={rowIdx!}
              hover={hover}
              hoverRow={hoverRow}
              tool={canEdit ? tool : 'pan'}
              readOnly={!canEdit}
              density={density}
              follow={followCamera}
              resetRef={resetRef}
              onBrush={onBrush}
              onHover={onHover}
              onCamera={onCamera}
              onUserMove={() => {
                if (follow) {
                  setFollow(null);
                  setNotice(`You moved: no longer following ${follow.name}.`);
                }
              }}
              onError={setRenderError}
            />
          </Suspense>
        )}
        {points && (loadError || colorProblem) && status === 'done' && (
          <div className="atlas-stage-note muted" role="status" data-testid="atlas-stage-note">
            {loadError ?? colorProblem}
          </div>
        )}
        {points?.meta.color && <Legend color={points.meta.color} />}
      </div>

      <div className="atlas-shared">
        {notice && (
          <div className="atlas-notice muted" role="status">
            {notice}{' '}
            <button className="link-btn" onClick={() => setNotice(null)}>
              OK
            </button>
          </div>
        )}
        {selection && (
          <SelectionLine
            selection={selection}
            count={selectedIdx.length}
            sample={sampled ? { shown: sampled.n, total: sampled.meta.total } : null}
            who={nameOf(selection.by, selection.name)}
            table={selectionTable}
            canEdit={canEdit}
            onClear={clearSelection}
            onSave={() => setSaving(true)}
          />
        )}
        {saving && selection && (
          <form
            className="atlas-save"
            onSubmit={(e) => {
              e.preventDefault();
              saveCategory();
            }}
          >
            <input type="text" aria-label="Category name" data-testid="atlas-category-name" placeholder="Category name" maxLength={100} value={catName} onChange={(e) => setCatName(e.target.value)} autoFocus />
            <input type="text" aria-label="Note" data-testid="atlas-category-note" placeholder="Note (what these rows are)" maxLength={2000} value={catNote} onChange={(e) => setCatNote(e.target.value)} />
            <button type="submit" className="btn btn-small btn-primary" data-testid="atlas-category-save" disabled={!catName.trim() || !selectedRows.length}>
              Save {plural(selectedRows.length, 'row')}
            </button>
            <button type="button" className="btn btn-small" onClick={() => setSaving(false)}>
              Cancel
            </button>
          </form>
        )}
        {highlight && (
          <div className="atlas-line" data-testid="atlas-highlight" data-count={highlight.rows.length}>
            <span className="atlas-swatch" style={{ background: HIGHLIGHT_COLOR }} aria-hidden="true" />
            <span>
              Highlighted: <strong>{highlight.label}</strong> — {plural(highlight.rows.length, 'row')}
              {highlightIdx && points && highlightIdx.size < highlight.rows.length ? ` (${highlightIdx.size.toLocaleString()} of them shown)` : ''}, by {nameOf(highlight.by, highlight.name)}
            </span>
            {canEdit && (
              <button className="btn btn-small" data-testid="atlas-highlight-clear" aria-label="Clear the highlight" onClick={() => setAtlasHighlight(session.doc, map.id, null, session.origin)}>
                Clear
              </button>
            )}
          </div>
        )}
        {map.viewer && <ViewerLine viewer={map.viewer} />}
        {categories.length > 0 && (
          <div className="atlas-categories">
            <div className="atlas-subhead">Saved categories</div>
            <ul>
              {categories.map(([name, c]) => (
                <li key={name} className="atlas-category" data-testid="atlas-category" data-name={name} data-count={c.rows.length}>
                  <div className="atlas-category-head">
                    <strong>{name}</strong> <span className="muted">· {plural(c.rows.length, 'row')} · by {nameOf(c.by, c.name)}</span>
                    <span className="header-spacer" />
                    {canEdit && (
                      <>
                        <button
                          className="btn btn-small"
                          data-testid="atlas-category-show"
                          aria-label={`Show ${name} on the map for everyone`}
                          onClick={() => setAtlasHighlight(session.doc, map.id, { rows: c.rows, label: name, by: session.origin.userId, name: userName, at: Date.now() }, session.origin)}
                        >
                          Show on map
                        </button>
                        <button className="btn btn-small" data-testid="atlas-category-remove" aria-label={`Remove the category ${name}`} onClick={() => removeAtlasCategory(session.doc, map.id, name, session.origin)}>
                          Remove
                        </button>
                      </>
                    )}
                  </div>
                  {c.note && <div className="atlas-category-note">{c.note}</div>}
                  {c.summary && <div className="atlas-category-summary muted">{c.summary}</div>}
                </li>
              ))}
            </ul>
          </div>
        )}
        {peers.length > 0 && (
          <div className="atlas-people" aria-label="Others on this map">
            <span className="muted">Also here:</span>
            {peers.map((p) => {
              const on = follow?.id === p.user.id;
              return (
                <span key={p.clientId} className="atlas-person" data-testid="atlas-person" data-name={p.user.name}>
                  <span className="atlas-swatch is-round" style={{ background: p.user.color }} aria-hidden="true" />
                  {p.user.name}
                  <button
                    className={`btn btn-small toggle${on ? ' is-on' : ''}`}
                    data-testid="atlas-follow"
                    aria-pressed={on}
                    aria-label={on ? `Stop following ${p.user.name}` : `Follow ${p.user.name}'s view`}
                    disabled={!p.atlas.camera && !on}
                    onClick={() => {
                      setNotice(null);
                      setFollow(on ? null : { id: p.user.id, name: p.user.name });
                    }}
                  >
                    {on ? 'Following' : 'Follow'}
                  </button>
                </span>
              );
            })}
          </div>
        )}
      </div>
    </div>
  );
}

/** Where the chosen rows show in the viewer: how many ROIs, on which layer, deleted ones left out. */
function ViewerLine({ viewer }: { viewer: AtlasViewerHighlight }) {
  return (
    <div className="atlas-line" data-testid="atlas-viewer" data-shown={viewer.shown} data-hidden={viewer.hidden} data-layer={viewer.layer ?? ''}>
      <span className="atlas-swatch" style={{ background: `linear-gradient(90deg, ${SELECTED_COLOR} 50%, ${HIGHLIGHT_COLOR} 50%)` }} aria-hidden="true" />
      <span>
        {viewer.layer ? (
          <>
            <strong data-testid="atlas-viewer-count">{plural(viewer.shown, 'ROI')}</strong> highlighted in the viewer, on the layer <code>{viewer.layer}</code>
            {viewer.of ? <> over <code>{viewer.of}</code></> : null}
          </>
        ) : (
          <>
            {plural(viewer.shown, 'ROI')} to highlight, but the viewer has no layer of these ROIs: add it (<em>Analyses</em> → <em>Add ROI layer</em>, or <em>+ Layer</em>), then brush again to see them there.
          </>
        )}
        {viewer.hidden > 0 && <span className="muted"> · {plural(viewer.hidden, 'deleted ROI')} left out</span>}
      </span>
    </div>
  );
}

function SelectionLine(props: { selection: AtlasSelection; count: number; sample: { shown: number; total: number } | null; who: string; table: string; canEdit: boolean; onClear(): void; onSave(): void }) {
  const { selection, count, sample, who, table, canEdit } = props;
  return (
    <div className="atlas-line" data-testid="atlas-selection" data-count={count} data-kind={selection.kind}>
      <span className="atlas-swatch" style={{ background: SELECTED_COLOR }} aria-hidden="true" />
      <span>
        {sample ? (
          <>
            <strong data-testid="atlas-selection-count">{plural(count, 'point')}</strong> of the {sample.shown.toLocaleString()} shown (about {plural(Math.round((count * sample.total) / Math.max(1, sample.shown)), 'row')} of the table)
          </>
        ) : (
          <strong data-testid="atlas-selection-count">{plural(count, 'row')}</strong>
        )}{' '}
        selected by {who} — read them in SQL as <code>{table}</code>
      </span>
      {canEdit && (
        <>
          <button className="btn btn-small" data-testid="atlas-selection-save" aria-label="Save the selected rows as a category" disabled={count === 0} onClick={props.onSave}>
            Save as category
          </button>
          <button className="btn btn-small" data-testid="atlas-selection-clear" aria-label="Clear the selection for everyone (Delete)" title="Clear the selection for everyone (Delete)" onClick={props.onClear}>
            Clear
          </button>
        </>
      )}
    </div>
  );
}
