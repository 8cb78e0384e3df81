/**
 * What a calcium analysis result looks like in the workspace: its ROI ids, its tables, the viewer
 * layer that draws its ROIs, and ROI edits (delete, merge, reclassify) that reach both the job's record and
 * that layer in one transaction — so a deleted ROI disappears from everyone's ROI list and from
 * everyone's viewer together.
 *
 * How the viewer hides an ROI (Neuroglancer 2.41, `layer/segmentation`): a segmentation layer's
 * `segments` is its visible set; while that set is empty and `ignoreNullVisibleSet` is true (the
 * default) every segment is drawn, otherwise only the listed ones (the others take
 * `notSelectedAlpha`, 0 by default). So an edited result lists every ROI that is left; with every
 * ROI deleted the list is empty and `ignoreNullVisibleSet` is false. Merges become
 * `equivalences` (groups of ids drawn as one segment); Neuroglancer names a group by its smallest
 * id, so the visible set lists that one. Without edits the keys are removed: every ROI shows.
 * A deleted ROI also leaves the atlas's highlight layers over the same source, in the same
 * transaction (atlas/viewer-record.ts), and those layers are never taken for the ROI layer.
 * Pure module (Y.Doc reads and writes only).
 */
import * as Y from 'yjs';
import type { Json } from '../json.ts';
import type { Origin } from '../origin.ts';
import { effectiveRoiIds, readJob, setRoiEdit, type Job, type RoiEdit } from './jobs.ts';
import { addLayer, layerNames, readLayer, setLayerProps } from '../viewer/state-doc.ts';
import { LOCAL_ORIGIN, layerForServedVolume, type ServedLayer } from '../viewer/sources.ts';
import { findLayerBySource, layerSourceUrl } from '../viewer/segment-highlight.ts';
import { atlasHighlightLayers, pruneAtlasViewers } from '../atlas/viewer-record.ts';
import { roots } from '../schema.ts';

/** The tables a calcium job registers (names of workspace tables). */
export interface CalciumTables {
  rois: string;
  traces: string;
  events: string;
  shifts: string;
}

/** A calcium job's result as the server writes it (calcium-jobs.ts). */
export interface CalciumResult {
  dataset: string;
  layers: string[];
  tables: CalciumTables;
  summary: { rois: number; cells: number; events: number; [figure: string]: number };
  reusedRegistration: boolean;
  seconds: number | null;
}

/** The segment display keys of a segmentation layer that ROI edits set. */
export const ROI_SEGMENT_KEYS = ['segments', 'equivalences', 'ignoreNullVisibleSet'] as const;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** A done calcium job's result, read defensively; null for other jobs or malformed results. */
export function calciumResult(job: Job): CalciumResult | null {
  if (job.kind !== 'calcium' || job.status !== 'done' || !job.result) return null;
  const r = job.result as Record<string, unknown>;
  const t = (r.tables ?? {}) as Record<string, unknown>;
  const s = (r.summary ?? {}) as Record<string, unknown>;
  if (!str(r.dataset)) return null;
  const summary: CalciumResult['summary'] = { rois: 0, cells: 0, events: 0 };
  for (const [k, v] of Object.entries(s)) if (typeof v === 'number' && Number.isFinite(v)) summary[k] = v;
  return {
    dataset: str(r.dataset),
    layers: Array.isArray(r.layers) ? r.layers.filter((l): l is string => typeof l === 'string') : [],
    tables: { rois: str(t.rois), traces: str(t.traces), events: str(t.events), shifts: str(t.shifts) },
    summary,
    reusedRegistration: r.reusedRegistration === true,
    seconds: typeof r.seconds === 'number' ? num(r.seconds) : null,
  };
}

/** The ROI ids of a done calcium job: 1…summary.rois (the pipeline numbers its ROIs from 1, without gaps). */
export function jobRoiIds(job: Job): number[] {
  const n = Math.max(0, Math.min(1_000_000, Math.floor(calciumResult(job)?.summary.rois ?? 0)));
  return Array.from({ length: n }, (_, i) => i + 1);
}

/** The portable source URL of a job's ROI layer (`precomputed://plexus://volumes/<dataset>/rois`), or null. */
export function roiLayerSource(job: Job): string | null {
  const r = calciumResult(job);
  return r ? `precomputed://${LOCAL_ORIGIN}volumes/${encodeURIComponent(r.dataset)}/rois` : null;
}

/**
 * The name of the viewer layer that draws a job's ROIs (found by its source, whatever it is called
 * now; an atlas map's highlight layer over the same source is not it), or null.
 */
export function findRoiLayer(doc: Y.Doc, job: Job): string | null {
  const want = roiLayerSource(job);
  return want ? findLayerBySource(doc, want, { skip: atlasHighlightLayers(doc) }) : null;
}

/**
 * The segment display of a segmentation layer that shows `ids` after `edits`: visible set,
 * equivalences (merges) and whether an empty set means "none". Values undefined mean "remove the
 * key" (no edits: Neuroglancer shows every segment). Pure.
 */
export function roiSegmentProps(ids: readonly number[], edits: Readonly<Record<string, RoiEdit>>): Record<(typeof ROI_SEGMENT_KEYS)[number], Json | undefined> {
  // A reclassified ROI is still drawn: only deletes and merges change the display.
  const touched = ids.some((id) => { const e = edits[String(id)]; return e !== undefined && e.action !== 'classify'; });
  if (!touched) return { segments: undefined, equivalences: undefined, ignoreNullVisibleSet: undefined };
  const groups = new Map<number, number[]>();
  for (const [id, target] of effectiveRoiIds(ids, edits)) groups.set(target, [...(groups.get(target) ?? []), id]);
  const sets = [...groups.values()].map((g) => g.sort((a, b) => a - b));
  const visible = sets.map((g) => g[0]!).sort((a, b) => a - b);
  const merged = sets.filter((g) => g.length > 1).sort((a, b) => a[0]! - b[0]!);
  return {
    segments: visible.map(String),
    equivalences: merged.length ? merged.map((g) => g.map(String)) : undefined,
    ignoreNullVisibleSet: visible.length === 0 ? false : undefined,
  };
}

/** Whether an ROI id is still drawn after `edits` (false for deleted ROIs and ROIs merged into a deleted one; ids not among `ids` are). Pure. */
export function roiShown(ids: readonly number[], edits: Readonly<Record<string, RoiEdit>>): (id: number) => boolean {
  const kept = effectiveRoiIds(ids, edits);
  const all = new Set(ids);
  return (id) => kept.has(id) || !all.has(id);
}

function writeSegments(doc: Y.Doc, layerName: string, ids: readonly number[], edits: Readonly<Record<string, RoiEdit>>, origin: Origin): boolean {
  const layer = readLayer(doc, layerName);
  if (!layer || layer.type !== 'segmentation') return false;
  const want = roiSegmentProps(ids, edits);
  const differs = ROI_SEGMENT_KEYS.some((k) => JSON.stringify(layer[k] ?? null) !== JSON.stringify(want[k] ?? null));
  if (differs) setLayerProps(doc, layerName, want, origin);
  // A deleted ROI leaves the atlas's highlights of these ROIs too, in the same transaction.
  const pruned = pruneAtlasViewers(doc, layerSourceUrl(layer), roiShown(ids, edits), origin);
  return differs || pruned > 0;
}

/**
 * Deletes or merges an ROI of a calcium result (or, with `edit` null, takes that back) and, in
 * the same transaction, sets which segments the job's ROI layer `layerName` shows (null: no layer
 * to update). `allIds` are the result's ROI ids (`jobRoiIds`). False when the job is gone.
 */
export function applyRoiEdit(doc: Y.Doc, jobId: string, layerName: string | null, roiId: number, edit: RoiEdit | null, allIds: readonly number[], origin: Origin): boolean {
  let ok = false;
  doc.transact(() => {
    ok = setRoiEdit(doc, jobId, roiId, edit, origin);
    const job = ok ? readJob(doc, jobId) : null;
    if (job && layerName) writeSegments(doc, layerName, allIds, job.roiEdits, origin);
  }, origin);
  return ok;
}

/**
 * Brings a job's ROI layer in line with its ROI edits — after two people edited at once, the
 * layer holds the last writer's visible set while the job holds both edits. Writes nothing when
 * they agree (so every peer that runs it converges on the same value). True when it wrote.
 */
export function syncRoiLayer(doc: Y.Doc, jobId: string, origin: Origin): boolean {
  const job = readJob(doc, jobId);
  const layer = job ? findRoiLayer(doc, job) : null;
  if (!job || !layer) return false;
  let wrote = false;
  doc.transact(() => (wrote = writeSegments(doc, layer, jobRoiIds(job), job.roiEdits, origin)), origin);
  return wrote;
}

/**
 * Puts a done job's ROI layer into the shared viewer (made visible) when it is missing or hidden,
 * showing the job's ROI edits; `served` describes the `rois` layer of the result dataset
 * (`GET /volumes/<dataset>/`). Returns the layer's name.
 */
export function ensureRoiLayer(doc: Y.Doc, job: Job, served: ServedLayer, origin: Origin): string {
  const r = calciumResult(job);
  if (!r) throw new Error('only a finished calcium analysis has an ROI layer');
  let name = findRoiLayer(doc, job);
  doc.transact(() => {
    if (name) {
      if (readLayer(doc, name)?.visible === false) setLayerProps(doc, name, { visible: undefined }, origin);
    } else {
      const base = `ROIs (${job.input.dataset ?? r.dataset})`;
      const taken = new Set(layerNames(doc));
      name = base;
      for (let i = 2; taken.has(name); i++) name = `${base} ${i}`;
      addLayer(doc, layerForServedVolume(r.dataset, served, name), origin);
    }
    writeSegments(doc, name, jobRoiIds(job), job.roiEdits, origin);
  }, origin);
  return name!;
}

/** The SQL that lists a result's cells (ROIs judged to be somata). */
export const roiCellsQuery = (table: string): string => `SELECT * FROM ${table} WHERE is_cell = 1`;

/** Whether a newer finished job has replaced this job's tables (a re-run of the same dataset registers tables of the same names). */
export function tablesReplaced(job: Job, jobs: readonly Job[]): boolean {
  const mine = calciumResult(job)?.tables.rois;
  if (!mine) return false;
  return jobs.some((j) => j.id !== job.id && j.created > job.created && calciumResult(j)?.tables.rois === mine);
}

/**
 * Calls `f` with the ids of the jobs whose ROI edits a transaction changed (any origin), after
 * that transaction. Returns the unsubscribe.
 */
export function observeRoiEdits(doc: Y.Doc, f: (jobIds: string[], local: boolean) => void): () => void {
  const jobs = roots(doc).jobs;
  const h = (events: Array<Y.YEvent<Y.AbstractType<unknown>>>, tr: Y.Transaction) => {
    const ids = new Set<string>();
    for (const e of events) {
      const path = e.path;
      // A new edit: path [jobId, 'roiEdits']; a whole job (re)created: the root's own event.
      if (path.length >= 2 && path[1] === ROI_EDITS_KEY) ids.add(String(path[0]));
    }
    if (ids.size) f([...ids], tr.local);
  };
  jobs.observeDeep(h);
  return () => jobs.unobserveDeep(h);
}

const ROI_EDITS_KEY = 'roiEdits';
