/**
 * The embeddings of a text column's rows from an OpenAI-compatible `POST <base>/embeddings`
 * endpoint (OpenAI, Azure-style proxies, vLLM, Ollama, LiteLLM, the scripted model of the tests),
 * for embedding maps. Only configured services are asked (PLEXUS_EMBEDDINGS_URL; off by default).
 *
 * - Each distinct text is sent once (rows repeating a text share its vector), cut to
 *   `maxInputChars`; rows without text (null, empty, only spaces) are not sent.
 * - Texts go in requests of at most `batchSize`, one after the other, each with a time limit;
 *   progress is reported as stage "embedding", texts done of distinct texts.
 * - Any failure ends the map with a message that names the HTTP status and the service's own
 *   message (or the network error), and what to check — never the key (it is cut out of whatever
 *   the service says) nor the service's address. Nothing falls back to another method silently.
 *
 * Plain `fetch`, not the `openai` package: the server does not depend on it (only the agent does),
 * and one POST with a JSON body needs none of its machinery — while its automatic retries and
 * their back-off would stretch the time limit and hide which request failed.
 * Effects: network (the embedding service).
 */
import type { Progress } from './numeric-projection.ts';
import { ProjectionError } from './projection.ts';

/** The embedding service, as the server's configuration holds it (config.ts). */
export interface EmbeddingsConfig {
  /** Base URL of the OpenAI-compatible API (`…/v1`); requests go to `<baseURL>/embeddings`. */
  baseURL: string;
  model: string;
  /** Sent as `Authorization: Bearer …`; null for a service without keys (a local vLLM or Ollama). Never written to a file or the document. */
  apiKey: string | null;
  /** Texts per request. */
  batchSize: number;
  /** Characters of one text sent (a longer text is cut; embedding models read a few thousand tokens). */
  maxInputChars: number;
  /** Time limit of one request (ms). */
  timeoutMs: number;
  /** Most rows an embeddings map is made of (every distinct text is a paid request's share). */
  maxRows: number;
}

/** What the job process is told (the key travels in its environment, never in its spec file). */
export type EmbeddingsService = Omit<EmbeddingsConfig, 'apiKey'>;

/** The environment variable that carries the key to the job process. */
export const EMBEDDINGS_KEY_ENV = 'PLEXUS_EMBEDDINGS_KEY';

export interface Embeddings {
  /** The model that made them, as the service names it. */
  model: string;
  dimensions: number;
  /** One vector per distinct text, row-major (`count` × `dimensions`), as the service gave them. */
  vectors: Float32Array;
  count: number;
  /** Per row: its text's vector (0-based index into `vectors`), or -1 for a row without text. */
  index: Int32Array;
  /** Rows without text. */
  empty: number;
  /** Distinct texts cut to `maxInputChars`. */
  cut: number;
}

/** The first `max` UTF-16 units of `s`, never ending inside a surrogate pair. */
function cutText(s: string, max: number): string {
  if (s.length <= max) return s;
  const code = s.charCodeAt(max - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** Cuts the key, and anything shaped like a key or a bearer token, out of a text the service wrote. */
export function redactKey(text: string, key: string | null): string {
  let out = key && key.length >= 4 ? text.split(key).join('[key]') : text;
  out = out.replace(/\b(?:sk|pk|rk)-[A-Za-z0-9_*.-]{6,}/g, '[key]').replace(/\bBearer\s+\S+/gi, 'Bearer [key]');
  return out;
}

const HINTS: Record<number, string> = {
  400: 'check PLEXUS_EMBEDDINGS_MODEL',
  401: 'check PLEXUS_EMBEDDINGS_KEY',
  403: 'check PLEXUS_EMBEDDINGS_KEY',
  404: 'check PLEXUS_EMBEDDINGS_URL and PLEXUS_EMBEDDINGS_MODEL',
  413: 'lower PLEXUS_EMBEDDINGS_BATCH or PLEXUS_EMBEDDINGS_MAX_CHARS',
  429: "the service's rate limit or quota: try again later, or map fewer rows",
};

/** The error for an HTTP answer that is not 2xx: status, the service's message, what to check. */
async function httpError(res: Response, key: string | null, model: string): Promise<ProjectionError> {
  let detail = '';
  try {
    const text = await res.text();
    try {
      const j = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
      const m = typeof j.error === 'string' ? j.error : (j.error?.message ?? j.message ?? j.detail);
      detail = typeof m === 'string' ? m : text;
    } catch {
      // Not JSON (a proxy's HTML error page, say): its text.
      detail = text.replace(/<[^>]*>/g, ' ');
    }
  } catch {
    // No body: the status says it.
  }
  detail = redactKey(detail.replace(/\s+/g, ' ').trim(), key).slice(0, 300);
  const hint = HINTS[res.status] ?? (res.status >= 500 ? 'the service failed; try again later' : 'check the PLEXUS_EMBEDDINGS_* settings');
  return new ProjectionError(`the embedding service answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}${detail ? `: ${detail}` : ''} (model "${model}"; ${hint})`);
}

const malformed = (why: string) => new ProjectionError(`the embedding service's answer is not a list of embeddings (${why}); is PLEXUS_EMBEDDINGS_URL an OpenAI-compatible API?`);

/** One vector of an answer: an array of numbers, or base64 little-endian float32 (`encoding_format: "base64"`, which some services always use). */
function vectorOf(v: unknown): ArrayLike<number> {
  if (typeof v === 'string') {
    const b = Buffer.from(v, 'base64');
    return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length - (b.length % 4)));
  }
  if (Array.isArray(v)) return v as number[];
  throw malformed('an embedding is neither an array of numbers nor base64');
}

/** Sends one batch; returns its vectors in input order. */
async function embedBatch(service: EmbeddingsService, key: string | null, input: string[]): Promise<{ model: string | null; vectors: Array<ArrayLike<number>> }> {
  let res: Response;
  try {
    res = await fetch(`${service.baseURL.replace(/\/+$/, '')}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({ model: service.model, input, encoding_format: 'float' }),
      signal: AbortSignal.timeout(service.timeoutMs),
    });
  } catch (e) {
    const err = e as Error & { cause?: { code?: string } };
    if (err.name === 'TimeoutError' || err.name === 'AbortError')
      throw new ProjectionError(`the embedding service did not answer within ${service.timeoutMs >= 1000 ? `${Math.round(service.timeoutMs / 1000)} s` : `${service.timeoutMs} ms`} (PLEXUS_EMBEDDINGS_TIMEOUT_MS; model "${service.model}")`);
    throw new ProjectionError(`the embedding service could not be reached (${err.cause?.code ?? err.message.split('\n')[0]}); check PLEXUS_EMBEDDINGS_URL`);
  }
  if (!res.ok) throw await httpError(res, key, service.model);
  let body: { data?: unknown; model?: unknown };
  try {
    body = (await res.json()) as typeof body;
  } catch {
    throw malformed('not JSON');
  }
  if (!Array.isArray(body?.data)) throw malformed('no "data" list');
  if (body.data.length !== input.length) throw malformed(`${body.data.length} embeddings for ${input.length} texts`);
  const vectors: Array<ArrayLike<number> | undefined> = new Array(input.length);
  body.data.forEach((d: { index?: unknown; embedding?: unknown } | null, i) => {
    if (!d || typeof d !== 'object') throw malformed('an item that is not an object');
    const at = d.index ?? i;
    if (!Number.isInteger(at) || (at as number) < 0 || (at as number) >= input.length || vectors[at as number]) throw malformed(`a bad or repeated index ${JSON.stringify(at)}`);
    vectors[at as number] = vectorOf(d.embedding);
  });
  return { model: typeof body.model === 'string' && body.model ? body.model : null, vectors: vectors as Array<ArrayLike<number>> };
}

/**
 * The embeddings of `texts` (one per row; null: no text) from the service. Throws ProjectionError
 * with a message for people when the service fails or answers something else than embeddings.
 */
export async function embedTexts(texts: ReadonlyArray<string | null>, service: EmbeddingsService, key: string | null, onProgress: Progress = () => {}): Promise<Embeddings> {
  const index = new Int32Array(texts.length);
  const ids = new Map<string, number>();
  let empty = 0;
  let cut = 0;
  texts.forEach((t, r) => {
    const trimmed = t?.trim() ?? '';
    if (!trimmed) {
      index[r] = -1;
      empty++;
      return;
    }
    const text = cutText(trimmed, service.maxInputChars);
    let id = ids.get(text);
    if (id === undefined) {
      ids.set(text, (id = ids.size));
      if (text.length < trimmed.length) cut++;
    }
    index[r] = id;
  });
  const distinct = [...ids.keys()];
  ids.clear();
  const count = distinct.length;
  const batch = Math.max(1, service.batchSize);
  let dimensions = 0;
  let model = service.model;
  let vectors = new Float32Array(0);
  onProgress('embedding', 0, count);
  for (let start = 0; start < count; start += batch) {
    const got = await embedBatch(service, key, distinct.slice(start, start + batch));
    if (!dimensions) {
      dimensions = got.vectors[0]!.length;
      if (!dimensions) throw malformed('empty vectors');
      vectors = new Float32Array(count * dimensions);
      model = got.model ?? model;
    }
    got.vectors.forEach((v, i) => {
      if (v.length !== dimensions) throw malformed(`vectors of ${dimensions} and of ${v.length} numbers`);
      const at = (start + i) * dimensions;
      for (let j = 0; j < dimensions; j++) {
        const x = Number(v[j]);
        if (!Number.isFinite(x)) throw malformed('a value that is not a finite number');
        vectors[at + j] = x;
      }
    });
    onProgress('embedding', Math.min(count, start + batch), count);
  }
  return { model, dimensions, vectors, count, index, empty, cut };
}
