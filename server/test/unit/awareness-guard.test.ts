import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { Awareness, applyAwarenessUpdate } from 'y-protocols/awareness';
import { AwarenessGuard, encodeAwarenessEntries, MAX_CLIENT_IDS_PER_CONNECTION } from '../../src/collab/awareness-guard.ts';

const person = (role: string, kind = 'person') => ({ user: { id: 'u', name: 'n', role, kind } });
const clocks = new Map<number, number>();
const current = (id: number) => clocks.get(id);

describe('AwarenessGuard', () => {
  it('first connection to present a client id owns it; others may echo but not overwrite or remove', () => {
    const g = new AwarenessGuard();
    const alice = { ownerKey: 'a', role: 'editor' as const };
    const bob = { ownerKey: 'b', role: 'editor' as const };
    g.check('d', alice, [{ clientId: 1, clock: 3, state: person('editor') }], current);
    clocks.set(1, 3);
    // Echo of the same clock, or an older one: ignored.
    expect(() => g.check('d', bob, [{ clientId: 1, clock: 3, state: person('editor') }], current)).not.toThrow();
    expect(() => g.check('d', bob, [{ clientId: 1, clock: 2, state: null }], current)).not.toThrow();
    // Newer state or a removal at the current clock: spoof.
    expect(() => g.check('d', bob, [{ clientId: 1, clock: 4, state: person('editor') }], current)).toThrow(/another connection/);
    expect(() => g.check('d', bob, [{ clientId: 1, clock: 3, state: null }], current)).toThrow(/another connection/);
    expect(g.owned('d', 'a')).toEqual([1]);
    g.release('d', 'a');
    expect(() => g.check('d', bob, [{ clientId: 1, clock: 9, state: person('editor') }], current)).not.toThrow();
  });

  it('role and kind must match the token', () => {
    const g = new AwarenessGuard();
    const viewer = { ownerKey: 'v', role: 'viewer' as const };
    expect(() => g.check('d', viewer, [{ clientId: 5, clock: 1, state: person('owner') }], current)).toThrow(/role/);
    expect(() => g.check('d', viewer, [{ clientId: 5, clock: 1, state: person('viewer', 'agent') }], current)).toThrow(/service/);
    expect(() => g.check('d', { ownerKey: 's', role: 'service' }, [{ clientId: 6, clock: 1, state: person('service', 'agent') }], current)).not.toThrow();
    expect(() => g.check('d', viewer, [{ clientId: 5, clock: 1, state: person('viewer') }], current)).not.toThrow();
    // States without a user (plain scripts) are allowed.
    expect(() => g.check('d', viewer, [{ clientId: 7, clock: 1, state: { cursor: null } }], current)).not.toThrow();
  });

  it('caps the presences one connection may hold', () => {
    const g = new AwarenessGuard();
    const c = { ownerKey: 'c', role: 'editor' as const };
    for (let i = 0; i < MAX_CLIENT_IDS_PER_CONNECTION; i++) g.check('d', c, [{ clientId: 100 + i, clock: 1, state: {} }], current);
    expect(() => g.check('d', c, [{ clientId: 999, clock: 1, state: {} }], current)).toThrow(/at most/);
  });

  it('stamps the identity of the connection’s own entries from the token, never of echoed ones', () => {
    const g = new AwarenessGuard();
    const owner = { ownerKey: 'o', role: 'owner' as const, sub: 'local-owner' };
    const link = { ownerKey: 'l', role: 'editor' as const, sub: 'link:editor' };
    const mine = g.check('s', owner, [{ clientId: 1, clock: 1, state: { user: { id: 'u_o', name: 'Olivia', role: 'owner', kind: 'person' } } }], () => undefined);
    expect(mine.stamped).toBe(true);
    expect(mine.entries[0]!.state!.user).toEqual({ id: 'local-owner/u_o', sub: 'local-owner', name: 'Olivia', role: 'owner', kind: 'person' });
    // The link holder relays Olivia's (stamped) entry as an echo and presents itself as her.
    const echo = { clientId: 1, clock: 1, state: mine.entries[0]!.state };
    const theirs = g.check('s', link, [
      echo,
      { clientId: 2, clock: 1, state: { user: { id: 'local-owner/u_o', sub: 'local-owner', name: 'Olivia', kind: 'person' }, focus: null } },
    ], (id) => (id === 1 ? 1 : undefined));
    expect(theirs.entries[0]).toBe(echo); // the echo is passed on untouched
    expect(theirs.entries[1]!.state).toEqual({ user: { id: 'link:editor/local-owner/u_o', sub: 'link:editor', name: 'Olivia', role: 'editor', kind: 'person' }, focus: null });
    // A token's name wins; an entry already stamped is not re-encoded.
    const svc = { ownerKey: 's', role: 'service' as const, sub: 'service:kernel', name: 'Kernel' };
    const k = g.check('s', svc, [{ clientId: 3, clock: 1, state: { user: { id: 'k', name: 'Olivia', role: 'service', kind: 'service' } } }], () => undefined);
    expect(k.entries[0]!.state!.user).toMatchObject({ id: 'service:kernel/k', name: 'Kernel' });
    expect(g.check('s', svc, [{ clientId: 3, clock: 2, state: k.entries[0]!.state }], () => 1).stamped).toBe(false);
    // The re-encoded batch is a valid awareness update.
    const aw = new Awareness(new Y.Doc());
    applyAwarenessUpdate(aw, encodeAwarenessEntries(theirs.entries), 'test');
    expect(aw.getStates().get(2)?.user?.id).toBe('link:editor/local-owner/u_o');
    aw.destroy();
  });

  it('refuses a user id that is not a bounded string', () => {
    const g = new AwarenessGuard();
    const c = { ownerKey: 'c', role: 'editor' as const, sub: 'link:editor' };
    expect(() => g.check('d', c, [{ clientId: 1, clock: 1, state: { user: { id: 'x'.repeat(201) } } }], current)).toThrow(/user.id/);
    expect(() => g.check('d', c, [{ clientId: 1, clock: 1, state: { user: { id: 42 } } }], current)).toThrow(/user.id/);
  });
});
