/**
 * Named views shared in the document: save the current view under a name, go back to one, delete
 * one. Loading changes camera, layout and layer display only (views.ts).
 */
import { useMemo, useState } from 'react';
import { canWrite, deleteNamedView, listNamedViews, loadNamedView, saveNamedView, viewerRoots } from '@plexus/shared';
import { useSession } from '../collab/context.tsx';
import { useYVersion } from '../collab/useY.ts';
import { useLocalUser } from '../state/user.ts';
import { Popover } from '../ui/Popover.tsx';
import type { ViewerBinding } from './viewerBinding.ts';
import { useViewerUi } from './viewerUi.ts';

export function ViewsMenu({ binding }: { binding: ViewerBinding | null }) {
  const session = useSession();
  const user = useLocalUser((s) => s.user);
  const viewsMap = viewerRoots(session.doc).views;
  const version = useYVersion(viewsMap);
  const views = useMemo(() => listNamedViews(session.doc), [session.doc, version]);
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const setNotice = useViewerUi((s) => s.setNotice);
  const editable = canWrite(session.role);

  const save = () => {
    if (!binding || !name.trim()) return;
    saveNamedView(session.doc, name, binding.currentState(), user.name, session.origin);
    setName('');
  };

  return (
    <div className="popover-anchor">
      <button className="btn btn-small" data-testid="viewer-views" aria-expanded={open} disabled={!binding} onClick={() => setOpen(!open)}>
        Views{views.length > 0 && <span className="count">{views.length}</span>}
      </button>
      <Popover open={open} onClose={() => setOpen(false)} label="Named views" className="viewer-menu" testId="viewer-views-menu">
        {editable && (
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              save();
            }}
          >
            <input className="input" placeholder="Name this view" value={name} maxLength={120} onChange={(e) => setName(e.target.value)} data-testid="viewer-view-name" aria-label="View name" />
            <button className="btn btn-small btn-primary" type="submit" disabled={!name.trim()} data-testid="viewer-view-save">
              Save
            </button>
          </form>
        )}
        {views.length === 0 && <p className="muted">No saved views yet. Saved views are shared with everyone here.</p>}
        <ul className="menu-list">
          {views.map((v) => (
            <li key={v.id} data-testid="viewer-view">
              <button
                className="link-btn"
                title={`Saved by ${v.by}`}
                onClick={() => {
                  if (!binding) return;
                  if (editable) {
                    const missing = loadNamedView(session.doc, v, session.origin);
                    if (missing.length) setNotice(`layers no longer here: ${missing.join(', ')}`);
                  }
                  // Move this person too, whatever their navigation mode.
                  if (!editable || binding.getMode().kind !== 'shared') setTimeout(() => binding.showCamera(v.camera), 0);
                  setOpen(false);
                }}
              >
                {v.name}
              </button>
              <span className="muted"> · {v.by}</span>
              {editable && (
                <button className="icon-btn" aria-label={`Delete view ${v.name}`} title="Delete" onClick={() => deleteNamedView(session.doc, v.id, session.origin)}>
                  ×
                </button>
              )}
            </li>
          ))}
        </ul>
      </Popover>
    </div>
  );
}
