/**
 * The agent on a shared map, in two browsers, with the real agent process and the scripted model
 * (agent/scenarios/atlas.json): Alice makes a PCA map of a table with three clusters and asks the
 * agent to explore it; the agent sends three analyzer sub-agents at the clusters, saves two
 * categories and answers with their `{{placeholders}}`. Both people see the two category cards
 * (count, note, the sub-agent's summary, sample rows); a placeholder no map holds stays plain text.
 * Bob presses *Show on map* on a card: the rows are highlighted on both maps, labelled with the
 * category and Bob's name. *Open as table* makes an SQL cell with exactly those rows.
 */
import { expect, test, uniq } from '../support/plexus.ts';
import { requestTask } from '../../agent/src/scripted-llm/server.ts';
import { aliceAndBob, dropFile } from '../support/notebook.ts';
import { agentAnswer, askAgent, startAgentProcess, type AgentProcess } from '../support/agent.ts';
import { CLUSTER_ROWS, clusterCsv, createMap, mapDrawn, openAtlas } from '../support/atlas.ts';

let agent: AgentProcess;
test.beforeAll(async () => {
  agent = await startAgentProcess('atlas.json');
});
test.afterAll(async () => {
  await agent?.stop();
});

test("the agent's category cards appear for both people, and Show on map highlights the rows for both", async ({ plexus, actor }) => {
  const tag = uniq();
  const table = `blobs_${tag}`;
  const { alice, bob } = await aliceAndBob(plexus, actor, `atlas agent ${tag}`, []);
  const ap = alice.page;
  const bp = bob.page;
  await dropFile(ap, `${table}.csv`, clusterCsv());
  await expect(ap.getByTestId('upload')).toHaveAttribute('data-status', 'done');
  await openAtlas(ap, bp);
  await createMap(ap, table, { method: 'pca', exclude: ['id'], colorBy: 'kind' });
  await mapDrawn(CLUSTER_ROWS, ap, bp);
  await expect(ap.getByTestId('atlas-highlight')).toHaveCount(0);

  await expect(ap.getByTestId('agent-ready')).toBeVisible({ timeout: 60_000 });
  await ap.getByTestId('agent-mode-direct').click();
  const runId = await askAgent(ap, 'explore the map of blobs');

  for (const p of [ap, bp]) {
    const answer = agentAnswer(p, runId);
    await expect(answer.getByTestId('agent-run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
    const north = answer.locator('[data-testid="category-card"][data-category="north group"]');
    const east = answer.locator('[data-testid="category-card"][data-category="east group"]');
    await expect(north).toContainText(`5 rows of ${table}`);
    await expect(north).toContainText('five rows of the north kind');
    await expect(north).toContainText('label: north');
    await expect(north.getByTestId('category-card-rows')).toContainText('row 0');
    await expect(east).toContainText(`3 rows of ${table}`);
    // An unknown placeholder is the text it was, not a card and not an error.
    await expect(answer.getByTestId('category-card')).toHaveCount(2);
    await expect(answer).toContainText('A {{group nobody saved}} is not a category.');
  }
  // The analyses ran as sub-agents: three summarise requests, none of whose rows reached the conversation.
  expect(agent.llm.requests.filter((r) => requestTask(r.body) === 'summarise').length).toBe(3);

  // Bob shows the north group on the map: highlighted for both, with its label and who did it.
  await agentAnswer(bp, runId).locator('[data-testid="category-card"][data-category="north group"]').getByTestId('category-show').click();
  for (const [p, who] of [[ap, 'by Bob'], [bp, 'by you']] as const) {
    const h = p.getByTestId('atlas-highlight');
    await expect(h).toHaveAttribute('data-count', '5');
    await expect(h).toContainText('north group');
    await expect(h).toContainText(who);
  }

  // Open as table: an SQL cell over exactly those rows.
  await agentAnswer(ap, runId).locator('[data-testid="category-card"][data-category="east group"]').getByTestId('category-table').click();
  const cell = ap.locator('[data-testid="cell"][data-kind="sql"]').last();
  await expect(cell.getByTestId('output-table').locator('tbody tr')).toHaveCount(3, { timeout: 60_000 });
  await expect(cell.getByTestId('output-table').locator('tbody')).toContainText('east');
});
