/**
 * Chat tools (seed 003): suggested values (chips that send a message), suggested actions (buttons
 * that do one thing for the person who clicks), and the run's plan shown above the answer.
 */
import { SUGGESTED_ACTIONS, setRunPlan, setSuggestions } from '@plexus/shared';
import { ok, defineTool, type Tool } from './tool.ts';

const suggest = defineTool({
  name: 'suggest',
  description:
    'Offers follow-ups under your answer: `values` are chips that send `value` to you as the person\'s next message; `actions` are buttons (run_cell, run_all, focus_cell, load_view, open_table, open_viewer with a target cell id / view name / table name). Call at most once, at the end.',
  parameters: {
    type: 'object',
    properties: {
      values: {
        type: 'array',
        maxItems: 6,
        items: { type: 'object', properties: { label: { type: 'string', minLength: 1, maxLength: 60 }, value: { type: 'string', minLength: 1, maxLength: 2000 } }, required: ['label', 'value'], additionalProperties: false },
      },
      actions: {
        type: 'array',
        maxItems: 6,
        items: {
          type: 'object',
          properties: { label: { type: 'string', minLength: 1, maxLength: 60 }, action: { type: 'string', enum: SUGGESTED_ACTIONS }, target: { type: 'string', maxLength: 200 } },
          required: ['label', 'action'],
          additionalProperties: false,
        },
      },
    },
    additionalProperties: false,
  },
  async run(ctx, a) {
    const values = a.values ?? [];
    const actions = a.actions ?? [];
    setSuggestions(ctx.doc, ctx.replyId, { values, actions }, ctx.origin);
    return ok(`${values.length} chips, ${actions.length} buttons`, { ok: true });
  },
});

const plan = defineTool({
  name: 'update_plan',
  description: 'Shows your plan for a multi-step task above your answer and marks progress (status todo, doing, done, skipped). Send the whole list each time.',
  parameters: {
    type: 'object',
    properties: {
      steps: {
        type: 'array',
        minItems: 1,
        maxItems: 20,
        items: { type: 'object', properties: { text: { type: 'string', minLength: 1, maxLength: 200 }, status: { type: 'string', enum: ['todo', 'doing', 'done', 'skipped'] } }, required: ['text', 'status'], additionalProperties: false },
      },
    },
    required: ['steps'],
    additionalProperties: false,
  },
  async run(ctx, a) {
    const steps = a.steps;
    setRunPlan(ctx.doc, ctx.runId, steps, ctx.origin);
    return ok(`plan: ${steps.filter((s) => s.status === 'done').length}/${steps.length} done`, { ok: true });
  },
});

export const chatTools: Tool[] = [suggest, plan];
