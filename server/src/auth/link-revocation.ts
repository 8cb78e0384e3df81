/**
 * Revoking share links: a workspace's owner resets its links (`POST /api/workspaces/:id/share/reset`),
 * which bumps the workspace's link generation in storage; share links (token subject `link:…`:
 * editor, viewer and hand-out links) carry the generation they were made in, and one made in an
 * older generation is refused everywhere — the API, /volumes, both WebSocket endpoints, on every
 * node (the generation is in the shared store). Other tokens (the owner's, services', and the
 * students' tokens for their own forks) are not links of this workspace.
 * Effects: reads storage.
 */
import type { TokenClaims } from '@plexus/shared';
import type { WorkspaceStorage } from '../store/storage.ts';

/** True for a share link's claims (what a reset revokes). */
export const isShareLink = (c: Pick<TokenClaims, 'sub' | 'ws'>): boolean => c.sub.startsWith('link:') && c.ws !== '*';

/** True when `claims` are a share link made before its workspace's last reset. */
export async function linkRevoked(store: Pick<WorkspaceStorage, 'linkGeneration'>, claims: TokenClaims): Promise<boolean> {
  if (!isShareLink(claims)) return false;
  return (claims.gen ?? 0) < (await store.linkGeneration(claims.ws));
}

/** True when live claims belong to a link revoked by a reset to `generation` of workspace `ws`. */
export const revokedBy = (claims: TokenClaims, ws: string, generation: number): boolean => isShareLink(claims) && claims.ws === ws && (claims.gen ?? 0) < generation;

export const REVOKED_MESSAGE = "this link was revoked by the workspace's owner; ask them for a new one";
