/**
 * The viewer toolbar: navigation mode (shared view / on my own / following someone), "bring
 * everyone here", named views, ROI stepping, and state import/export. Connected component: reads
 * awareness and the document, acts through the ViewerBinding and shared helpers.
 */
import { useState } from 'react';
import { canWrite } from '@plexus/shared';
import { useSession } from '../collab/context.tsx';
import { useViewerPeers, type ViewerPeer } from './useViewerPeers.ts';
import { useViewerUi } from './viewerUi.ts';
import type { ViewerBinding } from './viewerBinding.ts';
import { ViewsMenu } from './ViewsMenu.tsx';
import { StateMenu } from './StateMenu.tsx';
import { RoiStepper } from './RoiStepper.tsx';
import { AddLayerMenu } from './AddLayerMenu.tsx';

const MODES = [
  { kind: 'shared', label: 'Shared view', title: "Navigate the workspace's shared camera together" },
  { kind: 'alone', label: 'On my own', title: "Look around on your own; others' moves do not move you" },
] as const;

function modeLabel(p: ViewerPeer, peers: ViewerPeer[]): string {
  if (p.mode === 'follow') {
    const leader = peers.find((q) => q.user.id === p.following);
    return `following ${leader ? (leader.self ? 'you' : leader.user.name) : 'someone'}`;
  }
  return p.mode === 'shared' ? 'shared view' : 'on their own';
}

export function ViewerToolbar({ binding, token }: { binding: ViewerBinding | null; token: string }) {
  const session = useSession();
  const peers = useViewerPeers(session.awareness);
  const { mode, notice } = useViewerUi();
  const [showPeople, setShowPeople] = useState(false);
  const others = peers.filter((p) => !p.self);
  const disabled = !binding;
  const editable = canWrite(session.role);

  return (
    <div className="viewer-toolbar" data-testid="viewer-toolbar">
      <div className="viewer-toolbar-row">
        <div className="segmented" role="group" aria-label="Navigation">
          {MODES.map((m) => (
            <button
              key={m.kind}
              className={`btn btn-small${mode.kind === m.kind ? ' is-on' : ''}`}
              aria-pressed={mode.kind === m.kind}
              data-testid={`viewer-mode-${m.kind}`}
              disabled={disabled}
              title={m.title}
              onClick={() => binding?.setMode({ kind: m.kind })}
            >
              {m.label}
            </button>
          ))}
        </div>
        <div className="viewer-people popover-anchor">
          <button className="btn btn-small" data-testid="viewer-people" aria-expanded={showPeople} disabled={disabled} onClick={() => setShowPeople(!showPeople)}>
            Follow… {others.length > 0 && <span className="count">{others.length}</span>}
          </button>
          {showPeople && (
            <div className="popover viewer-people-list" role="dialog" aria-label="People in the viewer">
              {others.length === 0 && <p className="muted">Nobody else is here yet.</p>}
              {peers.map((p) => (
                <div key={p.clientId} className="viewer-person" data-testid="viewer-person" data-user={p.user.id}>
                  <span className="dot" style={{ background: p.user.color }} />
                  <span className="name">{p.self ? `${p.user.name} (you)` : p.user.name}</span>
                  <span className="muted" data-testid="viewer-person-mode">{modeLabel(p, peers)}</span>
                  {!p.self && (
                    <button
                      className="btn btn-small"
                      data-testid="viewer-follow"
                      disabled={mode.kind === 'follow' && mode.userId === p.user.id}
                      onClick={() => {
                        binding?.setMode({ kind: 'follow', userId: p.user.id, name: p.user.name });
                        setShowPeople(false);
                      }}
                    >
                      {mode.kind === 'follow' && mode.userId === p.user.id ? 'Following' : 'Follow'}
                    </button>
                  )}
                </div>
              ))}
            </div>
          )}
        </div>
        {editable && (
          <button
            className="btn btn-small"
            data-testid="viewer-bring-here"
            disabled={disabled}
            title="Make your view the shared view and bring everyone to it"
            onClick={() => binding?.bringEveryoneHere()}
          >
            Bring everyone here
          </button>
        )}
        <span className="spacer" />
        <AddLayerMenu disabled={disabled} />
        <RoiStepper binding={binding} token={token} />
        <ViewsMenu binding={binding} />
        <StateMenu binding={binding} />
      </div>
      <div className="viewer-status" data-testid="viewer-status" aria-live="polite">
        {mode.kind === 'follow' && <span>Following {mode.name} — move the view to stop.</span>}
        {mode.kind === 'alone' && (
          <span>
            On your own{notice ? ` (${notice})` : ''}.{' '}
            <button className="link-btn" onClick={() => binding?.setMode({ kind: 'shared' })}>
              Rejoin the shared view
            </button>
          </span>
        )}
        {mode.kind === 'shared' && <span className="muted">{notice ? `${notice[0]!.toUpperCase()}${notice.slice(1)} · ` : ''}Shared view: everyone here moves together.</span>}
        {others.filter((p) => p.mode === 'follow' && p.following === peers.find((q) => q.self)?.user.id).length > 0 && (
          <span className="muted" data-testid="viewer-followers">
            {' '}
            · {others.filter((p) => p.mode === 'follow' && p.following === peers.find((q) => q.self)?.user.id).map((p) => p.user.name).join(', ')} following you
          </span>
        )}
      </div>
    </div>
  );
}
