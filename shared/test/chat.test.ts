import { beforeEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  agentOrigin, appendToMessage, ChatMessageError, deleteMessage, listMessages, MAX_CHAT_MESSAGE_CHARS, postMessage,
  recentMessages, roots, setMessageStatus, userOrigin, type ChatAuthor, type MessageId,
} from '../src/index.ts';
import { syncPair, wrote } from './helpers.ts';

const alice: ChatAuthor = { id: 'alice', name: 'Alice', kind: 'person' };
const bot: ChatAuthor = { id: 'agent', name: 'Agent', kind: 'agent' };
const me = userOrigin('alice');
const run = agentOrigin('r1');
let doc: Y.Doc;
const say = (text: string, author = alice) => postMessage(doc, { author, text }, me);
const texts = () => listMessages(doc).map((m) => m.text);

beforeEach(() => {
  doc = new Y.Doc();
});

describe('postMessage', () => {
  it('appends a message with its author, text, status and reply link', () => {
    const q = say('what is in table t?');
    const a = postMessage(doc, { author: bot, text: 'Let me look', status: 'streaming', replyTo: q }, run);
    const [mq, ma] = listMessages(doc);
    expect(mq).toMatchObject({ id: q, author: alice, text: 'what is in table t?', status: 'done', replyTo: undefined });
    expect(ma).toMatchObject({ id: a, author: bot, text: 'Let me look', status: 'streaming', replyTo: q });
    expect(typeof mq!.created).toBe('number');
    // The text is a Y.Text so an agent can stream into it.
    expect(ma!.map.get('text')).toBeInstanceOf(Y.Text);
  });

  it('stores a copy of the author (mutating the input later changes nothing)', () => {
    const author = { ...alice };
    say('hi', author);
    author.name = 'Mallory';
    expect(listMessages(doc)[0]!.author.name).toBe('Alice');
  });

  it('uses a caller-given id', () => {
    expect(postMessage(doc, { author: alice, text: 'x', id: 'm_fixed' as MessageId }, me)).toBe('m_fixed');
  });

  it('refuses empty and whitespace-only messages, unless the agent is about to stream into it', () => {
    expect(() => say('')).toThrow(ChatMessageError);
    expect(() => say('  \n\t ')).toThrow(ChatMessageError);
    expect(texts()).toEqual([]);
    postMessage(doc, { author: bot, text: '', status: 'streaming' }, run);
    expect(texts()).toEqual(['']);
  });

  it(`refuses more than MAX_CHAT_MESSAGE_CHARS (${MAX_CHAT_MESSAGE_CHARS}) characters, and accepts exactly that many`, () => {
    expect(() => say('x'.repeat(MAX_CHAT_MESSAGE_CHARS + 1))).toThrow(ChatMessageError);
    expect(() => postMessage(doc, { author: bot, text: 'y'.repeat(MAX_CHAT_MESSAGE_CHARS + 1), status: 'streaming' }, run)).toThrow(
      /too long/,
    );
    expect(roots(doc).chat.length).toBe(0);
    say('x'.repeat(MAX_CHAT_MESSAGE_CHARS));
    expect(texts()[0]!.length).toBe(MAX_CHAT_MESSAGE_CHARS);
  });
});

describe('streaming, status and deletion', () => {
  it('appendToMessage grows the text; setMessageStatus finishes it', () => {
    const id = postMessage(doc, { author: bot, text: '', status: 'streaming' }, run);
    for (const chunk of ['The table ', 'has ', '3 rows.']) expect(appendToMessage(doc, id, chunk, run)).toBe(true);
    expect(setMessageStatus(doc, id, 'done', run)).toBe(true);
    expect(listMessages(doc)[0]).toMatchObject({ text: 'The table has 3 rows.', status: 'done' });
  });

  it('reads every status back and treats an unknown one as done', () => {
    const id = say('x');
    for (const status of ['streaming', 'stopped', 'error', 'done'] as const) {
      setMessageStatus(doc, id, status, me);
      expect(listMessages(doc)[0]!.status).toBe(status);
    }
    listMessages(doc)[0]!.map.set('status', 'exploded');
    expect(listMessages(doc)[0]!.status).toBe('done');
  });

  it('targets the message by id even when others are posted meanwhile', () => {
    const a = postMessage(doc, { author: bot, text: 'A', status: 'streaming' }, run);
    say('interrupting');
    appendToMessage(doc, a, '!', run);
    expect(texts()).toEqual(['A!', 'interrupting']);
  });

  it('deleteMessage removes exactly that message once', () => {
    const a = say('a');
    const b = say('b');
    say('c');
    expect(deleteMessage(doc, b, me)).toBe(true);
    expect(deleteMessage(doc, b, me)).toBe(false);
    expect(texts()).toEqual(['a', 'c']);
    expect(listMessages(doc)[0]!.id).toBe(a);
  });

  it('refuses to write to unknown or deleted messages', () => {
    const a = say('a');
    deleteMessage(doc, a, me);
    expect(appendToMessage(doc, a, 'x', run)).toBe(false);
    expect(setMessageStatus(doc, a, 'done', run)).toBe(false);
    expect(appendToMessage(doc, 'm_none', 'x', run)).toBe(false);
    expect(setMessageStatus(doc, 'm_none', 'done', run)).toBe(false);
    expect(deleteMessage(doc, 'm_none', me)).toBe(false);
  });
});

describe('recentMessages', () => {
  it('returns the last n messages in posting order', () => {
    for (let i = 1; i <= 5; i++) say(`m${i}`);
    expect(recentMessages(doc, 2).map((m) => m.text)).toEqual(['m4', 'm5']);
    expect(recentMessages(doc, 5).map((m) => m.text)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    expect(recentMessages(doc, 50)).toHaveLength(5);
    expect(recentMessages(doc, 0)).toEqual([]);
  });

  it('skips entries that are not messages', () => {
    say('good');
    doc.transact(() => roots(doc).chat.push([new Y.Map()])); // e.g. written by a newer or broken client
    expect(recentMessages(doc, 2).map((m) => m.text)).toEqual(['good']);
  });
});

describe('origins and replicas', () => {
  it('every write carries the origin it was given', () => {
    const seen: unknown[] = [];
    doc.on('afterTransaction', (tr: Y.Transaction) => wrote(tr) && seen.push(tr.origin));
    const id = postMessage(doc, { author: bot, text: '', status: 'streaming' }, run);
    appendToMessage(doc, id, 'x', run);
    setMessageStatus(doc, id, 'done', run);
    expect(seen).toEqual([run, run, run]);
    const mine = say('mine');
    deleteMessage(doc, mine, me);
    expect(seen.slice(3)).toEqual([me, me]);
  });

  it('concurrent posts and streaming converge to the same chat on both replicas', () => {
    const other = new Y.Doc();
    const id = postMessage(doc, { author: bot, text: '', status: 'streaming' }, run);
    syncPair(doc, other);
    appendToMessage(doc, id, 'streamed', run);
    postMessage(other, { author: alice, text: 'meanwhile' }, me);
    setMessageStatus(other, id, 'stopped', me); // Alice presses stop while chunks are in flight
    syncPair(doc, other);
    expect(listMessages(other).map((m) => [m.text, m.status])).toEqual(listMessages(doc).map((m) => [m.text, m.status]));
    expect(listMessages(doc).find((m) => m.id === id)).toMatchObject({ text: 'streamed', status: 'stopped' });
    expect(texts()).toContain('meanwhile');
  });
});
