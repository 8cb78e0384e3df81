import { describe, expect, it } from 'vitest';
import { AwarenessGuard, MAX_CLIENT_IDS_PER_CONNECTION } from '../../src/collab/awareness-guard.ts';

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
});
