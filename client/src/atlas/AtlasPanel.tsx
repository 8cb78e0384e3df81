/**
 * The atlas panel: shared 2-D maps of any table of the workspace, brushed together. Lists the
 * maps (tabs), makes new ones (NewMapForm → createAtlasMap; the server computes the coordinates),
 * and shows the chosen one (MapView): status while the coordinates compute, then the points,
 * the shared selection, the highlight, saved categories and who is looking where.
 *
 * Why regl-scatterplot (MIT; 8 small MIT/ISC packages in all: regl, pub-sub-es, dom-2d-camera,
 * camera-2d-simple, gl-matrix, earcut, regl-line, @flekschas/utils; ~75 kB gzipped, in a chunk
 * loaded with the first map) rather than Apple's embedding-atlas (MIT): embedding-atlas draws
 * through a Mosaic coordinator — it declares @uwdata/mosaic-core, -sql, -spec and vgplot and Svelte as peers and
 * expects to query the points itself through Mosaic (DuckDB-WASM or a Mosaic server), which would
 * bring a second data path and a large bundle next to ours. Here the server computes and serves
 * the coordinates (a compact binary of Float32 arrays) and the selection lives in the Yjs
 * document as geometry; regl-scatterplot only has to draw a million points from typed arrays,
 * with a built-in lasso and a camera we can publish — which is exactly what it does.
 *
 * Effects: document writes (through the shared atlas helpers), HTTP, awareness.
 */
import { useEffect, useMemo, useState, type KeyboardEvent } from 'react';
import { removeAtlasMap, setAtlasSelection, type AtlasMapView } from '@plexus/shared';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { useAtlasMaps } from './useAtlasMaps.ts';
import { NewMapForm } from './NewMapForm.tsx';
import { MapView } from './MapView.tsx';
import { AtlasPresencePublisher } from './presence.ts';
import './atlas.css';

const STATUS_DOT: Record<string, string> = { queued: 'is-queued', running: 'is-running', done: 'is-done', error: 'is-error' };

export function AtlasPanel({ onClose }: { onClose(): void }) {
  const session = useSession();
  const canEdit = useCanEdit();
  const maps = useAtlasMaps(session.doc);
  const [chosen, setChosen] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const publisher = useMemo(() => new AtlasPresencePublisher(session.awareness), [session]);
  useEffect(() => () => publisher.clear(), [publisher]);

  // The chosen map, else the newest one.
  const active: AtlasMapView | null = maps.find((m) => m.id === chosen) ?? maps[maps.length - 1] ?? null;
  const showForm = creating || (maps.length === 0 && canEdit);
  useEffect(() => {
    if (!active || showForm) publisher.clear();
  }, [active, showForm, publisher]);

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key !== 'Delete' || e.defaultPrevented || !active || !canEdit) return;
    const t = e.target as Element;
    if (t.closest('input, textarea, select, [contenteditable="true"]')) return;
    if (!active.selection) return;
    e.preventDefault();
    setAtlasSelection(session.doc, active.id, null, session.origin);
  };

  return (
    <div className="atlas-panel" data-testid="atlas-panel" onKeyDown={onKeyDown}>
      <div className="atlas-head">
        <span className="panel-title atlas-title">Atlas</span>
        <div className="atlas-tabs" role="tablist" aria-label="Maps">
          {maps.map((m) => (
            <button
              key={m.id}
              role="tab"
              className={`atlas-tab${active?.id === m.id && !showForm ? ' is-active' : ''}`}
              data-testid="atlas-map-tab"
              data-map-id={m.id}
              aria-selected={active?.id === m.id && !showForm}
              title={`${m.title} — ${m.table}`}
              onClick={() => {
                setChosen(m.id);
                setCreating(false);
              }}
            >
              <span className={`atlas-dot ${STATUS_DOT[m.coords?.status ?? 'queued']}`} aria-hidden="true" />
              {m.title}
            </button>
          ))}
          {canEdit && (
            <button className={`atlas-tab atlas-new${showForm ? ' is-active' : ''}`} data-testid="atlas-new-map" aria-label="New map" title="Make a new map of a table" onClick={() => setCreating(true)}>
              + New map
            </button>
          )}
        </div>
        <button className="icon-btn" aria-label="Close the atlas" title="Close the atlas" onClick={onClose}>
          ×
        </button>
      </div>
      {showForm ? (
        <NewMapForm
          onCreated={(id) => {
            setChosen(id);
            setCreating(false);
          }}
          onCancel={maps.length ? () => setCreating(false) : undefined}
        />
      ) : active ? (
        <MapView
          key={active.id}
          map={active}
          publisher={publisher}
          onRemove={
            canEdit
              ? () => {
                  if (window.confirm(`Delete the map “${active.title}” for everyone? Its saved categories go with it.`)) removeAtlasMap(session.doc, active.id, session.origin);
                }
              : undefined
          }
        />
      ) : (
        <div className="atlas-empty muted" data-testid="atlas-empty">
          No maps yet. Someone who can edit the workspace can make one from a table.
        </div>
      )}
    </div>
  );
}
