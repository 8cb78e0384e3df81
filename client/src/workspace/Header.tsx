/** The workspace header bar: title, connection, presence, your name, undo/redo, share, help. */
import { canManage } from '@plexus/shared';
import { useCanEdit, useSession, useSessionSnapshot } from '../collab/context.tsx';
import { navigate } from '../app/router.ts';
import { Avatars } from '../presence/Avatars.tsx';
import { NameEditor } from '../presence/NameEditor.tsx';
import { ConnectionPill } from './ConnectionPill.tsx';
import { HelpPopover } from './HelpPopover.tsx';
import { ShareMenu } from './ShareMenu.tsx';
import { TitleInput } from './TitleInput.tsx';
import { useUndoState } from './useUndoState.ts';
import { useUi } from '../state/ui.ts';

export function Header({ token }: { token: string }) {
  const session = useSession();
  const { status } = useSessionSnapshot();
  const canEdit = useCanEdit();
  const { canUndo, canRedo } = useUndoState(session.undoManager);
  const viewerCollapsed = useUi((s) => s.viewerCollapsed);
  const toggleViewer = useUi((s) => s.toggleViewer);
  const chatCollapsed = useUi((s) => s.chatCollapsed);
  const toggleChat = useUi((s) => s.toggleChat);
  const atlasOpen = useUi((s) => s.atlasOpen);
  const setAtlasOpen = useUi((s) => s.setAtlasOpen);
  return (
    <header className="app-header">
      <a
        className="brand"
        href="/"
        title="All workspaces"
        onClick={(e) => {
          e.preventDefault();
          navigate('/');
        }}
      >
        <span className="brand-dot" /> Plexus
      </a>
      <span className="header-sep" aria-hidden="true">
        /
      </span>
      <TitleInput />
      <ConnectionPill status={status} />
      {session.role === 'viewer' && <span className="role-tag">view only</span>}
      <div className="header-spacer" />
      {canEdit && (
        <div className="btn-group" role="group" aria-label="Undo and redo">
          <button className="icon-btn" data-testid="undo" title="Undo your last cell change (Ctrl+Z outside editors)" aria-label="Undo" disabled={!canUndo} onClick={() => session.undoManager.undo()}>
            ↶
          </button>
          <button className="icon-btn" data-testid="redo" title="Redo (Ctrl+Shift+Z outside editors)" aria-label="Redo" disabled={!canRedo} onClick={() => session.undoManager.redo()}>
            ↷
          </button>
        </div>
      )}
      <button
        className={`btn btn-small toggle${atlasOpen ? ' is-on' : ''}`}
        aria-pressed={atlasOpen}
        data-testid="atlas-toggle"
        title="Show or hide the atlas: shared 2-D maps of a table's rows, brushed together"
        onClick={() => setAtlasOpen(!atlasOpen)}
      >
        Atlas
      </button>
      <button className={`btn btn-small toggle${viewerCollapsed ? '' : ' is-on'}`} aria-pressed={!viewerCollapsed} title="Show or hide the viewer panel" onClick={toggleViewer}>
        Viewer panel
      </button>
      <button className={`btn btn-small toggle${chatCollapsed ? '' : ' is-on'}`} aria-pressed={!chatCollapsed} data-testid="toggle-chat" title="Show or hide the chat" onClick={toggleChat}>
        Chat
      </button>
      <Avatars awareness={session.awareness} />
      <NameEditor />
      {canManage(session.role) && <ShareMenu workspaceId={session.workspace.id} token={token} />}
      <HelpPopover />
    </header>
  );
}
