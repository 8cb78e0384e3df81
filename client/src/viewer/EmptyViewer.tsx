/**
 * What an empty viewer shows instead of a black four-pane Neuroglancer: what the viewer is for,
 * and — for people who can edit — the volumes this server serves, each added for everyone in one
 * click (a movie can also be analysed: AnalyseButton), plus where to add any other source.
 * View-only people see the explanation only.
 */
import { useEffect, useMemo, useState } from 'react';
import { canWrite, layerNames, viewerRoots } from '@plexus/shared';
import { useSession } from '../collab/context.tsx';
import { useYVersion } from '../collab/useY.ts';
import { addServedLayer, loadDatasets, type Dataset } from './AddLayerMenu.tsx';
import { AnalyseButton } from '../analyses/AnalyseButton.tsx';
import './EmptyViewer.css';

export function EmptyViewer() {
  const session = useSession();
  const layers = viewerRoots(session.doc).layers;
  const v = useYVersion(layers);
  const empty = useMemo(() => layerNames(session.doc).length === 0, [session, v]);
  const editor = canWrite(session.role);
  const [datasets, setDatasets] = useState<Dataset[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!empty || !editor) return;
    let live = true;
    loadDatasets().then(
      (d) => live && setDatasets(d),
      (e: unknown) => live && setError(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      live = false;
    };
  }, [empty, editor]);
  if (!empty) return null;
  const ready = (datasets ?? []).filter((d) => d.layers.length > 0);
  return (
    <div className="viewer-empty" data-testid="viewer-empty" role="region" aria-label="Empty viewer">
      <h3>No layers in the viewer yet</h3>
      <p>
        The viewer shows image volumes, segmentations and annotations to everyone in this workspace: layers, colour maps,
        annotations and the camera are shared{editor ? '.' : ' — the people who edit add them.'}
      </p>
      {editor && (
        <>
          {error && <p className="form-error" role="alert">{error}</p>}
          {datasets === null && !error && <p className="muted">Looking for volumes on this server…</p>}
          {ready.length > 0 && (
            <ul className="viewer-empty-volumes" aria-label="Volumes on this server">
              {ready.map((d) => (
                <li key={d.name}>
                  <span className="viewer-empty-dataset">{d.title ?? d.name}</span>
                  <span className="viewer-empty-layers">
                    {d.layers.map((l) => (
                      <span key={l.name} className="viewer-empty-layer">
                        <button
                          className="btn btn-small"
                          data-testid="viewer-empty-add"
                          title={`Add ${l.name}${l.info?.type ? ` (${l.info.type})` : ''} to the shared viewer`}
                          onClick={() => addServedLayer(session, d.name, l)}
                        >
                          + {l.name}
                        </button>
                        <AnalyseButton dataset={d.name} layer={l} onError={setError} />
                      </span>
                    ))}
                  </span>
                </li>
              ))}
            </ul>
          )}
          {datasets !== null && ready.length === 0 && <p className="muted">This server serves no volumes yet: upload one, or add any other source.</p>}
          <p className="muted">Any other source (precomputed, zarr, N5, …): the + in Neuroglancer’s layer bar, or paste a Neuroglancer link in the chat.</p>
        </>
      )}
    </div>
  );
}
