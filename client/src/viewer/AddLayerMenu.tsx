/**
 * "Add layer": the volumes this server serves (`GET /volumes/`), one click to add one to the
 * shared viewer with a portable source and, for time series, a time axis. Any other source can
 * be added with Neuroglancer's own "+" button; a movie can also be analysed (AnalyseButton).
 * Effects: HTTP (listing, starting an analysis), document writes.
 */
import { useState } from 'react';
import { addLayer, canWrite, layerForServedVolume, layerNames, type ServedLayer } from '@plexus/shared';
import { useSession } from '../collab/context.tsx';
import { Popover } from '../ui/Popover.tsx';
import { AnalyseButton } from '../analyses/AnalyseButton.tsx';

export interface Dataset {
  name: string;
  title?: string;
  status?: string;
  layers: ServedLayer[];
}

export async function loadDatasets(): Promise<Dataset[]> {
  const res = await fetch('/volumes/');
  if (!res.ok) throw new Error(`the server's volume list answered ${res.status}`);
  const list = (await res.json()) as { datasets: Array<{ name: string; title?: string; status?: string }> };
  return Promise.all(
    list.datasets.map(async (d) => {
      if (d.status && d.status !== 'ready') return { ...d, layers: [] };
      const r = await fetch(`/volumes/${encodeURIComponent(d.name)}/`);
      return { ...d, layers: r.ok ? (((await r.json()) as { layers: ServedLayer[] }).layers ?? []) : [] };
    }),
  );
}

/** Adds a served volume's layer to the shared viewer under a name not taken yet. */
export function addServedLayer(session: ReturnType<typeof useSession>, dataset: string, layer: ServedLayer): void {
  const taken = new Set(layerNames(session.doc));
  let name = layer.name;
  for (let i = 2; taken.has(name); i++) name = `${layer.name} ${i}`;
  addLayer(session.doc, layerForServedVolume(dataset, layer, name), session.origin);
}

export function AddLayerMenu({ disabled }: { disabled: boolean }) {
  const session = useSession();
  const [open, setOpen] = useState(false);
  const [datasets, setDatasets] = useState<Dataset[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  if (!canWrite(session.role)) return null;

  const toggle = () => {
    setOpen(!open);
    if (!open) {
      setError(null);
      loadDatasets().then(setDatasets, (e: unknown) => setError(e instanceof Error ? e.message : String(e)));
    }
  };
  const add = (dataset: string, layer: ServedLayer) => {
    addServedLayer(session, dataset, layer);
    setOpen(false);
  };

  return (
    <div className="popover-anchor">
      <button className="btn btn-small" data-testid="viewer-add-layer" aria-expanded={open} disabled={disabled} onClick={toggle}>
        + Layer
      </button>
      <Popover open={open} onClose={() => setOpen(false)} label="Add a layer" className="viewer-menu" testId="viewer-add-layer-menu">
        <h4>Volumes on this server</h4>
        {error && <p className="form-error" role="alert">{error}</p>}
        {!datasets && !error && <p className="muted">Loading…</p>}
        {datasets?.length === 0 && <p className="muted">This server serves no volumes yet (see the README: data folder).</p>}
        {datasets?.map((d) => (
          <div key={d.name} className="volume-dataset">
            <div className="muted" title={d.name}>
              {d.title ?? d.name}
              {d.status && d.status !== 'ready' ? ` — ${d.status}…` : ''}
            </div>
            <ul className="menu-list">
              {d.layers.map((l) => (
                <li key={l.name}>
                  <button className="link-btn" data-testid="viewer-add-volume" data-layer={`${d.name}/${l.name}`} onClick={() => add(d.name, l)}>
                    {l.name}
                  </button>
                  <span className="muted"> · {l.info?.type ?? l.format ?? 'volume'}</span>
                  <AnalyseButton dataset={d.name} layer={l} className="btn btn-small" onStarted={() => setOpen(false)} onError={setError} />
                </li>
              ))}
            </ul>
          </div>
        ))}
        <p className="muted small">Other sources: Neuroglancer's own + button beside the layer names.</p>
      </Popover>
    </div>
  );
}
