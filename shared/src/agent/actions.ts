/**
 * Agent actions: the document changes the agent can make, as data. The agent applies them directly
 * (direct mode) or posts them as a **proposal** card in the chat; a person's Accept applies the
 * same action with that person's origin. Destructive actions always go through a proposal.
 * Pure module.
 *
 * A proposal lives in a chat message map: `proposal` (`Proposal`, written once by the agent) and
 * `outcome` (`ProposalOutcome`, written by whoever accepts or dismisses it).
 */
import type * as Y from 'yjs';
import { cellSource, cellText, createCell, deleteCell, getCell, isCellKind, listCells, moveCell, setCellSource, type CellKind } from '../cells.ts';
import { findMessageMap, postMessage, type ChatAuthor } from '../chat.ts';
import type { Json, JsonObject } from '../json.ts';
import type { Origin } from '../origin.ts';
import { getTable, unregisterTable } from '../notebook/data.ts';
import {
  addAnnotations, addLayer, layerNames, readCamera, readLayer, readViewerLayout, removeLayer, setCamera, setLayerProps, setShaderControl, setViewerLayout,
  type Camera, type NgLayer,
} from '../viewer/state-doc.ts';
import { saveNamedView } from '../viewer/views.ts';
import { readViewerState } from '../viewer/state-doc.ts';
import { applyTextHunks, planTextEdit, replacesMost } from './text-merge.ts';
import { readJob, type RoiEdit } from '../analysis/jobs.ts';
import { applyRoiEdit, findRoiLayer, jobRoiIds } from '../analysis/roi-view.ts';
import { getAtlasMap, saveAtlasCategory, setAtlasHighlight } from '../atlas/atlas.ts';

export type AgentAction =
  | { type: 'create_cell'; cellId: string; kind: CellKind; source: string; name?: string; after?: string | null }
  | { type: 'edit_cell'; cellId: string; base: string; proposed: string }
  | { type: 'delete_cell'; cellId: string; source: string }
  | { type: 'move_cell'; cellId: string; after: string | null }
  | { type: 'set_camera'; camera: Camera; before?: Camera; layout?: string; layoutBefore?: string | null }
  | { type: 'set_layer'; layer: string; props: Record<string, Json>; before?: Record<string, Json | null> }
  | { type: 'set_shader_control'; layer: string; control: string; value: Json; before?: Json | null }
  | { type: 'add_layer'; layer: NgLayer }
  | { type: 'remove_layer'; layer: string }
  | { type: 'add_annotations'; layer: string; annotations: JsonObject[] }
  | { type: 'save_view'; name: string }
  | { type: 'remove_table'; table: string }
  /** Delete, merge, reclassify or (`edit` null) restore an ROI of a finished calcium analysis. */
  | { type: 'edit_roi'; job: string; roi: number; edit: RoiChange | null }
  /** Highlight rows of an atlas map for everyone (or clear the highlight). */
  | { type: 'atlas_highlight'; map: string; rows: number[]; label: string }
  /** Save rows of an atlas map as a named category. */
  | { type: 'atlas_save'; map: string; category: string; rows: number[]; note: string; summary?: string };

/** What an `edit_roi` action does to the ROI (a `RoiEdit` without who and when). */
export type RoiChange = { action: 'delete' } | { action: 'merge'; into: number } | { action: 'classify'; cell: boolean };

export type AgentActionType = AgentAction['type'];

/** Result of applying an action. */
export interface ActionResult {
  ok: boolean;
  /** What happened, for people and for the model. */
  message: string;
  /** The target changed (`cell:<id>`, `layer:<name>`, ...), for the audit. */
  target: string;
  /** Ids created (cells, annotations, views). */
  ids?: string[];
  /** Edits that could not be applied because somebody changed the same text since. */
  conflicts?: number;
}

/** Why an action is destructive (needs a person's Accept whatever the mode), or null. */
export function destructiveReason(doc: Y.Doc, a: AgentAction): string | null {
  switch (a.type) {
    case 'delete_cell':
      return 'deletes a cell';
    case 'remove_layer':
      return 'removes a viewer layer';
    case 'remove_table':
      return 'removes a data table';
    case 'edit_cell': {
      const cell = getCell(doc, a.cellId);
      if (!cell) return null;
      const current = cellSource(cell);
      return replacesMost(current, planTextEdit(a.base, current, a.proposed)) ? 'replaces most of a cell' : null;
    }
    default:
      return null;
  }
}

/** The thing an action changes, for audit entries. */
export function actionTarget(a: AgentAction): string {
  switch (a.type) {
    case 'create_cell':
    case 'edit_cell':
    case 'delete_cell':
    case 'move_cell':
      return `cell:${a.cellId}`;
    case 'set_camera':
      return 'viewer:camera';
    case 'set_layer':
    case 'set_shader_control':
    case 'remove_layer':
    case 'add_annotations':
      return `layer:${a.layer}`;
    case 'add_layer':
      return `layer:${a.layer.name}`;
    case 'save_view':
      return `view:${a.name}`;
    case 'remove_table':
      return `table:${a.table}`;
    case 'edit_roi':
      return `roi:${a.job}/${a.roi}`;
    case 'atlas_highlight':
      return `atlas:${a.map}`;
    case 'atlas_save':
      return `atlas:${a.map}/${a.category}`;
  }
}

/** "delete ROI 7", "merge ROI 7 into ROI 3", "mark ROI 7 as a cell", "restore ROI 7". */
export function describeRoiChange(roi: number, edit: RoiChange | null): string {
  if (!edit) return `restore ROI ${roi}`;
  if (edit.action === 'delete') return `delete ROI ${roi}`;
  if (edit.action === 'merge') return `merge ROI ${roi} into ROI ${edit.into}`;
  return `mark ROI ${roi} as ${edit.cell ? 'a cell' : 'not a cell'}`;
}

/** One-line description of an action (card titles, audit). */
export function describeAction(a: AgentAction): string {
  switch (a.type) {
    case 'create_cell':
      return `new ${a.kind} cell${a.name ? ` "${a.name}"` : ''} (${a.source.split('\n').length} lines)`;
    case 'edit_cell':
      return `edit cell ${a.cellId}`;
    case 'delete_cell':
      return `delete cell ${a.cellId}`;
    case 'move_cell':
      return `move cell ${a.cellId}`;
    case 'set_camera':
      return `move the view (${[...Object.keys(a.camera), ...(a.layout ? [`layout ${a.layout}`] : [])].join(', ')})`;
    case 'set_layer':
      return `change layer "${a.layer}" (${Object.keys(a.props).join(', ')})`;
    case 'set_shader_control':
      return `set ${a.control} of layer "${a.layer}" to ${JSON.stringify(a.value)}`;
    case 'add_layer':
      return `add layer "${a.layer.name}"`;
    case 'remove_layer':
      return `remove layer "${a.layer}"`;
    case 'add_annotations':
      return `add ${a.annotations.length} annotation${a.annotations.length === 1 ? '' : 's'} to "${a.layer}"`;
    case 'save_view':
      return `save the view as "${a.name}"`;
    case 'remove_table':
      return `remove table "${a.table}"`;
    case 'edit_roi':
      return `${describeRoiChange(a.roi, a.edit)} of analysis ${a.job}`;
    case 'atlas_highlight':
      return a.rows.length ? `highlight ${a.rows.length} row${a.rows.length === 1 ? '' : 's'} on the map (${a.label})` : 'clear the highlight on the map';
    case 'atlas_save':
      return `save ${a.rows.length} row${a.rows.length === 1 ? '' : 's'} as category "${a.category}"`;
  }
}

/**
 * Applies an action with `origin` (the agent's in direct mode, the accepting person's for a
 * proposal). `remove_table` only unregisters the table here: deleting its stored file is the
 * server's job (the client calls the data API instead). Never throws for a stale target: the
 * result says what happened.
 */
export function applyAction(doc: Y.Doc, a: AgentAction, origin: Origin, author = 'agent', authorName?: string): ActionResult {
  const target = actionTarget(a);
  const fail = (message: string): ActionResult => ({ ok: false, message, target });
  try {
    switch (a.type) {
      case 'create_cell': {
        if (!isCellKind(a.kind)) return fail(`unknown cell kind "${String(a.kind)}"`);
        if (getCell(doc, a.cellId)) return { ok: true, message: `cell ${a.cellId} exists already`, target, ids: [a.cellId] };
        const after = a.after === undefined ? undefined : a.after;
        const id = createCell(
          doc,
          { id: a.cellId as never, kind: a.kind, source: a.source, author, ...(a.name ? { name: a.name } : {}), ...(after !== undefined ? { position: { after: after as never } } : {}) },
          origin,
        );
        return { ok: true, message: `created ${a.kind} cell ${id}`, target, ids: [id] };
      }
      case 'edit_cell': {
        const cell = getCell(doc, a.cellId);
        if (!cell) return fail(`cell ${a.cellId} no longer exists`);
        const text = cellText(cell);
        const current = cellSource(cell);
        const plan = planTextEdit(a.base, current, a.proposed);
        if (plan.hunks.length === 0 && plan.conflicts.length > 0) return { ...fail('the cell was changed in the same places since; nothing applied'), conflicts: plan.conflicts.length };
        if (text) doc.transact(() => applyTextHunks(text, plan.hunks), origin);
        else if (plan.conflicts.length === 0) setCellSource(doc, a.cellId, a.proposed, origin);
        else return { ...fail('the markdown cell was changed since; nothing applied'), conflicts: plan.conflicts.length };
        const c = plan.conflicts.length;
        return { ok: true, message: `edited cell ${a.cellId} (+${plan.insertedChars} −${plan.deletedChars} chars${c ? `, ${c} conflicting change${c === 1 ? '' : 's'} skipped` : ''})`, target, conflicts: c };
      }
      case 'delete_cell':
        return deleteCell(doc, a.cellId, origin) ? { ok: true, message: `deleted cell ${a.cellId}`, target } : fail(`cell ${a.cellId} no longer exists`);
      case 'move_cell': {
        if (a.after !== null && !getCell(doc, a.after)) return fail(`cell ${a.after} does not exist`);
        return moveCell(doc, a.cellId, { after: a.after as never }, origin) ? { ok: true, message: `moved cell ${a.cellId}`, target } : fail(`cell ${a.cellId} no longer exists`);
      }
      case 'set_camera':
        doc.transact(() => {
          setCamera(doc, a.camera, origin);
          if (a.layout) setViewerLayout(doc, a.layout, origin);
        }, origin);
        return { ok: true, message: a.layout && !Object.keys(a.camera).length ? `set the layout to ${a.layout}` : `moved the view${a.layout ? ` (layout ${a.layout})` : ''}`, target };
      case 'set_layer':
        setLayerProps(doc, a.layer, a.props, origin);
        return { ok: true, message: `changed layer "${a.layer}"`, target };
      case 'set_shader_control':
        setShaderControl(doc, a.layer, a.control, a.value, origin);
        return { ok: true, message: `set ${a.control} of "${a.layer}"`, target };
      case 'add_layer':
        addLayer(doc, a.layer, origin);
        return { ok: true, message: `added layer "${a.layer.name}"`, target };
      case 'remove_layer':
        if (!layerNames(doc).includes(a.layer)) return fail(`no layer named "${a.layer}"`);
        removeLayer(doc, a.layer, origin);
        return { ok: true, message: `removed layer "${a.layer}"`, target };
      case 'add_annotations': {
        const ids = addAnnotations(doc, a.layer, a.annotations, origin);
        return { ok: true, message: `added ${ids.length} annotations to "${a.layer}"`, target, ids };
      }
      case 'save_view': {
        const id = saveNamedView(doc, a.name, readViewerState(doc), author, origin);
        return { ok: true, message: `saved view "${a.name}"`, target, ids: [id] };
      }
      case 'remove_table':
        if (!getTable(doc, a.table)) return fail(`no table named "${a.table}"`);
        unregisterTable(doc, a.table, origin);
        return { ok: true, message: `removed table "${a.table}"`, target };
      case 'edit_roi': {
        const job = readJob(doc, a.job);
        if (!job || job.kind !== 'calcium' || job.status !== 'done') return fail(`"${a.job}" is not a finished calcium analysis`);
        const ids = jobRoiIds(job);
        if (!ids.includes(a.roi)) return fail(`analysis ${a.job} has ROIs 1–${ids.length}; there is no ROI ${a.roi}`);
        if (a.edit?.action === 'merge' && (a.edit.into === a.roi || !ids.includes(a.edit.into))) return fail(`ROI ${a.roi} can only be merged into another ROI of analysis ${a.job}`);
        const stamp = { by: author, ...(authorName ? { name: authorName } : {}), at: Date.now() };
        applyRoiEdit(doc, a.job, findRoiLayer(doc, job), a.roi, a.edit ? ({ ...a.edit, ...stamp } as RoiEdit) : null, ids, origin);
        return { ok: true, message: describeRoiChange(a.roi, a.edit), target };
      }
      case 'atlas_highlight': {
        if (!getAtlasMap(doc, a.map)) return fail(`there is no map "${a.map}"`);
        const stamp = { by: author, ...(authorName ? { name: authorName } : {}), at: Date.now() };
        setAtlasHighlight(doc, a.map, a.rows.length ? { rows: a.rows, label: a.label, ...stamp } : null, origin);
        return { ok: true, message: describeAction(a), target };
      }
      case 'atlas_save': {
        if (!getAtlasMap(doc, a.map)) return fail(`there is no map "${a.map}"`);
        const stamp = { by: author, ...(authorName ? { name: authorName } : {}), at: Date.now() };
        saveAtlasCategory(doc, a.map, a.category, { rows: a.rows, note: a.note, ...(a.summary ? { summary: a.summary } : {}), ...stamp }, origin);
        return { ok: true, message: describeAction(a), target };
      }
    }
  } catch (e) {
    return fail((e as Error).message);
  }
}

/** What a viewer action changes, before it changes it (for before/after cards). */
export function viewerBefore(doc: Y.Doc, a: AgentAction): AgentAction {
  if (a.type === 'set_camera') {
    const cam = readCamera(doc);
    const before: Camera = {};
    for (const k of Object.keys(a.camera) as Array<keyof Camera>) before[k] = cam[k] ?? null;
    return { ...a, before, ...(a.layout ? { layoutBefore: readViewerLayout(doc) } : {}) };
  }
  if (a.type === 'set_layer') {
    const layer = readLayer(doc, a.layer);
    const before: Record<string, Json | null> = {};
    for (const k of Object.keys(a.props)) before[k] = (layer?.[k] as Json | undefined) ?? null;
    return { ...a, before };
  }
  if (a.type === 'set_shader_control') {
    const controls = readLayer(doc, a.layer)?.shaderControls;
    const v = controls && typeof controls === 'object' && !Array.isArray(controls) ? (controls as JsonObject)[a.control] : undefined;
    return { ...a, before: v ?? null };
  }
  return a;
}

// ---------------------------------------------------------------------------------------------
// proposals

export interface Proposal {
  runId: string;
  action: AgentAction;
  /** One line shown as the card's title. */
  title: string;
  /** Why the agent proposes it (from the model), short. */
  why?: string;
  /** Set when the action is destructive: why it needed an Accept. */
  destructive?: string;
}

export type ProposalStatus = 'pending' | 'accepted' | 'dismissed' | 'failed';
export interface ProposalOutcome {
  status: Exclude<ProposalStatus, 'pending'>;
  by: string;
  name?: string;
  at: number;
  message: string;
}

export interface ProposalView {
  messageId: string;
  proposal: Proposal;
  outcome: ProposalOutcome | null;
  status: ProposalStatus;
}

/** Posts a proposal card (the agent) as a chat message answering `replyTo`. Returns its id. */
export function postProposal(doc: Y.Doc, p: { author: ChatAuthor; replyTo?: string; proposal: Proposal }, origin: Origin): string {
  return postMessage(
    doc,
    { author: p.author, text: `Proposal: ${p.proposal.title}`, runId: p.proposal.runId, ...(p.replyTo ? { replyTo: p.replyTo as never } : {}), extra: { proposal: p.proposal } },
    origin,
  );
}

/** Reads the proposal of a message, if it carries one. */
export function readProposal(doc: Y.Doc, messageId: string): ProposalView | null {
  const m = findMessageMap(doc, messageId);
  return m ? proposalOf(m, messageId) : null;
}

/** The proposal in a message map, if any. */
export function proposalOf(m: Y.Map<unknown>, messageId = String(m.get('id'))): ProposalView | null {
  const p = m.get('proposal') as Proposal | undefined;
  if (!p || typeof p !== 'object' || !p.action) return null;
  const o = m.get('outcome') as ProposalOutcome | undefined;
  const outcome = o && typeof o === 'object' ? o : null;
  return { messageId, proposal: p, outcome, status: outcome?.status ?? 'pending' };
}

/**
 * Accepts a pending proposal as `who`: applies its action with `origin` (that person's) and
 * records the outcome in the same transaction, so everyone sees the card resolve with the change.
 * Removing a table is only recorded here; the caller deletes it through the data API first.
 */
export function acceptProposal(doc: Y.Doc, messageId: string, who: { id: string; name?: string }, origin: Origin): ProposalOutcome | null {
  const m = findMessageMap(doc, messageId);
  const view = m && proposalOf(m, messageId);
  if (!m || !view || view.outcome) return view?.outcome ?? null;
  let outcome: ProposalOutcome | null = null;
  doc.transact(() => {
    const r = applyAction(doc, view.proposal.action, origin, who.id, who.name);
    outcome = { status: r.ok ? 'accepted' : 'failed', by: who.id, ...(who.name ? { name: who.name } : {}), at: Date.now(), message: r.message };
    m.set('outcome', outcome);
  }, origin);
  return outcome;
}

/**
 * Records the outcome of a proposal whose action was carried out elsewhere (e.g. a data API call).
 * Does nothing (returns false) when the proposal already has one.
 */
export function recordProposalOutcome(doc: Y.Doc, messageId: string, outcome: ProposalOutcome, origin: Origin): boolean {
  const m = findMessageMap(doc, messageId);
  const view = m && proposalOf(m, messageId);
  if (!m || !view || view.outcome) return false;
  doc.transact(() => m.set('outcome', outcome), origin);
  return true;
}

/** Dismisses a pending proposal. */
export function dismissProposal(doc: Y.Doc, messageId: string, who: { id: string; name?: string }, origin: Origin): boolean {
  const m = findMessageMap(doc, messageId);
  const view = m && proposalOf(m, messageId);
  if (!m || !view || view.outcome) return false;
  const outcome: ProposalOutcome = { status: 'dismissed', by: who.id, ...(who.name ? { name: who.name } : {}), at: Date.now(), message: 'dismissed' };
  doc.transact(() => m.set('outcome', outcome), origin);
  return true;
}

/** Pending proposals of a run (the agent waits on them or reports them). */
export function proposalsOfRun(doc: Y.Doc, runId: string): ProposalView[] {
  const out: ProposalView[] = [];
  for (const m of doc.getArray<Y.Map<unknown>>('chat').toArray()) {
    const v = m && typeof (m as Y.Map<unknown>).get === 'function' ? proposalOf(m) : null;
    if (v && v.proposal.runId === runId) out.push(v);
  }
  return out;
}

/** Proposals still waiting for a person whose action targets `target` (`cell:<id>`, `layer:<name>`, …), oldest first. */
export function pendingProposalsFor(doc: Y.Doc, target: string): ProposalView[] {
  return pendingProposals(doc).filter((v) => actionTarget(v.proposal.action) === target);
}

/** Every proposal still waiting for a person, oldest first. */
export function pendingProposals(doc: Y.Doc): ProposalView[] {
  const out: ProposalView[] = [];
  for (const m of doc.getArray<Y.Map<unknown>>('chat').toArray()) {
    const v = m && typeof (m as Y.Map<unknown>).get === 'function' ? proposalOf(m) : null;
    if (v && v.status === 'pending') out.push(v);
  }
  return out;
}

/** Cells in order with their ids (for action validation in tools). */
export const cellIds = (doc: Y.Doc): string[] => listCells(doc).map((c) => c.id);
