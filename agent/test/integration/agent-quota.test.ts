/**
 * Agent quotas end to end: the real agent peer refuses the request past a person's hourly limit,
 * and the person sees why in the run (and when to ask again); another person still gets answers
 * until the workspace's own limit.
 */
import { describe, expect, it } from 'vitest';
import { userOrigin } from '@plexus/shared';
import { ask, agentSuite, waitRunEnd } from '@plexus/testkit/agent';

const suite = agentSuite();

describe('agent quotas', () => {
  it('the request past the limit ends with a clear reason; another person goes on until the workspace limit', async () => {
    const { ws, a } = await suite.workspace();
    await suite.start(ws, { turns: [{ text: 'Sure.', repeat: true }] }, { PLEXUS_AGENT_REQUESTS_PER_HOUR_PERSON: '2', PLEXUS_AGENT_REQUESTS_PER_HOUR_WORKSPACE: '3' });
    for (const q of ['one', 'two']) expect((await waitRunEnd(a.doc, ask(a.doc, q))).status).toBe('done');
    const refused = await waitRunEnd(a.doc, ask(a.doc, 'three'));
    expect(refused.status).toBe('error');
    expect(refused.reason).toMatch(/^You have used 2 agent requests in the last hour \(limit 2 per person\); you can ask again in (60|59) minutes\.$/);
    const bob = { id: 'bob', name: 'Bob' };
    expect((await waitRunEnd(a.doc, ask(a.doc, 'hi from bob', bob, userOrigin('bob', 'Bob')))).status).toBe('done');
    const full = await waitRunEnd(a.doc, ask(a.doc, 'again from bob', bob, userOrigin('bob', 'Bob')));
    expect(full.reason).toMatch(/^This workspace has used 3 agent requests in the last hour \(limit 3\)/);
    expect(suite.agent!.llm.conversation.length).toBe(3); // refused requests never reach the model
  });
});
