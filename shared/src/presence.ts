/**
 * Presence: what travels by awareness (never the document) — who is here, their colour, which
 * panel and cell they focus. Editor bindings add their own caret fields (`cursor` for CodeMirror,
 * `tiptapCursor` for tiptap) so one awareness can serve many editors. Pure module.
 */
import type { Role } from './protocol.ts';

export type PresenceKind = 'person' | 'agent' | 'service';

export interface PresenceUser {
  /** Stable per browser/user; the server checks it against the connection. */
  id: string;
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
