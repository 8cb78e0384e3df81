/**
 * One chat message: author (name, colour), time, text and a streaming indicator. Messages of an
 * agent run also show the run (status, plan, tool activity, Stop / Undo), proposal cards and
 * suggestions; agent answers get a Reply that follows up their thread.
 */
import { memo } from 'react';
import { proposalOf, readSuggestions, type ChatMessageView, type RunView } from '@plexus/shared';
import { useCanEdit } from '../collab/context.tsx';
import { initials } from '../presence/initials.ts';
import { useAgentUi } from '../agent/agentUi.ts';
import { ProposalCard } from '../agent/ProposalCard.tsx';
import { RunBlock } from '../agent/RunBlock.tsx';
import { SuggestionBar } from '../agent/SuggestionBar.tsx';
import { MessageText } from './MessageText.tsx';

const timeFmt = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dateFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

function when(ms: number): string {
  if (!ms) return '';
  const d = new Date(ms);
  return d.toDateString() === new Date().toDateString() ? timeFmt.format(d) : dateFmt.format(d);
}

interface Props {
  m: ChatMessageView;
  own: boolean;
  /** The run this message asks for or answers, if any. */
  run: RunView | null;
  /** Indented under the message it answers. */
  reply: boolean;
}

export const ChatMessage = memo(function ChatMessage({ m, own, run, reply }: Props) {
  const canEdit = useCanEdit();
  const color = m.author.color ?? (m.author.kind === 'agent' ? '#6b5bd6' : '#7a828c');
  const proposal = proposalOf(m.map, m.id);
  const isAgent = m.author.kind === 'agent';
  // The run shows on its answer; on the request while there is no answer yet.
  const showRun = !!run && !proposal && (run.replyId === m.id || (run.request.messageId === m.id && !run.replyId));
  const suggestions = isAgent ? readSuggestions(m.map) : null;
  const answer = isAgent && !!m.runId && !proposal;
  return (
    <li
      className={`chat-msg kind-${m.author.kind}${own ? ' is-own' : ''}${reply ? ' is-reply' : ''} status-${m.status}`}
      data-testid="chat-message"
      data-message-id={m.id}
      data-status={m.status}
      data-run-id={m.runId}
    >
      <span className="chat-avatar" style={{ backgroundColor: color }} aria-hidden="true">
        {isAgent ? '✦' : initials(m.author.name)}
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
          {answer && canEdit && (
            <button
              className="link-btn chat-reply-btn"
              data-testid="chat-reply"
              aria-label={`Reply to ${m.author.name}: follow up this answer`}
              onClick={() => useAgentUi.getState().setReplyTo({ runId: m.runId!, messageId: m.id, label: `${m.author.name}: ${m.text.slice(0, 40)}${m.text.length > 40 ? '…' : ''}` })}
            >
              Reply
            </button>
          )}
        </div>
        {/* An answer's run (status, Stop, plan, tool activity) sits above its text: the text grows
            while it streams, and a Stop button below it would move away from the pointer. */}
        {showRun && answer && <RunBlock run={run} />}
        {proposal ? (
          <ProposalCard view={proposal} />
        ) : (
          // Agent answers stream in: announce them politely to screen readers.
          <div className="chat-text" aria-live={answer ? 'polite' : undefined} aria-busy={m.status === 'streaming' || undefined}>
            <MessageText text={m.text} toAgent={!!m.runId && m.author.kind === 'person'} />
          </div>
        )}
        {showRun && !answer && <RunBlock run={run} />}
        {suggestions && <SuggestionBar suggestions={suggestions} runId={m.runId} messageId={m.id} />}
      </div>
    </li>
  );
});
