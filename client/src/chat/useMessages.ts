/** The newest chat messages, re-read whenever the chat changes (streaming text included). */
import { useMemo } from 'react';
import type * as Y from 'yjs';
import { recentMessages, roots, type ChatMessageView } from '@plexus/shared';
import { useYVersion } from '../collab/useY.ts';

export function useMessages(doc: Y.Doc, limit: number): { messages: ChatMessageView[]; total: number } {
  const chat = roots(doc).chat;
  const version = useYVersion(chat, true);
  return useMemo(
    () => ({ messages: recentMessages(doc, limit), total: chat.length }),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [doc, chat, limit, version],
  );
}
