/**
 * Embeddings maps on a real server with its kernel and an embedding service — the scripted
 * OpenAI-compatible model over HTTP, behind a proxy that holds requests so "while it embeds" is a
 * state the test waits for. The server tells clients its model (never its address or key); a
 * person makes an embeddings map of a text column: everyone sees stage "embedding" while the
 * service is asked, then the map, whose three topics are three separate islands and whose `how`
 * names the model; the service got each distinct text once, in batches, with the key. A TF-IDF map
 * of the same column says it was computed locally. A failing service ends the map in an error that
 * names the HTTP status and the service's message, without the key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAtlasMap, getAtlasMap, getTable, type AtlasCoords } from '@plexus/shared';
import { api, startTestServer, waitFor, type HpClient } from '@plexus/testkit';
import { holdingProxy } from '@plexus/testkit/agent';
import { alice, aliceOrigin, client, newWorkspace, startKernelServer } from '@plexus/testkit/kernel';
import type { PlexusServer } from '@plexus/server/app';
import { startScriptedLlm, type ScriptedLlm } from '../../../agent/src/scripted-llm/server.ts';
import { groupSeparation, nearestCentroidAccuracy } from '../../src/atlas/evaluate.ts';
import { seededRandom } from '../../src/atlas/seeded-random.ts';

const KEY = 'sk-test-embeddings-key-0123456789';
const TOPICS = [
  ['spike', 'burst', 'firing', 'rate', 'action', 'potential'],
  ['dendrite', 'spine', 'branch', 'arbor', 'synapse', 'tuft'],
  ['soma', 'nucleus', 'membrane', 'body', 'organelle', 'cytoplasm'],
];

/** `n` rows: an id and a note of five words of topic `id % 3`. */
function notes(n: number, seed: number): string[] {
  const rand = seededRandom(seed);
  return Array.from({ length: n }, (_, i) => `cell ${Array.from({ length: 5 }, () => TOPICS[i % 3]![Math.floor(rand() * 6)]).join(' ')}`);
}
const csvOf = (rows: string[]) => 'id,note\n' + rows.map((note, i) => `${i + 1},${note}`).join('\n') + '\n';

/** A gate the proxy awaits before passing each embeddings request on. */
function gate() {
  let open: (() => void) | null = null;
  let held: Promise<void> | null = null;
  return {
    arrivals: 0,
    hold() {
      held = new Promise<void>((r) => (open = r));
    },
    release() {
      open?.();
      held = null;
    },
    async pass() {
      this.arrivals++;
      await held;
    },
  };
}

let llm: ScriptedLlm;
let proxy: { baseURL: string; close(): Promise<void> };
let server: PlexusServer;
const clients: HpClient[] = [];
const requests = gate();

beforeAll(async () => {
  llm = await startScriptedLlm({ turns: [], embeddings: { dimensions: 64 } });
  proxy = await holdingProxy(llm.baseURL, () => requests.pass());
  server = await startKernelServer({
    jobNice: 0,
    embeddings: { baseURL: proxy.baseURL, model: 'scripted-embed', apiKey: KEY, batchSize: 40, maxInputChars: 2000, timeoutMs: 60_000, maxRows: 10_000 },
  });
});
afterAll(async () => {
  requests.release();
  clients.forEach((c) => c.destroy());
  await server?.close();
  await proxy?.close();
  await llm?.close();
});

const waitCoords = (c: HpClient, id: string, pred: (co: AtlasCoords) => boolean, message: string) =>
  waitFor(() => {
    const co = getAtlasMap(c.doc, id)?.coords;
    return co && pred(co) ? co : null;
  }, { timeout: 120_000, message: `map ${id}: ${message}` }) as Promise<AtlasCoords>;
const settled = (co: AtlasCoords) => co.status === 'done' || co.status === 'error';

async function upload(ws: string, name: string, body: string): Promise<number> {
  const res = await fetch(`${server.url}/api/workspaces/${ws}/uploads?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.ownerToken}`, 'content-type': 'application/octet-stream' },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

describe('embeddings maps', { timeout: 300_000 }, () => {
  let ws: string;
  let alicec: HpClient;
  let bob: HpClient;
  const rows = notes(300, 1);

  it('the server tells clients which embedding model it has — never its address or key', async () => {
    const r = await api(server.url, server.ownerToken, 'GET', '/api/config');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ atlas: { embeddings: { model: 'scripted-embed' } } });
    expect(JSON.stringify(r.json)).not.toContain(KEY);
    expect((await api(server.url, null, 'GET', '/api/config')).status).toBe(401);
    // A server without a service says so.
    const plain = await startTestServer();
    try {
      expect((await api(plain.url, plain.ownerToken, 'GET', '/api/config')).json).toEqual({ atlas: { embeddings: null } });
    } finally {
      await plain.close();
    }
  });

  it('a map of a text column by embeddings: everyone sees it embed, then three topics as three islands, made by the model', async () => {
    ws = await newWorkspace(server, 'Embeddings');
    alicec = await client(server, ws, clients);
    bob = await client(server, ws, clients);
    expect(await upload(ws, 'cells.csv', csvOf(rows))).toBe(201);
    await waitFor(() => getTable(alicec.doc, 'cells'), { message: 'table registered' });

    requests.hold();
    const id = createAtlasMap(alicec.doc, { table: 'cells', method: 'embeddings', columns: ['note'], title: 'Notes' }, alice, aliceOrigin);
    // The first request is held at the service: Bob sees the map embedding, nothing done yet.
    await waitFor(() => requests.arrivals >= 1, { message: 'the first embeddings request', timeout: 120_000 });
    const distinct = new Set(rows).size;
    const during = await waitCoords(bob, id, (co) => co.status === 'running' && co.progress?.stage === 'embedding', 'embedding');
    expect(during.progress).toEqual({ stage: 'embedding', done: 0, total: distinct });
    requests.release();

    const done = await waitCoords(bob, id, settled, 'settled');
    expect(done.error).toBeUndefined();
    expect(done).toMatchObject({ status: 'done', table: 'cells_map', points: 300 });
    expect(done.how).toMatch(/^UMAP of scripted-embed embeddings \(64-d\) of column "note", 15 neighbours, seed 1; vectors L2-normalised, then their first 32 principal components/);
    for (const l of done.labels!) for (const w of l.text.split(', ')) expect([...TOPICS.flat(), 'cell']).toContain(w);

    // The coordinates, as SQL reads them: each topic a separate island.
    const q = await api(server.url, server.ownerToken, 'POST', `/api/workspaces/${ws}/data/query`, { sql: 'SELECT "row", x, y FROM cells_map ORDER BY "row"', limit: 1000 });
    expect(q.status).toBe(200);
    const pts = q.json.rows as Array<{ row: number; x: number; y: number }>;
    const x = pts.map((p) => p.x);
    const y = pts.map((p) => p.y);
    const topic = Int32Array.from(pts, (p) => Number(p.row) % 3);
    expect(nearestCentroidAccuracy(Float64Array.from(x), Float64Array.from(y), topic, 3)).toBe(1);
    const gap = groupSeparation(x, y, topic);
    expect(gap.between).toBeGreaterThan(3 * gap.within);

    // The service got each distinct text once, in batches of at most 40, with the key; the key is nowhere in the document.
    const sent = llm.embeddingRequests;
    expect(sent.map((r) => r.status).every((s) => s === 200)).toBe(true);
    expect(sent.every((r) => r.authorization === `Bearer ${KEY}` && r.body.model === 'scripted-embed' && r.body.encoding_format === 'float')).toBe(true);
    expect(sent.map((r) => (r.body.input as string[]).length)).toEqual(Array.from({ length: Math.ceil(distinct / 40) }, (_, i) => Math.min(40, distinct - 40 * i)));
    expect(new Set(sent.flatMap((r) => r.body.input as string[]))).toEqual(new Set(rows));
    expect(JSON.stringify(bob.doc.toJSON())).not.toContain(KEY);
  });

  it('a TF-IDF map of the same column says it was computed locally, and asks no service', async () => {
    const before = llm.embeddingRequests.length;
    const id = createAtlasMap(alicec.doc, { table: 'cells', method: 'tfidf', columns: ['note'] }, alice, aliceOrigin);
    const done = await waitCoords(bob, id, settled, 'settled');
    expect(done.status).toBe('done');
    expect(done.how).toMatch(/^TF-IDF of the words of "note" \(\d+ terms\) \+ truncated SVD \(centred\) to 2-D, seed 1, computed locally \(no embedding service\)/);
    expect(llm.embeddingRequests.length).toBe(before);
  });

  it('a failing service ends the map in an error with the HTTP status and its message, without the key', async () => {
    llm.failEmbeddings({ status: 401, message: `Incorrect API key provided: ${KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`, type: 'invalid_request_error' });
    try {
      const id = createAtlasMap(alicec.doc, { table: 'cells', method: 'embeddings', columns: ['note'] }, alice, aliceOrigin);
      const failed = await waitCoords(bob, id, settled, 'settled');
      expect(failed.status).toBe('error');
      expect(failed.error).toMatch(/^the embedding service answered 401 Unauthorized: Incorrect API key provided: \[key\]\. .*\(model "scripted-embed"; check PLEXUS_EMBEDDINGS_KEY\)$/);
      expect(failed.error).not.toContain(KEY);
      expect(failed.error).not.toMatch(/\/tmp|\/work|127\.0\.0\.1/);
      const points = await fetch(`${server.url}/api/workspaces/${ws}/atlas/${id}/points`, { headers: { authorization: `Bearer ${server.ownerToken}` } });
      expect(points.status).toBe(409);
      expect(((await points.json()) as { message: string }).message).toContain('could not be made: the embedding service answered 401');
    } finally {
      llm.failEmbeddings(null);
    }
  });
});
