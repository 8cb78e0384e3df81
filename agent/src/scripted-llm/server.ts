/**
 * A scripted OpenAI-compatible chat-completions server for tests and demos: the real `openai`
 * client and the agent run against it unchanged. Each request to `POST /v1/chat/completions`
 * takes the next turn of a scenario (or the first turn whose `match` fits) and answers it as the
 * real API does — `stream: true` as server-sent `chat.completion.chunk` events, with text split
 * into pieces and tool-call arguments split across chunks; otherwise one `chat.completion`.
 * Every request is recorded for assertions. Effects: listens on a port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Scenario, ScriptedTurn } from './scenario.ts';

export interface RecordedRequest {
  body: Record<string, unknown>;
  /** The turn that answered it (index into the scenario), or -1 when none was left. */
  turn: number;
  /** The client went away before the answer was complete. */
  aborted: boolean;
}

export interface ScriptedLlm {
  url: string;
  /** Base URL for the `openai` client (`…/v1`). */
  baseURL: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pieces(s: string, size: number): string[] {
  if (!s) return [];
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

function lastUserText(body: Record<string, unknown>): string {
  const msgs = Array.isArray(body.messages) ? (body.messages as Array<{ role?: string; content?: unknown }>) : [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i]!;
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) return m.content.map((p) => (p && typeof p === 'object' && 'text' in p ? String((p as { text: unknown }).text) : '')).join('');
  }
  return '';
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('the body must be a JSON object');
  return v as Record<string, unknown>;
}

function sendError(res: ServerResponse, status: number, message: string, type = 'invalid_request_error'): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, type, code: null, param: null } }));
}

/** Starts a server answering from `scenario`; `port` 0 picks a free one. */
export async function startScriptedLlm(scenario: Scenario, port = 0): Promise<ScriptedLlm> {
  const requests: RecordedRequest[] = [];
  const used = new Set<number>();
  let counter = 0;

  const pickTurn = (body: Record<string, unknown>): number => {
    const text = lastUserText(body);
    for (let i = 0; i < scenario.turns.length; i++) {
      if (used.has(i)) continue;
      const m = scenario.turns[i]!.match;
      if (m?.lastUserContains !== undefined && !text.includes(m.lastUserContains)) continue;
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
    const rec: RecordedRequest = { body, turn: index, aborted: false };
    requests.push(rec);
    if (index < 0) return sendError(res, 500, 'the scripted model has no turn left for this request', 'server_error');
    used.add(index);
    const turn: ScriptedTurn = scenario.turns[index]!;
    if (turn.error) return sendError(res, turn.error.status, turn.error.message, turn.error.type);
    const id = `chatcmpl-scripted-${++counter}`;
    const created = Math.floor(Date.now() / 1000);
    const model = typeof body.model === 'string' ? body.model : (scenario.model ?? 'scripted');
    const calls = (turn.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_${counter}_${i}`,
      name: c.name,
      args: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
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
    for (const p of pieces(turn.text ?? '', size)) await send({ content: p });
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
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
