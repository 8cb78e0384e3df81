/**
 * The agent explores a shared atlas map (seed 004): it reads the map's topics, sends three
 * analyzer sub-agents at three clusters at once (each with its own short context; one fails and
 * the run goes on), saves two categories and highlights rows for everyone, and answers with the
 * categories' placeholders. The conversation never holds the rows the sub-agents read. Real
 * server (it computes the map), kernel, agent peer and `openai` client; scripted model.
 */
import { describe, expect, it } from 'vitest';
import { createAtlasMap, getAtlasMap, listMessages } from '@plexus/shared';
import { waitFor } from '@plexus/testkit';
import { agentSuite, alice, aliceOrigin, ask, waitRunEnd } from '@plexus/testkit/agent';
import { requestTask } from '../../src/scripted-llm/server.ts';

const suite = agentSuite();

type Msg = { role: string; content?: unknown };
const messagesOf = (body: Record<string, unknown>) => (body.messages as Msg[]) ?? [];
const text = (m: Msg | undefined) => (typeof m?.content === 'string' ? m.content : '');
const userText = (body: Record<string, unknown>) => text(messagesOf(body).find((m) => m.role === 'user'));

/** Three well separated groups of 60 rows, with a word that names each group. */
function csv(): string {
  const lines = ['a,b,c,word'];
  let seed = 7;
  const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 0.6;
  const centres = [[0, 0, 0], [10, 0, 5], [0, 10, -5]];
  const words = ['alpha', 'beta', 'gamma'];
  centres.forEach((c, g) => {
    for (let i = 0; i < 60; i++) lines.push(`${c[0]! + rnd()},${c[1]! + rnd()},${c[2]! + rnd()},${words[g]}_${i % 7}`);
  });
  return lines.join('\n') + '\n';
}

describe('the agent on an atlas map', () => {
  it('analyses three clusters with parallel sub-agents (one failing), saves two categories, highlights, and answers with their placeholders', async () => {
    const { ws, a } = await suite.workspace('direct');
    const up = await fetch(`${suite.ctx.server.url}/api/workspaces/${ws}/uploads?name=groups.csv`, { method: 'POST', headers: { authorization: `Bearer ${suite.ctx.server.ownerToken}`, 'content-type': 'application/octet-stream' }, body: csv() });
    expect(up.status).toBe(201);
    await waitFor(() => (a.doc.getMap('data').has('groups') ? true : null), { message: 'the table' });
    const mapId = createAtlasMap(a.doc, { table: 'groups', method: 'pca', columns: ['a', 'b', 'c'] }, alice, aliceOrigin);
    await waitFor(() => {
      const m = getAtlasMap(a.doc, mapId);
      if (m?.coords?.status === 'error') throw new Error(m.coords.error);
      return m?.coords?.status === 'done' ? true : null;
    }, { message: 'the map coordinates', timeout: 120_000 });
    expect(getAtlasMap(a.doc, mapId)!.coords!.labels!.length).toBe(3);

    // The three analyzer requests are held until all three have arrived: they run at once.
    const arrived = new Set<string>();
    let all!: () => void;
    const allArrived = new Promise<void>((r) => (all = r));
    await suite.start(
      ws,
      {
        turns: [
          { match: { lastUserContains: 'explore', afterTools: 0 }, toolCalls: [{ name: 'get_topics', arguments: { map: mapId } }] },
          {
            match: { lastUserContains: 'explore', afterTools: 1 },
            toolCalls: [0, 1, 2].map((c) => ({ name: 'analyze_cluster', arguments: { map: mapId, region: { cluster: c } } })),
          },
          { match: { task: 'summarise', lastUserContains: 'in cluster 0 ' }, toolCalls: [{ name: 'report_result', arguments: { summary: 'label: group one; themes: low a and b', values: { representative_rows: '1,2,3' } } }] },
          { match: { task: 'summarise', lastUserContains: 'in cluster 1 ' }, toolCalls: [{ name: 'report_result', arguments: { summary: 'label: group two; themes: high a', values: { representative_rows: '61,62' } } }] },
          { match: { task: 'summarise', lastUserContains: 'in cluster 2 ' }, repeat: true, error: { status: 400, message: 'the analyzer model is overloaded' } },
          {
            match: { lastUserContains: 'explore', afterTools: 4 },
            toolCalls: [
              { name: 'save_rows', arguments: { map: mapId, category: 'group one', rows: [1, 2, 3], note: 'low a and b', summary: 'label: group one' } },
              { name: 'save_rows', arguments: { map: mapId, category: 'group two', rows: [61, 62], note: 'high a' } },
              { name: 'highlight_rows', arguments: { map: mapId, rows: [1, 2, 3, 61, 62], label: 'the two groups' } },
            ],
          },
          { match: { lastUserContains: 'explore', afterTools: 7 }, text: 'Two groups stand out: {{group one}} and {{group two}}; the third could not be analysed.' },
        ],
      },
      {},
      {
        holdModelRequest: async (raw) => {
          const body = JSON.parse(raw) as Record<string, unknown>;
          if (requestTask(body) !== 'summarise') return;
          const c = /in cluster (\d+) /.exec(userText(body))?.[1];
          if (c) arrived.add(c);
          if (arrived.size === 3) all();
          await allArrived;
        },
      },
    );
    const run = await waitRunEnd(a.doc, ask(a.doc, 'explore the groups map'), 120_000);
    expect(run.status).toBe('done');
    const analyses = run.activity.filter((x) => x.tool === 'analyze_cluster');
    expect(analyses.map((x) => x.status)).toEqual(['done', 'done', 'error']);
    expect(analyses[2]!.summary).toContain('overloaded');
    const map = getAtlasMap(a.doc, mapId)!;
    expect(Object.keys(map.categories).sort()).toEqual(['group one', 'group two']);
    expect(map.categories['group one']).toMatchObject({ rows: [1, 2, 3], note: 'low a and b', summary: 'label: group one', by: 'agent' });
    expect(map.highlight).toMatchObject({ rows: [1, 2, 3, 61, 62], label: 'the two groups' });
    expect(listMessages(a.doc).find((m) => m.id === run.replyId)!.text).toContain('{{group one}}');

    // Each sub-agent read its cluster's rows; the conversation never held them.
    const subs = suite.agent!.llm.requests.filter((r) => requestTask(r.body) === 'summarise');
    expect(new Set(subs.map((r) => /in cluster (\d+) /.exec(userText(r.body))?.[1]))).toEqual(new Set(['0', '1', '2']));
    for (const s of subs) expect(userText(s.body)).toMatch(/\t(alpha|beta|gamma)_\d/);
    const conversation = suite.agent!.llm.conversation;
    for (const r of conversation) expect(JSON.stringify(r.body.messages)).not.toMatch(/(alpha|beta|gamma)_\d/);
    // The orchestrator's prompt stays small however many rows the regions hold: each analysis
    // comes back as a short summary, not as rows.
    const toolResults = messagesOf(conversation.at(-1)!.body).filter((m) => m.role === 'tool').map(text);
    expect(toolResults.length).toBe(7);
    for (const t of toolResults) expect(t.length).toBeLessThan(1500);
  }, 180_000);
});
