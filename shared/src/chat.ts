/**
 * Chat: a Y.Array of messages. A message's text is a Y.Text so the agent can stream into it and
 * everyone watches it grow. Pure module.
 */
import * as Y from 'yjs';
import { newMessageId, type MessageId } from './ids.ts';
import type { Origin } from './origin.ts';
import { roots } from './schema.ts';

/** Largest chat message a person may post (characters). */
export const MAX_CHAT_MESSAGE_CHARS = 20_000;

export type AuthorKind = 'person' | 'agent' | 'system';
export interface ChatAuthor {
  id: string;
  name: string;
  kind: AuthorKind;
  color?: string;
}
export type MessageStatus = 'done' | 'streaming' | 'stopped' | 'error';

export interface ChatMessageView {
  id: MessageId;
  author: ChatAuthor;
  text: string;
  created: number;
  status: MessageStatus;
  /** The message this one answers (agent replies), if any. */
  replyTo?: MessageId;
  /** The agent run this message asks for or answers (agent/runs.ts). */
  runId?: string;
  map: Y.Map<unknown>;
}

function readMessage(map: Y.Map<unknown>): ChatMessageView | null {
  const id = map.get('id');
  const text = map.get('text');
  const author = map.get('author') as ChatAuthor | undefined;
  if (typeof id !== 'string' || !(text instanceof Y.Text) || !author || typeof author !== 'object') return null;
  const replyTo = map.get('replyTo');
  const status = map.get('status');
  const runId = map.get('runId');
  return {
    id: id as MessageId,
    author,
    text: text.toString(),
    created: Number(map.get('created') ?? 0),
    status: status === 'streaming' || status === 'stopped' || status === 'error' ? status : 'done',
    replyTo: typeof replyTo === 'string' ? (replyTo as MessageId) : undefined,
    runId: typeof runId === 'string' ? runId : undefined,
    map,
  };
}

/** Messages in the order they were posted (merged order for concurrent posts is the same everywhere). */
export function listMessages(doc: Y.Doc): ChatMessageView[] {
  const out: ChatMessageView[] = [];
  for (const m of roots(doc).chat.toArray()) {
    const v = m instanceof Y.Map ? readMessage(m) : null;
    if (v) out.push(v);
  }
  return out;
}

/** The last `n` messages (cheap for long chats). */
export function recentMessages(doc: Y.Doc, n: number): ChatMessageView[] {
  const chat = roots(doc).chat;
  const start = Math.max(0, chat.length - n);
  return chat
    .slice(start)
    .map((m) => (m instanceof Y.Map ? readMessage(m) : null))
    .filter((m): m is ChatMessageView => m !== null);
}

export interface PostMessageInput {
  author: ChatAuthor;
  text: string;
  status?: MessageStatus;
  replyTo?: MessageId;
  runId?: string;
  id?: MessageId;
  /** Extra keys written into the message map in the same transaction (proposal, suggestions). */
  extra?: Record<string, unknown>;
}

/** Error for a message that breaks a limit; carries a user-facing reason. */
export class ChatMessageError extends Error {}

/** Appends a message and returns its id. Empty or oversized messages are refused. */
export function postMessage(doc: Y.Doc, input: PostMessageInput, origin: Origin): MessageId {
  const text = input.text;
  if (input.status !== 'streaming' && text.trim() === '') throw new ChatMessageError('message is empty');
  if (text.length > MAX_CHAT_MESSAGE_CHARS)
    throw new ChatMessageError(`message is too long (${text.length} characters, limit ${MAX_CHAT_MESSAGE_CHARS})`);
  const id = input.id ?? newMessageId();
  doc.transact(() => {
    const map = new Y.Map<unknown>();
    map.set('id', id);
    map.set('author', { ...input.author });
    map.set('text', new Y.Text(text));
    map.set('created', Date.now());
    map.set('status', input.status ?? 'done');
    if (input.replyTo) map.set('replyTo', input.replyTo);
    if (input.runId) map.set('runId', input.runId);
    for (const [k, v] of Object.entries(input.extra ?? {})) map.set(k, v);
    roots(doc).chat.push([map]);
  }, origin);
  return id;
}

export function findMessageMap(doc: Y.Doc, id: MessageId | string): Y.Map<unknown> | undefined {
  const chat = roots(doc).chat;
  // Newest messages are the ones being appended to: search from the end.
  for (let i = chat.length - 1; i >= 0; i--) {
    const m = chat.get(i);
    if (m instanceof Y.Map && m.get('id') === id) return m;
  }
  return undefined;
}

/** Appends text to a message (streaming). */
export function appendToMessage(doc: Y.Doc, id: MessageId | string, chunk: string, origin: Origin): boolean {
  const map = findMessageMap(doc, id);
  const text = map?.get('text');
  if (!(text instanceof Y.Text)) return false;
  doc.transact(() => text.insert(text.length, chunk), origin);
  return true;
}

/** Deletes a message's text from `from` to its end (an answer revised while it streams). */
export function truncateMessage(doc: Y.Doc, id: MessageId | string, from: number, origin: Origin): boolean {
  const map = findMessageMap(doc, id);
  const text = map?.get('text');
  if (!(text instanceof Y.Text)) return false;
  const at = Math.max(0, Math.min(from, text.length));
  if (at < text.length) doc.transact(() => text.delete(at, text.length - at), origin);
  return true;
}

/** Sets a message's status (e.g. streaming -> done). */
export function setMessageStatus(doc: Y.Doc, id: MessageId | string, status: MessageStatus, origin: Origin): boolean {
  const map = findMessageMap(doc, id);
  if (!map) return false;
  doc.transact(() => map.set('status', status), origin);
  return true;
}

/** Deletes a message. */
export function deleteMessage(doc: Y.Doc, id: MessageId | string, origin: Origin): boolean {
  const chat = roots(doc).chat;
  let done = false;
  doc.transact(() => {
    for (let i = chat.length - 1; i >= 0; i--) {
      const m = chat.get(i);
      if (m instanceof Y.Map && m.get('id') === id) {
        chat.delete(i, 1);
        done = true;
        return;
      }
    }
  }, origin);
  return done;
}
