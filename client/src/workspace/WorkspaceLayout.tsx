/**
 * The workspace page once a session exists: header, banners, and the panels (notebook, the atlas
 * when open, viewer, chat) with splitters whose sizes live in the zustand UI store.
 */
import { useEffect } from 'react';
import { CloseCodes, canWrite } from '@plexus/shared';
import { useSession, useSessionSnapshot } from '../collab/context.tsx';
import { ChatPanel } from '../chat/ChatPanel.tsx';
import { Notebook } from '../notebook/Notebook.tsx';
import { useUi } from '../state/ui.ts';
import { Notice } from '../ui/Notice.tsx';
import { Splitter } from '../ui/Splitter.tsx';
import { Header } from './Header.tsx';
import { RecoveryPanel } from './RecoveryPanel.tsx';
import { ViewerPanel } from '../viewer/ViewerPanel.tsx';
import { ApiTokenContext } from '../api/tokenContext.ts';
import { DataPanel } from '../data/DataPanel.tsx';
import { DropZone } from '../data/DropZone.tsx';
import { NotebookToolbar } from '../notebook/NotebookToolbar.tsx';
import { AnalysesPanel } from '../analyses/AnalysesPanel.tsx';
import { useRoiLayerSync } from '../analyses/useJobs.ts';
import { AtlasPanel } from '../atlas/AtlasPanel.tsx';
import { RosterPanel } from '../forks/RosterPanel.tsx';
import { HistoryPanel } from '../history/HistoryPanel.tsx';
import { PresenterBar } from '../presenter/PresenterBar.tsx';
import { FirstScreenView, useFirstScreen } from '../notebook/FirstScreenView.tsx';

/** True when a key event belongs to a text field or editor (its own undo, its own `?`). */
const inEditable = (t: EventTarget | null) =>
  t instanceof Element && !!t.closest('.cm-editor, .ProseMirror, input, textarea, select, [contenteditable="true"]');

export function WorkspaceLayout({ token }: { token: string }) {
  const session = useSession();
  const snap = useSessionSnapshot();
  const firstScreen = useFirstScreen();
  const ui = useUi();
  useRoiLayerSync(session);

  // Structural undo/redo and the help key, when the focus is not inside an editor.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || inEditable(e.target)) return;
      const mod = e.ctrlKey || e.metaKey;
      if (mod && !e.altKey && e.code === 'KeyZ' && canWrite(session.role)) {
        e.preventDefault();
        if (e.shiftKey) session.undoManager.redo();
        else session.undoManager.undo();
      } else if (mod && !e.altKey && !e.shiftKey && e.code === 'KeyY' && canWrite(session.role)) {
        e.preventDefault();
        session.undoManager.redo();
      } else if (e.key === '?' && !mod && !e.altKey) {
        e.preventDefault();
        useUi.getState().setHelpOpen(!useUi.getState().helpOpen);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [session]);

  const problem = snap.problem;
  return (
    <ApiTokenContext.Provider value={token}>
    <div className="workspace-page">
      <Header token={token} />
      <PresenterBar />
      {session.role === 'viewer' && (
        <div className="banner banner-readonly" data-testid="read-only-banner" role="status">
          View only — you can read and follow along, but not edit this workspace.
        </div>
      )}
      {problem && (
        <Notice
          tone={problem.action === 'notice' ? 'warning' : 'error'}
          testId="session-problem"
          onDismiss={problem.action === 'notice' ? () => session.dismissProblem() : undefined}
        >
          <span data-reason={problem.reason}>{problem.message}</span>
        </Notice>
      )}
      {problem?.reason === CloseCodes.NeedsRecovery.reason && session.role === 'owner' && <RecoveryPanel workspaceId={session.workspace.id} token={token} />}
      <div className="workspace-body" data-testid={snap.ready ? 'doc-ready' : 'doc-loading'} data-doc-ready={snap.ready ? 'true' : 'false'}>
        <main className="panel notebook-panel" aria-label="Notebook">
          {snap.ready ? (
            <DropZone>
              <NotebookToolbar />
              <RosterPanel token={token} />
              {ui.historyOpen && <HistoryPanel token={token} onClose={() => ui.setHistoryOpen(false)} />}
              {ui.dataOpen && <DataPanel />}
              {ui.analysesOpen && <AnalysesPanel onClose={() => ui.setAnalysesOpen(false)} />}
              <Notebook />
            </DropZone>
          ) : firstScreen ? (
            <FirstScreenView screen={firstScreen} />
          ) : (
            <div className="loading">Loading workspace…</div>
          )}
        </main>
        {ui.atlasOpen && (
          <>
            <Splitter size={ui.atlasWidth} onResize={ui.setAtlasWidth} side="right" label="Resize atlas" testId="atlas-splitter" />
            <section className="panel atlas-section" style={{ width: ui.atlasWidth }} aria-label="Atlas">
              {snap.ready ? <AtlasPanel onClose={() => ui.setAtlasOpen(false)} /> : <div className="loading">Loading the atlas…</div>}
            </section>
          </>
        )}
        {!ui.viewerCollapsed && (
          <>
            <Splitter size={ui.viewerWidth} onResize={ui.setViewerWidth} side="right" label="Resize viewer" testId="viewer-splitter" />
            <section className="panel" style={{ width: ui.viewerWidth }}>
              {snap.ready ? <ViewerPanel token={token} /> : <div className="loading">Loading viewer…</div>}
            </section>
          </>
        )}
        {!ui.chatCollapsed && (
          <>
            <Splitter size={ui.chatWidth} onResize={ui.setChatWidth} side="right" label="Resize chat" testId="chat-splitter" />
            <aside className="panel" style={{ width: ui.chatWidth }} aria-label="Chat">
              <ChatPanel />
            </aside>
          </>
        )}
      </div>
    </div>
    </ApiTokenContext.Provider>
  );
}
