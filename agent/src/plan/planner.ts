/**
 * The clarifier and planner in one model call: the request restated, the assumptions made, up to
 * four alternatives anyone can pick, the parameters extracted, and the steps as a DAG (each a goal,
 * the steps it depends on, the tool scopes it needs, and value ranges known from the data's
 * metadata that the verifier will check). A plan that does not parse or is not a DAG is sent back
 * once with its problems; a second bad plan fails the run with them.
 */
import { MAX_GOAL_CHARS, MAX_STEPS, TOOL_SCOPES, findCycle, type BriefInput, type StepInput, type TokenUsage } from '@plexus/shared';
import type { Message, Model } from '../llm/model.ts';
import { AnswerFormatError, parseAnswer } from './json-answer.ts';
import { instructionsSection, passagesSection, taskHeader, type Passage } from './prompts.ts';

const EXPECT = {
  type: 'object',
  properties: { min: { type: 'number' }, max: { type: 'number' }, integer: { type: 'boolean' }, why: { type: 'string', minLength: 1, maxLength: 300 } },
  required: ['why'],
  additionalProperties: false,
} as const;

export const PLAN_SCHEMA = {
  type: 'object',
  properties: {
    clarified: { type: 'string', minLength: 1, maxLength: 2000 },
    assumptions: { type: 'array', maxItems: 12, items: { type: 'string', minLength: 1, maxLength: 300 } },
    alternatives: {
      type: 'array',
      maxItems: 4,
      items: { type: 'object', properties: { label: { type: 'string', minLength: 1, maxLength: 60 }, request: { type: 'string', minLength: 1, maxLength: 2000 } }, required: ['label', 'request'], additionalProperties: false },
    },
    parameters: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
    steps: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_STEPS,
      items: {
        type: 'object',
        properties: {
          id: { type: 'string', minLength: 1, maxLength: 20 },
          goal: { type: 'string', minLength: 1, maxLength: MAX_GOAL_CHARS },
          dependsOn: { type: 'array', maxItems: MAX_STEPS, items: { type: 'string' } },
          scope: { type: 'array', maxItems: TOOL_SCOPES.length, items: { type: 'string', enum: TOOL_SCOPES } },
          expect: { type: 'object', additionalProperties: EXPECT },
        },
        required: ['id', 'goal'],
        additionalProperties: false,
      },
    },
  },
  required: ['clarified', 'steps'],
  additionalProperties: false,
} as const;

export interface PlanDraft {
  brief: Omit<BriefInput, 'waiting'>;
  steps: StepInput[];
}

/** Problems a schema cannot see: duplicate ids, unknown or self dependencies, cycles. */
export function planProblems(steps: Array<{ id: string; dependsOn: string[] }>): string[] {
  const out: string[] = [];
  const ids = new Set<string>();
  for (const s of steps) {
    if (!/^[\w-]+$/.test(s.id)) out.push(`step id "${s.id}" must be letters, digits, "_" or "-"`);
    if (ids.has(s.id)) out.push(`two steps have the id "${s.id}"`);
    ids.add(s.id);
  }
  for (const s of steps) {
    for (const d of s.dependsOn) {
      if (d === s.id) out.push(`step ${s.id} depends on itself`);
      else if (!ids.has(d)) out.push(`step ${s.id} depends on "${d}", which is not a step`);
    }
  }
  const cycle = findCycle(steps.map((s) => ({ id: s.id, dependsOn: s.dependsOn.filter((d) => d !== s.id) })));
  if (cycle) out.push(`the dependencies form a cycle: ${cycle.join(' → ')}`);
  return out;
}

export function plannerPrompt(input: { workspace: string; facts: string; tools: string; instructions: string; passages: Passage[] }): string {
  return [
    taskHeader('plan'),
    'You plan an analysis in Plexus, a shared research workspace, for the people in it. They will see your plan as a list of steps, may edit it, and watch each step run and be verified.',
    '1. Restate the request precisely ("clarified"). 2. List the assumptions you make (data, parameters, definitions) — people may correct them. 3. Offer up to 4 alternatives (other reasonable readings or methods) as short chips with the request they stand for. 4. Extract the parameters (frame rate, thresholds, names).',
    '5. Plan the steps: each one focused result (a table, a few numbers, a figure, an ROI set), with a goal a colleague could carry out alone, the ids of the steps whose results it needs ("dependsOn"; independent steps run in parallel), the tool scopes it needs, and "expect": value ranges of its named results that follow from the data\'s metadata (e.g. a mean intensity of uint16 data lies in 0–65535; a count of cells is an integer ≥ 0), so a wrong result is caught.',
    'Keep plans short (2–8 steps). Use the tools as they are; each step will run with only its goal, the results of its dependencies and the cells they made.',
    'Answer with one JSON object only: {"clarified": "...", "assumptions": ["..."], "alternatives": [{"label": "...", "request": "..."}], "parameters": {...}, "steps": [{"id": "s1", "goal": "...", "dependsOn": [], "scope": ["notebook"], "expect": {"n_cells": {"min": 0, "integer": true, "why": "a count"}}}]}',
    instructionsSection(input.instructions),
    '## Tools by scope',
    input.tools,
    '',
    '## Data and its metadata',
    input.facts,
    passagesSection(input.passages),
    input.workspace,
  ].join('\n');
}

export interface PlanOutcome {
  draft: PlanDraft | null;
  problems: string[];
  usage: TokenUsage[];
}

/** Asks for a plan (and once more with the problems if it is malformed). */
export async function makePlan(model: Model, input: { system: string; request: string; signal: AbortSignal }): Promise<PlanOutcome> {
  const messages: Message[] = [
    { role: 'system', content: input.system },
    { role: 'user', content: input.request },
  ];
  const usage: TokenUsage[] = [];
  let problems: string[] = [];
  for (let attempt = 1; attempt <= 2; attempt++) {
    const turn = await model.turn({ messages, tools: [], signal: input.signal, onText: () => {} });
    if (turn.usage) usage.push(turn.usage);
    try {
      const a = parseAnswer(PLAN_SCHEMA, turn.text, 'plan');
      const steps: StepInput[] = a.steps.map((s) => ({
        id: s.id,
        goal: s.goal,
        dependsOn: s.dependsOn ?? [],
        scope: s.scope ?? [],
        ...(s.expect ? { expect: Object.fromEntries(Object.entries(s.expect).map(([k, e]) => [k, { ...e }])) } : {}),
      }));
      problems = planProblems(steps);
      if (problems.length === 0) {
        return {
          draft: {
            brief: { clarified: a.clarified, assumptions: a.assumptions ?? [], alternatives: a.alternatives ?? [], parameters: (a.parameters ?? {}) as Record<string, string | number | boolean> },
            steps,
          },
          problems: [],
          usage,
        };
      }
    } catch (e) {
      if (!(e instanceof AnswerFormatError)) throw e;
      problems = [e.message];
    }
    messages.push({ role: 'assistant', content: turn.text }, { role: 'user', content: `That plan cannot be used: ${problems.join('; ')}. Send the corrected plan as one JSON object.` });
  }
  return { draft: null, problems, usage };
}
