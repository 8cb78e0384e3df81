/** A cell's controls: presence badges, library note toggle (markdown), kind, move up/down, delete (editors only). */
import { CELL_KINDS, type CellId, type CellKind } from '@plexus/shared';
import type { Peer } from '../collab/presenceIndex.ts';
import { PeerBadges } from '../presence/PeerBadges.tsx';
import { useNotebook } from './controller.ts';
import { CellNoteToggle } from '../library/CellNoteToggle.tsx';

export const KIND_LABEL: Record<CellKind, string> = { markdown: 'Markdown', code: 'Code', sql: 'SQL' };

interface Props {
  cellId: CellId;
  kind: CellKind;
  peers: Peer[];
  canEdit: boolean;
  /** A <select> is costly to create: cells showing a placeholder (maybe a thousand) go without. */
  showKind: boolean;
  isFirst: boolean;
  isLast: boolean;
}

export function CellToolbar({ cellId, kind, peers, canEdit, showKind, isFirst, isLast }: Props) {
  const notebook = useNotebook();
  return (
    <div className="cell-toolbar">
      <PeerBadges peers={peers} />
      {kind === 'markdown' && showKind && <CellNoteToggle cellId={cellId} canEdit={canEdit} />}
      {canEdit && showKind && (
        <select
          className="cell-kind-select"
          data-testid="cell-kind"
          aria-label="Cell kind"
          value={kind}
          onChange={(e) => notebook.setKind(cellId, e.target.value as CellKind)}
        >
          {CELL_KINDS.map((k) => (
            <option key={k} value={k}>
              {KIND_LABEL[k]}
            </option>
          ))}
        </select>
      )}
      {canEdit && (
        <>
          <button className="icon-btn" data-testid="cell-up" title="Move up (Shift+Alt+↑)" aria-label="Move cell up" disabled={isFirst} onClick={() => notebook.move(cellId, -1)}>
            ↑
          </button>
          <button className="icon-btn" data-testid="cell-down" title="Move down (Shift+Alt+↓)" aria-label="Move cell down" disabled={isLast} onClick={() => notebook.move(cellId, 1)}>
            ↓
          </button>
          <button className="icon-btn danger" data-testid="cell-delete" title="Delete cell" aria-label="Delete cell" onClick={() => notebook.deleteCell(cellId)}>
            ✕
          </button>
        </>
      )}
    </div>
  );
}
