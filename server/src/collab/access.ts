/**
 * Access control as a Hocuspocus extension: verifies the signed token of every connection
 * (workspace, role, expiry), refuses clients holding local state of another document epoch, makes
 * viewer connections read-only on the server and checks every awareness update (no spoofing).
 * Effects: reads the workspace registry.
 */
import type { Extension, onAuthenticatePayload, beforeHandleAwarenessPayload, onDisconnectPayload } from '@hocuspocus/server';
import { CloseCodes, canWrite, type TokenClaims } from '@plexus/shared';
import type { TokenSigner } from '../auth/tokens.ts';
import { TokenError, grantsWorkspace } from '../auth/tokens.ts';
import type { WorkspaceStore } from '../store/workspace-store.ts';
import { ProtocolError } from './errors.ts';
import type { AwarenessGuard } from './awareness-guard.ts';
import type { Logger } from '../log.ts';

/** What a connection carries after authentication. */
export interface ConnectionContext {
  claims: TokenClaims;
}

/** Verifies a token for workspace `ws` and the epoch the client holds. Shared by both protocols. */
export function authorize(signer: TokenSigner, store: WorkspaceStore, token: string | null | undefined, ws: string, epoch: string | null): TokenClaims {
  let claims: TokenClaims;
  try {
    claims = signer.verify(token ?? '');
  } catch (e) {
    const err = e as TokenError;
    throw new ProtocolError(err.reason === 'expired' ? CloseCodes.TokenExpired : CloseCodes.Unauthorized, err.message);
  }
  if (!grantsWorkspace(claims, ws)) throw new ProtocolError(CloseCodes.WrongWorkspace, `token is for workspace ${claims.ws}`);
  const rec = store.get(ws);
  if (!rec) throw new ProtocolError(CloseCodes.NotFound, ws);
  if (epoch && epoch !== rec.epoch) throw new ProtocolError(CloseCodes.StaleEpoch, 'local state belongs to an earlier copy of this workspace');
  return claims;
}

export class AccessControl implements Extension {
  extensionName = 'plexus-access';
  priority = 2000;

  constructor(
    private readonly signer: TokenSigner,
    private readonly store: WorkspaceStore,
    private readonly guard: AwarenessGuard,
    private readonly log: Logger,
  ) {}

  async onAuthenticate({ token, documentName, requestParameters, connectionConfig, socketId }: onAuthenticatePayload): Promise<ConnectionContext> {
    try {
      const claims = authorize(this.signer, this.store, token, documentName, requestParameters.get('epoch'));
      connectionConfig.readOnly = !canWrite(claims.role);
      this.log.info('connection authorized', { ws: documentName, role: claims.role, sub: claims.sub, socketId, protocol: 'hocuspocus' });
      return { claims };
    } catch (e) {
      this.log.warn('connection refused', { ws: documentName, reason: (e as ProtocolError).reason, detail: (e as Error).message, socketId });
      throw e;
    }
  }

  async beforeHandleAwareness({ documentName, connection, states, context }: beforeHandleAwarenessPayload): Promise<void> {
    if (!connection) return; // server-side awareness changes
    const claims = (context as ConnectionContext | undefined)?.claims;
    if (!claims) throw new ProtocolError(CloseCodes.Unauthorized, 'no identity');
    // Hocuspocus decodes the update into a scratch Awareness, which always adds its own entry with
    // state {} under a random client id. Empty states carry no presence: drop them all (they are
    // then not relayed either) so that entry is never counted as one of this connection's ids.
    for (const [id, st] of [...states]) if (st && typeof st === 'object' && Object.keys(st).length === 0) states.delete(id);
    const entries = [...states].map(([clientId, state]) => ({ clientId, state: (state as Record<string, unknown>) ?? null }));
    this.guard.check(documentName, { ownerKey: connection.socketId, role: claims.role }, entries);
  }

  async onDisconnect({ documentName, socketId }: onDisconnectPayload): Promise<void> {
    this.guard.release(documentName, socketId);
  }
}
