/**
 * Access tokens in the browser. A link may carry `?token=`: we keep it in localStorage (the
 * owner's `ws: '*'` token once, share-link tokens per workspace) and strip it from the address bar
 * so it is not bookmarked or shared by accident. Tokens are signed by the server; here we only
 * decode the claims to route them and to notice expiry early — the server remains the judge.
 */
import { isRole, type TokenClaims } from '@plexus/shared';

const OWNER_KEY = 'plexus.ownerToken';
const WORKSPACE_KEY = 'plexus.tokens';

/** Decodes the claims (base64url JSON before the '.'), or null when the token is malformed. */
export function decodeClaims(token: string): TokenClaims | null {
  const payload = token.split('.')[0];
  if (!payload) return null;
  try {
    const b64 = payload.replace(/-/g, '+').replace(/_/g, '/');
    const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    const json = new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
    const claims = JSON.parse(json) as Partial<TokenClaims>;
    if (typeof claims.ws !== 'string' || !isRole(claims.role) || typeof claims.exp !== 'number') return null;
    return claims as TokenClaims;
  } catch {
    return null;
  }
}

/** True when the token's `exp` has passed (a small skew is tolerated; the server decides). */
export function isExpired(claims: TokenClaims, now = Date.now()): boolean {
  return claims.exp * 1000 < now - 5_000;
}

/** A JSON object of strings kept in localStorage under `key` (empty when absent or unreadable). */
export function readStoredMap(key: string): Record<string, string> {
  try {
    const v = JSON.parse(localStorage.getItem(key) ?? '{}') as unknown;
    return v && typeof v === 'object' ? (v as Record<string, string>) : {};
  } catch {
    return {};
  }
}

const readMap = (): Record<string, string> => readStoredMap(WORKSPACE_KEY);

function writeMap(map: Record<string, string>): void {
  localStorage.setItem(WORKSPACE_KEY, JSON.stringify(map));
}

/** Stores a token where it belongs. Returns its claims, or null if it could not be decoded. */
export function storeToken(token: string): TokenClaims | null {
  const claims = decodeClaims(token);
  if (!claims) return null;
  if (claims.ws === '*') localStorage.setItem(OWNER_KEY, token);
  else writeMap({ ...readMap(), [claims.ws]: token });
  return claims;
}

/** The token that came with this page load (it wins over stored ones for this visit). */
let linkToken: string | null = null;
/** Why the link's token was not accepted, if it was not. */
let linkProblem: string | null = null;

/**
 * Moves `?token=` from the URL into storage and strips it with history.replaceState.
 * Call once at start-up, before the first render.
 */
export function captureTokenFromUrl(): void {
  const url = new URL(window.location.href);
  const token = url.searchParams.get('token');
  if (token === null) return;
  url.searchParams.delete('token');
  window.history.replaceState(window.history.state, '', url.pathname + url.search + url.hash);
  const claims = storeToken(token);
  if (!claims) linkProblem = 'The link’s token could not be read — it may have been cut off when copied.';
  else if (isExpired(claims)) linkProblem = 'The link you opened has expired.';
  else linkToken = token;
}

/** What went wrong with the link's token, or with a stored token the server refused. */
export const linkTokenProblem = (): string | null => linkProblem ?? refusal;

function usable(token: string | null | undefined): string | null {
  if (!token) return null;
  const claims = decodeClaims(token);
  return claims && !isExpired(claims) ? token : null;
}

/** The owner (`ws: '*'`) token, if one is stored and not expired. */
export const ownerToken = (): string | null => usable(localStorage.getItem(OWNER_KEY));

/**
 * The token to use for one workspace: the link just opened (if it is for this workspace), then
 * the owner token, then a stored share-link token.
 */
export function tokenFor(workspaceId: string): string | null {
  const link = usable(linkToken);
  const linkClaims = link ? decodeClaims(link) : null;
  if (link && linkClaims && (linkClaims.ws === '*' || linkClaims.ws === workspaceId)) return link;
  return ownerToken() ?? usable(readMap()[workspaceId]);
}

/**
 * Keeps `token` for workspace `id` as well: an owner token of a hand-out's workspace also opens the
 * students' forks of it (the server decides), so the roster's links open them with it.
 */
export function rememberTokenFor(id: string, token: string): void {
  const claims = decodeClaims(token);
  if (claims && claims.ws !== '*') writeMap({ ...readMap(), [id]: token });
}

/** Workspace ids for which a share-link token is stored (for people without an owner token). */
export function workspaceTokenIds(): string[] {
  return Object.entries(readMap())
    .filter(([, t]) => usable(t) !== null)
    .map(([id]) => id);
}

/** Why the server last refused a stored token (shown on the "you need a link" page). */
let refusal: string | null = null;

/** Forgets a token the server refused (bad signature, revoked secret) so we stop sending it. */
export function forgetToken(token: string, reason?: string): void {
  if (reason) refusal = reason;
  if (localStorage.getItem(OWNER_KEY) === token) localStorage.removeItem(OWNER_KEY);
  const map = readMap();
  let changed = false;
  for (const [id, t] of Object.entries(map)) {
    if (t === token) {
      delete map[id];
      changed = true;
    }
  }
  if (changed) writeMap(map);
  if (linkToken === token) linkToken = null;
}
