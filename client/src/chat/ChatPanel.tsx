/**
 * The chat panel: the agent's status and mode, the newest messages (older ones on request) in
 * threads, kept scrolled to the newest one unless the reader has scrolled up, and the composer.
 * Ctrl/Cmd+. stops the newest agent run that is still going (Escape never does).
 */
import { lazy, Suspense, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { canWrite, isFinished, requestRunStop } from '@plexus/shared';
import { useSession } from '../collab/context.tsx';
import { useLocalUser } from '../state/user.ts';
import { AgentHeader } from '../agent/AgentHeader.tsx';
import { useRuns } from '../agent/useAgent.ts';
import { ChatMessage } from './ChatMessage.tsx';
import { threadOrder } from './thread.ts';
import { useMessages } from './useMessages.ts';

/** The composer's editor (tiptap) comes as its own chunk, shared with the markdown cells' editor. */
const Composer = lazy(() => import('./Composer.tsx').then((m) => ({ default: m.Composer })));

/** Where the composer will be, while its code loads (nothing to type into yet). */
function ComposerLoading() {
  return (
    <div className="composer is-loading" aria-busy="true">
      <div className="composer-field">
        <div className="composer-placeholder">Message…</div>
      </div>
    </div>
  );
}

const PAGE = 200;
/** Within this many px of the bottom counts as "following the conversation". */
const STICKY_PX = 48;

export function ChatPanel() {
  const session = useSession();
  const userId = useLocalUser((s) => s.user.id);
  const [limit, setLimit] = useState(PAGE);
  const { messages, total } = useMessages(session.doc, limit);
  const runs = useRuns(session.doc);
  const threaded = useMemo(() => threadOrder(messages), [messages]);
  const listRef = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  // Something arrived while the reader was scrolled up: offer a way back down.
  const [unseen, setUnseen] = useState(false);

  const onScroll = () => {
    const el = listRef.current!;
    stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < STICKY_PX;
    if (stick.current && unseen) setUnseen(false);
  };

  const toNewest = () => {
    const el = listRef.current;
    if (el) el.scrollTop = el.scrollHeight;
    stick.current = true;
    setUnseen(false);
  };

  // After every change (new message, streamed text, run progress), follow the newest unless scrolled up.
  useLayoutEffect(() => {
    const el = listRef.current;
    if (!el) return;
    if (stick.current) el.scrollTop = el.scrollHeight;
    else setUnseen(true);
  }, [messages, runs]);

  // Ctrl/Cmd+. stops the newest run still going, wherever the focus is.
  const runsRef = useRef(runs);
  runsRef.current = runs;
  useEffect(() => {
    if (!canWrite(session.role)) return;
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.key !== '.') return;
      const live = runsRef.current.all.filter((r) => !isFinished(r.status) && !r.stop);
      const newest = live[live.length - 1];
      if (!newest) return;
      e.preventDefault();
      const user = useLocalUser.getState().user;
      requestRunStop(session.doc, newest.id, { id: user.id, name: user.name }, session.origin);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [session]);

  return (
    <div className="chat-panel" data-testid="chat-panel">
      <div className="panel-title">Chat</div>
      <AgentHeader />
      <div className="chat-list" ref={listRef} onScroll={onScroll} data-testid="chat-list">
        {total > messages.length && (
          <button className="link-btn chat-older" onClick={() => setLimit((l) => l + PAGE)}>
            Show earlier messages ({total - messages.length})
          </button>
        )}
        {messages.length === 0 && <p className="chat-empty">No messages yet. Say hello to your collaborators, or ask @agent.</p>}
        <ul>
          {threaded.map(({ m, reply }) => (
            <ChatMessage key={m.id} m={m} own={m.author.id === userId} run={runs.byMessage.get(m.id) ?? null} reply={reply} />
          ))}
        </ul>
      </div>
      {unseen && (
        <button className="chat-jump" onClick={toNewest}>
          New messages ↓
        </button>
      )}
      <Suspense fallback={<ComposerLoading />}>
        <Composer
          onSent={() => {
            stick.current = true;
            setUnseen(false);
          }}
        />
      </Suspense>
    </div>
  );
}
