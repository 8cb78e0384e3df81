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
import { ForkActions, ForkOrigin } from '../forks/ForkHeader.tsx';
import { ToggleButton } from '../ui/ToggleButton.tsx';
import { PresentButton } from '../presenter/PresenterBar.tsx';

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
  const historyOpen = useUi((s) => s.historyOpen);
  const setHistoryOpen = useUi((s) => s.setHistoryOpen);
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
      <ForkOrigin />
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
      <ToggleButton on={historyOpen} onToggle={() => setHistoryOpen(!historyOpen)} testId="history-toggle" title="Checkpoints and who changed what; preview, compare, restore or fork from any checkpoint">
        History
      </ToggleButton>
      <ToggleButton on={atlasOpen} onToggle={() => setAtlasOpen(!atlasOpen)} testId="atlas-toggle" title="Show or hide the atlas: shared 2-D maps of a table's rows, brushed together">
        Atlas
      </ToggleButton>
      <ToggleButton on={!viewerCollapsed} onToggle={toggleViewer} title="Show or hide the viewer panel">
        Viewer panel
      </ToggleButton>
      <ToggleButton on={!chatCollapsed} onToggle={toggleChat} testId="toggle-chat" title="Show or hide the chat">
        Chat
      </ToggleButton>
      <PresentButton />
      <ForkActions token={token} />
      <Avatars awareness={session.awareness} />
      <NameEditor />
      {canManage(session.role) && <ShareMenu workspaceId={session.workspace.id} token={token} />}
      <HelpPopover />
    </header>
  );
}
