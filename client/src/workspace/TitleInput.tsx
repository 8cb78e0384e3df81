/** The workspace title in the header: a borderless input writing through setTitle on commit. */
import { useEffect, useState } from 'react';
import { getTitle, roots, setTitle } from '@plexus/shared';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { useYVersion } from '../collab/useY.ts';

export function TitleInput() {
  const session = useSession();
  const canEdit = useCanEdit();
  const version = useYVersion(roots(session.doc).meta);
  const title = getTitle(session.doc);
  const [draft, setDraft] = useState(title);
  const [editing, setEditing] = useState(false);

  // Follow remote renames unless the user is typing a new title.
  useEffect(() => {
    if (!editing) setDraft(title);
  }, [title, version, editing]);

  useEffect(() => {
    document.title = `${title} · Plexus`;
  }, [title]);

  const commit = () => {
    setEditing(false);
    const clean = draft.trim();
    if (!clean) setDraft(title);
    else if (clean !== title) {
      session.undoManager.stopCapturing();
      setTitle(session.doc, clean, session.origin);
    }
  };

  return (
    <input
      className="title-input"
      data-testid="workspace-title"
      aria-label="Workspace title"
      value={draft}
      readOnly={!canEdit}
      maxLength={200}
      onFocus={() => setEditing(true)}
      onChange={(e) => setDraft(e.target.value)}
      onBlur={commit}
      onKeyDown={(e) => {
        if (e.key === 'Enter') e.currentTarget.blur();
        if (e.key === 'Escape') {
          setDraft(title);
          setEditing(false);
          requestAnimationFrame(() => (e.target as HTMLInputElement).blur());
        }
      }}
    />
  );
}
