/**
 * Forks and hand-outs: a fork is a copy of a workspace (now, or at a checkpoint) that its forker
 * owns; a teacher's hand-out link gives each student who opens it a fork of their own, and the
 * teacher's workspace (the source) shows a roster of those forks — whether their cells ran, the
 * last error, a raised hand — written by the server as the forks change. Pure module.
 *
 * | where | key | written by | value |
 * |---|---|---|---|
 * | `meta` | `forkedFrom` | the server, once, when it forks | `ForkOrigin` |
 * | `classroom` | `hand` | the fork's people | `RaisedHand` (absent: the hand is down) |
 * | `classroom` | `roster` | the server | Y.Map fork id → `RosterEntry` (in a hand-out's source) |
 *
 * A fork never copies "running": `settleForFork` turns what was in flight in the copied state
 * (queued and running cells, unacknowledged run requests and kernel commands, agent runs, streaming
 * messages, analysis jobs, maps being computed) into finished or waiting states, keeping outputs.
 */
import { listCheckpoints, removeCheckpoints } from '../history/checkpoints.ts';
import * as Y from 'yjs';
import type { Origin } from '../origin.ts';
import { roots } from '../schema.ts';
import { listCells } from '../cells.ts';
import { isRunnableCell } from '../notebook/jupyter.ts';
import {
  KERNEL_COMMANDS, abandonKernelMarks, ackRequest, readAck, readCommand, readExec, readKernelStatus, readOutputs, readPending,
  readRunRequest, writeKernelStatus,
} from '../notebook/runs.ts';
import { finishActivity, finishRun, listRuns } from '../agent/runs.ts';
import { listPlanSteps, updatePlanStep } from '../agent/plans.ts';
import { listMessages, setMessageStatus } from '../chat.ts';
import { listJobs, updateJob } from '../analysis/jobs.ts';
import { listAtlasMaps, setAtlasCoords } from '../atlas/atlas.ts';

/** Where a fork was copied from (`meta.forkedFrom`). */
export interface ForkOrigin {
  /** The source workspace's id and its name at the time. */
  workspace: string;
  name: string;
  at: number;
  /** Who forked (a presence id: `<token subject>/<device>`), and their name. */
  by: { id: string; name?: string };
  /** The checkpoint it was copied from (absent: the source as it stood). */
  checkpoint?: string;
  /** Made through a hand-out link: the source's owner sees it on the roster and may open it. */
  handout?: boolean;
}

/** A student's raised hand, in their fork (`classroom.hand`). */
export interface RaisedHand {
  by: string;
  name?: string;
  at: number;
}

export interface RosterCells {
  /** Code and SQL cells Plexus runs. */
  total: number;
  /** Those with a finished run (done, error or cancelled). */
  ran: number;
  ok: number;
  errors: number;
  /** Queued or running now. */
  running: number;
}

/** The most recent error among the cells that are in error now. */
export interface RosterError {
  cellId: string;
  /** The cell's position in the notebook, from 1. */
  index: number;
  message: string;
  at: number;
}

/** One fork of a hand-out, as its source's roster shows it (`classroom.roster/<fork>`). */
export interface RosterEntry {
  fork: string;
  /** The student: a presence id (`link:handout/<device>`) and the name they gave. */
  student: { id: string; name?: string };
  created: number;
  cells: RosterCells;
  lastError: RosterError | null;
  hand: RaisedHand | null;
  /** Last change anyone made in the fork (to `ROSTER_ACTIVITY_MS`). */
  active: number;
  updated: number;
}

/** Longest error message a roster entry keeps. */
export const MAX_ROSTER_MESSAGE = 300;
/** How precisely a roster entry follows activity alone: a change that moves only `active` is written at most this often. */
export const ROSTER_ACTIVITY_MS = 10_000;

const isObj = <T>(v: unknown, key: string): v is T => !!v && typeof v === 'object' && key in (v as object);

// ---------------------------------------------------------------------------------------------
// fork origin (server)

export function readForkedFrom(doc: Y.Doc): ForkOrigin | null {
  const v = roots(doc).meta.get('forkedFrom');
  return isObj<ForkOrigin>(v, 'workspace') && typeof v.workspace === 'string' ? v : null;
}

/** Server: records where a new fork came from. */
export function setForkedFrom(doc: Y.Doc, origin: ForkOrigin, by: Origin): void {
  const v: ForkOrigin = { ...origin, name: origin.name.slice(0, 200) };
  if (v.checkpoint === undefined) delete v.checkpoint;
  if (v.handout === undefined) delete v.handout;
  if (v.by.name === undefined) v.by = { id: v.by.id };
  doc.transact(() => roots(doc).meta.set('forkedFrom', v), by);
}

// ---------------------------------------------------------------------------------------------
// raised hand (people of the fork)

const classroom = (doc: Y.Doc) => roots(doc).classroom;

export function readHand(doc: Y.Doc): RaisedHand | null {
  const v = classroom(doc).get('hand');
  return isObj<RaisedHand>(v, 'by') && typeof v.at === 'number' ? v : null;
}

/** Raises (a hand) or lowers (null) the hand of a fork. */
export function setHand(doc: Y.Doc, hand: RaisedHand | null, origin: Origin): void {
  const c = classroom(doc);
  doc.transact(() => {
    if (hand) c.set('hand', { by: hand.by, at: hand.at, ...(hand.name ? { name: hand.name.slice(0, 200) } : {}) });
    else if (c.has('hand')) c.delete('hand');
  }, origin);
}

// ---------------------------------------------------------------------------------------------
// roster (server; read by everyone who sees the source)

function rosterMap(doc: Y.Doc): Y.Map<unknown> | null {
  const r = classroom(doc).get('roster');
  return r instanceof Y.Map ? r : null;
}

const isEntry = (v: unknown): v is RosterEntry => isObj<RosterEntry>(v, 'fork') && typeof v.fork === 'string' && isObj(v.cells, 'total');

/** Every fork on the roster, the earliest first. */
export function listRoster(doc: Y.Doc): RosterEntry[] {
  const out: RosterEntry[] = [];
  rosterMap(doc)?.forEach((v) => isEntry(v) && out.push(v));
  return out.sort((a, b) => a.created - b.created || (a.fork < b.fork ? -1 : 1));
}

export function getRosterEntry(doc: Y.Doc, fork: string): RosterEntry | null {
  const v = rosterMap(doc)?.get(fork);
  return isEntry(v) ? v : null;
}

/** Server: writes (or replaces) a fork's roster entry. */
export function setRosterEntry(doc: Y.Doc, entry: RosterEntry, origin: Origin): void {
  doc.transact(() => {
    let r = rosterMap(doc);
    if (!r) {
      r = new Y.Map<unknown>();
      classroom(doc).set('roster', r);
    }
    r.set(entry.fork, entry);
  }, origin);
}

/** Server: takes a fork off the roster (it was deleted). */
export function removeRosterEntry(doc: Y.Doc, fork: string, origin: Origin): boolean {
  const r = rosterMap(doc);
  if (!r?.has(fork)) return false;
  doc.transact(() => r.delete(fork), origin);
  return true;
}

/** Calls `f` when the roster changes; returns the unsubscribe function. */
export function observeClassroom(doc: Y.Doc, f: () => void): () => void {
  const c = classroom(doc);
  const h = () => f();
  c.observeDeep(h);
  return () => c.unobserveDeep(h);
}

/** What a fork's roster entry says of its cells and hand (everything but who and when). */
export function rosterStatus(doc: Y.Doc): Pick<RosterEntry, 'cells' | 'lastError' | 'hand'> {
  const cells: RosterCells = { total: 0, ran: 0, ok: 0, errors: 0, running: 0 };
  let lastError: RosterError | null = null;
  const all = listCells(doc);
  for (let i = 0; i < all.length; i++) {
    const cell = all[i]!;
    if (!isRunnableCell(cell)) continue;
    cells.total++;
    const exec = readExec(cell);
    if (readPending(cell) || exec?.state === 'running') cells.running++;
    if (!exec || exec.state === 'running') continue;
    cells.ran++;
    if (exec.state === 'done') cells.ok++;
    if (exec.state !== 'error') continue;
    cells.errors++;
    const at = exec.endedAt ?? exec.startedAt ?? 0;
    if (lastError && lastError.at > at) continue;
    const err = readOutputs(cell).find((o) => o.type === 'error');
    const message = err && err.type === 'error' ? `${err.name}: ${err.message}` : (exec.reason ?? 'error');
    lastError = { cellId: cell.id, index: i + 1, message: message.slice(0, MAX_ROSTER_MESSAGE), at };
  }
  return { cells, lastError, hand: readHand(doc) };
}

/**
 * Whether `next` says something `prev` does not: anything but `updated`, and `active` only once it
 * moved by `ROSTER_ACTIVITY_MS` (typing alone does not rewrite the roster on every keystroke).
 */
export function rosterEntryChanged(prev: RosterEntry | null, next: RosterEntry): boolean {
  if (!prev) return true;
  const strip = ({ updated: _u, active: _a, ...rest }: RosterEntry) => JSON.stringify(rest);
  return strip(prev) !== strip(next) || next.active - prev.active >= ROSTER_ACTIVITY_MS;
}

// ---------------------------------------------------------------------------------------------
// settling a copied state (server, before a fork is stored)

/**
 * Makes a copied document a fork that runs nothing by itself: cells queued or running become
 * cancelled with `reason` (their last outputs kept, so they show stale), run requests and kernel
 * commands not yet handled count as handled, the kernel shows offline, agent runs in progress end
 * stopped (their running steps and tool calls too), streaming messages stop, analysis jobs in
 * progress end stopped and maps being computed wait to be computed again (the fork's server does
 * that). The source's roster and raised hand are not the fork's: they go.
 */
export function settleForFork(doc: Y.Doc, reason: string, origin: Origin): void {
  doc.transact(() => {
    for (const cell of listCells(doc)) {
      abandonKernelMarks(doc, cell, reason, origin);
      const req = readRunRequest(cell);
      if (req && readAck(cell) !== req.id) ackRequest(doc, cell, req.id, origin);
    }
    const status = readKernelStatus(doc);
    const handled = { ...status.handled };
    let commands = false;
    for (const key of KERNEL_COMMANDS) {
      const c = readCommand(doc, key);
      if (c) (handled[key] = c.id), (commands = true);
    }
    if (commands || status.updatedAt > 0) writeKernelStatus(doc, { ...status, state: 'offline', current: null, queue: [], handled, updatedAt: Date.now() }, origin);
    for (const run of listRuns(doc)) {
      if (run.status !== 'queued' && run.status !== 'running') continue;
      for (const a of run.activity) if (a.status === 'running') finishActivity(doc, run.id, a.id, 'error', reason, origin);
      for (const s of listPlanSteps(doc, run.id)) if (s.status === 'running' || s.status === 'verifying') updatePlanStep(doc, run.id, s.id, { status: 'skipped', reason }, origin);
      finishRun(doc, run.id, 'stopped', reason, origin);
    }
    for (const m of listMessages(doc)) if (m.status === 'streaming') setMessageStatus(doc, m.id, 'stopped', origin);
    for (const j of listJobs(doc)) if (j.status === 'queued' || j.status === 'running') updateJob(doc, j.id, { status: 'stopped', error: reason }, origin);
    for (const m of listAtlasMaps(doc)) {
      if (m.coords?.status !== 'running') continue;
      const { progress: _p, ...rest } = m.coords;
      setAtlasCoords(doc, m.id, { ...rest, status: 'queued', at: Date.now() }, origin);
    }
    // The source's checkpoints are stored for the source: a fork starts its own history.
    const checkpoints = listCheckpoints(doc).map((r) => r.id);
    if (checkpoints.length) removeCheckpoints(doc, checkpoints, origin);
    const c = classroom(doc);
    if (c.has('roster')) c.delete('roster');
    if (c.has('hand')) c.delete('hand');
  }, origin);
}
