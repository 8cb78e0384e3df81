/**
 * The workspace header's fork controls: "forked from X" (a link to the source), the student's
 * raised hand in a hand-out fork, the teacher's Class toggle (the roster panel) and Make a copy
 * (a fork of this workspace that the person owns; view-only people may make one too).
 * Effects: document writes (the hand), HTTP (the fork), navigation.
 */
import { useState } from 'react';
import { ApiError } from '../api/http.ts';
import { storeToken } from '../api/tokens.ts';
import { forkWorkspace } from '../api/workspaces.ts';
import { navigate, workspacePath } from '../app/router.ts';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { useLocalUser } from '../state/user.ts';
import { setHand } from '@plexus/shared';
import { ToggleButton } from '../ui/ToggleButton.tsx';
import { useForkedFrom, useHand, useRoster, useRosterPanel } from './useClassroom.ts';
import './forks.css';

/** "forked from <source>", linking to it, when this workspace is a fork. */
export function ForkOrigin() {
  const session = useSession();
  const from = useForkedFrom(session.doc);
  if (!from) return null;
  const href = workspacePath(from.workspace);
  return (
    <span className="fork-origin muted" data-testid="forked-from" title={`Copied ${new Date(from.at).toLocaleString()}${from.checkpoint ? ' from a checkpoint' : ''}`}>
      {from.handout ? 'your copy of ' : 'forked from '}
      <a
        href={href}
        data-testid="forked-from-link"
        onClick={(e) => {
          e.preventDefault();
          navigate(href);
        }}
      >
        {from.name}
      </a>
    </span>
  );
}

/** Raise / lower the hand in a hand-out fork (its people; the teacher lowers it too). */
function RaiseHand() {
  const session = useSession();
  const user = useLocalUser((s) => s.user);
  const from = useForkedFrom(session.doc);
  const hand = useHand(session.doc);
  const canEdit = useCanEdit();
  if (!from?.handout || !canEdit) return null;
  return (
    <ToggleButton
      on={!!hand}
      testId="raise-hand"
      title={hand ? 'Lower your hand' : 'Raise your hand: your teacher sees it on the class roster'}
      onToggle={() => setHand(session.doc, hand ? null : { by: user.id, name: user.name, at: Date.now() }, session.origin)}
    >
      {hand ? '✋ Hand raised' : '✋ Raise hand'}
    </ToggleButton>
  );
}

/** The Class toggle: shown once someone has a fork from this workspace's hand-out links. */
function ClassToggle() {
  const session = useSession();
  const roster = useRoster(session.doc);
  const open = useRosterPanel((s) => s.open);
  const setOpen = useRosterPanel((s) => s.setOpen);
  if (roster.length === 0) return null;
  const hands = roster.filter((e) => e.hand).length;
  return (
    <ToggleButton on={open} onToggle={() => setOpen(!open)} testId="roster-toggle" title="Show or hide the class: each student's copy from your hand-out link">
      Class ({roster.length}){hands ? <span className="roster-hands"> ✋{hands}</span> : null}
    </ToggleButton>
  );
}

/** Forks a workspace (as it stands, or at a checkpoint) into one the person owns, and opens it. */
export async function forkAndOpen(token: string, workspaceId: string, user: { id: string; name: string }, checkpoint?: string): Promise<void> {
  const r = await forkWorkspace(token, workspaceId, { device: user.id, personName: user.name, ...(checkpoint ? { checkpoint } : {}) });
  if (r.token) storeToken(r.token);
  navigate(workspacePath(r.workspace.id));
}

/** Make a copy: forks this workspace into one the person owns and opens it. */
function ForkButton({ token }: { token: string }) {
  const session = useSession();
  const user = useLocalUser((s) => s.user);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const fork = async () => {
    setBusy(true);
    setError(null);
    try {
      await forkAndOpen(token, session.workspace.id, user);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
      setBusy(false);
    }
  };
  return (
    <button
      className="btn btn-small"
      data-testid="fork"
      disabled={busy}
      title={error ?? 'Make a copy of this workspace (cells, outputs, viewer, uploaded tables) that you own'}
      onClick={fork}
    >
      {busy ? 'Copying…' : error ? 'Copy failed' : 'Make a copy'}
    </button>
  );
}

export function ForkActions({ token }: { token: string }) {
  return (
    <>
      <RaiseHand />
      <ClassToggle />
      <ForkButton token={token} />
    </>
  );
}
