/**
 * The router: one short model call (the fast model when configured) that classifies a request as
 * a question (answered at once, from the library and the workspace, changing nothing), an
 * analysis (planned as steps, verified, run as a DAG) or a direct action (the tool loop), and
 * names the tool scopes it needs. An answer that cannot be read routes to the direct tool loop —
 * the behaviour of a run before routing existed — and says so.
 */
import { TOOL_SCOPES, type RunRoute } from '@plexus/shared';
import type { Model } from '../llm/model.ts';
import { parseAnswer, AnswerFormatError } from './json-answer.ts';
import { instructionsSection, taskHeader } from './prompts.ts';
import type { TokenUsage } from '@plexus/shared';

const ROUTE_SCHEMA = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: ['question', 'analysis', 'action'] },
    scopes: { type: 'array', maxItems: TOOL_SCOPES.length, items: { type: 'string', enum: TOOL_SCOPES } },
    reason: { type: 'string', maxLength: 500 },
  },
  required: ['kind'],
  additionalProperties: false,
} as const;

export function routerPrompt(workspace: string, instructions = ''): string {
  return [
    taskHeader('route'),
    'You route requests people make to the assistant of Plexus, a shared research workspace (notebook, Neuroglancer viewer, data tables, calcium-imaging analyses, a library of method notes).',
    'Classify the request as one of:',
    '- "question": asks for an explanation, a definition, advice on a method or a fact already visible — answered in words, nothing is computed or changed;',
    '- "analysis": needs several steps of computation over data that build on each other (segment, measure, detect, fit, compare, plot), best planned and checked step by step;',
    '- "action": one direct change or lookup (change the view, add a layer, edit / run / explain a cell, open or query a table).',
    `Also list the tool scopes the work needs, from ${TOOL_SCOPES.map((s) => `"${s}"`).join(', ')}.`,
    'Answer with one JSON object only: {"kind": "...", "scopes": [...], "reason": "<one short sentence>"}.',
    instructionsSection(instructions),
    workspace,
  ].join('\n');
}

export interface RouteOutcome {
  route: RunRoute;
  usage: TokenUsage | null;
}

export async function routeRequest(model: Model, input: { request: string; workspace: string; instructions: string; signal: AbortSignal }): Promise<RouteOutcome> {
  const turn = await model.turn({
    messages: [
      { role: 'system', content: routerPrompt(input.workspace, input.instructions) },
      { role: 'user', content: input.request },
    ],
    tools: [],
    signal: input.signal,
    onText: () => {},
  });
  try {
    const a = parseAnswer(ROUTE_SCHEMA, turn.text, 'route');
    return { route: { kind: a.kind, reason: a.reason ?? '', ...(a.scopes?.length ? { scopes: a.scopes } : {}) }, usage: turn.usage };
  } catch (e) {
    if (!(e instanceof AnswerFormatError)) throw e;
    return { route: { kind: 'action', reason: `the router's answer could not be read (${e.message.slice(0, 200)}); working directly` }, usage: turn.usage };
  }
}
