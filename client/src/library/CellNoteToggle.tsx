/**
 * On a markdown cell: whether it is a library note (tagged `note`), as a toggle for editors and a
 * badge for everyone. A note is part of the workspace's method library: the agent can retrieve
 * and cite it. Effects: document writes (the cell's tags, with the session's origin).
 */
import { useMemo } from 'react';
import { NOTE_TAG, cellTags, getCell, setCellTags, type CellId } from '@plexus/shared';
import { useSession } from '../collab/context.tsx';
import { useYVersion } from '../collab/useY.ts';
import './library.css';

export function CellNoteToggle({ cellId, canEdit }: { cellId: CellId; canEdit: boolean }) {
  const session = useSession();
  const map = getCell(session.doc, cellId)?.map ?? null;
  const v = useYVersion(map);
  const tags = useMemo(() => cellTags(session.doc, cellId), [session.doc, cellId, v]);
  const isNote = tags.includes(NOTE_TAG);
  if (!canEdit)
    return isNote ? (
      <span className="cell-note-badge" data-testid="cell-note-badge" title="This cell is a note in the workspace library: the agent can cite it">
        note
      </span>
    ) : null;
  const toggle = () => setCellTags(session.doc, cellId, isNote ? tags.filter((t) => t !== NOTE_TAG) : [...tags, NOTE_TAG], session.origin);
  return (
    <button
      className={`cell-note-toggle${isNote ? ' is-note' : ''}`}
      data-testid="cell-note-toggle"
      aria-pressed={isNote}
      title={isNote ? 'A note in the workspace library (the agent can cite it). Click to remove it from the library' : 'Add this cell to the workspace library as a note the agent can cite'}
      onClick={toggle}
    >
      {isNote ? 'note' : '+ note'}
    </button>
  );
}
