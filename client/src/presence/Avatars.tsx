/**
 * Who is in the workspace: one avatar per person (several tabs of one person show once), the
 * local user first and outlined. The tooltip says when someone came by a share link.
 */
import type { Awareness } from 'y-protocols/awareness';
import { credentialLabel, type PresenceUser } from '@plexus/shared';
import { usePeers } from '../collab/presenceIndex.ts';
import { initials } from './initials.ts';

/** A person's name, with the share link they came by (the server stamps `sub`): a name is self-chosen, the link is not. */
const personTitle = (u: PresenceUser) => {
  const via = credentialLabel(u);
  return via ? `${u.name} (${via})` : u.name;
};

export function Avatars({ awareness }: { awareness: Awareness }) {
  const peers = usePeers(awareness);
  const seen = new Set<string>();
  const people = peers.filter((p) => {
    if (seen.has(p.user.id)) return false;
    seen.add(p.user.id);
    return true;
  });
  return (
    <div className="avatars" aria-label={`${people.length} here`}>
      {people.map((p) => (
        <span
          key={p.user.id}
          className={`avatar${p.self ? ' is-self' : ''}${p.user.role === 'viewer' ? ' is-viewer' : ''}${p.user.kind === 'agent' ? ' is-agent' : ''}`}
          data-testid="avatar"
          data-self={p.self ? 'true' : undefined}
          data-kind={p.user.kind}
          data-sub={p.user.sub}
          title={p.user.kind === 'agent' ? `${p.user.name} (agent)` : personTitle(p.user)}
          style={{ backgroundColor: p.user.color }}
        >
          {p.user.kind === 'agent' ? '✦' : initials(p.user.name)}
        </span>
      ))}
    </div>
  );
}
