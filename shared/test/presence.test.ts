import { describe, expect, it } from 'vitest';
import { credentialLabel, findAskerState, isPresenceOf, presenceId, stampPresenceUser } from '../src/index.ts';

describe('presence identity stamp', () => {
  const who = { sub: 'link:editor', role: 'editor' as const };
  it('puts the id under the token subject, sets sub and role, keeps the rest', () => {
    const u = stampPresenceUser({ id: 'u_1', sub: 'local-owner', name: 'Ada', color: '#123456', role: 'editor', kind: 'person' }, who);
    expect(u).toEqual({ id: 'link:editor/u_1', sub: 'link:editor', name: 'Ada', color: '#123456', role: 'editor', kind: 'person' });
    // Someone else's full id stays visibly under the stamper's subject.
    expect(stampPresenceUser({ id: 'local-owner/u_1' }, who).id).toBe('link:editor/local-owner/u_1');
    expect(stampPresenceUser({}, who).id).toBe('link:editor/anonymous');
  });
  it('is idempotent, and takes the name from the token when it has one', () => {
    const once = stampPresenceUser({ id: 'u_1', name: 'Ada' }, who);
    expect(stampPresenceUser(once, who)).toEqual(once);
    expect(stampPresenceUser({ id: 'x', name: 'Olivia Owner' }, { sub: 'service:kernel', role: 'service', name: 'Kernel' }).name).toBe('Kernel');
  });
  it('finds an asker (a document author id) by its presence under any subject', () => {
    expect(isPresenceOf({ id: presenceId('local-owner', 'u_1'), sub: 'local-owner' }, 'u_1')).toBe(true);
    expect(isPresenceOf({ id: 'u_1' }, 'u_1')).toBe(true);
    expect(isPresenceOf({ id: 'local-owner/u_2', sub: 'local-owner' }, 'u_1')).toBe(false);
    const states = new Map<number, unknown>([[1, { user: { id: 'local-owner/u_1', sub: 'local-owner', name: 'Ada', color: '#000', role: 'owner', kind: 'person' }, focus: { panel: 'notebook', cellId: 'c' } }]]);
    expect(findAskerState(states, 'u_1')?.focus?.cellId).toBe('c');
  });

  it('labels presences that came by a share link', () => {
    expect(credentialLabel({ sub: 'link:editor' })).toBe('editor link');
    expect(credentialLabel({ sub: 'link:viewer' })).toBe('view link');
    expect(credentialLabel({ sub: 'local-owner' })).toBeNull();
    expect(credentialLabel({})).toBeNull();
  });
});
