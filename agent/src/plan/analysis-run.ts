/**
 * An analysis run (seed 002): plan (clarified request, assumptions, alternatives, parameters and
 * a step DAG, all in the shared document), wait for a person's Go when the workspace asks for it
 * (an alternative picked meanwhile re-plans), then execute the latest plan step by step — each
 * step a sub-agent with its own small context, verified, retried once with the issues, failed
 * steps' dependants skipped — and close with a summary whose links lead to what each step made.
 * Stop ends the running steps cleanly; finished steps and their cells stay.
 */
import * as Y from 'yjs';
import {
  getBrief, getPlanStep, getSettings, listPlanSteps, roots, setBriefWaiting, setPlan, updatePlanStep,
  type AgentOrigin, type PlanStepView, type TokenUsage, type ToolScope,
} from '@plexus/shared';
import type { Model, ToolCall } from '../llm/model.ts';
import type { Tool, ToolResult } from '../tools/tool.ts';
import type { ServerApi } from '../peer/server-api.ts';
import { factsText, gatherFacts, type DataFacts } from './data-facts.ts';
import { executePlan, nextChange } from './executor.ts';
import { makePlan, plannerPrompt } from './planner.ts';
import type { Passage } from './prompts.ts';
import { ProvenanceTracker } from './provenance.ts';
import { runStepAgent, StepStopped } from './step-agent.ts';
import { stepRequest, stepSystemPrompt } from './step-context.ts';
import { analysisSummary } from './summary.ts';
import { verifyStep } from './verifier.ts';

export interface AnalysisLimits {
  /** Steps that run at once. */
  maxParallelSteps: number;
  /** Model turns of one step's sub-agent (per attempt). */
  maxStepTurns: number;
  toolResultChars: number;
  /** Times an alternative may be picked before Go. */
  maxReplans: number;
}

export interface AnalysisServices {
  doc: Y.Doc;
  runId: string;
  origin: AgentOrigin;
  agentName: string;
  model: Model;
  api: ServerApi;
  limits: AnalysisLimits;
  signal: AbortSignal;
  stopReason(): string | null;
  callTool(call: ToolCall, opts: { tools: Map<string, Tool>; step: string }): Promise<ToolResult>;
  recordUsage(u: TokenUsage | null): void;
  workspaceContext(): string;
  instructions(): string;
  searchLibrary(query: string, limit: number): Promise<Passage[]>;
  toolsFor(scopes: ToolScope[]): Tool[];
  toolCatalogue(): string;
  log(msg: string, extra?: Record<string, unknown>): void;
}

export class PlanError extends Error {}

/** What one step attempt's request looked like (for tests and the benchmark). */
export interface StepRequestRecord {
  step: string;
  attempt: number;
  /** Characters of the step's first request (system + user): its context. */
  contextChars: number;
  turns: number;
}

export class AnalysisRun {
  readonly stepRequests: StepRequestRecord[] = [];
  private facts: DataFacts = { tables: [], volumes: [], jobs: [] };
  private passages: Passage[] = [];
  private readonly sources = new Set<string>();

  constructor(private readonly s: AnalysisServices) {}

  private get runMap(): Y.Map<unknown> {
    const m = roots(this.s.doc).runs.get(this.s.runId);
    if (!(m instanceof Y.Map)) throw new PlanError('the run is gone from the document');
    return m;
  }

  private stopped(): boolean {
    return this.s.stopReason() !== null || this.s.signal.aborted;
  }

  /** Plans, waits for Go if asked, executes; returns the closing message. */
  async run(request: string): Promise<string> {
    const { doc, runId, origin } = this.s;
    this.facts = await gatherFacts(doc, this.s.api, this.s.signal);
    this.passages = await this.s.searchLibrary(request, 3);
    let asked = request;
    for (let replans = 0; ; replans++) {
      const plan = await makePlan(this.s.model, {
        system: plannerPrompt({ workspace: this.s.workspaceContext(), facts: factsText(this.facts), tools: this.s.toolCatalogue(), instructions: this.s.instructions(), passages: this.passages }),
        request: asked,
        signal: this.s.signal,
      });
      plan.usage.forEach((u) => this.s.recordUsage(u));
      if (!plan.draft) throw new PlanError(`no usable plan: ${plan.problems.join('; ')}`);
      const wait = getSettings(doc).planApproval === 'wait';
      setPlan(doc, runId, { ...plan.draft.brief, waiting: wait }, plan.draft.steps, origin);
      for (const p of this.passages) this.sources.add(p.docName);
      if (!wait) break;
      const decision = await this.waitForGo();
      if (decision === 'go') {
        setBriefWaiting(doc, runId, false, origin);
        break;
      }
      if (replans + 1 >= this.s.limits.maxReplans) throw new PlanError(`alternatives were picked ${replans + 1} times; ask again with the request you want`);
      asked = decision.request;
    }
    await executePlan(
      { doc, runId, origin, maxParallel: this.s.limits.maxParallelSteps, signal: this.s.signal, runStep: (step) => this.runStep(step), stopReason: () => this.s.stopReason() ?? 'the run was stopped', log: this.s.log },
      this.runMap,
    );
    return analysisSummary(listPlanSteps(doc, runId), { stopped: this.s.stopReason(), sources: [...this.sources] });
  }

  /** Waits for a person's Go or a picked alternative (or Stop). */
  private async waitForGo(): Promise<'go' | { request: string }> {
    for (;;) {
      const wake = nextChange(this.runMap, this.s.signal);
      if (this.stopped()) {
        // Stopped before Go: nothing ran; every step is skipped with the reason.
        const { doc, runId, origin } = this.s;
        const reason = this.s.stopReason() ?? 'the run was stopped';
        doc.transact(() => listPlanSteps(doc, runId).forEach((s) => updatePlanStep(doc, runId, s.id, { status: 'skipped', reason }, origin)), origin);
        throw new StepStopped();
      }
      const b = getBrief(this.s.doc, this.s.runId);
      if (b?.pick) return { request: b.pick.request };
      if (b?.go) return 'go';
      await wake;
    }
  }

  /** One step: up to two attempts, each run by a sub-agent and verified. */
  private async runStep(first: PlanStepView): Promise<void> {
    const { doc, runId, origin } = this.s;
    const id = first.id;
    let retry: { summary: string; issues: string[]; suggestions: string[] } | null = null;
    for (let attempt = 1; attempt <= 2; attempt++) {
      // Synchronously (before any await): the executor must see the step taken.
      updatePlanStep(doc, runId, id, { status: 'running', attempts: attempt, ...(attempt === 1 ? { startedAt: Date.now() } : {}) }, origin);
      const steps = listPlanSteps(doc, runId);
      const step = steps.find((s) => s.id === id);
      if (!step) return;
      const tracker = new ProvenanceTracker();
      const tools = this.s.toolsFor(step.scope);
      const byName = new Map(tools.map((t) => [t.name, t]));
      try {
        const passages = await this.s.searchLibrary(step.goal, 2);
        passages.forEach((p) => this.sources.add(p.docName));
        const report = await runStepAgent({
          model: this.s.model,
          signal: this.s.signal,
          system: stepSystemPrompt({ agentName: this.s.agentName, mode: getSettings(doc).agentMode, instructions: this.s.instructions(), facts: factsText(this.facts), passages }),
          request: stepRequest({ doc, steps, step, brief: getBrief(doc, runId), retry }),
          tools,
          maxTurns: this.s.limits.maxStepTurns,
          toolResultChars: this.s.limits.toolResultChars,
          callTool: async (call) => {
            const r = await this.s.callTool(call, { tools: byName, step: id });
            tracker.noteCall(call.name, call.arguments, r.content);
            return r;
          },
          onUsage: (u) => this.s.recordUsage(u),
          stopped: () => this.stopped(),
        });
        this.stepRequests.push({ step: id, attempt, contextChars: report.promptChars[0] ?? 0, turns: report.turns });
        tracker.noteReport(report);
        if (this.stopped()) throw new StepStopped();
        updatePlanStep(doc, runId, id, { status: 'verifying' }, origin);
        const result = { summary: report.summary, values: report.values, provenance: tracker.links(doc), reported: report.reported };
        const current = getPlanStep(doc, runId, id) ?? step;
        const v = await verifyStep(this.s.model, { doc, step: current, goal: current.goal, result, facts: this.facts, instructions: this.s.instructions(), signal: this.s.signal });
        this.s.recordUsage(v.usage);
        if (this.stopped()) throw new StepStopped();
        const recorded = { verdict: v.verdict, summary: result.summary, values: result.values, provenance: result.provenance };
        if (v.verdict.passed) {
          updatePlanStep(doc, runId, id, { ...recorded, status: 'done', endedAt: Date.now() }, origin);
          return;
        }
        if (attempt === 2) {
          updatePlanStep(doc, runId, id, { ...recorded, status: 'failed', reason: `failed verification twice: ${v.verdict.issues.join('; ') || 'not plausible'}`, endedAt: Date.now() }, origin);
          return;
        }
        updatePlanStep(doc, runId, id, recorded, origin);
        retry = { summary: result.summary, issues: v.verdict.issues, suggestions: v.verdict.suggestions };
      } catch (e) {
        if (this.stopped() || e instanceof StepStopped) {
          updatePlanStep(doc, runId, id, { status: 'skipped', reason: this.s.stopReason() ?? 'the run was stopped', endedAt: Date.now() }, origin);
          return;
        }
        const message = (e as Error)?.message ?? String(e);
        this.s.log('step failed', { run: runId, step: id, err: String((e as Error)?.stack ?? e) });
        updatePlanStep(doc, runId, id, { status: 'failed', reason: `the step could not run: ${message.slice(0, 300)}`, endedAt: Date.now() }, origin);
        return;
      }
    }
  }
}
