/**
 * A sub-agent for one plan step: its own short conversation (the step context, not the run's),
 * the tools of the step's scopes plus `report_result`, and at most `maxTurns` model turns. It
 * ends when the model reports its result (or answers without tools: that text is the summary).
 * The same mechanism serves any bulky work that should come back as a short structured summary.
 */
import type { TokenUsage } from '@plexus/shared';
import type { Message, Model, ToolCall } from '../llm/model.ts';
import { openAiTools } from '../tools/index.ts';
import type { Tool, ToolResult } from '../tools/tool.ts';
import { parseArguments, ToolArgumentError, type JsonSchema } from '../tools/validate.ts';
import { STEP_VALUES_MAX } from './step-context.ts';

export const REPORT_RESULT_SCHEMA = {
  type: 'object',
  properties: {
    summary: { type: 'string', minLength: 1, maxLength: 600 },
    values: { type: 'object', additionalProperties: { type: ['number', 'string'] } },
    cells: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 200 } },
    tables: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 200 } },
    jobs: { type: 'array', maxItems: 5, items: { type: 'string', maxLength: 200 } },
  },
  required: ['summary'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const REPORT_RESULT_TOOL = {
  type: 'function' as const,
  function: {
    name: 'report_result',
    description: `Ends this step with its result: a summary (≤ 600 characters), the key numbers as named values (at most ${STEP_VALUES_MAX}), and the ids of the cells, tables and jobs it produced or used.`,
    parameters: REPORT_RESULT_SCHEMA as unknown as Record<string, unknown>,
  },
};

export interface StepReport {
  summary: string;
  values: Record<string, number | string>;
  cells: string[];
  tables: string[];
  jobs: string[];
  /** Ended with report_result (true) or with a plain answer / out of turns (false). */
  reported: boolean;
  turns: number;
  /** Characters of each request's messages (the first is the step's context). */
  promptChars: number[];
}

export interface StepAgentDeps {
  model: Model;
  signal: AbortSignal;
  system: string;
  request: string;
  tools: Tool[];
  maxTurns: number;
  toolResultChars: number;
  callTool(call: ToolCall): Promise<ToolResult>;
  onUsage(usage: TokenUsage | null): void;
  stopped(): boolean;
}

const size = (messages: Message[]) => messages.reduce((n, m) => n + (typeof m.content === 'string' ? m.content.length : JSON.stringify(m.content ?? '').length) + JSON.stringify((m as { tool_calls?: unknown }).tool_calls ?? '').length, 0);

export class StepStopped extends Error {}

export async function runStepAgent(d: StepAgentDeps): Promise<StepReport> {
  const messages: Message[] = [
    { role: 'system', content: d.system },
    { role: 'user', content: d.request },
  ];
  const tools = [...openAiTools(d.tools), REPORT_RESULT_TOOL];
  const promptChars: number[] = [];
  for (let turnNo = 1; turnNo <= d.maxTurns; turnNo++) {
    if (d.stopped()) throw new StepStopped();
    const last = turnNo === d.maxTurns;
    if (last) messages.push({ role: 'user', content: 'This is your last turn for this step: call report_result now with what you have (say what is missing).' });
    promptChars.push(size(messages));
    const turn = await d.model.turn({ messages, tools, signal: d.signal, onText: () => {} });
    d.onUsage(turn.usage);
    if (turn.toolCalls.length === 0) {
      return { summary: turn.text.trim().slice(0, 600), values: {}, cells: [], tables: [], jobs: [], reported: turn.text.trim().length > 0, turns: turnNo, promptChars };
    }
    messages.push({ role: 'assistant', content: turn.text || null, tool_calls: turn.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) });
    for (const call of turn.toolCalls) {
      if (d.stopped()) throw new StepStopped();
      if (call.name === 'report_result') {
        try {
          const a = parseArguments(REPORT_RESULT_SCHEMA, call.arguments);
          const entries = Object.entries(a.values ?? {});
          if (entries.length > STEP_VALUES_MAX) throw new ToolArgumentError(`invalid arguments: values has ${entries.length} entries; report at most ${STEP_VALUES_MAX} key numbers`);
          return { summary: a.summary, values: Object.fromEntries(entries) as Record<string, number | string>, cells: a.cells ?? [], tables: a.tables ?? [], jobs: a.jobs ?? [], reported: true, turns: turnNo, promptChars };
        } catch (e) {
          if (!(e instanceof ToolArgumentError)) throw e;
          messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify({ ok: false, error: e.message }) });
          continue;
        }
      }
      const r = await d.callTool(call);
      const content = r.content.length <= d.toolResultChars ? r.content : r.content.slice(0, d.toolResultChars - 1) + '…';
      messages.push({ role: 'tool', tool_call_id: call.id, content });
    }
  }
  return { summary: '', values: {}, cells: [], tables: [], jobs: [], reported: false, turns: d.maxTurns, promptChars };
}
