/**
 * One streamed model turn through the `openai` SDK against any OpenAI-compatible endpoint: text
 * deltas go to `onText` as they arrive, tool-call deltas (split across chunks) are assembled, and
 * the usage of the turn is returned. Aborting `signal` ends the HTTP stream at once.
 * Effects: network (the model endpoint).
 */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { TokenUsage } from '@plexus/shared';

export interface ModelConfig {
  apiKey: string;
  baseURL?: string;
  model: string;
  /** Upper bound on completion tokens per turn. */
  maxTokensPerTurn: number;
  /** Per-request timeout (ms). */
  timeoutMs: number;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface TurnResult {
  text: string;
  toolCalls: ToolCall[];
  usage: TokenUsage | null;
  finishReason: string | null;
}

export type Message = ChatCompletionMessageParam;

export class Model {
  private readonly client: OpenAI;
  constructor(readonly config: ModelConfig) {
    this.client = new OpenAI({ apiKey: config.apiKey, baseURL: config.baseURL, maxRetries: 1, timeout: config.timeoutMs });
  }

  async turn(input: { messages: Message[]; tools: ChatCompletionTool[]; toolChoice?: 'auto' | 'none'; signal: AbortSignal; onText: (t: string) => void }): Promise<TurnResult> {
    // One controller per turn, linked to the run's signal and unlinked after: the SDK adds a
    // listener to the signal it is given, which would pile up over a long run's turns.
    const local = new AbortController();
    const link = () => local.abort(input.signal.reason);
    if (input.signal.aborted) link();
    input.signal.addEventListener('abort', link, { once: true });
    try {
      return await this.streamTurn(input, local.signal);
    } finally {
      input.signal.removeEventListener('abort', link);
    }
  }

  private async streamTurn(input: { messages: Message[]; tools: ChatCompletionTool[]; toolChoice?: 'auto' | 'none'; onText: (t: string) => void }, signal: AbortSignal): Promise<TurnResult> {
    const stream = await this.client.chat.completions.create(
      {
        model: this.config.model,
        messages: input.messages,
        ...(input.tools.length ? { tools: input.tools, tool_choice: input.toolChoice ?? 'auto' } : {}),
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: this.config.maxTokensPerTurn,
      },
      { signal },
    );
    let text = '';
    const calls = new Map<number, ToolCall>();
    let usage: TokenUsage | null = null;
    let finishReason: string | null = null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = { prompt: chunk.usage.prompt_tokens ?? 0, completion: chunk.usage.completion_tokens ?? 0, total: chunk.usage.total_tokens ?? 0 };
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const d = choice.delta;
      if (d?.content) {
        text += d.content;
        input.onText(d.content);
      }
      for (const tc of d?.tool_calls ?? []) {
        const c = calls.get(tc.index) ?? { id: '', name: '', arguments: '' };
        if (tc.id) c.id = tc.id;
        if (tc.function?.name) c.name += tc.function.name;
        if (tc.function?.arguments) c.arguments += tc.function.arguments;
        calls.set(tc.index, c);
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    const toolCalls = [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([i, c]) => ({ ...c, id: c.id || `call_${i}` }));
    return { text, toolCalls, usage, finishReason };
  }
}
