/**
 * A scripted OpenAI-compatible chat-completions server for tests and demos: the real `openai`
 * client and the agent run against it unchanged. Each request to `POST /v1/chat/completions`
 * takes the next turn of a scenario (or the first turn whose `match` fits) and answers it as the
 * real API does — `stream: true` as server-sent `chat.completion.chunk` events, with text split
 * into pieces and tool-call arguments split across chunks; otherwise one `chat.completion`.
 * Every request is recorded for assertions. `POST /v1/embeddings` answers as the real API does
 * (`{object: 'list', data: [{object: 'embedding', index, embedding}], model, usage}`) with
 * deterministic vectors: a signed hashed bag of the words of each input, L2-normalised, so texts
 * that share words are close and texts that share none are orthogonal but for hash collisions.
 * Effects: listens on a port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_EMBEDDING_DIMENSIONS, type Scenario, type ScriptedEmbeddings, type ScriptedTask, type ScriptedTurn } from './scenario.ts';

/** The request's task: the first line of its first system message (see ScriptedTask). */
export function requestTask(body: Record<string, unknown>): ScriptedTask | null {
  const msgs = Array.isArray(body.messages) ? (body.messages as RequestMessage[]) : [];
  const system = msgs.find((m) => m?.role === 'system');
  const m = system ? /^Task: (route|plan|step|verify|summarise)\b/.exec(messageText(system)) : null;
  return m ? (m[1] as ScriptedTask) : null;
}

/** What the scripted model answers a route or verify request no turn answers. */
const DEFAULT_ANSWERS: Partial<Record<ScriptedTask, ScriptedTurn>> = {
  route: { text: '{"kind": "action", "reason": "the scenario scripts no route"}' },
  verify: { text: '{"passed": true, "confidence": 0.9, "issues": [], "suggestions": []}' },
};

export interface RecordedRequest {
  body: Record<string, unknown>;
  /** The turn that answered it (index into the scenario), or -1 when none was left. */
  turn: number;
  /** The client went away before the answer was complete. */
  aborted: boolean;
  /** The request's task (null: the conversational tool loop). */
  task: ScriptedTask | null;
}

export interface RecordedEmbeddingRequest {
  body: Record<string, unknown>;
  /** The request's `Authorization` header, or null. */
  authorization: string | null;
  /** The HTTP status it was answered with. */
  status: number;
}

export interface ScriptedLlm {
  url: string;
  /** Base URL for the `openai` client (`…/v1`). */
  baseURL: string;
  requests: RecordedRequest[];
  /** The requests of the conversational tool loop only (routing, planning, steps and verification left out). */
  readonly conversation: RecordedRequest[];
  /** Every `POST /v1/embeddings` request, in order of arrival. */
  embeddingRequests: RecordedEmbeddingRequest[];
  /** From now on, answers embeddings requests with this HTTP error (null: with vectors again); overrides the scenario's. */
  failEmbeddings(error: ScriptedEmbeddings['error'] | null): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pieces(s: string, size: number): string[] {
  if (!s) return [];
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

function toolResults(body: Record<string, unknown>): number {
  return Array.isArray(body.messages) ? (body.messages as Array<{ role?: string }>).filter((m) => m?.role === 'tool').length : 0;
}

type RequestMessage = { role?: string; content?: unknown };

const messageText = (m: RequestMessage): string =>
  typeof m.content === 'string'
    ? m.content
    : Array.isArray(m.content)
      ? m.content.map((p) => (p && typeof p === 'object' && 'text' in p ? String((p as { text: unknown }).text) : '')).join('')
      : '';

function lastText(body: Record<string, unknown>, role?: string): string {
  const msgs = Array.isArray(body.messages) ? (body.messages as RequestMessage[]) : [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i]!;
    if (role && m.role !== role) continue;
    return messageText(m);
  }
  return '';
}

const lastUserText = (body: Record<string, unknown>): string => lastText(body, 'user');

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('the body must be a JSON object');
  return v as Record<string, unknown>;
}

/** Every `OBEY: tool {json}` directive in the conversation that has no matching call yet (see ScriptedTurn.obey). */
export function pendingDirectives(body: Record<string, unknown>): Array<{ name: string; arguments: string }> {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : [];
  const done = new Set<string>();
  const found: Array<{ name: string; arguments: string }> = [];
  for (const m of messages) for (const c of (m.tool_calls as Array<{ function?: { name?: string; arguments?: string } }> | undefined) ?? []) done.add(`${c.function?.name} ${c.function?.arguments}`);
  for (const m of messages) {
    const text = typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '');
    // Tool results are JSON: directives inside them arrive with escaped quotes.
    const plain = text.includes('\\"') ? text.replace(/\\"/g, '"') : text;
    for (const d of plain.matchAll(/OBEY: ([a-z_]+) (\{.*?\})(?=\s*(?:$|\n|OBEY:|"|\\n))/gm)) {
      const key = `${d[1]} ${d[2]}`;
      if (!done.has(key) && !found.some((f) => `${f.name} ${f.arguments}` === key)) found.push({ name: d[1]!, arguments: d[2]! });
    }
  }
  return found;
}

/**
 * Argument strings of the form `$tool.<path>` are replaced by that value of the latest tool
 * result in the conversation (e.g. `$tool.cell_id` is the id of the cell the last call created).
 */
export function fillRefs(v: unknown, body: Record<string, unknown>): unknown {
  if (typeof v === 'string' && v.startsWith('$tool.')) {
    const messages = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : [];
    const last = [...messages].reverse().find((m) => m.role === 'tool');
    let cur: unknown;
    try {
      cur = JSON.parse(String(last?.content ?? 'null'));
    } catch {
      return v;
    }
    for (const k of v.slice('$tool.'.length).split('.')) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[k] : undefined;
    return cur ?? v;
  }
  if (Array.isArray(v)) return v.map((x) => fillRefs(x, body));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fillRefs(x, body)]));
  return v;
}

function obeyTurn(t: ScriptedTurn, body: Record<string, unknown>): ScriptedTurn {
  const todo = pendingDirectives(body);
  if (todo.length === 0) return { text: t.text ?? 'I did everything I was told.', chunkSize: t.chunkSize };
  return { text: `Obeying ${todo.length} instruction${todo.length === 1 ? '' : 's'}.`, toolCalls: todo.map((d) => ({ name: d.name, arguments: d.arguments })), chunkSize: t.chunkSize };
}

function sendError(res: ServerResponse, status: number, message: string, type = 'invalid_request_error'): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, type, code: null, param: null } }));
}

/** Most inputs of one embeddings request (OpenAI's limit). */
export const MAX_EMBEDDING_INPUTS = 2048;
const DEFAULT_EMBEDDING_DIMENSIONS = 64;

/** FNV-1a, 32 bits. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const words = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/**
 * The scripted model's embedding of `text`: each word adds ±1 at a hashed position (the sign from
 * another bit of the hash), then the vector is L2-normalised (all zeros without words).
 */
export function scriptedEmbedding(text: string, dimensions: number): number[] {
  const v = new Array<number>(dimensions).fill(0);
  for (const w of words(text)) {
    const h = fnv1a(w);
    v[h % dimensions] += h & 0x80000000 ? -1 : 1;
  }
  const norm = Math.hypot(...v);
  return norm ? v.map((x) => x / norm) : v;
}

/** The embeddings answer for a parsed body, or the HTTP error the real API would give. */
function embeddingsAnswer(body: Record<string, unknown>, dflt: number): { status: number; json: unknown } {
  const bad = (message: string) => ({ status: 400, json: { error: { message, type: 'invalid_request_error', code: null, param: null } } });
  if (typeof body.model !== 'string' || !body.model) return bad("'model' is required");
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(input) || !input.length) return bad("'input' must be a non-empty string or array of strings");
  if (input.length > MAX_EMBEDDING_INPUTS) return bad(`'input' holds ${input.length} items; at most ${MAX_EMBEDDING_INPUTS}`);
  if (input.some((t) => typeof t !== 'string' || !t)) return bad("'input' items must be non-empty strings (the scripted model embeds text only)");
  const asked = body.dimensions;
  if (asked !== undefined && !(Number.isInteger(asked) && (asked as number) >= 1 && (asked as number) <= MAX_EMBEDDING_DIMENSIONS)) return bad(`'dimensions' must be an integer from 1 to ${MAX_EMBEDDING_DIMENSIONS}`);
  const format = body.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64') return bad("'encoding_format' must be \"float\" or \"base64\"");
  const dims = (asked as number | undefined) ?? dflt;
  const tokens = (input as string[]).reduce((n, t) => n + words(t).length, 0);
  // base64: the vector's float32 values, little-endian (what the `openai` client asks for by default).
  const encode = (v: number[]) => (format === 'float' ? v : Buffer.from(new Float32Array(v).buffer).toString('base64'));
  return {
    status: 200,
    json: {
      object: 'list',
      data: (input as string[]).map((t, index) => ({ object: 'embedding', index, embedding: encode(scriptedEmbedding(t, dims)) })),
      model: body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    },
  };
}

/** Starts a server answering from `scenario`; `port` 0 picks a free one. */
export interface ScriptedLlmHooks {
  /** Called as each text piece is written to the stream (epoch ms, sub-millisecond), for benchmarks. */
  onText?: (text: string, at: number) => void;
}

export async function startScriptedLlm(scenario: Scenario, port = 0, hooks: ScriptedLlmHooks = {}): Promise<ScriptedLlm> {
  const requests: RecordedRequest[] = [];
  const embeddingRequests: RecordedEmbeddingRequest[] = [];
  let embeddingError: ScriptedEmbeddings['error'] | null = scenario.embeddings?.error ?? null;
  const used = new Set<number>();
  let counter = 0;

  const pickTurn = (body: Record<string, unknown>): number => {
    const text = lastUserText(body);
    const task = requestTask(body);
    for (let i = 0; i < scenario.turns.length; i++) {
      if (used.has(i)) continue;
      const m = scenario.turns[i]!.match;
      if ((m?.task ?? null) !== task) continue;
      if (m?.lastUserContains !== undefined && !text.includes(m.lastUserContains)) continue;
      if (m?.afterTools !== undefined && toolResults(body) !== m.afterTools) continue;
      if (m?.lastMessageContains !== undefined && !lastText(body).includes(m.lastMessageContains)) continue;
      return i;
    }
    return -1;
  };

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let body: Record<string, unknown>;
    try {
      body = await readBody(req);
    } catch (e) {
      return sendError(res, 400, `malformed request body: ${(e as Error).message}`);
    }
    const index = pickTurn(body);
    const rec: RecordedRequest = { body, turn: index, aborted: false, task: requestTask(body) };
    requests.push(rec);
    const fallback = index < 0 ? DEFAULT_ANSWERS[requestTask(body) ?? ('' as ScriptedTask)] : undefined;
    if (index < 0 && !fallback) return sendError(res, 500, `the scripted model has no turn left for this request${requestTask(body) ? ` (task ${requestTask(body)})` : ''}`, 'server_error');
    const scripted: ScriptedTurn = fallback ?? scenario.turns[index]!;
    if (index >= 0 && !scripted.repeat && !scripted.obey) used.add(index);
    const turn: ScriptedTurn = scripted.obey ? obeyTurn(scripted, body) : scripted;
    if (turn.error) return sendError(res, turn.error.status, turn.error.message, turn.error.type);
    const id = `chatcmpl-scripted-${++counter}`;
    const created = Math.floor(Date.now() / 1000);
    const model = typeof body.model === 'string' ? body.model : (scenario.model ?? 'scripted');
    const calls = (turn.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_${counter}_${i}`,
      name: c.name,
      args: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(fillRefs(c.arguments ?? {}, body)),
    }));
    const finish = turn.finishReason ?? (calls.length ? 'tool_calls' : 'stop');
    const usage = turn.usage ?? { prompt_tokens: JSON.stringify(body.messages ?? []).length >> 2, completion_tokens: ((turn.text ?? '').length + calls.reduce((n, c) => n + c.args.length, 0)) >> 2 };
    const usageObj = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };

    if (body.stream !== true) {
      const message: Record<string, unknown> = { role: 'assistant', content: turn.text ?? null, refusal: null };
      if (calls.length) message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish, logprobs: null }], usage: usageObj }));
      return;
    }

    let closed = false;
    res.on('close', () => {
      if (!res.writableFinished) {
        closed = true;
        rec.aborted = true;
      }
    });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const send = async (delta: Record<string, unknown>, finishReason: string | null = null) => {
      if (closed) return;
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }] })}\n\n`);
      if (turn.delayMs) await sleep(turn.delayMs);
    };
    const size = Math.max(1, turn.chunkSize ?? 8);
    await send({ role: 'assistant', content: '' });
    for (const p of pieces(turn.text ?? '', size)) {
      hooks.onText?.(p, performance.timeOrigin + performance.now());
      await send({ content: p });
    }
    for (const [i, c] of calls.entries()) {
      // The first delta of a call carries its id and name; the arguments follow in fragments.
      await send({ tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] });
      for (const p of pieces(c.args, size)) await send({ tool_calls: [{ index: i, function: { arguments: p } }] });
    }
    await send({}, finish);
    const opts = body.stream_options as { include_usage?: boolean } | undefined;
    if (!closed && opts?.include_usage) res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageObj })}\n\n`);
    if (!closed) res.end('data: [DONE]\n\n');
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: scenario.model ?? 'scripted', object: 'model', created: 0, owned_by: 'plexus' }] }));
      return;
    }
    if (req.method === 'POST' && path === '/v1/embeddings') {
      readBody(req).then(
        (body) => {
          const a = embeddingError
            ? { status: embeddingError.status, json: { error: { message: embeddingError.message, type: embeddingError.type ?? 'server_error', code: null, param: null } } }
            : embeddingsAnswer(body, scenario.embeddings?.dimensions ?? DEFAULT_EMBEDDING_DIMENSIONS);
          embeddingRequests.push({ body, authorization: req.headers.authorization ?? null, status: a.status });
          res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.json));
        },
        (e: Error) => sendError(res, 400, `malformed request body: ${e.message}`),
      );
      return;
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      answer(req, res).catch((e) => {
        if (!res.headersSent) sendError(res, 500, (e as Error).message, 'server_error');
        else res.destroy();
      });
      return;
    }
    sendError(res, 404, `no route ${req.method} ${path}`);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    baseURL: `${url}/v1`,
    requests,
    embeddingRequests,
    failEmbeddings: (error) => void (embeddingError = error),
    get conversation() {
      return requests.filter((r) => r.task === null);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
