/**
 * Notebook tools (seed 001): read the notebook with light output previews, create / update /
 * delete / move cells, run a cell and wait for its result. Changes go through `ctx.act`, which
 * applies them or proposes them; a direct rewrite of a code cell is typed in small transactions.
 */
import {
  actionTarget, cellSource, cellState, getCell, isCellKind, listCells, newCellId, pendingProposals, pendingProposalsFor, planTextEdit, readCellRun, requestRun,
  previewOutput, readAck, type ProposalView,
} from '@plexus/shared';
import { actResult, ok, ToolRefusal, defineTool, type Tool, type ToolContext, type ToolResult } from './tool.ts';
import { awaitDecisions, decisionsForModel } from './decisions.ts';

const CELL_ID = { type: 'string', description: 'Cell id as given by get_notebook_state (c_…)', maxLength: 100 } as const;
const MAX_SOURCE = 50_000;

/** The proposal that would create cell `id`, if one is waiting for a person. */
const proposedCell = (ctx: ToolContext, id: string): ProposalView | undefined =>
  pendingProposalsFor(ctx.doc, `cell:${id}`).find((p) => p.proposal.action.type === 'create_cell');

function requireCell(ctx: ToolContext, id: string) {
  const cell = getCell(ctx.doc, id);
  if (cell) return cell;
  if (proposedCell(ctx, id))
    throw new ToolRefusal(`cell "${id}" is only proposed: it does not exist until a person presses Accept on its card, and it has no source to edit or result to read yet. run_cell waits for the decision; otherwise tell the user it is waiting for them.`);
  throw new ToolRefusal(`no cell with id "${id}" (cells: ${listCells(ctx.doc).map((c) => c.id).join(', ') || 'none'}); call get_notebook_state`);
}

/** Notebook proposals waiting for a person (not applied: not part of `cells`). */
function pendingCellProposals(ctx: ToolContext): Array<Record<string, string>> {
  return pendingProposals(ctx.doc)
    .filter((p) => actionTarget(p.proposal.action).startsWith('cell:'))
    .map((p) => ({ proposal: p.messageId, title: p.proposal.title, target: actionTarget(p.proposal.action) }));
}

const getNotebookState = defineTool({
  name: 'get_notebook_state',
  description: 'The notebook: every cell in order with id, kind, name, source, run state and short previews of its outputs (no images). Call it before editing cells you have not seen.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  async run(ctx) {
    const cells = listCells(ctx.doc).map((c, i) => {
      const s = cellState(ctx.doc, c, i, { cellSource: 4000, cellOutput: 800 });
      ctx.seen.set(c.id, cellSource(c));
      return s;
    });
    ctx.presence.focus('notebook');
    const pending = pendingCellProposals(ctx);
    return ok(`${cells.length} cells${pending.length ? `, ${pending.length} pending proposal${pending.length === 1 ? '' : 's'}` : ''}`, { cells, ...(pending.length ? { pending_proposals: pending } : {}) });
  },
});

const getCellTool = defineTool({
  name: 'get_cell',
  description: 'One cell in full: source (up to 20 000 characters), run state and output previews.',
  parameters: { type: 'object', properties: { cell_id: CELL_ID }, required: ['cell_id'], additionalProperties: false },
  async run(ctx, a) {
    const cell = requireCell(ctx, a.cell_id);
    const i = listCells(ctx.doc).findIndex((c) => c.id === cell.id);
    ctx.seen.set(cell.id, cellSource(cell));
    ctx.presence.focus('notebook', cell.id);
    return ok(`cell ${cell.id}`, cellState(ctx.doc, cell, i, { cellSource: 20_000, cellOutput: 4000 }));
  },
});

const createCellTool = defineTool({
  name: 'create_cell',
  description:
    'Creates a cell. kind: "code" (JavaScript; top-level declarations are visible to other cells, `await` allowed), "sql" (DuckDB; give it a name to use its result as a table/value elsewhere), or "markdown". Inserted after after_cell_id, or at the end.',
  parameters: {
    type: 'object',
    properties: {
      kind: { type: 'string', enum: ['code', 'sql', 'markdown'] },
      source: { type: 'string', maxLength: MAX_SOURCE },
      name: { type: 'string', description: 'SQL cells: the name its result is bound to', maxLength: 63 },
      after_cell_id: { anyOf: [CELL_ID, { type: 'null' }] },
    },
    required: ['kind', 'source'],
    additionalProperties: false,
  },
  async run(ctx, a) {
    const kind = a.kind;
    if (!isCellKind(kind)) throw new ToolRefusal('kind must be code, sql or markdown');
    const after = a.after_cell_id ?? undefined;
    if (after) requireCell(ctx, after);
    if (a.name !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(a.name)) throw new ToolRefusal(`"${String(a.name)}" is not a valid name (letters, digits, _; not starting with a digit)`);
    const cellId = newCellId();
    const r = await ctx.act('create_cell', { type: 'create_cell', cellId, kind, source: a.source, ...(a.name ? { name: a.name } : {}), ...(after !== undefined ? { after } : {}) });
    if (r.kind === 'applied') ctx.seen.set(cellId, a.source);
    return actResult(r, `new ${kind} cell`, { cell_id: cellId });
  },
});

/** Applies a new full source for a cell, three-way against what the model last saw. */
async function rewrite(ctx: ToolContext, tool: string, cellId: string, proposed: string) {
  const cell = requireCell(ctx, cellId);
  const current = cellSource(cell);
  const base = ctx.seen.get(cellId) ?? current;
  const plan = planTextEdit(base, current, proposed);
  if (plan.hunks.length === 0 && plan.conflicts.length === 0) return ok('no change', { ok: true, result: 'the cell already has that source' });
  if (plan.hunks.length === 0) throw new ToolRefusal('someone edited the same lines since you read this cell; nothing was changed. Call get_cell and retry.');
  const r = await ctx.act(tool, { type: 'edit_cell', cellId, base, proposed });
  if (r.kind === 'applied') {
    const now = getCell(ctx.doc, cellId);
    if (now) ctx.seen.set(cellId, cellSource(now));
  }
  return actResult(r, `edit cell ${cellId}`, { cell_id: cellId });
}

const updateCellTool = defineTool({
  name: 'update_cell',
  description:
    'Replaces a cell\'s source with `source` (the complete new text). Only the parts you changed are applied; if people edited other parts since you read the cell, their edits are kept. Prefer replace_in_cell for small changes.',
  parameters: { type: 'object', properties: { cell_id: CELL_ID, source: { type: 'string', maxLength: MAX_SOURCE } }, required: ['cell_id', 'source'], additionalProperties: false },
  run: (ctx, a) => rewrite(ctx, 'update_cell', a.cell_id, a.source),
});

const replaceInCellTool = defineTool({
  name: 'replace_in_cell',
  description: 'Replaces one exact occurrence of `find` in a cell by `replace` (find must occur exactly once; include enough surrounding text).',
  parameters: {
    type: 'object',
    properties: { cell_id: CELL_ID, find: { type: 'string', minLength: 1, maxLength: 20_000 }, replace: { type: 'string', maxLength: MAX_SOURCE } },
    required: ['cell_id', 'find', 'replace'],
    additionalProperties: false,
  },
  async run(ctx, a) {
    const cell = requireCell(ctx, a.cell_id);
    const current = cellSource(cell);
    const find = a.find;
    const at = current.indexOf(find);
    if (at < 0) throw new ToolRefusal('`find` does not occur in the cell (call get_cell for its current text)');
    if (current.indexOf(find, at + 1) >= 0) throw new ToolRefusal('`find` occurs more than once; include more surrounding text');
    ctx.seen.set(cell.id, current);
    return rewrite(ctx, 'replace_in_cell', cell.id, current.slice(0, at) + a.replace + current.slice(at + find.length));
  },
});

const deleteCellTool = defineTool({
  name: 'delete_cell',
  description: 'Deletes a cell. Always becomes a proposal that a person must accept.',
  parameters: { type: 'object', properties: { cell_id: CELL_ID, why: { type: 'string', maxLength: 500 } }, required: ['cell_id'], additionalProperties: false },
  async run(ctx, a) {
    const cell = requireCell(ctx, a.cell_id);
    return actResult(await ctx.act('delete_cell', { type: 'delete_cell', cellId: cell.id, source: cellSource(cell) }, a.why), `delete cell ${cell.id}`);
  },
});

const moveCellTool = defineTool({
  name: 'move_cell',
  description: 'Moves a cell after another (after_cell_id) or to the top (null).',
  parameters: { type: 'object', properties: { cell_id: CELL_ID, after_cell_id: { anyOf: [CELL_ID, { type: 'null' }] } }, required: ['cell_id', 'after_cell_id'], additionalProperties: false },
  async run(ctx, a) {
    const cell = requireCell(ctx, a.cell_id);
    const after = a.after_cell_id;
    if (after) requireCell(ctx, after);
    return actResult(await ctx.act('move_cell', { type: 'move_cell', cellId: cell.id, after }), `move cell ${cell.id}`);
  },
});

/** Waits until the cell's run started after `since` has finished, or the timeout or a stop. */
function waitForRun(ctx: ToolContext, cellId: string, requestId: string, timeoutMs: number): Promise<'finished' | 'timeout' | 'gone'> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const cell = getCell(ctx.doc, cellId);
      if (!cell) return finish('gone');
      const run = readCellRun(ctx.doc, cell);
      const exec = run?.exec;
      if (exec && exec.requestId === requestId && exec.state !== 'running') return finish('finished');
      // Coalesced into a run that was already under way: wait for that one.
      if (exec && exec.state !== 'running' && !run?.pending && !run?.requested && exec.requestId !== requestId && readAck(cell) === requestId) return finish('finished');
    };
    const onUpdate = () => check();
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    const onAbort = () => {
      cleanup();
      reject(ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('stopped'));
    };
    const cleanup = () => {
      clearTimeout(timer);
      ctx.doc.off('update', onUpdate);
      ctx.signal.removeEventListener('abort', onAbort);
    };
    const finish = (r: 'finished' | 'timeout' | 'gone') => {
      cleanup();
      resolve(r);
    };
    ctx.doc.on('update', onUpdate);
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    check();
  });
}

const runCellTool = defineTool({
  name: 'run_cell',
  description: 'Runs a code or SQL cell (and the cells that depend on it) on the kernel and waits for its result: state, duration and output previews, or the error.',
  parameters: {
    type: 'object',
    properties: { cell_id: CELL_ID, timeout_s: { type: 'number', minimum: 1, maximum: 300, description: 'How long to wait (default 30 s)' } },
    required: ['cell_id'],
    additionalProperties: false,
  },
  async run(ctx, a) {
    // A proposed cell, or a proposed edit of this cell, must be decided first: running before
    // that would run nothing, or the old code.
    const decisions = await awaitDecisions(ctx, `cell:${a.cell_id}`);
    const proposals = decisionsForModel(decisions);
    const notRun = (summary: string, error: string): ToolResult => ({ status: 'error', summary, content: JSON.stringify({ ok: false, ran: false, error, proposals }) });
    if (decisions.pending.length)
      return notRun(
        `not run: still waiting for a person to accept the proposal (${Math.round(ctx.decisionWaitMs / 1000)} s)`,
        `not run, no result: the proposal is still waiting for a person's Accept after ${Math.round(ctx.decisionWaitMs / 1000)} s. Do not state a result; tell the user that the result will come once they accept the card (and ask again).`,
      );
    if (!getCell(ctx.doc, a.cell_id)) {
      const create = decisions.decided.find((d) => d.proposal.action.type === 'create_cell');
      if (create)
        return notRun(
          `not run: the proposed cell was ${create.status}`,
          `not run, no result: ${create.outcome?.name ?? create.outcome?.by ?? 'a person'} ${create.status === 'dismissed' ? 'dismissed' : 'could not apply'} the proposed cell, so it does not exist. Do not state a result from it.`,
        );
    }
    const cell = requireCell(ctx, a.cell_id);
    if (cell.kind === 'markdown') throw new ToolRefusal('markdown cells do not run');
    ctx.presence.focus('notebook', cell.id);
    const requestId = requestRun(ctx.doc, cell.id, { id: 'agent', name: ctx.author.name }, ctx.origin);
    if (!requestId) throw new ToolRefusal('this cell cannot run');
    const timeoutMs = Math.min(ctx.maxRunWaitMs, (a.timeout_s ?? 30) * 1000);
    const outcome = await waitForRun(ctx, cell.id, requestId, timeoutMs);
    if (outcome === 'gone') return { status: 'error', summary: 'the cell was deleted', content: JSON.stringify({ ok: false, error: 'the cell was deleted while it ran' }) };
    const run = readCellRun(ctx.doc, cell.id);
    if (outcome === 'timeout')
      return { status: 'error', summary: `still ${run?.state ?? 'waiting'} after ${timeoutMs / 1000} s`, content: JSON.stringify({ ok: false, state: run?.state, error: `no result after ${timeoutMs / 1000} s (the kernel may be busy or the cell slow); it keeps running — check later with get_cell` }) };
    const outputs = (run?.outputs ?? []).map((o) => previewOutput(o, 1500));
    const state = run?.exec?.state ?? 'done';
    const err = run?.outputs.find((o) => o.type === 'error');
    const summary = state === 'done' ? `done in ${run?.exec?.durationMs ?? '?'} ms${outputs[0] ? `: ${outputs[0]}` : ''}` : `${state}${err && err.type === 'error' ? `: ${err.message}` : run?.exec?.reason ? `: ${run.exec.reason}` : ''}`;
    return {
      status: state === 'done' ? 'done' : 'error',
      summary,
      content: JSON.stringify({ ok: state === 'done', state, durationMs: run?.exec?.durationMs, count: run?.exec?.count, outputs, ...(run?.exec?.reason ? { reason: run.exec.reason } : {}), ...(proposals.length ? { proposals } : {}) }),
    };
  },
});

export const notebookTools: Tool[] = [getNotebookState, getCellTool, createCellTool, updateCellTool, replaceInCellTool, deleteCellTool, moveCellTool, runCellTool];
