/**
 * Signed access tokens: base64url(JSON claims) + "." + base64url(HMAC-SHA256). Compact and
 * dependency-free; claims are TokenClaims from shared/. Effects: none except `loadOrCreateSecret`.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isRole, type Role, type TokenClaims } from '@plexus/shared';

export class TokenError extends Error {
  constructor(readonly reason: 'malformed' | 'bad-signature' | 'expired' | 'bad-claims', message: string) {
    super(message);
  }
}

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export class TokenSigner {
  constructor(private readonly secret: Buffer) {
    if (secret.length < 16) throw new Error('token secret must be at least 16 bytes');
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.secret).update(payload).digest();
  }

  /** Issues a token for `ws` with `role`, valid for `ttlSeconds`. */
  sign(input: { ws: string; role: Role; sub: string; name?: string; handout?: boolean; gen?: number; runner?: string; ttlSeconds: number; now?: number }): string {
    const iat = Math.floor((input.now ?? Date.now()) / 1000);
    const claims: TokenClaims = { v: 1, ws: input.ws, role: input.role, sub: input.sub, iat, exp: iat + Math.floor(input.ttlSeconds) };
    if (input.name) claims.name = input.name;
    if (input.handout) claims.handout = true;
    if (input.gen) claims.gen = input.gen;
    if (input.runner) claims.runner = input.runner;
    const payload = b64(JSON.stringify(claims));
    return `${payload}.${b64(this.mac(payload))}`;
  }

  /** Verifies a token and returns its claims; throws TokenError with a clear reason. */
  verify(token: string, now = Date.now()): TokenClaims {
    if (typeof token !== 'string' || token.length > 4096) throw new TokenError('malformed', 'token is missing or too long');
    const dot = token.indexOf('.');
    if (dot <= 0 || dot !== token.lastIndexOf('.')) throw new TokenError('malformed', 'token is not of the form payload.signature');
    const payload = token.slice(0, dot);
    const sig = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = this.mac(payload);
    if (sig.length !== expected.length || !timingSafeEqual(sig, expected)) throw new TokenError('bad-signature', 'token signature is invalid');
    let claims: TokenClaims;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw new TokenError('malformed', 'token payload is not JSON');
    }
    if (!claims || claims.v !== 1 || typeof claims.ws !== 'string' || !isRole(claims.role) || typeof claims.sub !== 'string' || typeof claims.exp !== 'number' || (claims.runner !== undefined && typeof claims.runner !== 'string'))
      throw new TokenError('bad-claims', 'token claims are incomplete');
    if (claims.exp * 1000 <= now) throw new TokenError('expired', `token expired at ${new Date(claims.exp * 1000).toISOString()}`);
    return claims;
  }
}

/**
 * True when the claims grant access to workspace `id` by themselves (forks/registry.ts `grantsAccess` adds the
 * teacher's access to the forks of their hand-outs). A hand-out link grants none: it only forks.
 */
export const grantsWorkspace = (c: TokenClaims, id: string): boolean => !c.handout && (c.ws === '*' || c.ws === id);

/** Reads dataDir/secret.key, creating it (0600) with 32 random bytes on first run. */
export function loadOrCreateSecret(dataDir: string): Buffer {
  const file = path.join(dataDir, 'secret.key');
  try {
    return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'hex');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const key = randomBytes(32);
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  return key;
}
