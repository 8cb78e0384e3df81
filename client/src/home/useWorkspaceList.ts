/**
 * The workspaces this browser can open: all of them with the owner token, otherwise the ones a
 * stored share link grants (each fetched with its own token).
 */
import { useCallback, useEffect, useState } from 'react';
import { canManage, type Role } from '@plexus/shared';
import { ApiError } from '../api/http.ts';
import { forgetToken, ownerToken, tokenFor, workspaceTokenIds } from '../api/tokens.ts';
import { getWorkspace, listWorkspaces, type Workspace } from '../api/workspaces.ts';

export interface Row {
  workspace: Workspace;
  /** Token to act on this workspace with. */
  token: string;
  canManage: boolean;
}

export type ListState =
  | { state: 'loading' }
  | { state: 'no-token' }
  | { state: 'error'; error: ApiError }
  | { state: 'ok'; rows: Row[]; isOwner: boolean };

const byUpdated = (a: Row, b: Row) => b.workspace.updated - a.workspace.updated;

async function load(signal: AbortSignal): Promise<ListState> {
  const owner = ownerToken();
  if (owner) {
    try {
      const list = await listWorkspaces(owner, signal);
      return { state: 'ok', isOwner: true, rows: list.map((w) => ({ workspace: w, token: owner, canManage: true })).sort(byUpdated) };
    } catch (e) {
      if (e instanceof ApiError && e.isAuth) forgetToken(owner, `The server refused your stored owner token: ${e.message}`);
      else throw e;
      // fall through to share-link tokens
    }
  }
  const ids = workspaceTokenIds();
  if (ids.length === 0) return { state: 'no-token' };
  const rows: Row[] = [];
  let lastError: ApiError | null = null;
  await Promise.all(
    ids.map(async (id) => {
      const token = tokenFor(id)!;
      try {
        const r = await getWorkspace(token, id, signal);
        rows.push({ workspace: r.workspace, token, canManage: canManage(r.role as Role) });
      } catch (e) {
        if (e instanceof ApiError) {
          if (e.isAuth || e.status === 404) forgetToken(token, `A stored link was refused: ${e.message}`);
          lastError = e;
        } else throw e;
      }
    }),
  );
  if (rows.length === 0 && lastError) return workspaceTokenIds().length ? { state: 'error', error: lastError } : { state: 'no-token' };
  return { state: 'ok', isOwner: false, rows: rows.sort(byUpdated) };
}

export function useWorkspaceList(): { list: ListState; reload(): void } {
  const [list, setList] = useState<ListState>({ state: 'loading' });
  const [n, setN] = useState(0);
  useEffect(() => {
    const ctl = new AbortController();
    load(ctl.signal).then(
      (s) => !ctl.signal.aborted && setList(s),
      (e: unknown) => !ctl.signal.aborted && setList({ state: 'error', error: e instanceof ApiError ? e : new ApiError(0, 'unknown', String(e)) }),
    );
    return () => ctl.abort();
  }, [n]);
  const reload = useCallback(() => setN((x) => x + 1), []);
  return { list, reload };
}
