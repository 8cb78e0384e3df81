/**
 * Access control as a Hocuspocus extension: verifies the signed token of every connection
 * (workspace, role, expiry), refuses clients holding local state of another document epoch, makes
 * viewer connections read-only on the server. (Awareness ownership is checked per frame in app.ts.)
 * Effects: reads the workspace registry (storage).
 */
import type { Extension, onAuthenticatePayload, beforeHandleAwarenessPayload } from '@hocuspocus/server';
import { CloseCodes, canWrite, type TokenClaims } from '@plexus/shared';
import type { TokenSigner } from '../auth/tokens.ts';
import { isGlobalServiceClaims } from '../auth/agent-token.ts';
import { TokenError } from '../auth/tokens.ts';
import { grantsAccess } from '../forks/registry.ts';
import { linkRevoked, REVOKED_MESSAGE } from '../auth/link-revocation.ts';
import type { WorkspaceStorage } from '../store/storage.ts';
import { ProtocolError, closeIfTransient } from './errors.ts';
import type { Logger } from '../log.ts';

/** What a connection carries after authentication. */
export interface ConnectionContext {
  claims: TokenClaims;
}

/**
 * Verifies a token for workspace `ws` and the epoch the client holds. Shared by both protocols.
 * Storage that cannot answer refuses with 4503 storage-unavailable (clients retry).
 */
export async function authorize(signer: TokenSigner, store: WorkspaceStorage, token: string | null | undefined, ws: string, epoch: string | null): Promise<TokenClaims> {
  let claims: TokenClaims;
  try {
    claims = signer.verify(token ?? '');
  } catch (e) {
    const err = e as TokenError;
    throw new ProtocolError(err.reason === 'expired' ? CloseCodes.TokenExpired : CloseCodes.Unauthorized, err.message);
  }
  let granted;
  let rec;
  try {
    if (await linkRevoked(store, claims)) throw new ProtocolError(CloseCodes.TokenRevoked, REVOKED_MESSAGE);
    granted = await grantsAccess(store, claims, ws);
    rec = granted ? await store.get(ws) : undefined;
  } catch (e) {
    if (e instanceof ProtocolError) throw e;
    throw new ProtocolError(CloseCodes.StorageUnavailable, (e as Error).message);
  }
  if (!granted) throw new ProtocolError(CloseCodes.WrongWorkspace, `token is for workspace ${claims.ws}`);
  if (!rec) throw new ProtocolError(CloseCodes.NotFound, ws);
  if (epoch && epoch !== rec.epoch) throw new ProtocolError(CloseCodes.StaleEpoch, 'local state belongs to an earlier copy of this workspace');
  return claims;
}

export class AccessControl implements Extension {
  extensionName = 'plexus-access';
  priority = 2000;

  constructor(
    private readonly signer: TokenSigner,
    private readonly store: WorkspaceStorage,
    private readonly log: Logger,
  ) {}

  async onAuthenticate({ token, documentName, requestHeaders, requestParameters, connectionConfig, socketId }: onAuthenticatePayload): Promise<ConnectionContext> {
    try {
      const claims = await authorize(this.signer, this.store, token, documentName, requestParameters.get('epoch'));
      // The agent's and kernel processes' global tokens read only: they write with their lease's token.
      connectionConfig.readOnly = !canWrite(claims.role) || isGlobalServiceClaims(claims);
      this.log.info('connection authorized', { ws: documentName, role: claims.role, sub: claims.sub, socketId, protocol: 'hocuspocus' });
      return { claims };
    } catch (e) {
      this.log.warn('connection refused', { ws: documentName, reason: (e as ProtocolError).reason, detail: (e as Error).message, socketId });
      closeIfTransient(requestHeaders, e);
      throw e;
    }
  }

  /**
   * Ownership and role checks run on the raw frame (they need the clocks, see app.ts). Here only:
   * Hocuspocus decodes each awareness update into a scratch Awareness that adds an entry of its
   * own (state {} under a random client id); drop empty states so that ghost is never relayed.
   */
  async beforeHandleAwareness({ states }: beforeHandleAwarenessPayload): Promise<void> {
    for (const [id, st] of [...states]) if (st && typeof st === 'object' && Object.keys(st).length === 0) states.delete(id);
  }
}
