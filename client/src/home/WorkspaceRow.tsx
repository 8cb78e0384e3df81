/** One workspace in the home list: open, rename, duplicate, delete (with an inline confirm). */
import { useState } from 'react';
import { ApiError } from '../api/http.ts';
import { deleteWorkspace, duplicateWorkspace, renameWorkspace } from '../api/workspaces.ts';
import { navigate, workspacePath } from '../app/router.ts';
import { relativeTime } from './relativeTime.ts';
import type { Row } from './useWorkspaceList.ts';

interface Props {
  row: Row;
  canDuplicate: boolean;
  onChanged(): void;
  onError(message: string): void;
}

export function WorkspaceRow({ row, canDuplicate, onChanged, onError }: Props) {
  const { workspace: w, token } = row;
  const [mode, setMode] = useState<'view' | 'rename' | 'confirm-delete'>('view');
  const [name, setName] = useState(w.name);
  const [busy, setBusy] = useState(false);

  const run = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await fn();
      setMode('view');
      onChanged();
    } catch (e) {
      onError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  const open = () => navigate(workspacePath(w.id));

  return (
    <li className="ws-row" data-testid="workspace-row" data-workspace-id={w.id}>
      {mode === 'rename' ? (
        <form
          className="ws-rename"
          onSubmit={(e) => {
            e.preventDefault();
            if (name.trim()) void run(() => renameWorkspace(token, w.id, name.trim()));
          }}
        >
          <input autoFocus aria-label="New name" data-testid="workspace-rename-input" value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />
          <button className="btn btn-primary" type="submit" disabled={busy || !name.trim()} data-testid="workspace-rename-save">
            Save
          </button>
          <button className="btn" type="button" onClick={() => setMode('view')}>
            Cancel
          </button>
        </form>
      ) : (
        <a
          className="ws-name"
          href={workspacePath(w.id)}
          data-testid="workspace-open"
          onClick={(e) => {
            e.preventDefault();
            open();
          }}
        >
          {w.name}
        </a>
      )}
      <span className="ws-updated" title={new Date(w.updated).toLocaleString()}>
        {relativeTime(w.updated)}
      </span>
      {mode === 'confirm-delete' ? (
        <span className="ws-confirm" role="alert">
          Delete “{w.name}” for everyone? This cannot be undone.
          <button className="btn btn-danger" disabled={busy} data-testid="workspace-delete-confirm" onClick={() => run(() => deleteWorkspace(token, w.id))}>
            Delete
          </button>
          <button className="btn" onClick={() => setMode('view')}>
            Cancel
          </button>
        </span>
      ) : (
        <span className="ws-actions">
          <button className="btn btn-small" onClick={open}>
            Open
          </button>
          {row.canManage && mode === 'view' && (
            <>
              <button className="btn btn-small" data-testid="workspace-rename" onClick={() => (setName(w.name), setMode('rename'))}>
                Rename
              </button>
              {canDuplicate && (
                <button className="btn btn-small" data-testid="workspace-duplicate" disabled={busy} onClick={() => run(() => duplicateWorkspace(token, w.id, `${w.name} (copy)`))}>
                  Duplicate
                </button>
              )}
              <button className="btn btn-small btn-danger-quiet" data-testid="workspace-delete" onClick={() => setMode('confirm-delete')}>
                Delete
              </button>
            </>
          )}
        </span>
      )}
    </li>
  );
}
