/**
 * The method library's HTTP routes (server/src/http/library-api.ts): upload (the raw file, named
 * in the query, as table uploads do), text of a document, removal, search.
 * Effects: network.
 */
import type { LibraryDoc, LibraryFormat } from '@plexus/shared';
import { apiRequest, ApiError } from '../api/http.ts';

const base = (workspaceId: string) => `/api/workspaces/${encodeURIComponent(workspaceId)}/library`;

/** Extensions the library takes (the server checks the content too). */
export const LIBRARY_ACCEPT = '.md,.markdown,.txt,.pdf';
export const isLibraryName = (name: string): boolean => /\.(md|markdown|txt|pdf)$/i.test(name);

export async function uploadLibraryDoc(token: string, workspaceId: string, file: File, uploader?: string): Promise<LibraryDoc> {
  let res: Response;
  try {
    res = await fetch(`${base(workspaceId)}?name=${encodeURIComponent(file.name)}${uploader ? `&uploader=${encodeURIComponent(uploader)}` : ''}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/octet-stream' },
      body: file,
    });
  } catch {
    throw new ApiError(0, 'network', 'The upload was interrupted (network error or the server closed the connection).');
  }
  let body: { document?: LibraryDoc; error?: string; message?: string } = {};
  try {
    body = (await res.json()) as typeof body;
  } catch {
    // Not JSON: the generic message below.
  }
  if (!res.ok || !body.document) throw new ApiError(res.status, body.error ?? `http-${res.status}`, body.message ?? `Upload failed (${res.status})`);
  return body.document;
}

export const fetchLibraryText = (token: string, workspaceId: string, docId: string, signal?: AbortSignal) =>
  apiRequest<{ id: string; name: string; format: LibraryFormat; builtin: boolean; text: string }>(`${base(workspaceId)}/${encodeURIComponent(docId)}`, { token, signal });

export const deleteLibraryDoc = (token: string, workspaceId: string, docId: string) =>
  apiRequest<void>(`${base(workspaceId)}/${encodeURIComponent(docId)}`, { method: 'DELETE', token });
