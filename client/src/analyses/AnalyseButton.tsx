/**
 * "Analyse": starts a calcium analysis of a served movie (a layer whose `plexus.json` says its
 * third axis is time) with the server's default parameters, then opens the analyses panel where
 * everyone follows it. Editors only (the server refuses viewers too). The server's refusal is
 * handed to `onError` as it worded it. Effects: HTTP (POST …/jobs), local UI state.
 */
import { useState } from 'react';
import type { ServedLayer } from '@plexus/shared';
import { startCalciumJob } from '../api/jobs.ts';
import { useApiToken } from '../api/tokenContext.ts';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { useUi } from '../state/ui.ts';

/** Whether a served layer is a movie the calcium pipeline can analyse. Pure. */
export const isMovieLayer = (layer: ServedLayer): boolean => layer.meta?.axes?.z === 's';

export function AnalyseButton({ dataset, layer, className = 'btn btn-small', onStarted, onError }: { dataset: string; layer: ServedLayer; className?: string; onStarted?: () => void; onError: (message: string | null) => void }) {
  const session = useSession();
  const token = useApiToken();
  const canEdit = useCanEdit();
  const [busy, setBusy] = useState(false);
  if (!canEdit || !isMovieLayer(layer)) return null;
  const start = () => {
    setBusy(true);
    onError(null);
    startCalciumJob(token, session.workspace.id, dataset, layer.name).then(
      () => {
        setBusy(false);
        useUi.getState().setAnalysesOpen(true);
        onStarted?.();
      },
      (e: Error) => {
        setBusy(false);
        onError(e.message);
      },
    );
  };
  return (
    <button
      className={className}
      data-testid="viewer-analyse"
      data-layer={`${dataset}/${layer.name}`}
      title={`Find the cells of ${dataset}/${layer.name}: motion correction, ROIs, traces and events, run on the server for everyone (progress under Analyses)`}
      disabled={busy}
      onClick={start}
    >
      {busy ? 'Starting…' : 'Analyse'}
    </button>
  );
}
