/**
 * Typed calls of the notebook endpoints (docs/api.md, "Notebook"): large results by id, table
 * previews, table deletion, uploads with progress (XMLHttpRequest, the only browser API that
 * reports upload progress), `.ipynb` import and export downloads.
 * Effects: network; `downloadExport` also creates a temporary link in the page.
 */
import type { DataTable, Json, TableColumn } from '@plexus/shared';
import { ApiError, apiRequest } from './http.ts';

const ws = (id: string) => `/api/workspaces/${encodeURIComponent(id)}`;

/** A page of rows of a table (a large cell result or an uploaded table). */
export interface RowsPage {
  columns: TableColumn[];
  rows: Array<Record<string, Json>>;
  totalRows: number;
  offset: number;
}

/** Rows `offset…offset+limit` of a large cell result kept on the server. */
export async function fetchResultRows(token: string, workspaceId: string, ref: string, offset: number, limit: number, signal?: AbortSignal): Promise<RowsPage> {
  const r = await apiRequest<{ columns: TableColumn[]; rows: Array<Record<string, Json>>; totalRows: number; offset: number }>(
    `${ws(workspaceId)}/results/${encodeURIComponent(ref)}?offset=${offset}&limit=${limit}`,
    { token, signal },
  );
  return { columns: r.columns, rows: r.rows, totalRows: r.totalRows, offset: r.offset };
}

/** A whole stored result (JSON value, chart spec, image) by id. */
export const fetchResult = (token: string, workspaceId: string, ref: string, signal?: AbortSignal) =>
  apiRequest<Record<string, unknown>>(`${ws(workspaceId)}/results/${encodeURIComponent(ref)}`, { token, signal });

/** Rows of an uploaded table. */
export async function fetchPreview(token: string, workspaceId: string, table: string, offset: number, limit: number, signal?: AbortSignal): Promise<RowsPage> {
  const r = await apiRequest<{ columns: TableColumn[]; rows: Array<Record<string, Json>>; totalRows: number; offset: number }>(
    `${ws(workspaceId)}/data/${encodeURIComponent(table)}/preview?offset=${offset}&limit=${limit}`,
    { token, signal },
  );
  return { columns: r.columns, rows: r.rows, totalRows: r.totalRows, offset: r.offset };
}

/** Deletes an uploaded table (editors). */
export const deleteTable = (token: string, workspaceId: string, table: string) =>
  apiRequest<void>(`${ws(workspaceId)}/data/${encodeURIComponent(table)}`, { token, method: 'DELETE' });

/** Imports an `.ipynb` (parsed JSON): its cells are appended to the notebook. */
export const importIpynb = (token: string, workspaceId: string, notebook: unknown) =>
  apiRequest<{ imported: number; cells: string[]; languages: string[] }>(`${ws(workspaceId)}/import`, { token, method: 'POST', body: notebook });

/** Downloads the notebook as `.ipynb` or an HTML report (fetched with the token, saved as a file). */
export async function downloadExport(token: string, workspaceId: string, format: 'ipynb' | 'html'): Promise<void> {
  const res = await fetch(`${ws(workspaceId)}/export?format=${format}`, { headers: { Authorization: `Bearer ${token}` } });
  if (!res.ok) {
    const err = (await res.json().catch(() => ({}))) as { error?: string; message?: string };
    throw new ApiError(res.status, err.error ?? `http-${res.status}`, err.message ?? `Export failed (${res.status})`);
  }
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? `notebook.${format}`;
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** An upload in flight: its promise and a way to cancel it. */
export interface UploadHandle {
  done: Promise<DataTable>;
  cancel(): void;
}

/** True for a file name the server imports as a recording (a multi-page TIFF), not a table. */
export const isRecordingName = (name: string): boolean => /\.(tiff?|btf|tf8)$/i.test(name);

/**
 * Uploads a multi-page TIFF recording: the server stores it and imports it as a job everyone sees
 * (Analyses); resolves with the dataset it will create.
 */
export function uploadRecording(token: string, workspaceId: string, file: File, onProgress: (fraction: number) => void): { done: Promise<{ job: string; dataset: string }>; cancel(): void } {
  const xhr = new XMLHttpRequest();
  const done = new Promise<{ job: string; dataset: string }>((resolve, reject) => {
    xhr.open('POST', `${ws(workspaceId)}/recordings?name=${encodeURIComponent(file.name)}`);
    xhr.setRequestHeader('Authorization', `Bearer ${token}`);
    xhr.setRequestHeader('Content-Type', 'image/tiff');
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      let body: { job?: string; dataset?: string; error?: string; message?: string } = {};
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // Not JSON: the generic message below.
      }
      if (xhr.status >= 200 && xhr.status < 300 && body.job && body.dataset) resolve({ job: body.job, dataset: body.dataset });
      else reject(new ApiError(xhr.status, body.error ?? `http-${xhr.status}`, body.message ?? `Upload failed (${xhr.status})`));
    };
    xhr.onerror = () => reject(new ApiError(0, 'network', 'The upload was interrupted (network error or the server closed the connection).'));
    xhr.onabort = () => reject(new ApiError(0, 'cancelled', 'Upload cancelled.'));
    xhr.send(file);
  });
  return { done, cancel: () => xhr.abort() };
}

/**
 * Uploads a file as a table. `onProgress` gets the fraction sent (0…1). The promise rejects with
 * the server's ApiError (size cap, malformed file…) or an ApiError code `cancelled`.
 */
export function uploadTable(token: string, workspaceId: string, file: File, onProgress: (fraction: number) => void, uploader?: string): UploadHandle {
  const xhr = new XMLHttpRequest();
  const done = new Promise<DataTable>((resolve, reject) => {
    xhr.open('POST', `${ws(workspaceId)}/uploads?name=${encodeURIComponent(file.name)}${uploader ? `&uploader=${encodeURIComponent(uploader)}` : ''}`);
    xhr.setRequestHeader('Authorization', `Bearer ${token}`);
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      let body: { table?: DataTable; error?: string; message?: string } = {};
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // Not JSON: the generic message below.
      }
      if (xhr.status >= 200 && xhr.status < 300 && body.table) resolve(body.table);
      else reject(new ApiError(xhr.status, body.error ?? `http-${xhr.status}`, body.message ?? `Upload failed (${xhr.status})`));
    };
    xhr.onerror = () => reject(new ApiError(0, 'network', 'The upload was interrupted (network error or the server closed the connection).'));
    xhr.onabort = () => reject(new ApiError(0, 'cancelled', 'Upload cancelled.'));
    xhr.send(file);
  });
  return { done, cancel: () => xhr.abort() };
}
