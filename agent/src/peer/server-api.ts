/**
 * The agent's HTTP client for the server's read-only APIs (tables, volumes, the method library). Only paths under the
 * configured server are ever requested: tools cannot name a URL.
 * Effects: network (the Plexus server only).
 */

export class ServerApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

import type { LibraryPassage } from '@plexus/shared';
export type { LibraryPassage };

export class ServerApi {
  constructor(
    private readonly serverUrl: string,
    private readonly token: () => string,
    private readonly workspaceId: string,
  ) {}

  private async request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body: unknown, signal: AbortSignal): Promise<T> {
    const res = await fetch(this.serverUrl + path, {
      method,
      signal,
      headers: { authorization: `Bearer ${this.token()}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    if (!res.ok) {
      const msg = (json as { error?: { message?: string }; message?: string } | null)?.error?.message ?? (json as { message?: string } | null)?.message ?? text.slice(0, 300);
      throw new ServerApiError(res.status, msg || `HTTP ${res.status}`);
    }
    return json as T;
  }

  /** Asks for (or renews) this workspace's agent lease for `runner` (server: collab/agent-leases.ts). */
  lease(runner: string, ttlMs: number, signal: AbortSignal) {
    // `token`: what the holder joins the document with (it names the runner; the server refuses its
    // writes once another runner holds the lease). Older servers give none.
    return this.request<{ granted: boolean; holder: string; expiresAt: number; fresh: boolean; token?: string }>(
      'POST', `/api/agent/workspaces/${encodeURIComponent(this.workspaceId)}/lease`, { runner, ttlMs }, signal);
  }

  /** Gives the lease up (clean shutdown). */
  releaseLease(runner: string, signal: AbortSignal) {
    return this.request<{ released: boolean }>('DELETE', `/api/agent/workspaces/${encodeURIComponent(this.workspaceId)}/lease`, { runner }, signal);
  }

  /** Starts an analysis job (the server validates and queues it); its id. */
  startJob(body: { kind: 'calcium'; dataset: string; layer: string; params?: Record<string, unknown> }, signal: AbortSignal) {
    return this.request<{ job: string }>('POST', this.ws('/jobs'), body, signal);
  }

  private ws(path: string): string {
    return `/api/workspaces/${encodeURIComponent(this.workspaceId)}${path}`;
  }

  preview(table: string, offset: number, limit: number, signal: AbortSignal) {
    return this.request<{ columns: Array<{ name: string; type: string }>; rows: Array<Record<string, unknown>>; totalRows: number }>(
      'GET', this.ws(`/data/${encodeURIComponent(table)}/preview?offset=${offset}&limit=${limit}`), undefined, signal);
  }

  describe(table: string, signal: AbortSignal) {
    return this.request<Record<string, unknown>>('GET', this.ws(`/data/${encodeURIComponent(table)}/describe`), undefined, signal);
  }

  tableHistogram(table: string, column: string, bins: number, signal: AbortSignal) {
    return this.request<Record<string, unknown>>('GET', this.ws(`/data/${encodeURIComponent(table)}/histogram?column=${encodeURIComponent(column)}&bins=${bins}`), undefined, signal);
  }

  query(sql: string, limit: number, signal: AbortSignal) {
    return this.request<{ columns: Array<{ name: string; type: string }>; rows: Array<Record<string, unknown>>; rowCount: number; truncated: boolean }>(
      'POST', this.ws('/data/query'), { sql, limit }, signal);
  }

  /** The whole text of one library document (by id, as `searchLibrary` and the `library` root give it). */
  libraryText(docId: string, signal: AbortSignal) {
    return this.request<{ id: string; name: string; format: 'md' | 'txt' | 'pdf'; builtin: boolean; text: string }>(
      'GET', this.ws(`/library/${encodeURIComponent(docId)}`), undefined, signal);
  }

  volumeHistogram(dataset: string, layer: string, params: Record<string, string | number>, signal: AbortSignal) {
    const q = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
    return this.request<Record<string, unknown>>('GET', `/api/volumes/${encodeURIComponent(dataset)}/${encodeURIComponent(layer)}/histogram?${q}`, undefined, signal);
  }

  /** Passages of the workspace's method library that match `query` (BM25), best first. */
  async searchLibrary(query: string, limit: number, signal: AbortSignal): Promise<LibraryPassage[]> {
    const r = await this.request<{ results?: LibraryPassage[] }>('GET', this.ws(`/library/search?q=${encodeURIComponent(query.slice(0, 500))}&limit=${limit}`), undefined, signal);
    return r?.results ?? [];
  }

  /** Datasets this server serves, with their layers. */
  async volumes(signal: AbortSignal): Promise<Array<{ name: string; status?: string; layers: Array<Record<string, unknown> & { name: string }> }>> {
    const list = await this.request<{ datasets: Array<{ name: string; status?: string }> }>('GET', '/volumes/', undefined, signal);
    return Promise.all(
      list.datasets.map(async (d) => {
        if (d.status && d.status !== 'ready') return { ...d, layers: [] };
        const r = await this.request<{ layers?: Array<Record<string, unknown> & { name: string }> }>('GET', `/volumes/${encodeURIComponent(d.name)}/`, undefined, signal).catch(() => ({ layers: [] }));
        return { ...d, layers: r.layers ?? [] };
      }),
    );
  }
}
