import { describe, expect, it } from 'vitest';
import type { ChatMessageView } from '@plexus/shared';
import { threadOrder } from '../src/chat/thread.ts';

const msg = (id: string, replyTo?: string) => ({ id, replyTo, text: id }) as unknown as ChatMessageView;

describe('threadOrder', () => {
  it('keeps answers under their requests when two people ask at once', () => {
    const out = threadOrder([msg('a'), msg('b'), msg('ra', 'a'), msg('rb', 'b'), msg('fa', 'ra'), msg('c')]);
    expect(out.map((t) => `${t.reply ? '  ' : ''}${t.m.id}`)).toEqual(['a', '  ra', '  fa', 'b', '  rb', 'c']);
  });
  it('shows replies to messages not loaded as top-level messages', () => {
    expect(threadOrder([msg('x', 'gone'), msg('y')]).map((t) => t.reply)).toEqual([false, false]);
  });
});
