/** One chat message: author (name, colour), time, text and a streaming indicator. */
import { memo } from 'react';
import type { ChatMessageView } from '@plexus/shared';
import { initials } from '../presence/initials.ts';
import { MessageText } from './MessageText.tsx';

const timeFmt = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dateFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

function when(ms: number): string {
  if (!ms) return '';
  const d = new Date(ms);
  return d.toDateString() === new Date().toDateString() ? timeFmt.format(d) : dateFmt.format(d);
}

export const ChatMessage = memo(function ChatMessage({ m, own }: { m: ChatMessageView; own: boolean }) {
  const color = m.author.color ?? (m.author.kind === 'agent' ? '#6b5bd6' : '#7a828c');
  return (
    <li
      className={`chat-msg kind-${m.author.kind}${own ? ' is-own' : ''} status-${m.status}`}
      data-testid="chat-message"
      data-message-id={m.id}
      data-status={m.status}
    >
      <span className="chat-avatar" style={{ backgroundColor: color }} aria-hidden="true">
        {m.author.kind === 'agent' ? '✦' : initials(m.author.name)}
      </span>
      <div className="chat-msg-main">
        <div className="chat-msg-head">
          <span className="chat-author" style={{ color }}>
            {m.author.name}
          </span>
          <time className="chat-time" dateTime={new Date(m.created || 0).toISOString()}>
            {when(m.created)}
          </time>
          {m.status === 'streaming' && <span className="chat-streaming" title="Still writing…" aria-label="still writing" />}
          {m.status === 'stopped' && <span className="chat-flag">stopped</span>}
          {m.status === 'error' && <span className="chat-flag error">error</span>}
        </div>
        <div className="chat-text">
          <MessageText text={m.text} />
        </div>
      </div>
    </li>
  );
});
