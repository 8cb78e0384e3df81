/**
 * Presence: what travels by awareness (never the document) — who is here, their colour, which
 * panel and cell they focus. Editor bindings add their own caret fields (`cursor` for CodeMirror,
 * `tiptapCursor` for tiptap) so one awareness can serve many editors. Pure module.
 */
import type { Role } from './protocol.ts';

export type PresenceKind = 'person' | 'agent' | 'service';

export interface PresenceUser {
  /**
   * `<token sub>/<device id>`, stamped by the server from the connection's token (see
   * `stampPresenceUser`): the device id (stable per browser) is the client's choice, the prefix is not.
   */
  id: string;
  /** The token's subject (`local-owner`, `link:editor`, `service:agent`…), stamped by the server. */
  sub?: string;
  /** Chosen by the person, unless the token carries a `name` claim: then the server stamps that. */
  name: string;
  color: string;
  /** Light variant of color (y-codemirror.next uses it for selections). */
  colorLight?: string;
  role: Role;
  kind: PresenceKind;
}

export interface PresenceFocus {
  panel: 'notebook' | 'chat' | 'viewer' | null;
  cellId: string | null;
}

/** The local awareness state of one peer. */
export interface PresenceState {
  user: PresenceUser;
  focus?: PresenceFocus;
  [field: string]: unknown;
}

export const PRESENCE_COLORS = [
  '#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4',
  '#f032e6', '#469990', '#9a6324', '#800000', '#808000', '#000075',
] as const;

/** A deterministic colour for a user id. */
export function colorFor(id: string): string {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) >>> 0;
  return PRESENCE_COLORS[h % PRESENCE_COLORS.length]!;
}

/** The translucent variant of a colour for selections. */
export const lightColor = (c: string): string => (/^#[0-9a-f]{6}$/i.test(c) ? c + '33' : c);

/** Reads a presence state from an awareness map entry, or null if it is not one. */
export function readPresence(state: unknown): PresenceState | null {
  if (!state || typeof state !== 'object') return null;
  const user = (state as { user?: unknown }).user as PresenceUser | undefined;
  if (!user || typeof user !== 'object' || typeof user.id !== 'string' || typeof user.name !== 'string') return null;
  return state as PresenceState;
}

/** The presence id of a device (a browser's stable id) seen through a token subject. */
export const presenceId = (sub: string, deviceId: string): string => (deviceId.startsWith(sub + '/') ? deviceId : `${sub}/${deviceId}`);

/** True when a presence `user` is the given device id (a document author id), under any subject. */
export function isPresenceOf(user: Pick<PresenceUser, 'id' | 'sub'>, deviceId: string): boolean {
  return user.id === deviceId || (typeof user.sub === 'string' && user.id === presenceId(user.sub, deviceId));
}

/** What the server knows of a connection for presence: its token's claims. */
export interface PresenceIdentity {
  sub: string;
  role: Role;
  /** The token's `name` claim: when present it is the name everyone sees. */
  name?: string;
}

/**
 * The identity fields of a presence `user`, as the server stamps them on every awareness state a
 * connection publishes (both protocols): `sub` and `role` from the token, `id` prefixed with the
 * token's subject (a device id the client chose stays, but nobody can present an id under someone
 * else's credential), `name` from the token when it names someone. Other fields are kept.
 * Idempotent: a client that builds its presence this way is unchanged by the stamp.
 */
export function stampPresenceUser(user: Record<string, unknown>, who: PresenceIdentity): Record<string, unknown> {
  const device = typeof user.id === 'string' && user.id !== '' ? user.id : 'anonymous';
  return {
    ...user,
    id: presenceId(who.sub, device),
    sub: who.sub,
    role: who.role,
    ...(who.name !== undefined ? { name: who.name } : {}),
  };
}

/**
 * What a presence's credential says, for people to see next to a self-chosen name: `editor link`
 * / `view link` for share links (whose holders name themselves), null otherwise.
 */
export function credentialLabel(user: Pick<PresenceUser, 'sub'>): string | null {
  if (typeof user.sub !== 'string' || !user.sub.startsWith('link:')) return null;
  const role = user.sub.slice('link:'.length);
  return role === 'viewer' ? 'view link' : `${role} link`;
}
