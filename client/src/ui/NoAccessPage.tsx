/** What someone without a usable token sees: how to get a link. */
import { CenteredPage } from './CenteredPage.tsx';

export function NoAccessPage({ reason }: { reason?: string | null }) {
  return (
    <CenteredPage title="You need an access link" testId="no-access">
      {reason && <p className="notice notice-error">{reason}</p>}
      <p>Plexus workspaces are opened with a link that carries an access token.</p>
      <ul className="plain-list">
        <li>
          <strong>If you run this Plexus server:</strong> when it starts, it prints an owner link such as{' '}
          <code>http://localhost:4455/?token=…</code> in its terminal. Open that link once in this browser; it is remembered.
        </li>
        <li>
          <strong>If someone invited you:</strong> ask them for a share link (the Share button of a workspace) and open it.
        </li>
      </ul>
    </CenteredPage>
  );
}
