/**
 * `@agent` typed by hand (not picked from the @ list) counts as the mention: it becomes the same
 * mention chip as soon as the word is complete, and a message that still ends in it is addressed
 * to the agent. It must be a word of its own: `@agentic`, `x@agent.org` and `@agent.example` are
 * not. Pure.
 */

/** Where `@agent` occurs as a mention in `text`. `atEnd`: also at the very end (the draft is being sent). */
export function typedAgentMentions(text: string, atEnd: boolean): Array<{ index: number; length: number }> {
  const re = atEnd ? /(^|[^\w@.])@agent(?=$|[^\w.-]|\.(?!\w))/gi : /(^|[^\w@.])@agent(?=[^\w.-]|\.(?!\w))/gi;
  const out: Array<{ index: number; length: number }> = [];
  for (const m of text.matchAll(re)) out.push({ index: m.index! + m[1]!.length, length: '@agent'.length });
  return out;
}

/** Whether a message's text addresses the agent by a typed `@agent`. */
export const mentionsAgentByText = (text: string): boolean => typedAgentMentions(text, true).length > 0;
