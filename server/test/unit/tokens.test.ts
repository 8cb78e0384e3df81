import { describe, expect, it } from 'vitest';
import { TokenSigner, TokenError, grantsWorkspace } from '../../src/auth/tokens.ts';

const signer = new TokenSigner(Buffer.from('0123456789abcdef0123456789abcdef'));

describe('tokens', () => {
  it('round-trips claims', () => {
    const t = signer.sign({ ws: 'w1', role: 'viewer', sub: 'link:viewer', ttlSeconds: 60 });
    expect(signer.verify(t)).toMatchObject({ v: 1, ws: 'w1', role: 'viewer', sub: 'link:viewer' });
  });

  it('rejects a tampered payload, a foreign secret, expiry and garbage with distinct reasons', () => {
    const t = signer.sign({ ws: 'w1', role: 'viewer', sub: 's', ttlSeconds: 60 });
    const [payload, sig] = t.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), role: 'owner' })).toString('base64url');
    const reason = (tok: string) => {
      try {
        signer.verify(tok);
        return 'accepted';
      } catch (e) {
        return (e as TokenError).reason;
      }
    };
    expect(reason(`${forged}.${sig}`)).toBe('bad-signature');
    expect(reason(new TokenSigner(Buffer.from('another-secret-of-32-bytes-long!!')).sign({ ws: 'w1', role: 'owner', sub: 's', ttlSeconds: 60 }))).toBe('bad-signature');
    expect(reason(signer.sign({ ws: 'w1', role: 'owner', sub: 's', ttlSeconds: 10, now: Date.now() - 60_000 }))).toBe('expired');
    expect(reason('nonsense')).toBe('malformed');
    expect(reason('a.b.c')).toBe('malformed');
    expect(reason('')).toBe('malformed');
  });

  it('grants a workspace exactly or all with *', () => {
    const one = signer.verify(signer.sign({ ws: 'w1', role: 'editor', sub: 's', ttlSeconds: 60 }));
    const all = signer.verify(signer.sign({ ws: '*', role: 'owner', sub: 's', ttlSeconds: 60 }));
    expect(grantsWorkspace(one, 'w1')).toBe(true);
    expect(grantsWorkspace(one, 'w2')).toBe(false);
    expect(grantsWorkspace(all, 'w2')).toBe(true);
  });

  it('refuses short secrets', () => {
    expect(() => new TokenSigner(Buffer.from('short'))).toThrow(/16 bytes/);
  });
});
