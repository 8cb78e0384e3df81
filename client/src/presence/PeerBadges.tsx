/** Small coloured badges of the other people focused on a cell. */
import type { Peer } from '../collab/presenceIndex.ts';
import { initials } from './initials.ts';

export function PeerBadges({ peers }: { peers: Peer[] }) {
  if (peers.length === 0) return null;
  return (
    <span className="peer-badges" aria-label={`Here: ${peers.map((p) => p.user.name).join(', ')}`}>
      {peers.map((p) => (
        <span key={p.clientId} className="peer-badge" data-testid="cell-peer" title={p.user.name} style={{ backgroundColor: p.user.color }}>
          {initials(p.user.name)}
        </span>
      ))}
    </span>
  );
}
