/**
 * What a tool is and what it gets: the run's replica, origin and limits, the server API, and the
 * agent's presence. Tools never see anything else (no file system, no network beyond the server's
 * own read-only APIs), which is what keeps planted instructions harmless.
 */
import type * as Y from 'yjs';
import type { AgentAction, AgentOrigin, ChatAuthor } from '@plexus/shared';
import { parseArguments, type FromSchema, type JsonSchema } from './validate.ts';
import type { ServerApi } from '../peer/server-api.ts';

export interface Presence {
  /** Shows where the agent works (panel, cell). */
  focus(panel: 'notebook' | 'chat' | 'viewer', cellId?: string | null): void;
  /** Shows the agent's caret at `at` of `text` (a code cell being edited: an index, or a relative position in it), or hides it. */
  caret(text: Y.Text | null, at?: number | Y.RelativePosition): void;
}

export interface ToolContext {
  doc: Y.Doc;
  workspaceId: string;
  runId: string;
  /** The run's origin object: every change of this run uses it (undo tracks it by identity). */
  origin: AgentOrigin;
  author: ChatAuthor;
  /** The agent's answer message of this run. */
  replyId: string;
  signal: AbortSignal;
  api: ServerApi;
  presence: Presence;
  /** Source URL prefixes viewer layers may use besides this server's own volumes. */
  allowedSourcePrefixes: string[];
  /** Text of each cell as the model last saw it (the base of its rewrites). */
  seen: Map<string, string>;
  /** Characters per small transaction when the agent types into a cell, and the pause between. */
  typing: { pieceChars: number; pauseMs: number };
  /** Longest wait of run_cell (ms). */
  maxRunWaitMs: number;
  /** Longest wait for a person's Accept or Dismiss of a proposal the run depends on (ms). */
  decisionWaitMs: number;
  /** Shows what the running tool is doing (e.g. waiting for a person) in its activity line. */
  progress(summary: string): void;
  /** Applies an action now, or posts it as a proposal (destructive actions, or propose mode). */
  act(tool: string, action: AgentAction, why?: string): Promise<ActResult>;
  /**
   * Hands bulky material (many table rows, a long document) to a sub-agent with its own context and
   * gets back a short structured summary, so the caller's context stays small (seed 004).
   */
  subAgent(input: { task: string; material: string }): Promise<{ summary: string; values: Record<string, number | string>; promptChars: number }>;
}

export type ActResult =
  | { kind: 'applied'; message: string; ids?: string[]; conflicts?: number }
  | { kind: 'proposed'; messageId: string; reason: string }
  | { kind: 'failed'; message: string };

export type ToolStatus = 'done' | 'error' | 'proposed' | 'refused';

export interface ToolResult {
  status: ToolStatus;
  /** One line for the activity list. */
  summary: string;
  /** What the model reads (JSON text, capped by the caller). */
  content: string;
}

/** A tool as the run loop sees it: its schema for the model, and a call that validates, then runs. */
export interface Tool {
  name: string;
  description: string;
  parameters: JsonSchema;
  /** Parses and validates the model's raw argument string (ToolArgumentError), then runs. */
  call(ctx: ToolContext, rawArguments: string): Promise<ToolResult>;
  /** Calls of this tool that follow each other in one model turn run at the same time (sub-agents). */
  parallel?: boolean;
}

/** A tool's one definition: its argument schema gives the model's JSON schema, the validation and the type of `args`. */
export interface ToolDefinition<S extends JsonSchema> {
  name: string;
  description: string;
  parameters: S;
  parallel?: boolean;
  run(ctx: ToolContext, args: FromSchema<S>): Promise<ToolResult>;
}

export function defineTool<const S extends JsonSchema & { readonly type: 'object' }>(def: ToolDefinition<S>): Tool {
  return {
    name: def.name,
    description: def.description,
    parameters: def.parameters,
    ...(def.parallel ? { parallel: true } : {}),
    call: async (ctx, raw) => def.run(ctx, parseArguments(def.parameters, raw)),
  };
}

/** Raised by a tool for a request it refuses on principle (the model gets the reason). */
export class ToolRefusal extends Error {}

export const ok = (summary: string, content: unknown): ToolResult => ({ status: 'done', summary, content: typeof content === 'string' ? content : JSON.stringify(content) });

/** The tool result of an `act` outcome. */
export function actResult(r: ActResult, what: string, extra: Record<string, unknown> = {}): ToolResult {
  if (r.kind === 'applied') return { status: 'done', summary: r.message, content: JSON.stringify({ ok: true, result: r.message, ...(r.ids ? { ids: r.ids } : {}), ...(r.conflicts ? { conflicts: r.conflicts, note: 'some changes overlapped edits people made since you read the cell and were skipped; read the cell again and retry those' } : {}), ...extra }) };
  if (r.kind === 'proposed')
    return {
      status: 'proposed',
      summary: `proposed: ${what} (${r.reason})`,
      content: JSON.stringify({
        ok: true,
        proposed: true,
        applied: false,
        proposal: r.messageId,
        note: `Not applied yet: ${r.reason}. A person must press Accept on the card; do not repeat it. Until then it does not exist in the workspace and has produced no result. run_cell on a proposed cell waits for the decision. Tell the user what you proposed, and never state a result you have not seen in a tool result.`,
        ...extra,
      }),
    };
  return { status: 'error', summary: r.message, content: JSON.stringify({ ok: false, error: r.message }) };
}
