/**
 * A protocol violation with the close code and reason the offender receives; closing the socket of
 * a refusal that storage caused. Effects: closes sockets (closeIfTransient).
 */
import { CloseCodes, type CloseCode } from '@plexus/shared';

export class ProtocolError extends Error {
  readonly code: number;
  readonly reason: string;
  constructor(close: CloseCode, detail?: string) {
    super(detail ? `${close.reason}: ${detail}` : close.reason);
    this.code = close.code;
    this.reason = close.reason;
  }
}

/** The socket of each Hocuspocus connection, by its request's headers (what the load and auth hooks receive). */
const sockets = new WeakMap<Headers, { close(code: number, reason: string): void }>();

export function rememberSocket(headers: Headers, socket: { close(code: number, reason: string): void }): void {
  sockets.set(headers, socket);
}

/** Refusals that pass by themselves: storage is back, or the client reconnects and is routed to the workspace's node. */
const TRANSIENT = new Set<number>([CloseCodes.StorageUnavailable.code, CloseCodes.LoadFailed.code, CloseCodes.WorkspaceMoved.code]);

/**
 * A refusal that only storage caused (4503, 4500), or a workspace another node serves (1012), is temporary: the connection's socket is also
 * closed, once Hocuspocus has sent its refusal, because a stock provider tries a refused document
 * again only when its socket closes (else it waits for its 30 s message watchdog).
 */
export function closeIfTransient(headers: Headers | undefined, e: unknown): void {
  const socket = headers && sockets.get(headers);
  if (!socket || !(e instanceof ProtocolError) || !TRANSIENT.has(e.code)) return;
  setImmediate(() => socket.close(e.code, e.reason));
}
