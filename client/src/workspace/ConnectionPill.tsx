/** Connection status: exactly `connected`, `connecting` or `offline` (tests read the text). */
import type { ConnectionStatus } from '../collab/session.ts';

const HINT: Record<ConnectionStatus, string> = {
  connected: 'Connected: changes are shared live',
  connecting: 'Connecting to the server…',
  offline: 'Offline: you can keep working; changes are kept in this browser and merge when you reconnect',
};

export function ConnectionPill({ status }: { status: ConnectionStatus }) {
  return (
    <span className={`pill pill-${status}`} title={HINT[status]}>
      <span className="pill-dot" aria-hidden="true" />
      <span data-testid="connection-status">{status}</span>
    </span>
  );
}
