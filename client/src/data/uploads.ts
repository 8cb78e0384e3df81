/**
 * Uploads in progress in this browser (local UI state, hence zustand): file name, progress,
 * outcome. The server registers each uploaded table in the document, so the table list itself
 * comes from the document; this store only tracks the transfers.
 * Effects: network (through `uploadTable`).
 */
import { create } from 'zustand';
import { randomId } from '@plexus/shared';
import { ApiError } from '../api/http.ts';
import { isRecordingName, uploadRecording, uploadTable } from '../api/notebook.ts';
import { useLocalUser } from '../state/user.ts';

export interface Upload {
  id: string;
  fileName: string;
  /** Fraction sent, 0…1. */
  progress: number;
  status: 'uploading' | 'processing' | 'done' | 'error' | 'cancelled';
  error?: string;
  table?: string;
  /** A recording (TIFF): the dataset its import job creates in the viewer's volumes. */
  dataset?: string;
}

/** File types the server imports (the server decides; this only filters drops of other files). */
export const UPLOAD_ACCEPT = '.csv,.tsv,.txt,.parquet,.json,.jsonl,.ndjson,.gz,.tif,.tiff,.btf';

const cancels = new Map<string, () => void>();

interface UploadStore {
  uploads: Upload[];
  start(token: string, workspaceId: string, file: File): string;
  cancel(id: string): void;
  dismiss(id: string): void;
}

export const useUploads = create<UploadStore>((set, get) => {
  const patch = (id: string, p: Partial<Upload>) => set({ uploads: get().uploads.map((u) => (u.id === id ? { ...u, ...p } : u)) });
  return {
    uploads: [],
    start(token, workspaceId, file) {
      const id = randomId();
      set({ uploads: [...get().uploads, { id, fileName: file.name, progress: 0, status: 'uploading' }] });
      if (isRecordingName(file.name)) {
        // A recording: stored, then imported as a job everyone follows in Analyses.
        const r = uploadRecording(token, workspaceId, file, (f) => patch(id, { progress: f, status: f >= 1 ? 'processing' : 'uploading' }));
        cancels.set(id, r.cancel);
        r.done.then(
          ({ dataset }) => patch(id, { status: 'done', progress: 1, dataset }),
          (e: unknown) => {
            const err = e instanceof ApiError ? e : new ApiError(0, 'unknown', String(e));
            patch(id, err.code === 'cancelled' ? { status: 'cancelled' } : { status: 'error', error: err.message });
          },
        ).finally(() => cancels.delete(id));
        return id;
      }
      // Once every byte is sent the server still parses and imports the file.
      const h = uploadTable(token, workspaceId, file, (f) => patch(id, { progress: f, status: f >= 1 ? 'processing' : 'uploading' }), useLocalUser.getState().user.name);
      cancels.set(id, h.cancel);
      h.done.then(
        (table) => patch(id, { status: 'done', progress: 1, table: table.name }),
        (e: unknown) => {
          const err = e instanceof ApiError ? e : new ApiError(0, 'unknown', String(e));
          patch(id, err.code === 'cancelled' ? { status: 'cancelled' } : { status: 'error', error: err.message });
        },
      ).finally(() => cancels.delete(id));
      return id;
    },
    cancel(id) {
      cancels.get(id)?.();
    },
    dismiss(id) {
      set({ uploads: get().uploads.filter((u) => u.id !== id) });
    },
  };
});
