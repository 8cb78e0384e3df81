/**
 * Orchestrator tokens for a five-cluster exploration of an atlas map, with and without the
 * analyzer sub-agent (seed 004 reports 30k → 5k). The real agent (WorkspacePeer, its tools, the
 * `openai` client) against the scripted model (agent/src/scripted-llm), a real server that
 * computes the map (columns a/b of a table of five groups of 400 rows — four numbers, a kind and a
 * short note — whose k-means finds the five groups). Each variant runs in a fresh workspace with
 * the same table, map and request:
 *   subagents  get_topics, then analyze_cluster on the five clusters in one turn (five sub-agents
 *              read up to 80 rows each, spread over their cluster, and return summaries)
 *   samples    get_topics, then get_sample (20 rows, the tool's most) of each cluster in one turn
 *   sql-80     get_topics, then the same 80 rows per cluster a sub-agent reads, through the sql tool, in one turn
 *   sql-80-seq the same reads, one cluster per turn (each turn re-sends the earlier results)
 * then a closing answer. Counted per model request the scripted server recorded: the prompt
 * tokens as the agent counts them (it adds up the `usage.prompt_tokens` the API reports; the
 * scripted server reports its estimate, characters of the request's JSON `messages` / 4), split
 * into the orchestrator's requests (the conversation) and the sub-agents' (`Task: summarise`);
 * the tool schemas each request also carries (a real API counts them; the estimate does not) are
 * shown beside. Plumbing: the scripted model calls the right tools by construction.
 *
 * Run: node --import tsx bench/atlas-agent-tokens.ts [--per=400]
 * Prints figures; asserts nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { getAtlasMap, setSetting } from '@plexus/shared';
import { TokenSigner } from '../server/src/auth/tokens.ts';
import { requestTask, type RecordedRequest } from '../agent/src/scripted-llm/server.ts';
import type { ScriptedToolCall, ScriptedTurn } from '../agent/src/scripted-llm/scenario.ts';
import { ANALYZE_ROWS } from '../agent/src/tools/atlas-tools.ts';
import { ask, startAgent, waitRunEnd } from '@plexus/testkit/agent';
import { benchOrigin, makeMap, uploadCsv } from './atlas-setup.ts';
import { BENCH_SECRET, connectClient, createWorkspace, machine, printTable, spawnServer, tmpDir, type ChildServer } from './lib.ts';
import { seededRandom, gaussian } from '@plexus/server/atlas/seeded-random';

const PER = Number(process.argv.find((a) => a.startsWith('--per='))?.split('=')[1] ?? 400);
const GROUPS = 5;
const REQUEST = 'explore the five groups of the map: what distinguishes each one?';
const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').trim();
const TOPICS = [
  ['burst', 'spike', 'firing', 'fast'],
  ['quiet', 'silent', 'sparse', 'slow'],
  ['motion', 'drift', 'artefact', 'shift'],
  ['bright', 'large', 'soma', 'round'],
  ['dendrite', 'thin', 'process', 'branch'],
];

/** Five well separated groups (centres on a pentagon in a–b, c and d noise), with the group's kind and a note of its words. */
function groupsCsv(): string {
  const rand = seededRandom(5);
  const lines = ['id,a,b,c,d,kind,note'];
  for (let i = 0; i < GROUPS * PER; i++) {
    const g = i % GROUPS;
    const angle = (2 * Math.PI * g) / GROUPS;
    const v = [10 * Math.cos(angle), 10 * Math.sin(angle), 0, 0].map((m) => m + gaussian(rand));
    const words = Array.from({ length: 6 }, () => TOPICS[g]![Math.floor(rand() * 4)]!).join(' ');
    lines.push(`${i},${v.map((x) => x.toFixed(3)).join(',')},type_${g},"cell ${i}: ${words}"`);
  }
  return lines.join('\n') + '\n';
}

interface Region {
  map: string;
  /** The map's coordinates table. */
  coords: string;
  cluster: number;
  size: number;
}

interface Variant {
  id: string;
  what: string;
  together: boolean;
  read(r: Region): ScriptedToolCall;
}

/** The rows analyze_cluster reads (atlas-tools.ts regionRows: up to 80, spread evenly in row order), as one SQL query. */
const spreadQuery = (r: Region) =>
  `SELECT * EXCLUDE (__pos, __k, __x, __y, __cluster) FROM (SELECT s.*, c.row AS __row, c.x AS __x, c.y AS __y, c.cluster AS __cluster, row_number() OVER (ORDER BY c.row) AS __k ` +
  `FROM (SELECT (row_number() OVER ()) - 1 AS __pos, * FROM groups) s JOIN ${r.coords} c ON c.row = s.__pos WHERE c.cluster = ${r.cluster}) ` +
  `WHERE (__k - 1) % ${Math.max(1, Math.floor(r.size / ANALYZE_ROWS))} = 0 ORDER BY __row LIMIT ${ANALYZE_ROWS}`;
const sqlRead = (r: Region): ScriptedToolCall => ({ name: 'sql', arguments: { query: spreadQuery(r), limit: ANALYZE_ROWS } });

const VARIANTS: Variant[] = [
  { id: 'subagents', what: 'analyze_cluster ×5 in one turn (sub-agents read the rows)', together: true, read: (r) => ({ name: 'analyze_cluster', arguments: { map: r.map, region: { cluster: r.cluster } } }) },
  { id: 'samples', what: 'get_sample (20 rows) ×5 in one turn', together: true, read: (r) => ({ name: 'get_sample', arguments: { map: r.map, region: { cluster: r.cluster }, n: 20 } }) },
  { id: 'sql-80', what: `sql: the sub-agents' ${ANALYZE_ROWS} rows ×5 in one turn`, together: true, read: sqlRead },
  { id: 'sql-80-seq', what: `sql: the sub-agents' ${ANALYZE_ROWS} rows, one cluster per turn`, together: false, read: sqlRead },
];

const ANSWER =
  'Five groups stand out. Cluster 0: high a, notes about bursts and fast firing. Cluster 1: high b, quiet sparse cells. ' +
  'Cluster 2: low a, motion artefacts and drift. Cluster 3: low b, bright large somata. Cluster 4: high a, low b, thin dendrites and branches.';

function turns(v: Variant, map: string, regions: Region[]): ScriptedTurn[] {
  const reads = regions.map((r) => v.read(r));
  const orchestrator: ScriptedTurn[] = [{ match: { lastUserContains: REQUEST, afterTools: 0 }, toolCalls: [{ name: 'get_topics', arguments: { map } }] }];
  if (v.together) orchestrator.push({ match: { lastUserContains: REQUEST, afterTools: 1 }, toolCalls: reads });
  else reads.forEach((r, k) => orchestrator.push({ match: { lastUserContains: REQUEST, afterTools: 1 + k }, toolCalls: [r] }));
  orchestrator.push({ match: { lastUserContains: REQUEST, afterTools: 1 + reads.length }, text: ANSWER });
  const subAgents: ScriptedTurn[] = regions.map((c) => ({
    match: { task: 'summarise', lastUserContains: `in cluster ${c.cluster} ` },
    toolCalls: [{ name: 'report_result', arguments: { summary: `label: group ${c.cluster}; themes: one numeric column far from the others' means, notes with the group's own four words; representative rows spread over the cluster.`, values: { representative_rows: '1,2,3,4', rows_read: ANALYZE_ROWS } } }],
  }));
  return [...orchestrator, ...subAgents];
}

const promptTokens = (r: RecordedRequest) => JSON.stringify(r.body.messages ?? []).length >> 2;
const schemaTokens = (r: RecordedRequest) => JSON.stringify(r.body.tools ?? []).length >> 2;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

async function runVariant(server: ChildServer, variant: Variant, csv: string, quotaFile: string): Promise<Array<string | number>> {
  const ws = await createWorkspace(server, 'atlas tokens');
  const c = connectClient(server.url, ws, server.token);
  await c.synced;
  setSetting(c.doc, 'agentMode', 'direct', benchOrigin);
  await uploadCsv(server, ws, c.doc, 'groups', csv);
  const map = await makeMap(c.doc, { table: 'groups', method: 'columns', columns: ['a', 'b'] });
  const clusters = (getAtlasMap(c.doc, map.id)!.coords!.labels ?? []).map((l) => ({ map: map.id, coords: map.coords.table!, cluster: l.cluster, size: l.size })).sort((x, y) => x.cluster - y.cluster);
  const signer = new TokenSigner(Buffer.from(BENCH_SECRET));
  const env = { PLEXUS_AGENT_ROUTE: 'action', PLEXUS_AGENT_REQUESTS_PER_HOUR_PERSON: '0', PLEXUS_AGENT_REQUESTS_PER_HOUR_WORKSPACE: '0', PLEXUS_AGENT_QUOTA_FILE: quotaFile };
  const agent = await startAgent({ url: server.url, signer }, ws, { turns: turns(variant, map.id, clusters) }, env);
  try {
    const run = await waitRunEnd(c.doc, ask(c.doc, REQUEST), 300_000);
    const reqs = agent.llm.requests;
    const orch = reqs.filter((r) => requestTask(r.body) === null);
    const subs = reqs.filter((r) => requestTask(r.body) === 'summarise');
    const other = reqs.length - orch.length - subs.length;
    const toolMsgs = (orch.at(-1)?.body.messages as Array<{ role: string; content?: unknown }> | undefined)?.filter((m) => m.role === 'tool') ?? [];
    const cut = toolMsgs.filter((m) => typeof m.content === 'string' && m.content.endsWith('…') && m.content.length >= agent.config.limits.toolResultChars).length;
    const longest = Math.max(0, ...toolMsgs.map((m) => (typeof m.content === 'string' ? m.content.length : 0)));
    const tools = (r: RecordedRequest | undefined) => (Array.isArray(r?.body.tools) ? r.body.tools.length : 0);
    const o = orch.map(promptTokens);
    const s = subs.map(promptTokens);
    console.log(`  ${variant.id}: run ${run.status}, ${clusters.length} clusters (${clusters.map((x) => x.size).join(', ')} rows), ${reqs.length} model requests${other ? ` (${other} other)` : ''}; load ${loadavg()}`);
    return [
      variant.id, variant.what, run.status, orch.length, sum(o).toLocaleString('en-US'), Math.max(...o).toLocaleString('en-US'), sum(orch.map(schemaTokens)).toLocaleString('en-US'),
      subs.length, sum(s).toLocaleString('en-US'), (sum(o) + sum(s)).toLocaleString('en-US'), run.tokens.prompt.toLocaleString('en-US'),
      `${tools(orch[0])} / ${subs.length ? tools(subs[0]) : '—'}`, longest.toLocaleString('en-US'), `${cut}/${toolMsgs.length}`,
    ];
  } finally {
    await agent.close();
    c.destroy();
  }
}

async function main(): Promise<void> {
  console.log(`Atlas agent tokens, five clusters (scripted model) — ${machine()}\nload average at start: ${loadavg()}`);
  const server = await spawnServer('plexus', { env: { PLEXUS_JOB_NICE: '0' } });
  const csv = groupsCsv();
  const dir = tmpDir('plexus-bench-tokens-');
  const rows: Array<Array<string | number>> = [];
  try {
    for (const v of VARIANTS) rows.push(await runVariant(server, v, csv, path.join(dir, 'agent-usage.json')));
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n${GROUPS} groups × ${PER} rows (id, a–d, kind, a note of 6 words); prompt tokens = characters of the request's messages / 4 (the scripted server's usage, which the agent adds up)`);
  printTable(
    ['variant', 'what the orchestrator does', 'run', 'orchestrator requests', 'orchestrator prompt tokens', 'largest orchestrator prompt', '+ tool schemas (not in the count)', 'sub-agent requests', 'sub-agent prompt tokens', 'all prompt tokens', "run's own count", 'tools sent (orchestrator / sub-agent)', 'largest tool result (chars)', 'tool results cut at 12,000 chars'],
    rows,
  );
  console.log(`\nload average at end: ${loadavg()}`);
}

await main();
