/**
 * Embeddings maps, against the scripted OpenAI-compatible server over real HTTP: distinct texts go
 * in bounded batches with the request shape of the API (model, input list, float encoding, bearer
 * key; none without a key), cut to the input limit, with progress per batch; HTTP errors, an
 * unreachable service, a service that does not answer in time and a wrong URL each end in a clear
 * message that never holds the key. The projection: three topics' embeddings stay three separated
 * groups under UMAP, the clusters are named by their words, `how` names the model; the reduction
 * of the embeddings (randomized SVD over distinct texts) equals exact PCA; tiny tables get PCA.
 * Also the server's configuration of the service and the columns an embeddings map reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdingProxy } from '@plexus/testkit/agent';
import { scriptedEmbedding, startScriptedLlm, type ScriptedLlm } from '../../../agent/src/scripted-llm/server.ts';
import { loadConfig } from '../../src/config.ts';
import { embedTexts, redactKey, type Embeddings, type EmbeddingsService } from '../../src/atlas/embeddings.ts';
import { embeddingMatrix } from '../../src/atlas/embedding-matrix.ts';
import { groupSeparation, nearestCentroidAccuracy } from '../../src/atlas/evaluate.ts';
import { pca } from '../../src/atlas/numeric-projection.ts';
import { project, ProjectionError } from '../../src/atlas/projection.ts';
import { principalScores } from '../../src/atlas/randomized-svd.ts';
import { gaussian, seededRandom } from '../../src/atlas/seeded-random.ts';
import { pickColumns } from '../../src/atlas/source-columns.ts';

const KEY = 'sk-test-secret-0123456789';

let llm: ScriptedLlm;
beforeAll(async () => {
  llm = await startScriptedLlm({ turns: [], embeddings: { dimensions: 16 } });
});
afterAll(() => llm.close());

const service = (over: Partial<EmbeddingsService> = {}): EmbeddingsService => ({ baseURL: llm.baseURL, model: 'scripted-embed', batchSize: 3, maxInputChars: 1000, timeoutMs: 30_000, maxRows: 1000, ...over });

/** Runs `f` and returns the requests it sent to the scripted server. */
async function sent<T>(f: () => Promise<T>): Promise<{ result: T; requests: ScriptedLlm['embeddingRequests'] }> {
  const before = llm.embeddingRequests.length;
  const result = await f();
  return { result, requests: llm.embeddingRequests.slice(before) };
}

/** Embeddings of `texts` made here exactly as the scripted service makes them (no service). */
function localEmbeddings(texts: Array<string | null>, dims: number, model = 'scripted-embed'): Embeddings {
  const ids = new Map<string, number>();
  const index = Int32Array.from(texts, (t) => (t?.trim() ? (ids.get(t.trim()) ?? (ids.set(t.trim(), ids.size), ids.size - 1)) : -1));
  const vectors = new Float32Array(ids.size * dims);
  [...ids.keys()].forEach((t, i) => vectors.set(scriptedEmbedding(t, dims), i * dims));
  return { model, dimensions: dims, vectors, count: ids.size, index, empty: index.filter((i) => i < 0).length, cut: 0 };
}

const TOPICS = [
  ['spike', 'burst', 'firing', 'rate', 'action', 'potential'],
  ['dendrite', 'spine', 'branch', 'arbor', 'synapse', 'tuft'],
  ['soma', 'nucleus', 'membrane', 'body', 'organelle', 'cytoplasm'],
];
function topicTexts(n: number, seed: number): { texts: Array<string | null>; truth: Int32Array } {
  const rand = seededRandom(seed);
  const truth = new Int32Array(n);
  const texts = Array.from({ length: n }, (_, i) => {
    truth[i] = i % 3;
    return `cell ${Array.from({ length: 5 }, () => TOPICS[i % 3]![Math.floor(rand() * 6)]).join(' ')}`;
  });
  return { texts, truth };
}

describe('the embedding service client', () => {
  it('sends each distinct text once, in batches, with the API request shape and the key; reports progress per batch', async () => {
    const texts = ['alpha beta', 'gamma', null, 'alpha beta', '  ', 'delta', 'epsilon zeta', 'eta', 'theta', ' gamma '];
    const progress: Array<[string, number, number]> = [];
    const { result: e, requests } = await sent(() => embedTexts(texts, service(), KEY, (s, d, t) => progress.push([s, d, t])));
    const distinct = ['alpha beta', 'gamma', 'delta', 'epsilon zeta', 'eta', 'theta'];
    expect(requests.map((r) => r.body)).toEqual([
      { model: 'scripted-embed', input: distinct.slice(0, 3), encoding_format: 'float' },
      { model: 'scripted-embed', input: distinct.slice(3, 6), encoding_format: 'float' },
    ]);
    expect(requests.every((r) => r.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(progress).toEqual([['embedding', 0, 6], ['embedding', 3, 6], ['embedding', 6, 6]]);
    expect(e).toMatchObject({ model: 'scripted-embed', dimensions: 16, count: 6, empty: 2, cut: 0 });
    expect([...e.index]).toEqual([0, 1, -1, 0, -1, 2, 3, 4, 5, 1]);
    distinct.forEach((t, i) => expect([...e.vectors.subarray(i * 16, (i + 1) * 16)]).toEqual(scriptedEmbedding(t, 16).map(Math.fround)));
  });

  it('cuts long texts to the input limit (never inside a surrogate pair) and sends no key when it has none', async () => {
    const { result: e, requests } = await sent(() => embedTexts(['abcdefghij', 'abcdefghXY', 'short', 'abcdefgh😀z'], service({ maxInputChars: 9 }), null));
    expect(requests.map((r) => r.body.input)).toEqual([['abcdefghi', 'abcdefghX', 'short'], ['abcdefgh']]);
    expect(requests.map((r) => r.authorization)).toEqual([null, null]);
    expect(e.cut).toBe(3);
  });

  it('makes no request for a column without text', async () => {
    const { result: e, requests } = await sent(() => embedTexts([null, '', ' '], service(), KEY));
    expect(requests).toEqual([]);
    expect(e).toMatchObject({ count: 0, empty: 3 });
    expect(() => project({ method: 'embeddings', name: 'note', texts: [null, '', ' '], embeddings: e })).toThrow('column "note" has no text to map (every row is empty)');
  });

  it('ends in a clear error naming the HTTP status and the service message, without the key', async () => {
    const cases: Array<[{ status: number; message: string }, RegExp]> = [
      [{ status: 401, message: `Incorrect API key provided: ${KEY}. You can find your API key at https://platform.openai.com/account/api-keys.` }, /^the embedding service answered 401 Unauthorized: Incorrect API key provided: \[key\]\. .*\(model "scripted-embed"; check PLEXUS_EMBEDDINGS_KEY\)$/],
      [{ status: 404, message: 'The model `nope` does not exist' }, /answered 404 Not Found: The model `nope` does not exist \(model "scripted-embed"; check PLEXUS_EMBEDDINGS_URL and PLEXUS_EMBEDDINGS_MODEL\)/],
      [{ status: 429, message: 'Rate limit reached' }, /answered 429 Too Many Requests: Rate limit reached .*rate limit or quota/],
      [{ status: 500, message: 'The server had an error' }, /answered 500 Internal Server Error: The server had an error .*the service failed; try again later/],
    ];
    try {
      for (const [error, want] of cases) {
        llm.failEmbeddings(error);
        const progress: number[] = [];
        const err = await embedTexts(['one', 'two'], service(), KEY, (_, d) => progress.push(d)).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ProjectionError);
        expect((err as Error).message).toMatch(want);
        expect((err as Error).message).not.toContain(KEY);
        expect(progress).toEqual([0]);
      }
    } finally {
      llm.failEmbeddings(null);
    }
    // A failure after some batches: the progress so far, then the error.
    const progress: number[] = [];
    const before = llm.embeddingRequests.length;
    // The second request fails: the proxy switches the service to failing just before passing it on.
    const proxy = await holdingProxy(llm.baseURL, async () => {
      if (llm.embeddingRequests.length - before === 1) llm.failEmbeddings({ status: 503, message: 'overloaded' });
    });
    try {
      await expect(embedTexts(['a', 'b', 'c', 'd'], service({ baseURL: proxy.baseURL }), KEY, (_, d) => progress.push(d))).rejects.toThrow(/answered 503 Service Unavailable: overloaded/);
    } finally {
      llm.failEmbeddings(null);
      await proxy.close();
    }
    expect(progress).toEqual([0, 3]);
  });

  it('says when the service cannot be reached, does not answer in time, or is not an embeddings API', async () => {
    const gone = await startScriptedLlm({ turns: [] });
    await gone.close();
    await expect(embedTexts(['x'], service({ baseURL: gone.baseURL }), KEY)).rejects.toThrow('the embedding service could not be reached (ECONNREFUSED); check PLEXUS_EMBEDDINGS_URL');
    // A service that holds the request past the time limit (the proxy never forwards it).
    const silent = await holdingProxy(llm.baseURL, () => new Promise<void>(() => {}));
    try {
      await expect(embedTexts(['x'], service({ baseURL: silent.baseURL, timeoutMs: 200 }), KEY)).rejects.toThrow('the embedding service did not answer within 200 ms (PLEXUS_EMBEDDINGS_TIMEOUT_MS; model "scripted-embed")');
    } finally {
      await silent.close();
    }
    // The base URL without /v1: the scripted server has no such route.
    await expect(embedTexts(['x'], service({ baseURL: llm.url }), KEY)).rejects.toThrow(/answered 404 Not Found: no route POST \/embeddings/);
  });

  it('cuts keys and bearer tokens out of what a service says', () => {
    expect(redactKey(`bad key ${KEY}, Bearer abc.def and sk-proj-****************wxyz`, KEY)).toBe('bad key [key], Bearer [key] and [key]');
  });
});

describe('embeddings maps', () => {
  it('three topics stay three separated groups under UMAP; clusters are named by their words; how names the model', () => {
    const { texts, truth } = topicTexts(240, 1);
    texts[7] = null;
    const e = localEmbeddings(texts, 64, 'text-embedding-3-small');
    const progress = new Set<string>();
    const p = project({ method: 'embeddings', name: 'abstract', texts, embeddings: e }, { seed: 1, onProgress: (s) => progress.add(s) });
    const keep = Int32Array.from(truth.keys()).filter((i) => i !== 7);
    const pick = (a: Float64Array) => Float64Array.from(keep, (i) => a[i]!);
    const groups = Int32Array.from(keep, (i) => truth[i]!);
    expect(nearestCentroidAccuracy(pick(p.x), pick(p.y), groups, 3)).toBe(1);
    // Three islands: the closest points of two topics lie further apart than any point from its nearest same-topic neighbour.
    const gap = groupSeparation(pick(p.x), pick(p.y), groups);
    expect(gap.between).toBeGreaterThan(3 * gap.within);
    expect(p.how).toMatch(/^UMAP of text-embedding-3-small embeddings \(64-d\) of column "abstract", 15 neighbours, seed 1; vectors L2-normalised, then their first 32 principal components \(\d+ % of the variance\); 1 row without text given the mean embedding; \d+ clusters by k-means/);
    expect([...progress]).toEqual(['components', 'neighbours', 'umap', 'clustering']);
    // The biggest cluster of each topic is named by that topic's words.
    for (let g = 0; g < 3; g++) {
      const counts = new Map<number, number>();
      truth.forEach((t, i) => t === g && i !== 7 && counts.set(p.cluster[i]!, (counts.get(p.cluster[i]!) ?? 0) + 1));
      const c = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
      for (const w of p.labels.find((l) => l.cluster === c)!.text.split(', ')) expect(TOPICS[g]).toContain(w);
    }
    // The same input and seed: the same map.
    const again = project({ method: 'embeddings', name: 'abstract', texts, embeddings: e }, { seed: 1 });
    expect([...again.x]).toEqual([...p.x]);
  });

  it('tables under 10 rows get PCA, with the share of the whole variance', () => {
    const { texts } = topicTexts(6, 2);
    const p = project({ method: 'embeddings', name: 'note', texts, embeddings: localEmbeddings(texts, 16) });
    const m = /^PCA of scripted-embed embeddings \(16-d\) of column "note": PC1 (\d+) %, PC2 (\d+) % of the variance \(UMAP needs at least 10 rows: PCA instead\); vectors L2-normalised, then their first 6 principal components \((\d+) % of the variance\)/.exec(p.how);
    expect(m, p.how).not.toBeNull();
    expect(Number(m![1]) + Number(m![2])).toBeLessThanOrEqual(Number(m![3]) + 1);
  });

  it('the reduction over distinct texts equals exact PCA of the normalised per-row vectors (empty rows at the mean)', () => {
    const rand = seededRandom(3);
    const d = 6;
    const u = 9;
    const vectors = Float32Array.from({ length: u * d }, () => gaussian(rand) * (1 + rand()));
    const index = Int32Array.from({ length: 40 }, (_, r) => (r % 7 === 3 ? -1 : Math.floor(rand() * u)));
    const e: Embeddings = { model: 'm', dimensions: d, vectors, count: u, index, empty: index.filter((i) => i < 0).length, cut: 0 };
    // Dense per-row matrix, built naively.
    const rows = Array.from(index, (t) => {
      if (t < 0) return null;
      const v = Array.from(vectors.subarray(t * d, (t + 1) * d));
      const norm = Math.hypot(...v);
      return v.map((x) => x / norm);
    });
    const present = rows.filter((r): r is number[] => r !== null);
    const mean = Array.from({ length: d }, (_, j) => present.reduce((s, r) => s + r[j]!, 0) / present.length);
    const centred = Array.from({ length: d }, (_, j) => Float64Array.from(rows, (r) => (r ? r[j]! - mean[j]! : 0)));
    const exact = pca(centred, 3).scores;
    const { matrix, total } = embeddingMatrix(e);
    const fast = principalScores(matrix, 3, { seed: 1 });
    for (let c = 0; c < 3; c++) fast[c]!.forEach((v, r) => expect(v).toBeCloseTo(exact[c]![r]!, 8));
    expect(total).toBeCloseTo(centred.reduce((s, col) => s + col.reduce((a, v) => a + v * v, 0), 0), 8);
  });
});

describe('configuration', () => {
  it('is off by default; on with PLEXUS_EMBEDDINGS_URL, with defaults', () => {
    expect(loadConfig({}).embeddings).toBeNull();
    expect(loadConfig({ PLEXUS_EMBEDDINGS_URL: 'http://127.0.0.1:8000/v1/' }).embeddings).toEqual({
      baseURL: 'http://127.0.0.1:8000/v1', model: 'text-embedding-3-small', apiKey: null, batchSize: 128, maxInputChars: 8000, timeoutMs: 60_000, maxRows: 50_000,
    });
    expect(loadConfig({ PLEXUS_EMBEDDINGS_URL: 'http://h/v1', PLEXUS_EMBEDDINGS_MODEL: 'nomic-embed-text', PLEXUS_EMBEDDINGS_KEY: 'k1', PLEXUS_EMBEDDINGS_BATCH: '5000', PLEXUS_EMBEDDINGS_MAX_CHARS: '100', PLEXUS_EMBEDDINGS_TIMEOUT_MS: '5000', PLEXUS_EMBEDDINGS_MAX_ROWS: '10' }).embeddings)
      .toEqual({ baseURL: 'http://h/v1', model: 'nomic-embed-text', apiKey: 'k1', batchSize: 2048, maxInputChars: 100, timeoutMs: 5000, maxRows: 10 });
  });

  it("reuses the agent's key only for the agent's own endpoint", () => {
    const key = (env: NodeJS.ProcessEnv) => loadConfig(env).embeddings?.apiKey;
    expect(key({ PLEXUS_EMBEDDINGS_URL: 'https://api.openai.com/v1', OPENAI_API_KEY: 'sk-agent' })).toBe('sk-agent');
    expect(key({ PLEXUS_EMBEDDINGS_URL: 'http://llm.lab:4000/v1', OPENAI_BASE_URL: 'http://llm.lab:4000/v1', OPENAI_API_KEY: 'sk-agent' })).toBe('sk-agent');
    expect(key({ PLEXUS_EMBEDDINGS_URL: 'http://other:4000/v1', OPENAI_API_KEY: 'sk-agent' })).toBeNull();
    expect(key({ PLEXUS_EMBEDDINGS_URL: 'https://api.openai.com/v1', OPENAI_API_KEY: 'sk-agent', PLEXUS_EMBEDDINGS_KEY: 'sk-own' })).toBe('sk-own');
  });

  it('refuses a URL that is not one, not http(s), or holds credentials', () => {
    expect(() => loadConfig({ PLEXUS_EMBEDDINGS_URL: 'localhost:8000' })).toThrow(/PLEXUS_EMBEDDINGS_URL must be an http\(s\) URL/);
    expect(() => loadConfig({ PLEXUS_EMBEDDINGS_URL: 'not a url' })).toThrow(/must be the base URL of an OpenAI-compatible API/);
    expect(() => loadConfig({ PLEXUS_EMBEDDINGS_URL: 'https://u:p@h/v1' })).toThrow('PLEXUS_EMBEDDINGS_URL must not hold credentials: put the key in PLEXUS_EMBEDDINGS_KEY');
  });

  it('an embeddings map reads one text column', () => {
    const cols = [{ name: 'snr', type: 'DOUBLE' }, { name: 'abstract', type: 'VARCHAR' }];
    expect(pickColumns({ method: 'embeddings', columns: [], table: 't' }, cols)).toEqual(['abstract']);
    expect(() => pickColumns({ method: 'embeddings', columns: ['snr'], table: 't' }, cols)).toThrow('column "snr" is DOUBLE, not text: an embeddings map needs a text column (text columns here: "abstract")');
  });
});
