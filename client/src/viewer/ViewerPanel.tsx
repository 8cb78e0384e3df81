/**
 * The viewer panel: an embedded Neuroglancer bound to the workspace document, a toolbar for
 * navigation modes, named views, ROI stepping and state import/export, and who is following
 * whom. Neuroglancer is loaded on demand (a separate bundle). Effects: DOM, WebGL, document
 * writes through ViewerBinding.
 */
import { useEffect, useRef, useState } from 'react';
import { canWrite, readViewerState, sourceUrls, type NgState } from '@plexus/shared';
import { useSession } from '../collab/context.tsx';
import { useLocalUser } from '../state/user.ts';
import { ensureVolumeSession, localDatasets, waitForVolumes } from './volumeSession.ts';
import { ViewerToolbar } from './ViewerToolbar.tsx';
import { useViewerUi } from './viewerUi.ts';
import type { NeuroglancerHost } from './neuroglancerHost.ts';
import { ViewerBinding } from './viewerBinding.ts';
import { EmptyViewer } from './EmptyViewer.tsx';
import { presenterFor } from '../presenter/presenter.ts';

declare global {
  interface Window {
    /** Test and debugging hook: the viewer binding and Neuroglancer host of this page. */
    __plexusViewer?: { binding: ViewerBinding; host: NeuroglancerHost; docState: () => NgState };
  }
}

/** Longest the viewer waits for an idle main thread before it starts anyway. */
const VIEWER_START_WAIT_MS = 1500;

/** Resolves when the browser is idle (or after `timeout` ms). */
function idle(timeout: number): Promise<void> {
  return new Promise((resolve) => {
    if (typeof requestIdleCallback === 'function') requestIdleCallback(() => resolve(), { timeout });
    else setTimeout(resolve, 0);
  });
}

export function ViewerPanel({ token }: { token: string }) {
  const session = useSession();
  const user = useLocalUser((s) => s.user);
  const containerRef = useRef<HTMLDivElement>(null);
  const [binding, setBinding] = useState<ViewerBinding | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [waiting, setWaiting] = useState<string[]>([]);
  const setMode = useViewerUi((s) => s.setMode);

  useEffect(() => {
    let disposed = false;
    let host: NeuroglancerHost | undefined;
    let b: ViewerBinding | undefined;
    let detachPresenter: (() => void) | undefined;
    const container = containerRef.current!;
    (async () => {
      // Neuroglancer fetches volumes with plain requests: a cookie carries the token for them.
      await ensureVolumeSession(token).catch(() => undefined);
      await waitForVolumes(localDatasets(sourceUrls(readViewerState(session.doc))), (w) => !disposed && setWaiting(w));
      if (disposed) return;
      setWaiting([]);
      // The notebook first: building Neuroglancer takes the main thread for a while, and a page
      // that has just opened should mount the editors people type into before it.
      await idle(VIEWER_START_WAIT_MS);
      if (disposed) return;
      const { NeuroglancerHost } = await import('./neuroglancerHost.ts');
      if (disposed) return;
      host = new NeuroglancerHost(container);
      // A dedicated origin object: the binding recognises its own transactions by identity.
      const origin = { ...session.origin };
      b = new ViewerBinding(host, session, origin, {
        readOnly: !canWrite(session.role),
        pageOrigin: window.location.origin,
        userId: user.id,
        onModeChange: (mode, reason) => setMode(mode, reason),
      });
      b.start();
      window.__plexusViewer = { binding: b, host, docState: () => readViewerState(session.doc) };
      setMode(b.getMode());
      // Presenter mode follows the presenter's camera through this binding's follow mode.
      detachPresenter = presenterFor(session).attachViewer(b);
      setBinding(b);
    })().catch((e: unknown) => {
      if (!disposed) setError(e instanceof Error ? e.message : String(e));
    });
    return () => {
      disposed = true;
      detachPresenter?.();
      b?.dispose();
      host?.dispose();
      if (window.__plexusViewer?.binding === b) delete window.__plexusViewer;
      setBinding(null);
    };
  }, [session, token, user.id, setMode]);

  return (
    <div className="viewer-panel" data-testid="viewer-panel" aria-label="Neuroglancer viewer">
      <ViewerToolbar binding={binding} token={token} />
      <div className="viewer-stage" ref={containerRef} data-testid="viewer-stage" data-ready={binding ? 'true' : undefined}>
        {!binding && !error && (
          <div className="viewer-loading" role="status">
            {waiting.length ? `Preparing ${waiting.join(', ')} on the server…` : 'Loading viewer…'}
          </div>
        )}
        {error && (
          <div className="viewer-loading viewer-error" role="alert">
            The viewer could not start: {error}
          </div>
        )}
        {binding && <EmptyViewer />}
      </div>
    </div>
  );
}
