/**
 * The chat input: a small single-purpose tiptap editor (a local draft, not collaborative). Enter
 * sends, Shift+Enter adds a line; empty and oversized messages are refused with the helper's
 * message. `@` opens a list of whom to address (the agent); `@agent` typed by hand becomes the same
 * mention once the word is complete (typedMention.ts); the "Ask agent" toggle addresses one
 * message to the agent without a mention (it turns off after sending and on entering another
 * workspace). A message to the agent requests a run (agent/send.ts), following up the thread
 * chosen with "Reply" on an agent answer.
 */
import { useEffect, useRef, useState } from 'react';
import { EditorContent, useEditor, type Editor } from '@tiptap/react';
import { Extension } from '@tiptap/core';
import StarterKit from '@tiptap/starter-kit';
import Mention from '@tiptap/extension-mention';
import type { SuggestionKeyDownProps, SuggestionProps } from '@tiptap/suggestion';
import { ChatMessageError, MAX_CHAT_MESSAGE_CHARS } from '@plexus/shared';
import { setFocus } from '../collab/presenceIndex.ts';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { useLocalUser } from '../state/user.ts';
import { useAgentUi } from '../agent/agentUi.ts';
import { readAgentPeer } from '../agent/useAgent.ts';
import { sendChatMessage } from '../agent/send.ts';
import { mentionsAgentByText, typedAgentMentions } from './typedMention.ts';

/** Whom `@` can address. */
interface Addressee {
  id: string;
  label: string;
  hint: string;
}
const ADDRESSEES: Addressee[] = [{ id: 'agent', label: 'agent', hint: 'the AI assistant of this workspace' }];

interface Popup {
  items: Addressee[];
  index: number;
  pick(a: Addressee): void;
}

/** Text of the draft: mentions as `@label`, paragraphs and line breaks as newlines. */
const draftText = (editor: Editor) => editor.getText({ blockSeparator: '\n' });

function mentionsAgent(editor: Editor): boolean {
  let found = false;
  editor.state.doc.descendants((n) => {
    if (n.type.name === 'mention' && n.attrs.id === 'agent') found = true;
    return !found;
  });
  return found;
}

/** Turns every complete `@agent` typed as text into the mention chip; returns whether it changed anything. */
function convertTypedMentions(editor: Editor): boolean {
  const { state } = editor;
  const mention = state.schema.nodes.mention;
  if (!mention) return false;
  const found: Array<{ from: number; to: number }> = [];
  state.doc.descendants((node, pos) => {
    if (node.isText && node.text) for (const m of typedAgentMentions(node.text, false)) found.push({ from: pos + m.index, to: pos + m.index + m.length });
  });
  if (found.length === 0) return false;
  const tr = state.tr;
  for (const f of found.reverse()) tr.replaceWith(f.from, f.to, mention.create({ id: 'agent', label: 'agent' }));
  editor.view.dispatch(tr);
  return true;
}

export function Composer({ onSent, autoFocus = false }: { onSent(): void; autoFocus?: boolean }) {
  const canEdit = useCanEdit();
  if (!canEdit) {
    return (
      <div className="composer is-disabled">
        <textarea data-testid="chat-input" disabled placeholder="View only" rows={2} aria-label="Chat message" />
        <p className="composer-note">View only — you can read the chat but not post.</p>
      </div>
    );
  }
  return <DraftComposer onSent={onSent} autoFocus={autoFocus} />;
}

function DraftComposer({ onSent, autoFocus }: { onSent(): void; autoFocus: boolean }) {
  const session = useSession();
  const user = useLocalUser((s) => s.user);
  const askAgent = useAgentUi((s) => s.askAgent);
  const replyTo = useAgentUi((s) => s.replyTo);
  const [text, setText] = useState('');
  const [hasMention, setHasMention] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [popup, setPopupState] = useState<Popup | null>(null);
  // The editor's key handlers run outside React: they read the latest state through refs.
  const popupRef = useRef<Popup | null>(null);
  const setPopup = (p: Popup | null) => {
    popupRef.current = p;
    setPopupState(p);
  };
  const sendRef = useRef<() => void>(() => {});

  const editor = useEditor({
    // Brought because someone went to type here (ChatPanel): the caret goes in at once.
    autofocus: autoFocus ? 'end' : false,
    extensions: [
      StarterKit.configure({
        blockquote: false, bold: false, bulletList: false, code: false, codeBlock: false, heading: false, horizontalRule: false,
        italic: false, listItem: false, orderedList: false, strike: false, link: false, underline: false, trailingNode: false,
        listKeymap: false, dropcursor: false, gapcursor: false,
      }),
      Mention.configure({
        renderText: ({ node }) => `@${node.attrs.label ?? node.attrs.id}`,
        renderHTML: ({ node }) => ['span', { class: 'mention', 'data-mention': node.attrs.id }, `@${node.attrs.label ?? node.attrs.id}`],
        suggestion: {
          char: '@',
          items: ({ query }) => ADDRESSEES.filter((a) => a.label.startsWith(query.toLowerCase())),
          render: () => {
            const show = (p: SuggestionProps<Addressee>) =>
              setPopup(p.items.length ? { items: p.items, index: Math.min(popupRef.current?.index ?? 0, p.items.length - 1), pick: (a) => p.command({ id: a.id, label: a.label }) } : null);
            return {
              onStart: show,
              onUpdate: show,
              onExit: () => setPopup(null),
              onKeyDown: ({ event }: SuggestionKeyDownProps) => {
                const cur = popupRef.current;
                if (event.key === 'Escape') {
                  setPopup(null);
                  return true;
                }
                if (!cur) return false;
                const n = cur.items.length;
                if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
                  setPopup({ ...cur, index: (cur.index + (event.key === 'ArrowDown' ? 1 : n - 1)) % n });
                  return true;
                }
                if (event.key === 'Enter' || event.key === 'Tab') {
                  cur.pick(cur.items[cur.index]!);
                  return true;
                }
                return false;
              },
            };
          },
        },
      }),
      Extension.create({
        name: 'sendOnEnter',
        priority: 1000,
        addKeyboardShortcuts: () => ({
          // While the @ list is open its own handler picks; otherwise Enter sends.
          Enter: () => {
            if (popupRef.current) return false;
            sendRef.current();
            return true;
          },
        }),
      }),
    ],
    editorProps: {
      attributes: {
        'data-testid': 'chat-input',
        'aria-label': 'Chat message',
        'aria-multiline': 'true',
        role: 'textbox',
        class: 'composer-input',
      },
    },
    onUpdate: ({ editor: e }) => {
      if (convertTypedMentions(e)) return; // dispatched a change: this runs again with it
      setText(draftText(e));
      setHasMention(mentionsAgent(e));
      setError(null);
    },
    onFocus: () => setFocus(session.awareness, { panel: 'chat', cellId: null }),
  });

  // A new workspace starts with the toggle off and no follow-up: neither carries over.
  useEffect(() => {
    useAgentUi.getState().setAskAgent(false);
    useAgentUi.getState().setReplyTo(null);
  }, [session]);

  const toAgent = askAgent || hasMention || !!replyTo || mentionsAgentByText(text);
  sendRef.current = () => {
    if (!editor) return;
    const body = draftText(editor);
    if (body.trim() === '') return;
    const addressed = toAgent || mentionsAgentByText(body);
    try {
      sendChatMessage(session, user, body, { toAgent: addressed, followUp: replyTo });
      if (addressed && !readAgentPeer(session.awareness)) useAgentUi.getState().nudgeOffline();
      editor.commands.clearContent(true);
      useAgentUi.getState().setReplyTo(null);
      useAgentUi.getState().setAskAgent(false); // one message, like a mention
      setError(null);
      onSent();
    } catch (e) {
      if (e instanceof ChatMessageError) setError(e.message);
      else throw e;
    }
  };

  // "Reply" on an agent answer puts the caret here.
  useEffect(() => {
    if (replyTo) editor?.commands.focus('end');
  }, [replyTo, editor]);

  // A counter once the text nears the limit; the refusal itself is the helper's own message.
  const nearLimit = text.length > MAX_CHAT_MESSAGE_CHARS * 0.9;
  return (
    <div className="composer">
      {replyTo && (
        <div className="composer-reply" data-testid="chat-reply-target">
          <span>
            Following up <strong>{replyTo.label}</strong>
          </span>
          <button className="icon-btn" aria-label="Cancel the follow-up" title="Cancel the follow-up" data-testid="chat-reply-cancel" onClick={() => useAgentUi.getState().setReplyTo(null)}>
            ✕
          </button>
        </div>
      )}
      <div className="composer-field">
        {popup && (
          <ul className="mention-list" role="listbox" aria-label="Address" data-testid="mention-list">
            {popup.items.map((a, i) => (
              <li
                key={a.id}
                role="option"
                aria-selected={i === popup.index}
                className={i === popup.index ? 'is-active' : undefined}
                data-testid="mention-option"
                onMouseDown={(e) => {
                  e.preventDefault();
                  popup.pick(a);
                }}
              >
                <strong>@{a.label}</strong> <span className="muted">{a.hint}</span>
              </li>
            ))}
          </ul>
        )}
        {text === '' && (
          <div className="composer-placeholder" aria-hidden="true">
            Message… (@agent asks the agent · Shift+Enter: new line)
          </div>
        )}
        <EditorContent editor={editor} className="composer-editor" />
      </div>
      <div className="composer-actions">
        <button
          className={`btn btn-small toggle${askAgent ? ' is-on' : ''}`}
          aria-pressed={askAgent}
          data-testid="chat-ask-agent"
          title="Address this message to the agent (like @agent)"
          onClick={() => useAgentUi.getState().setAskAgent(!askAgent)}
        >
          ✦ Ask agent
        </button>
        {toAgent && <span className="muted composer-to">to the agent</span>}
        <div className="header-spacer" />
        <button className="btn btn-small btn-primary" data-testid="chat-send" disabled={text.trim() === ''} onClick={() => sendRef.current()}>
          Send
        </button>
      </div>
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
