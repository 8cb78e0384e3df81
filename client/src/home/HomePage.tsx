/** `/`: the list of workspaces, with create (owner) and per-row actions. */
import { useState } from 'react';
import { ApiError } from '../api/http.ts';
import { linkTokenProblem, ownerToken } from '../api/tokens.ts';
import { createWorkspace } from '../api/workspaces.ts';
import { navigate, workspacePath } from '../app/router.ts';
import { CenteredPage } from '../ui/CenteredPage.tsx';
import { NoAccessPage } from '../ui/NoAccessPage.tsx';
import { Notice } from '../ui/Notice.tsx';
import { useWorkspaceList } from './useWorkspaceList.ts';
import { WorkspaceRow } from './WorkspaceRow.tsx';

export function HomePage() {
  const { list, reload } = useWorkspaceList();
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [creating, setCreating] = useState(false);

  if (list.state === 'no-token') return <NoAccessPage reason={linkTokenProblem()} />;
  if (list.state === 'loading') return <CenteredPage title="Loading workspaces…" />;

  const create = async () => {
    const token = ownerToken();
    if (!token) return;
    setCreating(true);
    setError(null);
    try {
      const w = await createWorkspace(token, name.trim() || undefined);
      navigate(workspacePath(w.id));
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
      setCreating(false);
    }
  };

  return (
    <div className="home-page">
      <header className="app-header">
        <span className="brand">
          <span className="brand-dot" /> Plexus
        </span>
        <div className="header-spacer" />
      </header>
      <main className="home-main">
        <h1>Workspaces</h1>
        {list.state === 'error' && (
          <Notice testId="home-error">
            {list.error.message}{' '}
            <button className="link-btn" onClick={reload}>
              Retry
            </button>
          </Notice>
        )}
        {error && (
          <Notice testId="home-error" onDismiss={() => setError(null)}>
            {error}
          </Notice>
        )}
        {list.state === 'ok' && list.isOwner && (
          <form
            className="create-form"
            onSubmit={(e) => {
              e.preventDefault();
              void create();
            }}
          >
            <input data-testid="workspace-new-name" aria-label="New workspace name" placeholder="New workspace name" value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />
            <button className="btn btn-primary" type="submit" disabled={creating} data-testid="workspace-create">
              {creating ? 'Creating…' : 'Create workspace'}
            </button>
          </form>
        )}
        {list.state === 'ok' && (
          <>
            {list.rows.length === 0 ? (
              <p className="muted">No workspaces yet{list.isOwner ? ' — create the first one above.' : '.'}</p>
            ) : (
              <ul className="ws-list" data-testid="workspace-list">
                <li className="ws-row ws-head" aria-hidden="true">
                  <span>Name</span>
                  <span>Updated</span>
                  <span />
                </li>
                {list.rows.map((r) => (
                  <WorkspaceRow key={r.workspace.id} row={r} canDuplicate={list.isOwner} onChanged={reload} onError={setError} />
                ))}
              </ul>
            )}
          </>
        )}
      </main>
    </div>
  );
}
