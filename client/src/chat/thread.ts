/**
 * Threaded order of chat messages: each message with a `replyTo` whose parent is shown comes
 * right after its parent's thread (several requests to the agent at once keep their answers
 * under them). Pure.
 */
import type { ChatMessageView } from '@plexus/shared';

export interface ThreadedMessage {
  m: ChatMessageView;
  /** Answers something shown above (rendered indented). */
  reply: boolean;
}

export function threadOrder(messages: ChatMessageView[]): ThreadedMessage[] {
  const ids = new Set(messages.map((m) => m.id));
  const children = new Map<string, ChatMessageView[]>();
  const rootList: ChatMessageView[] = [];
  for (const m of messages) {
    if (m.replyTo && m.replyTo !== m.id && ids.has(m.replyTo)) {
      const list = children.get(m.replyTo) ?? [];
      list.push(m);
      children.set(m.replyTo, list);
    } else rootList.push(m);
  }
  const out: ThreadedMessage[] = [];
  const seen = new Set<string>();
  const visit = (m: ChatMessageView, reply: boolean) => {
    if (seen.has(m.id)) return;
    seen.add(m.id);
    out.push({ m, reply });
    for (const c of children.get(m.id) ?? []) visit(c, true);
  };
  for (const m of rootList) visit(m, false);
  // A reply cycle (never written by our helpers) would hide messages: show them anyway.
  for (const m of messages) visit(m, false);
  return out;
}
