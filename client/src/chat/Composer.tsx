/** The chat input: Enter sends, Shift+Enter adds a line; empty messages are refused. */
import { useState, type KeyboardEvent } from 'react';
import { ChatMessageError, MAX_CHAT_MESSAGE_CHARS, postMessage } from '@plexus/shared';
import { setFocus } from '../collab/presenceIndex.ts';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { useLocalUser } from '../state/user.ts';

export function Composer({ onSent }: { onSent(): void }) {
  const session = useSession();
  const canEdit = useCanEdit();
  const user = useLocalUser((s) => s.user);
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);

  if (!canEdit) {
    return (
      <div className="composer is-disabled">
        <textarea data-testid="chat-input" disabled placeholder="View only" rows={2} aria-label="Chat message" />
        <p className="composer-note">View only — you can read the chat but not post.</p>
      </div>
    );
  }

  const send = () => {
    if (text.trim() === '') return;
    try {
      session.undoManager.stopCapturing();
      postMessage(
        session.doc,
        { author: { id: user.id, name: user.name, kind: 'person', color: user.color }, text },
        session.origin,
      );
      setText('');
      setError(null);
      onSent();
    } catch (e) {
      if (e instanceof ChatMessageError) setError(e.message);
      else throw e;
    }
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      send();
    }
  };

  // A counter once the text nears the limit; the refusal itself is the helper's own message.
  const nearLimit = text.length > MAX_CHAT_MESSAGE_CHARS * 0.9;
  return (
    <div className="composer">
      <textarea
        data-testid="chat-input"
        aria-label="Chat message"
        placeholder="Message the workspace… (Enter to send, Shift+Enter for a new line)"
        rows={2}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          if (error) setError(null);
        }}
        onKeyDown={onKeyDown}
        onFocus={() => setFocus(session.awareness, { panel: 'chat', cellId: null })}
      />
      {nearLimit && (
        <p className={`composer-count${text.length > MAX_CHAT_MESSAGE_CHARS ? ' is-over' : ''}`}>
          {text.length.toLocaleString()} / {MAX_CHAT_MESSAGE_CHARS.toLocaleString()}
        </p>
      )}
      {error && (
        <p className="composer-error" role="alert" data-testid="chat-error">
          {error}
        </p>
      )}
    </div>
  );
}
