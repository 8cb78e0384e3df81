/**
 * One run of the agent: answers one request in its own chat thread. It streams the model's text
 * into the answer, executes tool calls one by one with their activity visible in the run, applies
 * or proposes changes, and stops — with its partial work kept and a visible reason — when anyone
 * presses Stop or a step, token or time budget runs out.
 */
import type * as Y from 'yjs';
import {
  addAudit, applyAction, buildContext, cellSource, cellText, describeAction, destructiveReason, finishActivity, finishRun,
  getCell, getRun, getSettings, noteActivity, planTextEdit, unsupportedClaims, postMessage, postProposal, recordStep, setMessageStatus, startActivity, startRun,
  textEditSteps, actionTarget, appendToMessage, listMessages, getAgentInstructions, setRoute, type AgentAction, type AgentOrigin, type ChatAuthor,
  type PresenceState, type RunRoute, type RunView, type TokenUsage, type ToolScope,
} from '@plexus/shared';
import type { Model, Message, ToolCall } from '../llm/model.ts';
import { ALL_TOOLS, TOOLS_BY_NAME, openAiTools, toolCatalogue, toolsFor } from '../tools/index.ts';
import type { Tool } from '../tools/tool.ts';
import { routeRequest } from '../plan/router.ts';
import { AnalysisRun, PlanError, type StepRequestRecord } from '../plan/analysis-run.ts';
import { instructionsSection, passagesSection, type Passage } from '../plan/prompts.ts';
import { summariseMaterial } from '../plan/sub-agent.ts';
import { ToolArgumentError } from '../tools/validate.ts';
import { ToolRefusal, type ActResult, type Presence, type ToolContext, type ToolResult } from '../tools/tool.ts';
import type { ServerApi } from '../peer/server-api.ts';
import { ServerApiError } from '../peer/server-api.ts';
import { ReplyStream } from './reply-stream.ts';
import { groundingHint, systemPrompt, wrapUpHint } from './prompt.ts';

export interface RunLimits {
  maxSteps: number;
  /** Total tokens (prompt + completion) over the run. */
  maxTokens: number;
  maxRunMs: number;
  /** Steps left when the wrap-up hint is added. */
  wrapUpSteps: number;
  /** Longest tool result the model reads (characters). */
  toolResultChars: number;
  maxRunWaitMs: number;
  /** Longest wait of a tool for a person's decision on a proposal it depends on. */
  decisionWaitMs: number;
  typing: { pieceChars: number; pauseMs: number };
  allowedSourcePrefixes: string[];
  /** Interval of answer writes (ms). */
  streamIntervalMs: number;
  /** Plan steps that run at once, and model turns per step attempt (analysis runs). */
  maxParallelSteps: number;
  maxStepTurns: number;
}

export interface RunDeps {
  doc: Y.Doc;
  workspaceId: string;
  run: RunView;
  origin: AgentOrigin;
  author: ChatAuthor;
  model: Model;
  /** The router's model (PLEXUS_AGENT_FAST_MODEL; else the main model). */
  fastModel?: Model;
  /** A route every request takes without asking the router (PLEXUS_AGENT_ROUTE). */
  forceRoute?: RunRoute['kind'] | null;
  api: ServerApi;
  presence: Presence;
  limits: RunLimits;
  asker: () => PresenceState | null;
  log: (msg: string, extra?: Record<string, unknown>) => void;
}

export class StopError extends Error {}

const short = (s: string, n: number) => (s.length <= n ? s : s.slice(0, n - 1) + '…');

export class AgentRun {
  readonly controller = new AbortController();
  private stopReason: string | null = null;
  private stopStatus: 'stopped' | 'error' = 'stopped';
  private readonly seen = new Map<string, string>();
  /** What the run read or asked for (context, request, thread, tool arguments and results): what an answer may state. */
  private readonly evidence: string[] = [];
  private timer: NodeJS.Timeout | null = null;
  replyId = '';
  /** The analysis of this run, if it was routed to one (its step requests, for tests and benchmarks). */
  analysis: AnalysisRun | null = null;
  route: RunRoute | null = null;

  constructor(private readonly d: RunDeps) {}

  get id(): string {
    return this.d.run.id;
  }

  /** Stops the run (Stop pressed, budget reached, shutdown). The first reason wins. */
  stop(reason: string, status: 'stopped' | 'error' = 'stopped'): void {
    if (this.stopReason) return;
    this.stopReason = reason;
    this.stopStatus = status;
    this.controller.abort(new StopError(reason));
  }

  get stopped(): boolean {
    return this.stopReason !== null;
  }

  async execute(): Promise<void> {
    const { doc, run, origin, author, limits } = this.d;
    this.replyId = postMessage(doc, { author, text: '', status: 'streaming', replyTo: run.request.messageId as never, runId: run.id }, origin);
    startRun(doc, run.id, { replyId: this.replyId, model: this.d.model.config.model }, origin);
    this.d.presence.focus('chat');
    const reply = new ReplyStream(doc, this.replyId, origin, limits.streamIntervalMs);
    this.timer = setTimeout(() => this.stop(`time budget reached (${Math.round(limits.maxRunMs / 1000)} s)`), limits.maxRunMs);
    let status: 'done' | 'stopped' | 'error' = 'done';
    let reason: string | null = null;
    try {
      this.route = await this.routeRun();
      if (this.route.kind === 'analysis') await this.analyse(reply);
      else await this.loop(reply, this.route);
    } catch (e) {
      if (this.stopReason) {
        status = this.stopStatus;
        reason = this.stopReason;
      } else if (e instanceof PlanError) {
        status = 'error';
        reason = e.message;
      } else {
        status = 'error';
        reason = describeModelError(e);
        this.d.log('run failed', { run: run.id, err: String(e) });
      }
    } finally {
      clearTimeout(this.timer);
    }
    if (status === 'done' && this.stopReason) {
      status = this.stopStatus;
      reason = this.stopReason;
    }
    reply.flush();
    if (status !== 'done') appendToMessage(doc, this.replyId, `${reply.written ? '\n\n' : ''}_${status === 'stopped' ? 'Stopped' : 'Failed'}: ${reason}_`, origin);
    else if (reply.written === 0) appendToMessage(doc, this.replyId, '_(done — no answer text)_', origin);
    doc.transact(() => {
      finishRun(doc, run.id, status, reason, origin);
      setMessageStatus(doc, this.replyId, status === 'done' ? 'done' : status, origin);
    }, origin);
    this.d.presence.caret(null);
    this.d.presence.focus('chat');
  }

  private history(): Message[] {
    // A follow-up carries its thread: earlier requests and answers, oldest first (at most 5).
    const out: Message[] = [];
    let id = this.d.run.request.followUp;
    const msgs = listMessages(this.d.doc);
    for (let i = 0; id && i < 5; i++) {
      const prev = getRun(this.d.doc, id);
      if (!prev) break;
      const answer = msgs.find((m) => m.id === prev.replyId)?.text ?? '';
      out.unshift({ role: 'user', content: prev.request.text }, { role: 'assistant', content: short(answer, 4000) || '(no answer)' });
      id = prev.request.followUp;
    }
    return out;
  }

  /** Routes the request (question, analysis, direct action) and records the route in the run. */
  private async routeRun(): Promise<RunRoute> {
    const { doc, run, origin } = this.d;
    if (this.d.forceRoute) {
      const route: RunRoute = { kind: this.d.forceRoute, reason: 'set for every request by PLEXUS_AGENT_ROUTE' };
      setRoute(doc, run.id, route, origin);
      return route;
    }
    const workspace = buildContext(doc, this.d.asker(), { excludeMessage: run.request.messageId, caps: { total: 3000, notebook: 1200, chat: 600, viewer: 400, data: 600 } });
    const r = await routeRequest(this.d.fastModel ?? this.d.model, { request: run.request.text, workspace, instructions: getAgentInstructions(doc), signal: this.controller.signal });
    recordStep(doc, run.id, r.usage, origin, { countStep: false });
    setRoute(doc, run.id, r.route, origin);
    return r.route;
  }

  /** Library passages for a query (none when the library cannot be searched). */
  private async passages(query: string, limit: number): Promise<Passage[]> {
    try {
      return await this.d.api.searchLibrary(query, limit, this.controller.signal);
    } catch (e) {
      if (this.stopReason) throw new StopError(this.stopReason);
      this.d.log('library search failed', { run: this.d.run.id, err: String(e) });
      return [];
    }
  }

  /** An analysis: plan, steps, verification, summary (plan/analysis-run.ts). */
  private async analyse(reply: ReplyStream): Promise<void> {
    const { doc, run, origin, limits } = this.d;
    this.analysis = new AnalysisRun({
      doc, runId: run.id, origin, agentName: this.d.author.name, model: this.d.model, api: this.d.api,
      limits: { maxParallelSteps: limits.maxParallelSteps, maxStepTurns: limits.maxStepTurns, toolResultChars: limits.toolResultChars, maxReplans: 3 },
      signal: this.controller.signal,
      stopReason: () => this.stopReason,
      callTool: (call, opts) => this.callTool(call, opts),
      recordUsage: (u) => {
        recordStep(doc, run.id, u, origin);
        this.checkTokens();
      },
      workspaceContext: () => buildContext(doc, this.d.asker(), { excludeMessage: run.request.messageId }),
      instructions: () => getAgentInstructions(doc),
      searchLibrary: (q, n) => this.passages(q, n),
      toolsFor: (scopes) => toolsFor(scopes.length ? scopes : undefined),
      toolCatalogue: () => toolCatalogue(),
      log: this.d.log,
    });
    this.d.presence.focus('notebook');
    let text: string;
    try {
      text = await this.analysis.run(run.request.text);
    } catch (e) {
      if (this.stopReason && !(e instanceof PlanError)) throw new StopError(this.stopReason);
      throw e;
    }
    reply.push(text);
    reply.flush();
    if (this.stopReason) throw new StopError(this.stopReason);
  }

  /** The step requests of this run's analysis (empty for other runs). */
  get stepRequests(): StepRequestRecord[] {
    return this.analysis?.stepRequests ?? [];
  }

  private async loop(reply: ReplyStream, route: RunRoute): Promise<void> {
    const { doc, run, limits } = this.d;
    const context = buildContext(doc, this.d.asker(), { excludeMessage: run.request.messageId });
    const history = this.history();
    const passages = route.kind === 'question' || route.scopes?.includes('library') ? await this.passages(run.request.text, 4) : [];
    const messages: Message[] = [
      { role: 'system', content: systemPrompt({ name: this.d.author.name, mode: getSettings(doc).agentMode, context, maxSteps: limits.maxSteps }) + instructionsSection(getAgentInstructions(doc)) + passagesSection(passages) },
      ...history,
      { role: 'user', content: `${run.request.by.name ?? run.request.by.id}: ${run.request.text}` },
    ];
    this.evidence.push(context, run.request.text, ...history.map((m) => String(m.content ?? '')), ...passages.map((p) => p.text));
    const scoped = route.scopes?.length ? toolsFor(withEssentials(route.kind, route.scopes)) : ALL_TOOLS;
    const byName = new Map(scoped.map((t) => [t.name, t]));
    const tools = openAiTools(scoped);
    let hinted = false;
    let checked = false;
    for (let step = 1; step <= limits.maxSteps; step++) {
      if (this.stopReason) throw new StopError(this.stopReason);
      const left = limits.maxSteps - step + 1;
      if (!hinted && left <= limits.wrapUpSteps) {
        messages.push({ role: 'system', content: wrapUpHint(left) });
        hinted = true;
      }
      const last = step === limits.maxSteps;
      const turnStart = reply.length;
      const turn = await this.d.model.turn({ messages, tools, toolChoice: last ? 'none' : 'auto', signal: this.controller.signal, onText: (t) => reply.push(t) });
      reply.flush();
      recordStep(doc, run.id, turn.usage, this.d.origin);
      this.checkTokens();
      if (turn.toolCalls.length === 0) {
        // The answer: every number it states must come from what the run read. Once, the model
        // is asked to verify or restate (its unverified text is taken back); what still lacks a
        // source is marked as unverified for everyone.
        const unsupported = unsupportedClaims(turn.text, this.evidence).map((c) => c.text);
        if (unsupported.length === 0) return;
        if (!checked && !last && !this.stopReason) {
          checked = true;
          this.noteCheck(unsupported, 'asked the model to verify them or answer without them');
          reply.truncate(turnStart);
          messages.push({ role: 'assistant', content: turn.text }, { role: 'system', content: groundingHint(unsupported) });
          continue;
        }
        this.noteCheck(unsupported, 'marked as unverified in the answer');
        reply.push(`\n\n_⚠ Not verified: ${unsupported.join(', ')} — no tool result of this run shows ${unsupported.length === 1 ? 'this number' : 'these numbers'}._`);
        reply.flush();
        return;
      }
      if (turn.text) reply.push('\n\n');
      messages.push({ role: 'assistant', content: turn.text || null, tool_calls: turn.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) });
      // One by one, except that consecutive calls of a parallel tool (sub-agents) run together.
      for (let i = 0; i < turn.toolCalls.length; ) {
        if (this.stopReason) throw new StopError(this.stopReason);
        let j = i + 1;
        if (byName.get(turn.toolCalls[i]!.name)?.parallel) while (j < turn.toolCalls.length && byName.get(turn.toolCalls[j]!.name)?.parallel) j++;
        const batch = turn.toolCalls.slice(i, j);
        const results = await Promise.all(batch.map((call) => this.callTool(call, { tools: byName })));
        batch.forEach((call, k) => {
          // What it asked for (the values it set or proposed) and what came back.
          this.evidence.push(call.arguments, results[k]!.content);
          messages.push({ role: 'tool', tool_call_id: call.id, content: short(results[k]!.content, limits.toolResultChars) });
        });
        i = j;
      }
      if (last) break;
    }
    this.stop(`step budget reached (${limits.maxSteps} steps)`);
    throw new StopError(this.stopReason!);
  }

  /** Records the answer check in the run's activity, for everyone to see. */
  private noteCheck(unsupported: string[], action: string): void {
    const { doc, run, origin } = this.d;
    const id = startActivity(doc, run.id, 'check_answer', JSON.stringify({ unsupported }), origin);
    if (id) finishActivity(doc, run.id, id, 'error', `${unsupported.join(', ')}: in no tool result of this run; ${action}`, origin);
  }

  private checkTokens(): void {
    const used = getRun(this.d.doc, this.d.run.id)?.tokens.total ?? 0;
    if (used >= this.d.limits.maxTokens) this.stop(`token budget reached (${used} of ${this.d.limits.maxTokens} tokens)`);
  }

  /** Calls one tool (of `tools`: the ones in scope) with its activity visible in the run (under its plan step, if any). */
  private async callTool(call: ToolCall, opts: { tools: Map<string, Tool>; step?: string }): Promise<ToolResult> {
    const { doc, run, origin } = this.d;
    const activity = startActivity(doc, run.id, call.name || '(no name)', call.arguments, origin, opts.step);
    const end = (r: ToolResult) => {
      if (activity) finishActivity(doc, run.id, activity, r.status, r.summary, origin);
      return r;
    };
    const tool = opts.tools.get(call.name);
    if (!tool) {
      const why = TOOLS_BY_NAME.has(call.name) ? `the tool "${call.name}" is not available for this request` : `unknown tool "${call.name}"`;
      return end({ status: 'error', summary: why, content: JSON.stringify({ ok: false, error: `${why}; available tools: ${[...opts.tools.keys()].join(', ')}` }) });
    }
    try {
      return end(await tool.call(this.toolContext(activity), call.arguments));
    } catch (e) {
      if (this.stopReason) {
        end({ status: 'error', summary: 'stopped', content: '' });
        throw new StopError(this.stopReason);
      }
      if (e instanceof ToolArgumentError) return end({ status: 'error', summary: short(e.message, 200), content: JSON.stringify({ ok: false, error: e.message }) });
      if (e instanceof ToolRefusal) return end({ status: 'refused', summary: short(e.message, 200), content: JSON.stringify({ ok: false, refused: e.message }) });
      if (e instanceof ServerApiError) return end({ status: 'error', summary: short(e.message, 200), content: JSON.stringify({ ok: false, error: e.message }) });
      this.d.log('tool failed', { tool: call.name, err: String((e as Error)?.stack ?? e) });
      return end({ status: 'error', summary: `failed: ${short(String((e as Error)?.message ?? e), 180)}`, content: JSON.stringify({ ok: false, error: `the tool failed: ${(e as Error)?.message ?? e}` }) });
    }
  }

  private toolContext(activityId: string | null): ToolContext {
    const { doc, workspaceId, run, origin, author, api, presence, limits } = this.d;
    return {
      doc, workspaceId, runId: run.id, origin, author, replyId: this.replyId, signal: this.controller.signal, api, presence,
      allowedSourcePrefixes: limits.allowedSourcePrefixes, seen: this.seen, typing: limits.typing, maxRunWaitMs: limits.maxRunWaitMs,
      decisionWaitMs: limits.decisionWaitMs,
      progress: (summary) => {
        if (activityId) noteActivity(doc, run.id, activityId, summary, origin);
      },
      act: (tool, action, why) => this.act(tool, action, why),
      subAgent: ({ task, material }) =>
        summariseMaterial({
          model: this.d.model, signal: this.controller.signal, task, material, instructions: getAgentInstructions(doc),
          onUsage: (u) => {
            recordStep(doc, run.id, u, origin);
            this.checkTokens();
          },
          stopped: () => this.stopped,
        }),
    };
  }

  /** Applies an action, or posts it as a proposal (propose mode, or destructive whatever the mode). */
  private async act(tool: string, action: AgentAction, why?: string): Promise<ActResult> {
    const { doc, run, origin, author } = this.d;
    const destructive = destructiveReason(doc, action);
    if (destructive || getSettings(doc).agentMode === 'propose') {
      const messageId = postProposal(
        doc,
        { author, replyTo: this.replyId, proposal: { runId: run.id, action, title: describeAction(action), ...(why ? { why: short(why, 500) } : {}), ...(destructive ? { destructive } : {}) } },
        origin,
      );
      return { kind: 'proposed', messageId, reason: destructive ? `it ${destructive}, which always needs a person's Accept` : 'the workspace is in propose mode' };
    }
    if (action.type === 'edit_cell') {
      const cell = getCell(doc, action.cellId);
      const text = cell && cellText(cell);
      if (text) return this.typeEdit(tool, action, text);
    }
    const r = applyAction(doc, action, origin, author.id, author.name);
    if (!r.ok) return { kind: 'failed', message: r.message };
    addAudit(doc, run.id, { tool, change: r.message, target: r.target }, origin);
    return { kind: 'applied', message: r.message, ...(r.ids ? { ids: r.ids } : {}) };
  }

  /** Types a cell rewrite in small transactions with a visible caret, as a person would. */
  private async typeEdit(tool: string, action: Extract<AgentAction, { type: 'edit_cell' }>, text: Y.Text): Promise<ActResult> {
    const { doc, run, origin, presence, limits } = this.d;
    const cell = getCell(doc, action.cellId)!;
    const plan = planTextEdit(action.base, cellSource(cell), action.proposed);
    presence.focus('notebook', action.cellId);
    const steps = textEditSteps(text, plan.hunks, limits.typing.pieceChars);
    let done = 0;
    for (const step of steps) {
      if (this.stopReason) break;
      let caret: Y.RelativePosition | null = null;
      doc.transact(() => (caret = step().caret), origin);
      presence.caret(text, caret ?? undefined);
      done++;
      await new Promise((r) => (limits.typing.pauseMs > 0 ? setTimeout(r, limits.typing.pauseMs) : setImmediate(r)));
    }
    const c = plan.conflicts.length;
    const message = `edited cell ${action.cellId} (+${plan.insertedChars} −${plan.deletedChars} chars${c ? `, ${c} conflicting change${c === 1 ? '' : 's'} skipped` : ''}${done < steps.length ? `, stopped after ${done} of ${steps.length} steps` : ''})`;
    if (done > 0) addAudit(doc, run.id, { tool, change: message, target: actionTarget(action) }, origin);
    presence.caret(null);
    if (this.stopReason) throw new StopError(this.stopReason);
    return { kind: 'applied', message, ...(c ? { conflicts: c } : {}) };
  }
}

/** The scopes a direct request works with: those the router named, plus reading the notebook and the chat tools. */
function withEssentials(kind: RunRoute['kind'], scopes: ToolScope[]): ToolScope[] {
  return [...new Set<ToolScope>([...scopes, 'chat', ...(kind === 'question' ? (['library'] as const) : [])])];
}

/** A model/API failure as one line people understand. */
export function describeModelError(e: unknown): string {
  const err = e as { status?: number; message?: string; error?: { message?: string } };
  if (typeof err?.status === 'number') {
    const hint = err.status === 401 ? ' (check OPENAI_API_KEY)' : err.status === 404 ? ' (check the model name and OPENAI_BASE_URL)' : err.status === 429 ? ' (rate limited or out of quota)' : '';
    return `the model endpoint answered ${err.status}: ${short(err.error?.message ?? err.message ?? '', 200)}${hint}`;
  }
  return `the model request failed: ${short(String(err?.message ?? e), 200)}`;
}

export type { TokenUsage };
