/**
 * Turns the reasons the server gives (auth failures, close events; see CloseCodes in
 * shared/src/protocol.ts) into what the page should say and do.
 */
import { CloseCodes } from '@plexus/shared';

export type ProblemAction =
  /** Keep going; show a notice. */
  | 'notice'
  /** Stop connecting: the session cannot recover without a new link or a reload. */
  | 'fatal'
  /** Our offline copy belongs to an older epoch: drop it and reload. */
  | 'reset-local';

export interface SessionProblem {
  reason: string;
  message: string;
  action: ProblemAction;
}

const KNOWN: Record<string, Omit<SessionProblem, 'reason'>> = {
  [CloseCodes.ReadOnly.reason]: {
    // Rejoining would only send the refused change again, forever: stop, and drop the local copy.
    action: 'fatal',
    message: 'This link is view-only: a change made in this tab was refused and discarded. Reload the page to keep following the workspace.',
  },
  [CloseCodes.TokenExpired.reason]: {
    action: 'fatal',
    message: 'Your access link has expired. Ask the workspace owner for a new link.',
  },
  [CloseCodes.TokenRevoked.reason]: {
    action: 'fatal',
    message: 'The workspace owner revoked this link. Ask them for a new one.',
  },
  [CloseCodes.Unauthorized.reason]: {
    action: 'fatal',
    message: 'The server did not accept your access token. Open the link you were given again, or ask the owner for a new one.',
  },
  [CloseCodes.Forbidden.reason]: {
    action: 'fatal',
    message: 'Your link does not give access to this workspace.',
  },
  [CloseCodes.WrongWorkspace.reason]: {
    action: 'fatal',
    message: 'Your link is for another workspace.',
  },
  [CloseCodes.NotFound.reason]: {
    action: 'fatal',
    message: 'This workspace does not exist (any more).',
  },
  [CloseCodes.StaleEpoch.reason]: {
    action: 'reset-local',
    message: 'This workspace was re-created on the server; discarding the offline copy and reloading…',
  },
  [CloseCodes.TooLarge.reason]: {
    action: 'notice',
    message: 'A change was too large for the server and was refused.',
  },
  [CloseCodes.PresenceSpoof.reason]: {
    action: 'notice',
    message: 'The server refused this tab’s presence information.',
  },
  [CloseCodes.StorageUnavailable.reason]: {
    action: 'notice',
    message: 'The server cannot reach its storage right now; retrying…',
  },
  [CloseCodes.NeedsRecovery.reason]: {
    action: 'fatal',
    message: 'This workspace cannot be opened as it is stored: it needs to be recovered by its owner.',
  },
  [CloseCodes.SchemaViolation.reason]: {
    action: 'fatal',
    message: 'The server refused a change from this tab that does not fit the workspace (a bug or an outdated page). Reload the page.',
  },
  [CloseCodes.LoadFailed.reason]: {
    action: 'notice',
    message: 'The server could not load this workspace; retrying…',
  },
  [CloseCodes.ServerDraining.reason]: {
    // The provider reconnects by itself (to another node, or this one once restarted); edits made
    // meanwhile stay in this tab and IndexedDB and are sent then. The notice clears once synced.
    action: 'notice',
    message: 'The server is restarting; reconnecting… (your changes are kept)',
  },
  [CloseCodes.WorkspaceMoved.reason]: {
    // Several nodes: another node serves the workspace now; the provider reconnects and is routed there.
    action: 'notice',
    message: 'Moving to another server; reconnecting… (your changes are kept)',
  },
  [CloseCodes.MalformedMessage.reason]: {
    action: 'notice',
    message: 'The server refused a malformed message; reconnecting…',
  },
};

const BY_CODE: Record<number, string> = {
  [CloseCodes.ServerDraining.code]: CloseCodes.ServerDraining.reason,
  [CloseCodes.StaleEpoch.code]: CloseCodes.StaleEpoch.reason,
  [CloseCodes.NotFound.code]: CloseCodes.NotFound.reason,
  [CloseCodes.PresenceSpoof.code]: CloseCodes.PresenceSpoof.reason,
  [CloseCodes.TooLarge.code]: CloseCodes.TooLarge.reason,
  [CloseCodes.NeedsRecovery.code]: CloseCodes.NeedsRecovery.reason,
  [CloseCodes.SchemaViolation.code]: CloseCodes.SchemaViolation.reason,
};

/**
 * Classifies a reason string (and optional close code). Returns null for ordinary closes
 * (network loss, server restart) that the provider simply retries.
 */
export function classifyProblem(reason: string | undefined, code?: number): SessionProblem | null {
  const r = (reason ?? '').trim();
  // Exact match first, then substring: servers sometimes wrap the reason in a sentence.
  let key = Object.keys(KNOWN).find((k) => r === k) ?? Object.keys(KNOWN).find((k) => r.includes(k));
  if (!key && code !== undefined) key = BY_CODE[code];
  if (!key && (code === 4401 || code === 4403)) key = code === 4401 ? CloseCodes.Unauthorized.reason : CloseCodes.Forbidden.reason;
  if (key) return { reason: key, ...KNOWN[key]! };
  if (code !== undefined && code >= 4000) return { reason: r || String(code), action: 'notice', message: `The server closed the connection (${r || code}).` };
  return null;
}

/** Classifies an authentication failure: always fatal unless we recognise a milder reason. */
export function classifyAuthFailure(reason: string): SessionProblem {
  const p = classifyProblem(reason);
  if (p) return p;
  return { reason: reason || 'unauthorized', action: 'fatal', message: `The server refused access to this workspace${reason ? ` (${reason})` : ''}.` };
}
