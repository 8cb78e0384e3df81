import { describe, expect, it } from 'vitest';
import { mentionsAgentByText, typedAgentMentions } from '../src/chat/typedMention.ts';

describe('@agent typed by hand', () => {
  it('counts as a word of its own, anywhere, in any case', () => {
    for (const t of ['@agent what is the total of 3, 4 and 5?', 'hey @agent, help', '@Agent: plot it', 'thanks @agent.', 'ask (@agent)', 'ping @agent']) expect(mentionsAgentByText(t)).toBe(true);
  });

  it('does not count inside longer words, e-mail addresses or domains', () => {
    for (const t of ['@agentic workflows', 'mail x@agent.org', 'see @agent.example.com', 'agent', '@@agentx', 'my-@agent-thing']) expect(mentionsAgentByText(t)).toBe(false);
  });

  it('while typing, converts only once the word is complete (a following character)', () => {
    expect(typedAgentMentions('@agent', false)).toEqual([]);
    expect(typedAgentMentions('@agent ', false)).toEqual([{ index: 0, length: 6 }]);
    expect(typedAgentMentions('so @agent, and @agent?', false)).toEqual([{ index: 3, length: 6 }, { index: 15, length: 6 }]);
  });
});
