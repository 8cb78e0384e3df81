/** Owner-only Share button: creates an edit, view or hand-out link and copies it; revokes all links made so far. */
import { useState } from 'react';
import { resetShareLinks, shareWorkspace, type ShareLink, type ShareRole } from '../api/workspaces.ts';
import { ApiError } from '../api/http.ts';
import { useUi } from '../state/ui.ts';
import { Popover } from '../ui/Popover.tsx';
import { copyText as copy } from '../ui/clipboard.ts';
import { useRosterPanel } from '../forks/useClassroom.ts';

const LINK_LABEL: Record<ShareRole, string> = { editor: 'Edit link', viewer: 'View-only link', handout: 'Hand-out link (a copy for each person)' };

export function ShareMenu({ workspaceId, token }: { workspaceId: string; token: string }) {
  const open = useUi((s) => s.shareOpen);
  const setOpen = useUi((s) => s.setShareOpen);
  const [busy, setBusy] = useState(false);
  const [link, setLink] = useState<ShareLink | null>(null);
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);

  const reset = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await resetShareLinks(token, workspaceId);
      setLink(null);
      setRevoked(`Every earlier link stopped working${r.disconnected ? `; ${r.disconnected} ${r.disconnected === 1 ? 'person was' : 'people were'} disconnected` : ''}. New links work.`);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };

  const create = async (role: ShareRole) => {
    setBusy(true);
    setError(null);
    setCopied(false);
    try {
      const l = await shareWorkspace(token, workspaceId, role);
      setLink(l);
      // The class roster opens as soon as someone has their copy.
      if (role === 'handout') useRosterPanel.getState().setOpen(true);
      setCopied(await copy(l.url));
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="popover-anchor">
      <button className="btn btn-primary" data-testid="share" onClick={() => setOpen(!open)} aria-expanded={open}>
        Share
      </button>
      <Popover open={open} onClose={() => setOpen(false)} label="Share this workspace" className="share-popover" testId="share-popover">
        <h3>Share this workspace</h3>
        <p className="muted">Anyone with a link can open the workspace with the link’s role.</p>
        <div className="row gap">
          <button className="btn" data-testid="share-edit" disabled={busy} onClick={() => create('editor')}>
            Create edit link
          </button>
          <button className="btn" data-testid="share-view" disabled={busy} onClick={() => create('viewer')}>
            Create view-only link
          </button>
        </div>
        <div className="row gap share-handout">
          <button className="btn" data-testid="share-handout" disabled={busy} onClick={() => create('handout')}>
            Create hand-out link
          </button>
          <span className="muted">Everyone who opens it gets their own copy; you see each copy under Class.</span>
        </div>
        {link && (
          <div className="share-result">
            <label className="muted" htmlFor="share-url">
              {LINK_LABEL[link.role]}
              {link.expires ? `, valid until ${new Date(link.expires * (link.expires < 1e12 ? 1000 : 1)).toLocaleDateString()}` : ''}
            </label>
            <div className="row gap">
              <input id="share-url" data-testid="share-url" readOnly value={link.url} onFocus={(e) => e.currentTarget.select()} />
              <button className="btn" onClick={async () => setCopied(await copy(link.url))}>
                Copy
              </button>
            </div>
            <p className="muted" role="status">
              {copied ? 'Copied to the clipboard.' : 'Select the link and copy it.'}
            </p>
          </div>
        )}
        <div className="row gap share-reset">
          {confirming ? (
            <>
              <span>Revoke every link made so far? People using one are disconnected.</span>
              <button className="btn btn-danger" data-testid="share-reset-confirm" disabled={busy} onClick={() => void reset()}>
                Revoke
              </button>
              <button className="btn" onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </>
          ) : (
            <button className="btn" data-testid="share-reset" disabled={busy} onClick={() => (setRevoked(null), setConfirming(true))} title="Every edit, view-only and hand-out link made so far stops working">
              Revoke all links…
            </button>
          )}
        </div>
        {revoked && (
          <p className="muted" role="status" data-testid="share-reset-done">
            {revoked}
          </p>
        )}
        {error && <p className="form-error">{error}</p>}
      </Popover>
    </div>
  );
}
