/**
 * The fuzzer's operations, by feature, each tagged with the writer that makes it in Plexus (a
 * person, the agent, the kernel or the server). Every operation goes through the shared helpers —
 * the only way the app writes — and may check its own local effect. A feature that adds state adds
 * its operations here (and its records to the schema and the schema fixture).
 */
import * as Y from 'yjs';
import * as S from '../src/index.ts';
import { cellIds, type Rng } from './helpers.ts';

export interface FuzzOp {
  name: string;
  writer: S.Writer;
  weight: number;
  run(doc: Y.Doc, origin: S.Origin, who: number): void;
}

/** What the operations share within one seed. */
export interface FuzzContext {
  rng: Rng;
  seed: number;
  fail(msg: string): void;
  /** A fresh id with a prefix (unique within the seed, identical on replay). */
  id(prefix: string): string;
  created: Set<string>;
  deleted: Set<string>;
  posted: Set<string>;
  removed: Set<string>;
  /** Set once an undo ran (cells and messages may then come back or go). */
  undid: boolean;
  /** Origin the next local transaction must carry (set by the loop; undo operations override it). */
  expectOrigin(o: unknown): void;
  /** Each replica's undo managers: a person's (structural undo) and the agent's (Undo run). */
  personUndo(who: number): Y.UndoManager;
  agentUndo(who: number): Y.UndoManager;
}

const MD_LINES = ['# Title', '## Sub **bold**', 'plain *it* and `code`', '- item', '- other', '1. first', '2. second', '> quoted', '```py', 'x = 1', '```', '---', '', 'snake_case_name', 'math $z_{3,4}$ inline'];

/** What the user asked for: the index the moved/new cell should land at among `cells`. */
function requestedIndex(cells: S.CellView[], pos: S.CellPosition): number {
  if ('index' in pos) return Math.max(0, Math.min(cells.length, pos.index));
  const anchor = 'after' in pos ? pos.after : pos.before;
  if (anchor === null) return 'after' in pos ? 0 : cells.length;
  const i = cells.findIndex((c) => c.id === anchor);
  if (i < 0) return cells.length; // anchor deleted concurrently: append
  return 'after' in pos ? i + 1 : i;
}

/** Two neighbours with the same order key (a concurrent-insert tie): no key fits strictly between them. */
const tiedAt = (cells: S.CellView[], i: number) => i > 0 && i < cells.length && cells[i - 1]!.order === cells[i]!.order;

/** What a markdown cell reads back after being set to `md` (the parser normalises some syntax). */
function normalisedMarkdown(md: string): string {
  const doc = new Y.Doc();
  const id = S.createCell(doc, { kind: 'markdown', source: md, author: 'n' }, S.serverOrigin('normalise'));
  return S.cellSource(S.getCell(doc, id)!);
}

const asPerson = (o: S.Origin) => (o.kind === 'user' ? { id: o.userId, name: o.name } : { id: 'agent', name: 'Agent' });

/** Every operation, with the context of one seed. */
export function fuzzOperations(ctx: FuzzContext): FuzzOp[] {
  const { rng } = ctx;
  // Sometimes an id nobody has (or that was deleted): helpers must cope.
  const someCell = (doc: Y.Doc) =>
    (rng.bool(0.85) && ctx.created.size ? rng.pick(rng.bool(0.8) ? cellIds(doc).concat('c_none') : [...ctx.created]) : 'c_none') as S.CellId;
  const someMessage = () => (ctx.posted.size && rng.bool(0.9) ? rng.pick([...ctx.posted]) : 'm_none');
  const somePosition = (doc: Y.Doc): S.CellPosition | undefined => {
    switch (rng.int(4)) {
      case 0: return { index: rng.int(cellIds(doc).length + 3) - 1 };
      case 1: return { after: rng.bool(0.15) ? null : someCell(doc) };
      case 2: return { before: rng.bool(0.15) ? null : someCell(doc) };
      default: return undefined;
    }
  };
  const someRun = (doc: Y.Doc, pred: (r: S.RunView) => boolean = () => true) => {
    const runs = S.listRuns(doc).filter(pred);
    return runs.length ? rng.pick(runs) : null;
  };
  const someLayer = (doc: Y.Doc) => {
    const names = S.layerNames(doc);
    return names.length && rng.bool(0.9) ? rng.pick(names) : 'no_layer';
  };
  const someProposal = (doc: Y.Doc) => {
    const cards = S.listMessages(doc).filter((m) => S.readProposal(doc, m.id));
    return cards.length ? rng.pick(cards).id : 'm_none';
  };
  const code = (doc: Y.Doc) => {
    const c = S.listCells(doc).filter((x) => x.kind !== 'markdown');
    return c.length ? rng.pick(c) : null;
  };
  const someAction = (doc: Y.Doc): S.AgentAction => {
    switch (rng.int(7)) {
      case 0: return { type: 'create_cell', cellId: ctx.id('c'), kind: rng.pick(S.CELL_KINDS), source: rng.string(rng.int(10)), after: rng.bool(0.5) ? null : someCell(doc) };
      case 1: {
        const c = code(doc);
        const base = c ? S.cellSource(c) : '';
        return { type: 'edit_cell', cellId: c?.id ?? 'c_none', base, proposed: base.slice(0, rng.int(base.length + 1)) + rng.string(3) };
      }
      case 2: return { type: 'move_cell', cellId: someCell(doc), after: rng.bool(0.3) ? null : someCell(doc) };
      case 3: return { type: 'set_camera', camera: { position: [rng.int(9), rng.int(9), rng.int(9)] } };
      case 4: return { type: 'set_layer', layer: someLayer(doc), props: { opacity: rng.int(10) / 10 } };
      case 5: return { type: 'add_annotations', layer: someLayer(doc), annotations: [{ type: 'point', point: [rng.int(9), rng.int(9), 0] }] };
      default: return { type: 'delete_cell', cellId: someCell(doc), source: '' };
    }
  };
  /** Copies of a replica's state taken by `checkpoint`, for `restore`. */
  const pasts: Y.Doc[] = [];
  const execs = new Map<Y.Doc, Y.Map<unknown>[]>();
  const someExec = (doc: Y.Doc) => {
    const list = execs.get(doc) ?? [];
    return list.length ? rng.pick(list) : null;
  };
  const someOutput = (): S.CellOutput =>
    rng.pick<S.CellOutput>([
      { type: 'text', text: rng.string(5) },
      { type: 'json', value: { a: rng.int(9), b: [1, 'x'] } },
      { type: 'table', columns: [{ name: 'a', type: 'INTEGER' }], rows: [{ a: rng.int(9) }], totalRows: 1 },
      { type: 'error', name: 'Error', message: rng.string(6), line: 1 },
      { type: 'chart', format: 'vega-lite', spec: { mark: 'bar' } },
    ]);

  const person = (name: string, weight: number, run: FuzzOp['run']): FuzzOp => ({ name, writer: 'person', weight, run });
  const agent = (name: string, weight: number, run: FuzzOp['run']): FuzzOp => ({ name, writer: 'agent', weight, run });
  const kernel = (name: string, weight: number, run: FuzzOp['run']): FuzzOp => ({ name, writer: 'kernel', weight, run });
  const server = (name: string, weight: number, run: FuzzOp['run']): FuzzOp => ({ name, writer: 'server', weight, run });
  /** Cell operations are made by people and by the agent alike. */
  const both = (name: string, weight: number, run: FuzzOp['run']): FuzzOp[] => [person(name, weight, run), agent(`${name}@agent`, Math.max(1, weight / 3), run)];

  return [
    // ---- notebook: cells
    ...both('createCell', 4, (doc, o, who) => {
      const kind = rng.pick(S.CELL_KINDS);
      const source = kind === 'markdown' ? Array.from({ length: rng.int(4) }, () => rng.pick(MD_LINES)).join('\n') : rng.string(rng.int(12));
      const position = somePosition(doc);
      const before = S.listCells(doc);
      const want = requestedIndex(before, position ?? { index: before.length });
      const id = S.createCell(doc, { kind, source, position, author: `u${who}`, id: ctx.id('c') as S.CellId }, o);
      ctx.created.add(id);
      const got = cellIds(doc).indexOf(id);
      if (!tiedAt(before, want) && got !== want) ctx.fail(`createCell ${JSON.stringify(position)} landed at ${got}, wanted ${want}`);
    }),
    person('deleteCell', 2, (doc, o) => {
      const id = someCell(doc);
      if (S.deleteCell(doc, id, o)) ctx.deleted.add(id);
      if (S.getCell(doc, id)) ctx.fail(`cell ${id} still there after deleteCell`);
    }),
    ...both('moveCell', 3, (doc, o) => {
      const id = someCell(doc);
      const to = somePosition(doc) ?? { index: 0 };
      const selfAnchor = ('after' in to && to.after === id) || ('before' in to && to.before === id);
      const before = cellIds(doc);
      const others = S.listCells(doc).filter((c) => c.id !== id);
      const want = requestedIndex(others, to);
      if (!S.moveCell(doc, id, to, o)) return;
      const got = cellIds(doc).indexOf(id);
      if (selfAnchor && got !== before.indexOf(id)) ctx.fail(`moveCell relative to itself moved ${id} from ${before.indexOf(id)} to ${got}`);
      else if (!selfAnchor && !tiedAt(others, want) && got !== want) ctx.fail(`moveCell ${JSON.stringify(to)} landed at ${got}, wanted ${want}`);
    }),
    person('moveCellBy', 2, (doc, o) => {
      const id = someCell(doc);
      const delta = rng.bool() ? 1 : -1;
      const before = cellIds(doc);
      if (!S.moveCellBy(doc, id, delta, o)) return;
      const after = cellIds(doc);
      const swapped = [...before];
      const i = before.indexOf(id);
      [swapped[i], swapped[i + delta]] = [swapped[i + delta]!, swapped[i]!];
      if (!S.listCells(doc).some((c, k, all) => k > 0 && all[k - 1]!.order === c.order) && after.join() !== swapped.join())
        ctx.fail(`moveCellBy ${delta} did not swap neighbours: ${before} -> ${after}`);
    }),
    ...both('setCellSource', 3, (doc, o) => {
      const cell = S.getCell(doc, someCell(doc));
      if (!cell) return;
      const old = S.cellSource(cell);
      const at = rng.int(old.length + 1);
      const ins = cell.kind === 'markdown' ? rng.pick(MD_LINES) + (rng.bool() ? '\n' : ' ') : rng.string(rng.int(6));
      const text = old.slice(0, at) + ins + old.slice(at + rng.int(4));
      S.setCellSource(doc, cell.id, text, o);
      const want = cell.kind === 'markdown' ? normalisedMarkdown(text) : text;
      if (S.cellSource(S.getCell(doc, cell.id)!) !== want) ctx.fail(`setCellSource on ${cell.kind} did not produce its text`);
    }),
    person('insertCellText', 3, (doc, o) => {
      const cell = S.getCell(doc, someCell(doc));
      const ok = S.insertCellText(doc, cell?.id ?? 'c_none', rng.int(20), rng.string(1 + rng.int(3)), o);
      if (ok !== (cell !== undefined && cell.kind !== 'markdown')) ctx.fail(`insertCellText returned ${ok} for a ${cell?.kind} cell`);
    }),
    ...both('setCellKind', 3, (doc, o) => {
      const id = someCell(doc);
      const kind = rng.pick(S.CELL_KINDS);
      if (S.setCellKind(doc, id, kind, o) && S.getCell(doc, id)!.kind !== kind) ctx.fail(`setCellKind did not set ${kind}`);
    }),
    person('setCellName', 1, (doc, o) => void S.setCellName(doc, someCell(doc), rng.bool(0.8) ? `df${rng.int(5)}` : null, o)),
    person('undo', 1, (_doc, _o, who) => {
      const um = ctx.personUndo(who);
      ctx.expectOrigin(um);
      ctx.undid = true;
      if (rng.bool(0.7)) um.undo();
      else um.redo();
    }),

    // ---- notebook: the run protocol (people ask, the kernel answers)
    person('requestRun', 2, (doc, o) => void S.requestRun(doc, someCell(doc), asPerson(o), o)),
    person('kernelCommand', 1, (doc, o) => void rng.pick([S.requestRunAll, S.requestRunStale, S.requestInterrupt, S.requestRestart])(doc, asPerson(o), o)),
    kernel('kernelAck', 2, (doc, o) => {
      const pending = S.pendingRequests(doc);
      if (!pending.length) return;
      const { cell, request } = rng.pick(pending);
      S.ackRequest(doc, cell, request.id, o);
      S.setPending(doc, cell, rng.bool(0.7) ? { runId: ctx.id('k'), requestId: request.id, trigger: 'request', requestedBy: { id: request.by }, queuedAt: 1 } : null, o);
    }),
    kernel('kernelStart', 2, (doc, o) => {
      const cell = code(doc);
      if (!cell) return;
      const m = S.startExec(doc, cell, { runId: ctx.id('k'), requestId: null, trigger: rng.pick(['request', 'upstream', 'run-all'] as const), requestedBy: null, count: rng.int(50), generation: 1, startedAt: 1, sourceHash: S.sourceHash(S.cellSource(cell)), source: S.cellSource(cell), defines: [] }, o);
      execs.set(doc, [...(execs.get(doc) ?? []), m]);
      if (!S.readExec(S.getCell(doc, cell.id)!)) ctx.fail('startExec wrote no exec');
    }),
    kernel('kernelStream', 2, (doc, o) => {
      const m = someExec(doc);
      if (m) S.appendStream(m, rng.pick(['stdout', 'stderr'] as const), rng.string(1 + rng.int(8)), o);
    }),
    kernel('kernelOutputs', 1, (doc, o) => {
      const m = someExec(doc);
      if (m) S.pushOutputs(m, [someOutput()], o);
    }),
    kernel('kernelFinish', 2, (doc, o) => {
      const m = someExec(doc);
      if (m) S.finishExec(m, { state: rng.pick(['done', 'error', 'cancelled'] as const), defines: ['x'], ...(rng.bool() ? { reason: 'superseded' } : {}), outputs: rng.bool() ? [someOutput()] : [] }, o);
    }),
    kernel('kernelCancel', 1, (doc, o) => {
      const cell = code(doc);
      if (cell) S.cancelExec(doc, cell, { runId: ctx.id('k'), requestId: null, trigger: 'upstream', requestedBy: null, count: 0, generation: 1, sourceHash: 'h', source: '', defines: [], reason: 'upstream failed' }, [someOutput()], o);
    }),
    kernel('kernelStale', 1, (doc, o) => {
      const cell = code(doc);
      if (cell) S.setStale(doc, cell, rng.bool(0.6) ? { reason: 'inputs changed', names: ['x'], at: 1 } : null, o);
    }),
    kernel('kernelStatus', 1, (doc, o) =>
      S.writeKernelStatus(doc, { state: rng.pick(['idle', 'busy', 'starting'] as const), generation: 1, count: rng.int(50), current: null, queue: [], handled: {}, limits: { timeoutMs: 1, memoryMb: 1 }, sandbox: [], updatedAt: 1 }, o)),

    // ---- chat
    person('postMessage', 2, (doc, o, who) => {
      const id = ctx.id('m') as S.MessageId;
      S.postMessage(doc, { id, author: { id: `u${who}`, name: `User ${who}`, kind: 'person' }, text: 'hi ' + rng.string(5) }, o);
      ctx.posted.add(id);
    }),
    agent('postAgentMessage', 1, (doc, o) => {
      const id = ctx.id('m') as S.MessageId;
      S.postMessage(doc, { id, author: { id: 'agent', name: 'Agent', kind: 'agent' }, text: rng.bool() ? '' : rng.string(5), status: 'streaming' }, o);
      ctx.posted.add(id);
    }),
    agent('appendToMessage', 2, (doc, o) => void S.appendToMessage(doc, someMessage(), rng.string(1 + rng.int(8)), o)),
    agent('setMessageStatus', 1, (doc, o) => void S.setMessageStatus(doc, someMessage(), rng.pick(['done', 'stopped', 'error', 'streaming'] as const), o)),
    // People delete their own messages only (the app offers no more; undoing the deletion of
    // someone else's message would re-post it under their name, which the schema refuses).
    person('deleteMessage', 1, (doc, o, who) => {
      const mine = S.listMessages(doc).filter((m) => m.author.id === `u${who}`);
      const id = mine.length && rng.bool(0.9) ? rng.pick(mine).id : 'm_none';
      if (S.deleteMessage(doc, id, o)) ctx.removed.add(id);
    }),

    // ---- agent runs (people ask, stop and undo; the agent records progress, proposes and edits)
    person('askAgent', 2, (doc, o, who) => {
      const messageId = ctx.id('m') as S.MessageId;
      S.postMessage(doc, { id: messageId, author: { id: `u${who}`, name: `User ${who}`, kind: 'person' }, text: '@agent ' + rng.string(6) }, o);
      ctx.posted.add(messageId);
      S.requestAgentRun(doc, { by: asPerson(o), messageId, text: 'do it', id: ctx.id('r') }, o);
    }),
    agent('startRun', 2, (doc, o) => {
      const r = someRun(doc, (x) => x.status === 'queued');
      if (!r) return;
      const replyId = ctx.id('m') as S.MessageId;
      S.postMessage(doc, { id: replyId, author: { id: 'agent', name: 'Agent', kind: 'agent' }, text: '', status: 'streaming', replyTo: r.request.messageId as S.MessageId, runId: r.id }, o);
      ctx.posted.add(replyId);
      S.startRun(doc, r.id, { replyId, model: 'scripted' }, o);
    }),
    agent('runProgress', 3, (doc, o) => {
      const r = someRun(doc);
      if (!r) return;
      switch (rng.int(4)) {
        case 0: return S.recordStep(doc, r.id, { prompt: rng.int(99), completion: rng.int(99), total: rng.int(199) }, o);
        case 1: return S.setRunPlan(doc, r.id, [{ text: rng.string(6), status: rng.pick(['todo', 'doing', 'done'] as const) }], o);
        case 2: {
          const a = S.startActivity(doc, r.id, rng.pick(['get_cell', 'run_cell', 'set_view']), '{}', o);
          if (a && rng.bool()) S.finishActivity(doc, r.id, a, rng.pick(['done', 'error', 'proposed'] as const), rng.string(5), o);
          return;
        }
        default: return S.addAudit(doc, r.id, { tool: 'update_cell', change: rng.string(8), target: `cell:${someCell(doc)}` }, o);
      }
    }),
    agent('agentAction', 3, (doc, o) => {
      const a = someAction(doc);
      if (a.type === 'delete_cell') return; // destructive: only through a person's Accept
      const r = S.applyAction(doc, a, o);
      if (r.ok && a.type === 'create_cell') ctx.created.add(a.cellId);
    }),
    agent('finishRun', 1, (doc, o) => {
      const r = someRun(doc, (x) => x.status === 'running');
      if (r) S.finishRun(doc, r.id, rng.pick(['done', 'stopped', 'error'] as const), rng.bool() ? 'because' : null, o);
    }),
    person('stopRun', 1, (doc, o) => {
      const r = someRun(doc);
      if (r) S.requestRunStop(doc, r.id, asPerson(o), o);
    }),
    // ---- analysis plans (the agent plans and runs steps; people steer the brief and the steps)
    agent('routeRun', 1, (doc, o) => {
      const r = someRun(doc);
      if (r) S.setRoute(doc, r.id, { kind: rng.pick(['question', 'analysis', 'action'] as const), reason: rng.string(5), scopes: [rng.pick(S.TOOL_SCOPES)] }, o);
    }),
    agent('setPlan', 1, (doc, o) => {
      const r = someRun(doc);
      if (!r) return;
      const n = 1 + rng.int(4);
      const steps = Array.from({ length: n }, (_, i) => ({ id: `s${i + 1}`, goal: rng.string(8), dependsOn: i > 0 && rng.bool() ? [`s${rng.int(i) + 1}`] : [], scope: [rng.pick(S.TOOL_SCOPES)] }));
      S.setPlan(doc, r.id, { clarified: rng.string(6), assumptions: [rng.string(4)], alternatives: [{ label: rng.string(4), request: rng.string(8) }], parameters: { x: rng.int(9) }, waiting: rng.bool() }, steps, o);
    }),
    agent('stepProgress', 3, (doc, o) => {
      const r = someRun(doc);
      const steps = r ? S.listPlanSteps(doc, r.id) : [];
      if (!r || !steps.length) return;
      const st = rng.pick(steps);
      S.updatePlanStep(doc, r.id, st.id, {
        status: rng.pick(S.STEP_STATUSES), attempts: rng.int(3), summary: rng.string(6), values: { n: rng.int(99) },
        ...(rng.bool() ? { verdict: { passed: rng.bool(), confidence: 0.5, issues: [rng.string(4)], suggestions: [], checks: [{ name: 'reported', passed: true, detail: 'ok' }] } } : {}),
        ...(rng.bool() ? { provenance: [{ kind: 'cell' as const, id: someCell(doc), label: 'cell 1' }] } : {}),
      }, o);
    }),
    person('steerPlan', 3, (doc, o) => {
      const r = someRun(doc);
      if (!r) return;
      const steps = S.listPlanSteps(doc, r.id);
      const st = steps.length ? rng.pick(steps) : null;
      switch (rng.int(7)) {
        case 0: return S.editAssumptions(doc, r.id, rng.string(10), o);
        case 1: return void S.pressGo(doc, r.id, asPerson(o), o);
        case 2: return void S.pickAlternative(doc, r.id, { label: rng.string(4), request: rng.string(8) }, asPerson(o), o);
        case 3: return void (st && S.editStepGoal(doc, r.id, st.id, rng.string(9), o));
        case 4: return void (st && S.removePlanStep(doc, r.id, st.id, asPerson(o), o));
        case 5: return void (st && S.setStepDependsOn(doc, r.id, st.id, steps.length > 1 ? [rng.pick(steps).id] : [], o));
        default: return void S.addPlanStep(doc, r.id, { goal: rng.string(7), dependsOn: st ? [st.id] : [], afterId: st?.id ?? null }, asPerson(o), o);
      }
    }),
    person('askUndoRun', 1, (doc, o) => {
      const r = someRun(doc);
      if (r) S.requestRunUndo(doc, r.id, asPerson(o), o);
    }),
    agent('undoRun', 1, (doc, o, who) => {
      const um = ctx.agentUndo(who);
      ctx.expectOrigin(um);
      ctx.undid = true;
      while (um.undoStack.length) um.undo();
      const r = someRun(doc, (x) => x.undo !== null && !x.undone);
      ctx.expectOrigin(o);
      if (r) S.setUndoOutcome(doc, r.id, { ok: true, at: 1, by: r.undo!.by, message: 'undone' }, o);
    }),
    agent('propose', 2, (doc, o) => {
      const runId = someRun(doc)?.id ?? 'r_none';
      const action = someAction(doc);
      const id = S.postProposal(doc, { author: { id: 'agent', name: 'Agent', kind: 'agent' }, proposal: { runId, action, title: S.describeAction(action), ...(action.type === 'delete_cell' ? { destructive: 'deletes a cell' } : {}) } }, o);
      ctx.posted.add(id);
    }),
    person('acceptProposal', 2, (doc, o) => {
      const id = someProposal(doc);
      const p = S.readProposal(doc, id);
      const out = S.acceptProposal(doc, id, asPerson(o), o);
      if (p && !p.outcome && out?.status === 'accepted') {
        if (p.proposal.action.type === 'create_cell') ctx.created.add(p.proposal.action.cellId);
        if (p.proposal.action.type === 'delete_cell') ctx.deleted.add(p.proposal.action.cellId);
      }
    }),
    person('dismissProposal', 1, (doc, o) => void S.dismissProposal(doc, someProposal(doc), asPerson(o), o)),
    agent('suggest', 1, (doc, o) =>
      void S.setSuggestions(doc, someMessage(), { values: [{ label: rng.string(4), value: rng.string(8) }], actions: [{ label: 'Run', action: 'run_cell', target: someCell(doc) }] }, o)),

    // ---- viewer (people through the Neuroglancer binding, the agent through its tools)
    ...both('setCamera', 2, (doc, o) => S.setCamera(doc, { position: [rng.int(99), rng.int(99), rng.int(9)], crossSectionScale: 1 + rng.int(4) }, o)),
    ...both('addLayer', 2, (doc, o) => {
      const name = `layer${rng.int(6)}`;
      if (S.layerNames(doc).includes(name)) return;
      S.addLayer(doc, rng.bool() ? { type: 'image', source: 'precomputed://x', name, shaderControls: { gain: 1 } } : { type: 'annotation', source: 'local://annotations', name }, o);
    }),
    person('removeLayer', 1, (doc, o) => {
      const name = someLayer(doc);
      if (S.layerNames(doc).includes(name)) S.removeLayer(doc, name, o);
    }),
    ...both('setLayerProps', 2, (doc, o) => {
      const name = someLayer(doc);
      if (S.layerNames(doc).includes(name)) S.setLayerProps(doc, name, { opacity: rng.int(10) / 10, visible: rng.bool(), ...(rng.bool(0.2) ? { blend: undefined } : {}) }, o);
    }),
    ...both('setShaderControl', 1, (doc, o) => {
      const name = someLayer(doc);
      if (S.layerNames(doc).includes(name)) S.setShaderControl(doc, name, rng.pick(['gain', 'contrast']), rng.int(9), o);
    }),
    ...both('addAnnotations', 1, (doc, o) => {
      const name = someLayer(doc);
      if (S.layerNames(doc).includes(name)) S.addAnnotations(doc, name, [{ type: 'point', point: [rng.int(9), rng.int(9), rng.int(9)] }], o);
    }),
    person('removeAnnotations', 1, (doc, o) => {
      const name = someLayer(doc);
      const anns = S.readLayer(doc, name)?.annotations;
      if (Array.isArray(anns) && anns.length) S.removeAnnotations(doc, name, [String((rng.pick(anns) as { id?: unknown }).id)], o);
    }),
    person('viewerDelta', 2, (doc, o) => {
      // What the Neuroglancer binding writes: the difference between two states it saw.
      const before = S.readViewerState(doc);
      const after = structuredClone(before) as S.NgState;
      after.layout = rng.pick(['xy', '4panel', '3d']);
      if (rng.bool()) after[`custom${rng.int(3)}`] = { v: rng.int(9) };
      S.applyViewerDelta(doc, before, after, o);
    }),
    ...both('saveView', 1, (doc, o, who) => void S.saveNamedView(doc, `view ${rng.int(4)}`, S.readViewerState(doc), `u${who}`, o)),
    person('loadOrDeleteView', 1, (doc, o) => {
      const views = S.listNamedViews(doc);
      if (!views.length) return;
      const v = rng.pick(views);
      if (rng.bool()) S.loadNamedView(doc, v, o);
      else S.deleteNamedView(doc, v.id, o);
    }),

    // ---- workspace: settings and title (people), the tables registry (the server; people remove tables)
    person('setSetting', 1, (doc, o) => S.setSetting(doc, 'agentMode', rng.pick(['direct', 'propose'] as const), o)),
    person('setPlanApproval', 1, (doc, o) => S.setSetting(doc, 'planApproval', rng.pick(['wait', 'auto'] as const), o)),
    person('editInstructions', 1, (doc, o) => S.setAgentInstructions(doc, rng.string(12), o)),
    person('makeMap', 1, (doc, o, who) => void S.createAtlasMap(doc, { table: 'rois', method: rng.pick(S.ATLAS_METHODS), columns: ['a'] }, { id: `u${who}` }, o)),
    person('brushMap', 2, (doc, o, who) => {
      const maps = S.listAtlasMaps(doc);
      if (!maps.length) return;
      const m = rng.pick(maps);
      switch (rng.int(5)) {
        case 0: return S.setAtlasSelection(doc, m.id, { kind: 'rect', x0: rng.int(9), y0: rng.int(9), x1: rng.int(9), y1: rng.int(9), by: `u${who}`, at: 1 }, o);
        case 1: return S.setAtlasSelection(doc, m.id, null, o);
        case 2: return S.setAtlasHighlight(doc, m.id, { rows: [rng.int(99)], label: rng.string(4), by: `u${who}`, at: 1 }, o);
        case 3: return void S.saveAtlasCategory(doc, m.id, rng.pick(['a', 'b']), { rows: [rng.int(99)], note: rng.string(5), by: `u${who}`, at: 1 }, o);
        default: return void S.removeAtlasCategory(doc, m.id, rng.pick(['a', 'b']), o);
      }
    }),
    server('mapCoords', 1, (doc, o) => {
      const maps = S.listAtlasMaps(doc);
      if (maps.length) S.setAtlasCoords(doc, rng.pick(maps).id, { status: rng.pick(['queued', 'running', 'done', 'error'] as const), points: rng.int(99), at: 1 }, o);
    }),
    // The map's table of ROIs, its segmentation layer, and the ROIs of its chosen rows in the viewer (the server).
    server('mapRoiTable', 0.5, (doc, o) => {
      if (rng.bool()) S.registerTable(doc, { name: 'rois', fileName: 'rois.csv', format: 'csv', columns: [{ name: 'id', type: 'BIGINT' }, { name: 'a', type: 'DOUBLE' }], rows: 9, bytes: 1, storedBytes: 1, uploadedBy: { id: 'u0' }, created: 1, segmentSource: 'precomputed://seg' }, o);
      else if (!S.layerNames(doc).includes('seg')) S.addLayer(doc, { type: 'segmentation', source: 'precomputed://seg', name: 'seg' }, o);
    }),
    server('mapViewer', 1, (doc, o) => {
      const maps = S.listAtlasMaps(doc);
      if (!maps.length) return;
      const m = rng.pick(maps);
      S.writeAtlasViewer(doc, m.id, { selection: [1 + rng.int(5), 1 + rng.int(5)], highlight: rng.bool() ? [1 + rng.int(5)] : [] }, S.atlasViewerBasis(doc, m.id)!, o);
    }),
    person('pruneMapViewers', 0.5, (doc, o) => {
      const deleted = 1 + rng.int(5);
      S.pruneAtlasViewers(doc, 'precomputed://seg', (id) => id !== deleted, o);
    }),
    person('tagCell', 1, (doc, o) => void S.setCellTags(doc, someCell(doc), rng.bool() ? ['note'] : [], o)),
    server('registerLibraryDoc', 1, (doc, o) =>
      S.registerLibraryDoc(doc, { id: ctx.id('lib'), name: `${rng.string(5)}.md`, format: rng.pick(['md', 'txt', 'pdf'] as const), chars: rng.int(999), passages: rng.int(9), bytes: rng.int(999), uploadedBy: null, builtin: rng.bool(), created: 1 }, o)),
    person('removeLibraryDoc', 1, (doc, o) => {
      const docs = S.listLibrary(doc);
      if (docs.length) S.removeLibraryDoc(doc, rng.pick(docs).id, o);
    }),
    person('setTitle', 1, (doc, o) => S.setTitle(doc, 'Title ' + rng.string(4, 'xyz'), o)),
    // ---- history: checkpoints (the server records them), restores as changes (people)
    server('checkpoint', 0.5, (doc, o) => {
      const past = new Y.Doc();
      Y.applyUpdate(past, Y.encodeStateAsUpdate(doc));
      pasts.push(past);
      S.putCheckpoint(doc, { id: ctx.id('cp'), label: rng.string(5), kind: rng.pick(S.CHECKPOINT_KINDS), by: { id: 'u0', kind: 'person' }, at: rng.int(99), bytes: rng.int(999), cells: S.listCells(past).length }, o);
    }),
    server('forgetCheckpoint', 0.6, (doc, o) => {
      const list = S.listCheckpoints(doc);
      if (list.length) S.removeCheckpoints(doc, [rng.pick(list).id], o);
    }),
    person('restore', 1, (doc, o) => {
      if (!pasts.length) return;
      const past = rng.pick(pasts);
      const cell = S.listCells(past)[0] ?? S.listCells(doc)[0];
      const scope: S.RestoreScope = rng.pick<S.RestoreScope>([{ what: 'all' }, { what: 'notebook' }, { what: 'viewer' }, ...(cell ? [{ what: 'cell' as const, id: cell.id }] : [])]);
      const r = S.restoreCheckpoint(doc, past, scope, o);
      r.cellsRemoved.forEach((id) => ctx.deleted.add(id));
      if (r.cellsAdded.length || r.cellsRemoved.length) ctx.undid = true; // cells come back and go, as with undo
      if (scope.what === 'notebook' || scope.what === 'all') {
        const ids = (d: Y.Doc) => S.listCells(d).map((c) => c.id).join();
        if (ids(doc) !== ids(past)) ctx.fail(`a restore left cells ${ids(doc)}, the checkpoint has ${ids(past)}`);
        for (const c of S.listCells(past)) if (c.kind !== 'markdown' && S.cellSource(S.getCell(doc, c.id)!) !== S.cellSource(c)) ctx.fail(`a restore left cell ${c.id} unlike the checkpoint`);
      }
    }),
    // ---- forks: a student's raised hand (people), the teacher's roster (the server)
    person('raiseHand', 1, (doc, o, who) => S.setHand(doc, rng.bool() ? { by: `u${who}`, name: rng.string(3), at: rng.int(99) } : null, o)),
    server('rosterEntry', 1, (doc, o) =>
      S.setRosterEntry(doc, {
        fork: `w${rng.int(3)}`, student: { id: `link:handout/u${rng.int(3)}` }, created: 1, active: rng.int(99), updated: rng.int(99),
        cells: { total: 2, ran: rng.int(3), ok: rng.int(3), errors: rng.int(3), running: rng.int(2) },
        lastError: rng.bool() ? { cellId: 'c1', index: 1, message: rng.string(6), at: 1 } : null,
        hand: rng.bool() ? { by: 'u1', at: 1 } : null,
      }, o)),
    server('removeRosterEntry', 0.5, (doc, o) => void S.removeRosterEntry(doc, `w${rng.int(3)}`, o)),
    // ---- presenter mode: people start, take over and end a presentation
    person('present', 1, (doc, o, who) => {
      if (rng.bool(0.6)) {
        S.startPresenting(doc, { id: `u${who}`, name: `User ${who}` }, o, rng.int(99));
        if (S.readPresentation(doc)?.by !== `u${who}`) ctx.fail('startPresenting did not make its caller the presenter');
      } else if (S.stopPresenting(doc, o, rng.bool() ? `u${who}` : undefined) && S.readPresentation(doc)) ctx.fail('stopPresenting left a presentation');
    }),
    server('registerTable', 1, (doc, o) =>
      S.registerTable(doc, { name: `t${rng.int(4)}`, fileName: 'x.csv', format: 'csv', columns: [{ name: 'a', type: 'BIGINT' }], rows: rng.int(9), bytes: 1, storedBytes: 1, uploadedBy: { id: 'u0' }, created: 1 }, o)),
    person('unregisterTable', 1, (doc, o) => void S.unregisterTable(doc, `t${rng.int(4)}`, o)),
    // ---- analysis jobs: the server runs them; people and the agent stop them and edit their ROIs
    server('createJob', 1, (doc, o) =>
      S.createJob(doc, { id: `j${rng.int(3)}`, kind: rng.pick(S.JOB_KINDS), title: 'job', input: { dataset: 'd', layer: 'movie' }, params: { frameRate: 30 }, requestedBy: { id: 'u0', via: 'person' }, created: rng.int(99) }, o)),
    server('updateJob', 2, (doc, o) =>
      void S.updateJob(doc, `j${rng.int(3)}`, rng.bool(0.5) ? { status: rng.pick(S.JOB_STATUSES), progress: { stage: 'registration', done: rng.int(9), total: 9, eta: rng.bool(0.5) ? null : rng.int(9), at: 1 } } : { result: { rois: rng.int(9) } }, o)),
    person('requestJobStop', 1, (doc, o) => void S.requestJobStop(doc, `j${rng.int(3)}`, { id: 'u1' }, o)),
    ...both('setRoiEdit', 1, (doc, o) => {
      const roi = 1 + rng.int(5);
      const edit: S.RoiEdit | null = rng.bool(0.2) ? null : rng.bool(0.4) ? { action: 'delete', by: 'u1', at: 1 } : rng.bool(0.5) ? { action: 'classify', cell: rng.bool(0.5), by: 'u1', at: 1 } : { action: 'merge', into: roi === 1 ? 2 : 1, by: 'u1', at: 1 };
      void S.setRoiEdit(doc, `j${rng.int(3)}`, roi, edit, o);
    }),
    // An ROI edit together with the segment display of a layer (any layer: only a segmentation layer takes it).
    ...both('applyRoiEdit', 1, (doc, o) => {
      const roi = 1 + rng.int(5);
      const edit: S.RoiEdit | null = rng.bool(0.3) ? null : { action: 'delete', by: 'u1', at: 1 };
      const layers = S.layerNames(doc);
      void S.applyRoiEdit(doc, `j${rng.int(3)}`, layers.length && rng.bool(0.8) ? rng.pick(layers) : null, roi, edit, [1, 2, 3, 4, 5], o);
    }),
    person('syncRoiLayer', 0.5, (doc, o) => void S.syncRoiLayer(doc, `j${rng.int(3)}`, o)),
    person('removeJob', 0.5, (doc, o) => void S.removeJob(doc, `j${rng.int(3)}`, o)),
    server('importNotebook', 1, (doc, o) => {
      const nb = S.ipynbToNotebook({
        nbformat: 4, nbformat_minor: 5, metadata: { kernelspec: { name: 'python3', language: 'python' } },
        cells: [
          { cell_type: 'markdown', id: ctx.id('j'), metadata: {}, source: rng.pick(MD_LINES) },
          { cell_type: 'code', id: ctx.id('j'), metadata: {}, source: `print(${rng.int(9)})`, execution_count: 1, outputs: [{ output_type: 'stream', name: 'stdout', text: 'x\n' }] },
        ],
      });
      for (const id of S.importNotebook(doc, nb, 'u0', o)) ctx.created.add(id);
    }),
  ];
}
