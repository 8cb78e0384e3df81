/**
 * Thin fetch wrapper for the Plexus HTTP API: JSON in, JSON out, `Authorization: Bearer`, and the
 * server's `{ error, message }` bodies turned into an ApiError the UI can show as is.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
  /** The token was missing, malformed, expired or not signed by this server. */
  get isAuth(): boolean {
    return this.status === 401;
  }
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  body?: unknown;
  token: string;
  signal?: AbortSignal;
}

export async function apiRequest<T>(path: string, { method = 'GET', body, token, signal }: RequestOptions): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      signal,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, 'network', 'Cannot reach the Plexus server. Is it running?');
  }
  return readApiAnswer<T>(res.status, await res.text(), res.statusText);
}

/**
 * A response's status and body as `apiRequest` reads them: the value, or the server's
 * `{ error, message }` as an ApiError. Also for answers fetched before the bundle ran (fastOpen.ts).
 */
export function readApiAnswer<T>(status: number, text: string, statusText = ''): T {
  if (status === 204) return undefined as T;
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON (a proxy error page, say): fall through to a generic message below.
  }
  if (status < 200 || status >= 300) {
    const err = (data ?? {}) as { error?: string; message?: string };
    throw new ApiError(status, err.error ?? `http-${status}`, err.message ?? `Request failed (${[status, statusText].filter(Boolean).join(' ')})`);
  }
  return data as T;
}

/** GET of a binary body (a map's points, a checkpoint's state); errors as `apiRequest` reports them. */
export async function apiBinary(path: string, { token, signal, what }: { token: string; signal?: AbortSignal; what: string }): Promise<ArrayBuffer> {
  let res: Response;
  try {
    res = await fetch(path, { headers: { Authorization: `Bearer ${token}` }, signal });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, 'network', 'Cannot reach the Plexus server. Is it running?');
  }
  if (!res.ok) {
    let body: { error?: string; message?: string } = {};
    try {
      body = (await res.json()) as typeof body;
    } catch {
      // Not JSON: the generic message below.
    }
    throw new ApiError(res.status, body.error ?? `http-${res.status}`, body.message ?? `${what} could not be loaded (${res.status} ${res.statusText})`);
  }
  return res.arrayBuffer();
}
