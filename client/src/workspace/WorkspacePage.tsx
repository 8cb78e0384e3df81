/**
 * `/w/:id`: asks the server for the workspace (its `epoch` and our `role`), then opens one
 * session (Y.Doc + IndexedDB + Hocuspocus provider) for it.
 */
import { useEffect, useState } from 'react';
import type { FirstScreen, Role } from '@plexus/shared';
import { agentTestHooks, type AgentTestHooks } from '../agent/testHooks.ts';
import { ApiError } from '../api/http.ts';
import { decodeClaims, forgetToken, linkTokenProblem, tokenFor } from '../api/tokens.ts';
import { getWorkspace, type Workspace } from '../api/workspaces.ts';
import { navigate } from '../app/router.ts';
import { SessionContext } from '../collab/context.tsx';
import { WorkspaceSession } from '../collab/session.ts';
import { useLocalUser } from '../state/user.ts';
import { CenteredPage } from '../ui/CenteredPage.tsx';
import { NoAccessPage } from '../ui/NoAccessPage.tsx';
import { WorkspaceLayout } from './WorkspaceLayout.tsx';
import { HandoutPage } from '../forks/HandoutPage.tsx';
import { fastOpenEnabled, firstScreenNow, loadEarlyState, loadFirstScreen, openWorkspace } from './fastOpen.ts';
import { FirstScreenContext, FirstScreenView, useFirstScreen } from '../notebook/FirstScreenView.tsx';

declare global {
  interface Window {
    /** Read-only handles for Playwright tests. */
    __plexus?: { doc: unknown; provider: unknown; awareness: unknown; role: Role; session: WorkspaceSession; agent: AgentTestHooks };
  }
}

type Load = { state: 'loading' } | { state: 'error'; error: ApiError } | { state: 'ok'; workspace: Workspace; role: Role };

export function WorkspacePage({ id }: { id: string }) {
  const token = tokenFor(id);
  // A hand-out link opens nothing but the person's own fork of the workspace.
  const handout = !!(token && decodeClaims(token)?.handout);
  const [load, setLoad] = useState<Load>({ state: 'loading' });
  const [attempt, setAttempt] = useState(0);
  // The notebook's first cells, shown until the document has synced (fastOpen.ts).
  const [firstScreen, setFirstScreen] = useState<FirstScreen | null>(() => (token && !handout && fastOpenEnabled() ? firstScreenNow(token, id) : null));
  // The whole document, fetched while the page opens (fastOpen.ts); the session applies it.
  const [earlyState, setEarlyState] = useState<Promise<Uint8Array | null> | null>(null);

  useEffect(() => {
    if (!token || handout) return;
    const ctl = new AbortController();
    setLoad({ state: 'loading' });
    const fast = fastOpenEnabled();
    if (fast) {
      void loadFirstScreen(token, id).then((f) => !ctl.signal.aborted && setFirstScreen(f));
      setEarlyState(loadEarlyState(token, id));
    }
    (fast ? openWorkspace : getWorkspace)(token, id, ctl.signal).then(
      (r) => setLoad({ state: 'ok', workspace: r.workspace, role: r.role }),
      (e: unknown) => {
        if (ctl.signal.aborted) return;
        const err = e instanceof ApiError ? e : new ApiError(0, 'unknown', String(e));
        if (err.isAuth) forgetToken(token);
        setLoad({ state: 'error', error: err });
      },
    );
    return () => ctl.abort();
  }, [id, token, attempt, handout]);

  if (!token) return <NoAccessPage reason={linkTokenProblem()} />;
  if (handout) return <HandoutPage id={id} token={token} />;
  if (load.state === 'loading')
    return firstScreen ? <FirstScreenView screen={firstScreen} /> : <CenteredPage title="Opening workspace…" testId="workspace-loading" />;
  if (load.state === 'error') {
    const e = load.error;
    if (e.isAuth) return <NoAccessPage reason={`The server refused your access token: ${e.message}`} />;
    return (
      <CenteredPage title={e.status === 404 ? 'Workspace not found' : 'Could not open this workspace'} testId="workspace-error">
        <p className="notice notice-error">{e.message}</p>
        <div className="row gap">
          <button className="btn" onClick={() => setAttempt((a) => a + 1)}>
            Try again
          </button>
          <button className="btn" onClick={() => navigate('/')}>
            All workspaces
          </button>
        </div>
      </CenteredPage>
    );
  }
  return (
    <FirstScreenContext.Provider value={firstScreen}>
      <SessionView key={`${load.workspace.id}:${load.workspace.epoch}`} workspace={load.workspace} role={load.role} token={token} initialState={earlyState} />
    </FirstScreenContext.Provider>
  );
}

function SessionView({ workspace, role, token, initialState }: { workspace: Workspace; role: Role; token: string; initialState: Promise<Uint8Array | null> | null }) {
  const [session, setSession] = useState<WorkspaceSession | null>(null);
  const user = useLocalUser((s) => s.user);
  const firstScreen = useFirstScreen();

  // Created in an effect, never in render/useMemo: StrictMode mounts twice and must get two
  // independent sessions, the first one fully destroyed.
  useEffect(() => {
    const s = new WorkspaceSession(workspace, role, token, useLocalUser.getState().user, initialState);
    setSession(s);
    window.__plexus = { doc: s.doc, provider: s.provider, awareness: s.awareness, role, session: s, agent: agentTestHooks(s) };
    return () => {
      if (window.__plexus?.session === s) delete window.__plexus;
      s.destroy();
    };
    // initialState is read once, when the session starts (a later one would be the same document).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [workspace, role, token]);

  // A rename of the local user reaches the others through presence.
  useEffect(() => {
    session?.setUser(user);
  }, [session, user]);

  // The session starts in the effect, after this first render: keep the first screen meanwhile.
  if (!session) return firstScreen ? <FirstScreenView screen={firstScreen} /> : null;
  return (
    <SessionContext.Provider value={session}>
      <WorkspaceLayout token={token} />
    </SessionContext.Provider>
  );
}
