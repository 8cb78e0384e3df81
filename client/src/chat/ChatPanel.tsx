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
import { useAgentUi } from '../agent/agentUi.ts';
import { ChatMessage } from './ChatMessage.tsx';
import { threadOrder } from './thread.ts';
import { useMessages } from './useMessages.ts';

/** The composer's editor (tiptap) comes as its own chunk, shared with the markdown cells' editor. */
const Composer = lazy(() => import('./Composer.tsx').then((m) => ({ default: m.Composer })));

/**
 * Where the composer will be, until the page is idle after opening (its editor costs the notebook's
 * first editors ~50 ms on a slow machine) or someone goes to type there: `onWant` then brings it, focused.
 */
function ComposerLoading({ onWant }: { onWant?: () => void }) {
  return (
    <div className="composer is-loading" aria-busy="true" data-testid="chat-composer-waiting" tabIndex={onWant ? 0 : undefined} onPointerDown={onWant} onFocus={onWant}>
      <div className="composer-field">
        <div className="composer-placeholder">Message…</div>
      </div>
    </div>
  );
}

/** The composer is brought this long after the panel at the latest, idle or not (ms). */
const COMPOSER_IDLE_TIMEOUT_MS = 1500;

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
  // The composer once the page is idle, or at once with the caret in it when someone goes to type
  // there (or "Reply" on an answer wants it).
  const [composer, setComposer] = useState<'waiting' | 'idle' | 'wanted'>('waiting');
  const replyTo = useAgentUi((s) => s.replyTo);
  useEffect(() => {
    if (composer !== 'waiting') return;
    if (replyTo) return setComposer('wanted');
    const h = requestIdleCallback(() => setComposer('idle'), { timeout: COMPOSER_IDLE_TIMEOUT_MS });
    return () => cancelIdleCallback(h);
  }, [composer, replyTo]);

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

  // After every change (new message, streamed text, run progress), follow the newest unless scrolled
  // up — in the coming frame, before it is painted: reading the list's height right here would lay
  // the whole page out at once (~60 ms while a workspace opens on a slow machine, and again for
  // every chunk an agent streams), only for the rest of this task to change it again.
  useLayoutEffect(() => {
    const el = listRef.current;
    if (!el) return;
    if (!stick.current) {
      setUnseen(true);
      return;
    }
    const frame = requestAnimationFrame(() => {
      if (stick.current) el.scrollTop = el.scrollHeight;
    });
    return () => cancelAnimationFrame(frame);
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
      {composer === 'waiting' ? (
        <ComposerLoading onWant={() => setComposer('wanted')} />
      ) : (
        <Suspense fallback={<ComposerLoading />}>
          <Composer
            autoFocus={composer === 'wanted'}
            onSent={() => {
              stick.current = true;
              setUnseen(false);
            }}
          />
        </Suspense>
      )}
    </div>
  );
}
