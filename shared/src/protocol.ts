/**
 * Protocol constants shared by server, client and agent: roles, token claims, close codes and
 * limits. Pure module.
 */

export const ROLES = ['owner', 'editor', 'viewer', 'service'] as const;
export type Role = (typeof ROLES)[number];
/** True when `r` is a role. */
export const isRole = (r: unknown): r is Role => (ROLES as readonly unknown[]).includes(r);
/** Roles that may change the document. */
export const canWrite = (r: Role): boolean => r !== 'viewer';
/** Roles that may manage the workspace (rename, delete, share). */
export const canManage = (r: Role): boolean => r === 'owner' || r === 'service';

/** What a signed access token says. `ws: '*'` grants every workspace (the local owner, services). */
export interface TokenClaims {
  v: 1;
  /** Workspace id, or '*' for all workspaces. */
  ws: string;
  role: Role;
  /** Subject: who holds the token (user id, 'link:<id>' for share links, 'service:agent'). */
  sub: string;
  /** Display name suggested by the token (people may change theirs locally). */
  name?: string;
  /**
   * A hand-out link (forks/): grants no access to workspace `ws` itself, only the right to get
   * one's own fork of it (`POST /api/workspaces/<ws>/fork`).
   */
  handout?: true;
  /** Share links: the workspace's link generation when the link was made (a reset revokes older ones; absent = 0). */
  gen?: number;
  /**
   * A kernel process's token for one workspace, given with its kernel lease: the process holding
   * it. Its writes are refused once that process no longer holds the lease (fencing).
   */
  runner?: string;
  /** Issued at / expires at, seconds since the epoch. */
  iat: number;
  exp: number;
}

/**
 * Close codes (WebSocket close codes for y-websocket clients; Hocuspocus per-document close
 * events for Hocuspocus clients). 4401/4403 match Hocuspocus' own Unauthorized/Forbidden.
 */
export const CloseCodes = {
  MalformedMessage: { code: 4400, reason: 'malformed-message' },
  Unauthorized: { code: 4401, reason: 'unauthorized' },
  TokenExpired: { code: 4401, reason: 'token-expired' },
  /** A share link its workspace's owner revoked (reset the links). */
  TokenRevoked: { code: 4401, reason: 'token-revoked' },
  Forbidden: { code: 4403, reason: 'forbidden' },
  ReadOnly: { code: 4403, reason: 'read-only' },
  WrongWorkspace: { code: 4403, reason: 'token-for-another-workspace' },
  NotFound: { code: 4404, reason: 'workspace-not-found' },
  StaleEpoch: { code: 4409, reason: 'stale-local-state' },
  /** The stored workspace does not load as a valid document: its owner can recover it (GET /api/workspaces/:id/recovery). */
  NeedsRecovery: { code: 4424, reason: 'workspace-needs-recovery' },
  TooLarge: { code: 4413, reason: 'message-too-large' },
  PresenceSpoof: { code: 4422, reason: 'awareness-not-yours' },
  /** An update that breaks the document schema or the sender's write rights (shared doc-schema). */
  SchemaViolation: { code: 4423, reason: 'schema-violation' },
  StorageUnavailable: { code: 4503, reason: 'storage-unavailable' },
  LoadFailed: { code: 4500, reason: 'load-failed' },
  /**
   * The node is draining (SIGTERM) or stopping: reconnect, through the load balancer to another
   * node, or to this one once it is back. WebSocket's own 1012 "service restart", which every
   * stock client (Hocuspocus provider, y-websocket) answers by reconnecting; nothing is lost.
   */
  ServerDraining: { code: 1012, reason: 'server-draining' },
  /**
   * Several nodes: the workspace is served by another node now (its lease moved, e.g. this node
   * was paused past it). 1012 like a drain: the client reconnects and is routed to that node.
   */
  WorkspaceMoved: { code: 1012, reason: 'workspace-moved' },
  /** A service process (a kernel process, the agent) wrote after losing the workspace's lease to another one: refused. */
  LeaseLost: { code: 4410, reason: 'lease-lost' },
} as const satisfies Record<string, { code: number; reason: string }>;
export type CloseCode = (typeof CloseCodes)[keyof typeof CloseCodes];

/** Default cap on one WebSocket message (bytes); well below ws' 100 MiB default. */
export const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/** URL path of the plain y-websocket endpoint: `/yjs/<workspaceId>?token=...`. */
export const YWS_PATH_PREFIX = '/yjs/';
/** URL path of the Hocuspocus endpoint. */
export const HOCUSPOCUS_PATH = '/collab';
/** Default port of the server. */
export const DEFAULT_PORT = 4455;
