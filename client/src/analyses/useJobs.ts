/**
 * The `jobs` root as React data (every analysis, newest first), and the watcher that keeps each
 * result's ROI layer in line with its ROI edits after concurrent edits (editors only).
 * Effects: Yjs observers; the watcher writes the viewer layer's segment display.
 */
import { useEffect, useMemo } from 'react';
import type * as Y from 'yjs';
import { canWrite, listJobs, observeRoiEdits, roots, syncRoiLayer, type Job } from '@plexus/shared';
import { useYVersion } from '../collab/useY.ts';
import type { WorkspaceSession } from '../collab/session.ts';

/** Every job of the workspace, newest first (re-rendered on any change: progress arrives ~2×/s). */
export function useJobs(doc: Y.Doc): Job[] {
  const v = useYVersion(roots(doc).jobs, true);
  return useMemo(() => listJobs(doc), [doc, v]);
}

/**
 * Two people deleting two ROIs at once both write the ROI layer's visible set; the last write
 * wins there while the job keeps both edits. Whenever ROI edits arrive from elsewhere, an
 * editor's page re-derives the visible set from the edits and writes it if it differs — every
 * page derives the same value, so they converge. Its own origin object keeps these writes out of
 * the person's undo history.
 */
export function useRoiLayerSync(session: WorkspaceSession): void {
  useEffect(() => {
    if (!canWrite(session.role)) return;
    const origin = { ...session.origin };
    let live = true;
    const off = observeRoiEdits(session.doc, (ids, local) => {
      if (local) return; // a local edit wrote the layer in its own transaction
      setTimeout(() => {
        if (live) for (const id of ids) syncRoiLayer(session.doc, id, origin);
      }, 0);
    });
    return () => {
      live = false;
      off();
    };
  }, [session]);
}
