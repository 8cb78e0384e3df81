/** Typed calls of the workspace endpoints (see docs/api.md). */
import type { ForkOrigin, Role, TokenClaims } from '@plexus/shared';
import { apiRequest } from './http.ts';

export interface Workspace {
  id: string;
  name: string;
  created: number;
  updated: number;
  /** Document session id: offline state is kept per (id, epoch). */
  epoch: string | number;
}

/** `handout`: everyone who opens the link gets their own fork of the workspace. */
export type ShareRole = 'editor' | 'viewer' | 'handout';

export interface ShareLink {
  role: ShareRole;
  token: string;
  url: string;
  expires: number;
}

const ws = (id: string) => `/api/workspaces/${encodeURIComponent(id)}`;

export const getMe = (token: string) => apiRequest<{ claims: TokenClaims }>('/api/me', { token });

export const listWorkspaces = (token: string, signal?: AbortSignal) =>
  apiRequest<{ workspaces: Workspace[] }>('/api/workspaces', { token, signal }).then((r) => r.workspaces);

export const getWorkspace = (token: string, id: string, signal?: AbortSignal) =>
  apiRequest<{ workspace: Workspace; role: Role }>(ws(id), { token, signal });

export const createWorkspace = (token: string, name?: string) =>
  apiRequest<{ workspace: Workspace }>('/api/workspaces', { token, method: 'POST', body: { name } }).then((r) => r.workspace);

export const renameWorkspace = (token: string, id: string, name: string) =>
  apiRequest<{ workspace: Workspace }>(ws(id), { token, method: 'PATCH', body: { name } }).then((r) => r.workspace);

export const duplicateWorkspace = (token: string, id: string, name?: string) =>
  apiRequest<{ workspace: Workspace }>(`${ws(id)}/duplicate`, { token, method: 'POST', body: { name } }).then((r) => r.workspace);

export const deleteWorkspace = (token: string, id: string) => apiRequest<void>(ws(id), { token, method: 'DELETE' });

export const shareWorkspace = (token: string, id: string, role: ShareRole, expiresInDays?: number) =>
  apiRequest<ShareLink>(`${ws(id)}/share`, { token, method: 'POST', body: { role, expiresInDays } });

/** Revokes every share link made so far (owner only): people using one are disconnected. */
export const resetShareLinks = (token: string, id: string) =>
  apiRequest<{ reset: true; generation: number; disconnected: number }>(`${ws(id)}/share/reset`, { token, method: 'POST' });

export interface ForkResult {
  workspace: Workspace;
  forkedFrom: ForkOrigin;
  /** An owner token for the fork (null when the caller's token opens every workspace). */
  token: string | null;
  url: string;
  /** A hand-out fork this person already had. */
  existing: boolean;
}

/** Forks a workspace into one the caller owns; `device` and `personName` say who they are (hand-out links need them). */
export const forkWorkspace = (token: string, id: string, body: { name?: string; device: string; personName?: string; checkpoint?: string }) =>
  apiRequest<ForkResult>(`${ws(id)}/fork`, { token, method: 'POST', body });
