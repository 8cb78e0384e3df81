/**
 * The scripted OpenAI-compatible server against the real `openai` client: streamed text, tool
 * calls whose arguments arrive split across chunks, non-streamed answers, usage, malformed
 * arguments passed through untouched, errors, and a client that aborts mid-stream. Embeddings:
 * the real response shape (floats, or base64 as the client asks by default), deterministic hashed
 * bag-of-words vectors (shared words → close), recorded requests, scripted errors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { scriptedEmbedding, startScriptedLlm, type ScriptedLlm } from '../../src/scripted-llm/server.ts';
import { parseScenario, ScenarioError } from '../../src/scripted-llm/scenario.ts';

let llm: ScriptedLlm | undefined;
afterEach(async () => {
  await llm?.close();
  llm = undefined;
});
const client = (l: ScriptedLlm) => new OpenAI({ baseURL: l.baseURL, apiKey: 'test-key', maxRetries: 0 });

describe('scripted OpenAI-compatible server', () => {
  it('streams text in pieces and tool calls split across chunks; the SDK reassembles them', async () => {
    llm = await startScriptedLlm({
      turns: [
        { text: 'Let me look at the notebook first.', chunkSize: 5, toolCalls: [{ name: 'get_notebook_state', arguments: { include_outputs: true, max_cells: 50 } }, { name: 'run_cell', arguments: { cell_id: 'c_1' } }] },
        { match: { lastUserContains: 'thanks' }, text: 'You are welcome.' },
      ],
    });
    const stream = await client(llm).chat.completions.create({ model: 'scripted', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'what is in my notebook?' }] });
    let text = '';
    let chunks = 0;
    const args: string[] = [];
    const names: string[] = [];
    let finish: string | null = null;
    let usage: unknown = null;
    for await (const chunk of stream) {
      chunks++;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      text += choice.delta.content ?? '';
      for (const tc of choice.delta.tool_calls ?? []) {
        if (tc.function?.name) names[tc.index] = tc.function.name;
        args[tc.index] = (args[tc.index] ?? '') + (tc.function?.arguments ?? '');
      }
      finish = choice.finish_reason ?? finish;
    }
    expect(text).toBe('Let me look at the notebook first.');
    expect(names).toEqual(['get_notebook_state', 'run_cell']);
    expect(args.map((a) => JSON.parse(a))).toEqual([{ include_outputs: true, max_cells: 50 }, { cell_id: 'c_1' }]);
    expect(finish).toBe('tool_calls');
    expect(chunks).toBeGreaterThan(10); // really split, not one blob
    expect(usage).toMatchObject({ total_tokens: expect.any(Number) });
    // The matched turn answers the next request, non-streamed.
    const done = await client(llm).chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'thanks!' }] });
    expect(done.choices[0]!.message.content).toBe('You are welcome.');
    expect(done.choices[0]!.finish_reason).toBe('stop');
    expect(llm.requests.map((r) => r.turn)).toEqual([0, 1]);
  });

  it('passes malformed tool arguments through untouched, and answers errors as the API does', async () => {
    llm = await startScriptedLlm({ turns: [{ toolCalls: [{ name: 'set_view', arguments: '{"position": [1, 2' }] }, { error: { status: 429, message: 'rate limited', type: 'rate_limit_error' } }] });
    const r = await client(llm).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'go' }] });
    expect(r.choices[0]!.message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'set_view', arguments: '{"position": [1, 2' } });
    await expect(client(llm).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'again' }] })).rejects.toMatchObject({ status: 429 });
    // No turn left: a clear server error.
    await expect(client(llm).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'more' }] })).rejects.toThrow(/no turn left/);
  });

  it('notices a client that aborts a long stream', async () => {
    llm = await startScriptedLlm({ turns: [{ text: 'x'.repeat(400), chunkSize: 4, delayMs: 10 }] });
    const ac = new AbortController();
    const stream = await client(llm).chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'long' }] }, { signal: ac.signal });
    let got = '';
    // The SDK ends (or rejects) the iteration once aborted; either way it stops early.
    await (async () => {
      for await (const chunk of stream) {
        got += chunk.choices[0]?.delta.content ?? '';
        if (got.length >= 40) ac.abort();
      }
    })().catch(() => undefined);
    expect(got.length).toBeLessThan(400);
    await expect.poll(() => llm!.requests[0]!.aborted).toBe(true);
  });

  it('answers embeddings in the real shape, deterministically: shared words make close vectors', async () => {
    llm = await startScriptedLlm({ turns: [], embeddings: { dimensions: 32 } });
    const texts = ['spike burst firing', 'burst spike rate', 'dendrite spine arbor'];
    // The real client asks for base64 by default and decodes it.
    const r = await client(llm).embeddings.create({ model: 'scripted-embed', input: texts });
    expect(r).toMatchObject({ object: 'list', model: 'scripted-embed', usage: { prompt_tokens: 9, total_tokens: 9 } });
    expect(r.data.map((d) => [d.object, d.index, d.embedding.length])).toEqual([['embedding', 0, 32], ['embedding', 1, 32], ['embedding', 2, 32]]);
    r.data.forEach((d, i) => d.embedding.forEach((v, j) => expect(v).toBe(Math.fround(scriptedEmbedding(texts[i]!, 32)[j]!))));
    const dot = (a: number[], b: number[]) => a.reduce((s, v, i) => s + v * b[i]!, 0);
    const [a, b, c] = texts.map((t) => scriptedEmbedding(t, 32));
    expect(dot(a!, a!)).toBeCloseTo(1, 12);
    expect(dot(a!, b!)).toBeGreaterThan(0.5);
    expect(Math.abs(dot(a!, c!))).toBeLessThan(0.5);
    // Floats when asked, `dimensions` honoured; every request recorded with its Authorization header.
    const f = await client(llm).embeddings.create({ model: 'm', input: 'spike', encoding_format: 'float', dimensions: 8 });
    expect(f.data[0]!.embedding).toEqual(scriptedEmbedding('spike', 8));
    expect(llm.embeddingRequests.map((q) => [q.body.encoding_format, q.authorization, q.status])).toEqual([['base64', 'Bearer test-key', 200], ['float', 'Bearer test-key', 200]]);
    // Invalid requests are refused as the API refuses them; a scripted failure answers every request.
    await expect(client(llm).embeddings.create({ model: 'm', input: [''] })).rejects.toMatchObject({ status: 400 });
    llm.failEmbeddings({ status: 503, message: 'overloaded', type: 'server_error' });
    await expect(client(llm).embeddings.create({ model: 'm', input: 'x' })).rejects.toMatchObject({ status: 503, message: expect.stringContaining('overloaded') });
    llm.failEmbeddings(null);
    expect((await client(llm).embeddings.create({ model: 'm', input: 'x' })).data).toHaveLength(1);
    expect(() => parseScenario({ turns: [], embeddings: { dimensions: 0 } })).toThrow(/"embeddings.dimensions" must be an integer/);
  });

  it('refuses unplayable scenarios with a clear message', () => {
    expect(() => parseScenario({ turns: [{}] })).toThrow(ScenarioError);
    expect(() => parseScenario({ turns: [{}] })).toThrow(/turn 1 has no text, tool calls or error/);
    expect(() => parseScenario({ turns: [{ toolCalls: [{}] }] })).toThrow(/tool call 1 needs a "name"/);
    expect(() => parseScenario([])).toThrow(/must be an object/);
  });
});
