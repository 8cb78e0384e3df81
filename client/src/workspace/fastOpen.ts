/**
 * Opening a workspace fast (speed issue, gap 3). index.html sends three requests before the bundle
 * has even loaded: the workspace record and the caller's role (`GET /api/workspaces/:id`), the
 * notebook's first cells (`…/first-screen`, shown read-only until the document is there) and the
 * whole document (`…/state`, which the session applies as soon as it exists instead of waiting
 * for the socket's sync). The functions here take those answers when they were sent with the
 * token the page uses, or ask themselves.
 *
 * `localStorage['plexus.fastOpen'] = '0'` opens the old way (`GET /api/workspaces/:id`, nothing
 * shown until the document has synced): the baseline of `bench/browser-load.ts`.
 */
import type { FirstScreen, Role } from '@plexus/shared';
import { apiBinary, apiRequest, readApiAnswer } from '../api/http.ts';
import { getWorkspace, type Workspace } from '../api/workspaces.ts';
import { hasLocalCopy } from '../collab/localCopies.ts';

export interface OpenAnswer {
  workspace: Workspace;
  role: Role;
}

type Early = Promise<{ status: number; text: string } | null>;

interface EarlyRequests {
  id: string;
  token: string;
  workspace?: Early;
  firstScreen?: Early;
  state?: Promise<ArrayBuffer | null>;
  /** The first screen's answer once it has come (index.html sets it). */
  firstScreenNow?: { status: number; text: string } | null;
  /** Set by main.tsx when the bundle starts drawing: index.html draws no first screen after that. */
  booted?: boolean;
}

declare global {
  interface Window {
    /** The requests index.html sent before the bundle loaded (each taken once). */
    __plexusEarly?: EarlyRequests;
  }
}

const FAST_OPEN_KEY = 'plexus.fastOpen';
/** Cells the first screen asks for (index.html asks for as many): more than a tall screen shows. */
export const FIRST_SCREEN_CELLS = 30;

export function fastOpenEnabled(): boolean {
  try {
    return localStorage.getItem(FAST_OPEN_KEY) !== '0';
  } catch {
    return true;
  }
}

/** index.html's early request `which`, if it was sent for this workspace with this token (taken once). */
function takeEarly<K extends 'workspace' | 'firstScreen' | 'state'>(id: string, token: string, which: K): EarlyRequests[K] | null {
  const early = window.__plexusEarly;
  if (!early || early.id !== id || early.token !== token) return null;
  const p = early[which];
  early[which] = undefined;
  return p ?? null;
}

/** `GET /api/workspaces/:id` (the workspace and the caller's role), answered early when it can be. */
export async function openWorkspace(token: string, id: string, signal?: AbortSignal): Promise<OpenAnswer> {
  const early = takeEarly(id, token, 'workspace');
  const got = early && (await early);
  if (signal?.aborted) throw new DOMException('aborted', 'AbortError');
  // An early request that did not reach the server is asked again, with apiRequest's errors.
  if (got) return readApiAnswer<OpenAnswer>(got.status, got.text);
  return getWorkspace(token, id, signal);
}

/**
 * The first screen if index.html's request for it has already been answered (so the first render
 * can show it: index.html may have drawn it already, and React then draws the same, without a
 * blank frame in between); null otherwise.
 */
export function firstScreenNow(token: string, id: string): FirstScreen | null {
  const early = window.__plexusEarly;
  const a = early && early.id === id && early.token === token ? early.firstScreenNow : null;
  if (!a || a.status !== 200) return null;
  try {
    return (JSON.parse(a.text) as { firstScreen: FirstScreen | null }).firstScreen;
  } catch {
    return null;
  }
}

/**
 * The notebook's first cells, or null when there are none to show (the server could not load the
 * document, the request failed): never throws, the document's sync is what counts.
 */
export async function loadFirstScreen(token: string, id: string): Promise<FirstScreen | null> {
  try {
    const early = takeEarly(id, token, 'firstScreen');
    const got = early && (await early);
    const answer = got
      ? readApiAnswer<{ firstScreen: FirstScreen | null }>(got.status, got.text)
      : await apiRequest<{ firstScreen: FirstScreen | null }>(`/api/workspaces/${encodeURIComponent(id)}/first-screen?cells=${FIRST_SCREEN_CELLS}`, { token });
    return answer.firstScreen;
  } catch {
    return null;
  }
}

/**
 * The whole document (`GET /api/workspaces/:id/state`: one Yjs update, or a large one's stored parts in one byte string, `unpackStateParts`), for the session to apply
 * before its socket has synced; null when it could not be had (the socket's sync then brings it).
 */
export async function loadEarlyState(token: string, id: string): Promise<Uint8Array | null> {
  try {
    const early = takeEarly(id, token, 'state');
    // A local copy shows the document sooner, and its sync is a small diff (index.html skips it too).
    if (!early && hasLocalCopy(id)) return null;
    const buf = early
      ? await early
      : await apiBinary(`/api/workspaces/${encodeURIComponent(id)}/state`, { token, what: 'The workspace document' });
    return buf && buf.byteLength ? new Uint8Array(buf) : null;
  } catch {
    return null;
  }
}
