/**
 * The chat panel: the newest messages (older ones on request), kept scrolled to the newest one
 * unless the reader has scrolled up, and the composer.
 */
import { useLayoutEffect, useRef, useState } from 'react';
import { useSession } from '../collab/context.tsx';
import { useLocalUser } from '../state/user.ts';
import { ChatMessage } from './ChatMessage.tsx';
import { Composer } from './Composer.tsx';
import { useMessages } from './useMessages.ts';

const PAGE = 200;
/** Within this many px of the bottom counts as "following the conversation". */
const STICKY_PX = 48;

export function ChatPanel() {
  const session = useSession();
  const userId = useLocalUser((s) => s.user.id);
  const [limit, setLimit] = useState(PAGE);
  const { messages, total } = useMessages(session.doc, limit);
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

  // After every change (new message, streamed text), follow the newest unless scrolled up.
  useLayoutEffect(() => {
    const el = listRef.current;
    if (!el) return;
    if (stick.current) el.scrollTop = el.scrollHeight;
    else setUnseen(true);
  }, [messages]);

  return (
    <div className="chat-panel" data-testid="chat-panel">
      <div className="panel-title">Chat</div>
      <div className="chat-list" ref={listRef} onScroll={onScroll} data-testid="chat-list">
        {total > messages.length && (
          <button className="link-btn chat-older" onClick={() => setLimit((l) => l + PAGE)}>
            Show earlier messages ({total - messages.length})
          </button>
        )}
        {messages.length === 0 && <p className="chat-empty">No messages yet. Say hello to your collaborators.</p>}
        <ul>
          {messages.map((m) => (
            <ChatMessage key={m.id} m={m} own={m.author.id === userId} />
          ))}
        </ul>
      </div>
      {unseen && (
        <button className="chat-jump" onClick={toNewest}>
          New messages ↓
        </button>
      )}
      <Composer
        onSent={() => {
          stick.current = true;
          setUnseen(false);
        }}
      />
    </div>
  );
}
