/**
 * What a hand-out link opens: the person says the name their teacher will see and gets their own
 * copy (fork) of the workspace — the same copy each time they open the link in this browser — and
 * lands in it. The link itself opens nothing else.
 * Effects: HTTP (the fork), token storage, navigation.
 */
import { useEffect, useState, type FormEvent } from 'react';
import { ApiError } from '../api/http.ts';
import { readStoredMap, storeToken, tokenFor } from '../api/tokens.ts';
import { forkWorkspace } from '../api/workspaces.ts';
import { navigate, workspacePath } from '../app/router.ts';
import { useLocalUser } from '../state/user.ts';
import { CenteredPage } from '../ui/CenteredPage.tsx';

const OPENED_KEY = 'plexus.handouts';

/** The forks this browser got from hand-out links, by source workspace. */
const openedForks = (): Record<string, string> => readStoredMap(OPENED_KEY);

export function HandoutPage({ id, token }: { id: string; token: string }) {
  const user = useLocalUser((s) => s.user);
  const setName = useLocalUser((s) => s.setName);
  const [name, setDraft] = useState(user.name);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  // Opened before in this browser: straight back to that copy.
  useEffect(() => {
    const fork = openedForks()[id];
    if (fork && tokenFor(fork)) navigate(workspacePath(fork), { replace: true });
  }, [id]);

  const open = async (e: FormEvent) => {
    e.preventDefault();
    const clean = name.trim();
    if (!clean) return setError('Please give the name your teacher will see.');
    setBusy(true);
    setError(null);
    setName(clean);
    try {
      const r = await forkWorkspace(token, id, { device: user.id, personName: clean });
      if (r.token) storeToken(r.token);
      localStorage.setItem(OPENED_KEY, JSON.stringify({ ...openedForks(), [id]: r.workspace.id }));
      navigate(workspacePath(r.workspace.id), { replace: true });
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
      setBusy(false);
    }
  };

  return (
    <CenteredPage title="Your own copy" testId="handout-page">
      <p>This link gives everyone who opens it their own copy of the workspace to work in. Your teacher sees how your cells run and can open your copy.</p>
      <form className="handout-form" onSubmit={open}>
        <label htmlFor="handout-name">Your name</label>
        <div className="row gap">
          <input id="handout-name" data-testid="handout-name" value={name} maxLength={60} onChange={(e) => setDraft(e.target.value)} autoFocus />
          <button className="btn btn-primary" data-testid="handout-open" type="submit" disabled={busy}>
            {busy ? 'Opening…' : 'Open my copy'}
          </button>
        </div>
      </form>
      {error && <p className="form-error">{error}</p>}
    </CenteredPage>
  );
}
