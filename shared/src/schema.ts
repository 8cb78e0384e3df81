/**
 * The workspace document: one Y.Doc per workspace with these roots. Versioned: `meta.schemaVersion`
 * says which layout a document has and `migrate` brings older documents forward.
 * Every root, record and key, with its type and who may write it, is declared (and enforced) in
 * doc-schema/workspace-schema.ts; this table is the overview.
 * Pure module.
 *
 * | root     | type               | content                                                      |
 * |----------|--------------------|--------------------------------------------------------------|
 * | meta     | Y.Map              | schemaVersion, title, created, settings (Y.Map)               |
 * | cells    | Y.Map<id, Y.Map>   | cells keyed by id; order is a fractional key on each cell     |
 * | viewer   | Y.Map (+ viewerLayers, viewerViews) | Neuroglancer state, mapped granularly (viewer/) |
 * | chat     | Y.Array<Y.Map>     | messages: id, author, text (Y.Text), created, status          |
 * | runs     | Y.Map<id, Y.Map>   | agent runs (agent/runs.ts)                                    |
 * | data     | Y.Map<name, object>| registry of uploaded tables (notebook/data.ts)                 |
 * | kernel   | Y.Map              | kernel commands and status (notebook/runs.ts)                 |
 * | jobs     | Y.Map<id, Y.Map>   | long analyses run by the server (analysis/jobs.ts)            |
 * | checkpoints | Y.Map<id, object> | records of stored checkpoints (history/checkpoints.ts)     |
 * | classroom | Y.Map            | a fork's raised hand, a hand-out's roster of forks (forks/forks.ts) |
 */
import * as Y from 'yjs';
import type { Origin } from './origin.ts';
import { applyTextDiff } from './text-diff.ts';

/** Current layout version written into `meta.schemaVersion`. */
export const SCHEMA_VERSION = 1;

export const ROOTS = {
  meta: 'meta',
  cells: 'cells',
  viewer: 'viewer',
  chat: 'chat',
  runs: 'runs',
  data: 'data',
  kernel: 'kernel',
  jobs: 'jobs',
  library: 'library',
  atlas: 'atlas',
  checkpoints: 'checkpoints',
  classroom: 'classroom',
} as const;

/** Typed access to the roots of a workspace document (creating a root is free and idempotent). */
export function roots(doc: Y.Doc) {
  return {
    meta: doc.getMap<unknown>(ROOTS.meta),
    cells: doc.getMap<Y.Map<unknown>>(ROOTS.cells),
    viewer: doc.getMap<unknown>(ROOTS.viewer),
    chat: doc.getArray<Y.Map<unknown>>(ROOTS.chat),
    runs: doc.getMap<Y.Map<unknown>>(ROOTS.runs),
    data: doc.getMap<unknown>(ROOTS.data),
    kernel: doc.getMap<unknown>(ROOTS.kernel),
    jobs: doc.getMap<Y.Map<unknown>>(ROOTS.jobs),
    library: doc.getMap<unknown>(ROOTS.library),
    atlas: doc.getMap<Y.Map<unknown>>(ROOTS.atlas),
    checkpoints: doc.getMap<unknown>(ROOTS.checkpoints),
    classroom: doc.getMap<unknown>(ROOTS.classroom),
  };
}

/** Settings every workspace has; stored in `meta.settings`. */
export interface WorkspaceSettings {
  /** Whether the agent edits directly or proposes changes. */
  agentMode: 'direct' | 'propose';
  /** The Neuroglancer host that exported state links open on. */
  neuroglancerHost: string;
  /** Whether the agent's analysis plan waits for a person's Go (assumptions editable) or starts at once. */
  planApproval: 'wait' | 'auto';
}
export const DEFAULT_SETTINGS: WorkspaceSettings = { agentMode: 'propose', neuroglancerHost: 'https://neuroglancer-demo.appspot.com/', planApproval: 'auto' };

/**
 * Writes the meta of a brand-new workspace. Call once, on the server, when the workspace is
 * created: two replicas initialising meta concurrently would each win some keys.
 */
export function initWorkspace(doc: Y.Doc, init: { title: string; created?: number }, origin: Origin): void {
  const { meta } = roots(doc);
  doc.transact(() => {
    meta.set('schemaVersion', SCHEMA_VERSION);
    meta.set('title', init.title);
    meta.set('created', init.created ?? Date.now());
    const settings = new Y.Map<unknown>();
    for (const [k, v] of Object.entries(DEFAULT_SETTINGS)) settings.set(k, v);
    meta.set('settings', settings);
  }, origin);
}

/** The schema version of a document (0 when it was never initialised). */
export function schemaVersion(doc: Y.Doc): number {
  const v = roots(doc).meta.get('schemaVersion');
  return typeof v === 'number' ? v : 0;
}

/** Raised when a document was written by a newer Plexus than this one. */
export class SchemaTooNewError extends Error {
  constructor(readonly found: number) {
    super(`workspace schema version ${found} is newer than this Plexus (${SCHEMA_VERSION}); upgrade Plexus`);
  }
}

/**
 * Brings a document to SCHEMA_VERSION. Runs on the server after load (one writer), so
 * migrations never race. Returns true when it changed the document.
 */
export function migrate(doc: Y.Doc, origin: Origin): boolean {
  const found = schemaVersion(doc);
  if (found > SCHEMA_VERSION) throw new SchemaTooNewError(found);
  if (found === SCHEMA_VERSION) return false;
  // Version 0 -> 1: documents created before meta existed get a title and settings.
  const { meta } = roots(doc);
  doc.transact(() => {
    if (typeof meta.get('title') !== 'string') meta.set('title', 'Untitled workspace');
    if (typeof meta.get('created') !== 'number') meta.set('created', Date.now());
    if (!(meta.get('settings') instanceof Y.Map)) {
      const settings = new Y.Map<unknown>();
      for (const [k, v] of Object.entries(DEFAULT_SETTINGS)) settings.set(k, v);
      meta.set('settings', settings);
    }
    meta.set('schemaVersion', SCHEMA_VERSION);
  }, origin);
  return true;
}

/** The workspace title. */
export function getTitle(doc: Y.Doc): string {
  const t = roots(doc).meta.get('title');
  return typeof t === 'string' ? t : 'Untitled workspace';
}

/** Calls `onTitle` whenever the workspace title changes; returns the unsubscribe function. */
export function observeTitle(doc: Y.Doc, onTitle: (title: string) => void): () => void {
  const { meta } = roots(doc);
  const handler = (e: Y.YMapEvent<unknown>) => {
    if (!e.keysChanged.has('title')) return;
    const t = meta.get('title');
    if (typeof t === 'string') onTitle(t);
  };
  meta.observe(handler);
  return () => meta.unobserve(handler);
}

/** Renames the workspace. */
export function setTitle(doc: Y.Doc, title: string, origin: Origin): void {
  const clean = title.trim().slice(0, 200);
  if (!clean) throw new Error('title must not be empty');
  doc.transact(() => roots(doc).meta.set('title', clean), origin);
}

/** Reads the workspace settings, filling defaults. */
export function getSettings(doc: Y.Doc): WorkspaceSettings {
  const s = roots(doc).meta.get('settings');
  const out = { ...DEFAULT_SETTINGS };
  if (s instanceof Y.Map) {
    const mode = s.get('agentMode');
    if (mode === 'direct' || mode === 'propose') out.agentMode = mode;
    const host = s.get('neuroglancerHost');
    if (typeof host === 'string' && /^https?:\/\/\S+$/.test(host)) out.neuroglancerHost = host;
    const approval = s.get('planApproval');
    if (approval === 'wait' || approval === 'auto') out.planApproval = approval;
  }
  return out;
}

/** Longest agent instructions kept. */
export const MAX_INSTRUCTIONS_CHARS = 4000;

/** The workspace's agent instructions (everyone sees and edits them; part of every agent prompt). */
export function getAgentInstructions(doc: Y.Doc): string {
  const s = roots(doc).meta.get('settings');
  const t = s instanceof Y.Map ? s.get('agentInstructions') : null;
  return t instanceof Y.Text ? t.toString().slice(0, MAX_INSTRUCTIONS_CHARS) : '';
}

/** The shared text of the agent instructions, created on first use (editors bind to it). */
export function agentInstructionsText(doc: Y.Doc, origin: Origin): Y.Text {
  const { meta } = roots(doc);
  let s = meta.get('settings');
  let t = s instanceof Y.Map ? s.get('agentInstructions') : null;
  if (t instanceof Y.Text) return t;
  doc.transact(() => {
    if (!(s instanceof Y.Map)) {
      s = new Y.Map<unknown>();
      meta.set('settings', s);
    }
    t = new Y.Text();
    (s as Y.Map<unknown>).set('agentInstructions', t);
  }, origin);
  return t as Y.Text;
}

/** Replaces the agent instructions with a minimal diff (concurrent edits merge). */
export function setAgentInstructions(doc: Y.Doc, text: string, origin: Origin): void {
  const t = agentInstructionsText(doc, origin);
  doc.transact(() => applyTextDiff(t, text.slice(0, MAX_INSTRUCTIONS_CHARS)), origin);
}

/** Changes one workspace setting. */
export function setSetting<K extends keyof WorkspaceSettings>(
  doc: Y.Doc,
  key: K,
  value: WorkspaceSettings[K],
  origin: Origin,
): void {
  const { meta } = roots(doc);
  doc.transact(() => {
    let s = meta.get('settings');
    if (!(s instanceof Y.Map)) {
      s = new Y.Map<unknown>();
      meta.set('settings', s);
    }
    (s as Y.Map<unknown>).set(key, value);
  }, origin);
}
