/**
 * People's ROI edits reach SQL: when someone deletes, merges or reclassifies an ROI of a calcium
 * result, the server rewrites that result's `rois` table from the pipeline's own CSV with the
 * edits applied — `is_cell` as it now stands, `pipeline_is_cell` as the pipeline said, and `edit`
 * saying who changed what ("deleted by Ada", "merged into 3 by Ada", "marked a cell by Ada") —
 * and registers it again, so SQL cells over it re-run and the data panel shows it. Deleted and
 * merged ROIs keep their row (is_cell 0) so nothing is lost; a merged ROI's pixels and trace are
 * not re-extracted (run the analysis again for that).
 *
 * One rewrite at a time per workspace; edits that arrive meanwhile are taken together by the next
 * one. A marker file per job remembers which edits the table holds, so a reload or a repeated
 * event rewrites nothing. Effects: file reads and writes, table imports, timers none.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type * as Y from 'yjs';
import { calciumResult, listJobs, observeRoiEdits, readJob, roiIsCell, tablesReplaced, type JobRequester, type RoiEdit } from '@plexus/shared';
import type { Logger } from '../log.ts';
import type { Volumes } from '../volumes/volume-store.ts';
import { splitCsv } from './result-files.ts';

export interface CuratedRoisOptions {
  volumes: Volumes;
  log: Logger;
  /** A directory of workspace `ws` for the curated tables and their markers. */
  stateDir: (ws: string) => string;
  /** Registers `csvFile` as table `name` unless `still(doc)` says no any more (checked under the table's lock, just before). */
  registerTable: (ws: string, name: string, csvFile: string, by: JobRequester, still?: (doc: Y.Doc) => boolean) => Promise<void>;
}

const csvField = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** What the `edit` column says of an ROI's edit. */
export function describeEdit(e: RoiEdit | undefined): string {
  if (!e) return '';
  const who = ` by ${e.name ?? e.by}`;
  if (e.action === 'delete') return `deleted${who}`;
  if (e.action === 'merge') return `merged into ${e.into}${who}`;
  return `marked ${e.cell ? 'a cell' : 'not a cell'}${who}`;
}

/**
 * The pipeline's rois CSV with the edits applied: `is_cell` after the edits (0 for deleted and
 * merged ROIs), plus `pipeline_is_cell` and `edit` (a curated table curates again the same way).
 * Pure.
 */
export function curateRoisCsv(text: string, edits: Readonly<Record<string, RoiEdit>>): string {
  const lines = text.split('\n').filter((l) => l.length);
  const head = splitCsv(lines[0] ?? '');
  const idCol = head.indexOf('id');
  const cellCol = head.indexOf('is_cell');
  if (idCol < 0 || cellCol < 0) throw new Error('the rois table has no id or is_cell column');
  // A table curated before keeps the pipeline's decision in `pipeline_is_cell`: start from that.
  const saidCol = head.indexOf('pipeline_is_cell');
  const keep = head.map((c, i) => (c === 'pipeline_is_cell' || c === 'edit' ? -1 : i)).filter((i) => i >= 0);
  const out = [[...keep.map((i) => head[i]!), 'pipeline_is_cell', 'edit'].map(csvField).join(',')];
  for (const line of lines.slice(1)) {
    const all = splitCsv(line);
    const id = Number(all[idCol]);
    const e = edits[String(id)];
    const said = all[saidCol >= 0 ? saidCol : cellCol] === '1';
    const gone = e?.action === 'delete' || e?.action === 'merge';
    all[cellCol] = !gone && roiIsCell(id, said, edits) ? '1' : '0';
    out.push([...keep.map((i) => all[i] ?? ''), said ? '1' : '0', describeEdit(e)].map(csvField).join(','));
  }
  return out.join('\n') + '\n';
}

export class CuratedRois {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly pending = new Map<string, Set<string>>();
  /** The newest loaded document of each workspace (a reload replaces it while a rewrite runs). */
  private readonly docs = new Map<string, Y.Doc>();
  private closed = false;

  constructor(private readonly opts: CuratedRoisOptions) {}

  /** Follows the ROI edits of a loaded document; catches up on edits made while it was not loaded. Returns the detach. */
  attach(ws: string, doc: Y.Doc): () => void {
    this.docs.set(ws, doc);
    const withEdits = listJobs(doc).filter((j) => calciumResult(j) && Object.keys(j.roiEdits).length).map((j) => j.id);
    if (withEdits.length) this.schedule(ws, doc, withEdits);
    const off = observeRoiEdits(doc, (ids) => this.schedule(ws, doc, ids));
    return () => {
      off();
      if (this.docs.get(ws) === doc) this.docs.delete(ws);
    };
  }

  /** Resolves when every rewrite under way is done (shutdown). */
  async closeAll(): Promise<void> {
    this.closed = true;
    this.pending.clear();
    await Promise.all([...this.chains.values()]);
  }

  /** Resolves when every rewrite asked for in `ws` so far is done (tests, shutdown). */
  async idle(ws: string): Promise<void> {
    while (this.chains.has(ws)) await this.chains.get(ws);
  }

  private schedule(ws: string, doc: Y.Doc, jobIds: string[]): void {
    if (this.closed) return;
    this.docs.set(ws, doc);
    let set = this.pending.get(ws);
    if (!set) this.pending.set(ws, (set = new Set()));
    for (const id of jobIds) set.add(id);
    if (this.chains.has(ws)) return; // the running rewrite takes them next
    // The chain ends in the same turn that finds nothing left, so an edit never waits on a chain that is ending.
    const run = Promise.resolve().then(async () => {
      for (;;) {
        const next = this.pending.get(ws);
        if (!next?.size) {
          this.chains.delete(ws);
          this.pending.delete(ws);
          return;
        }
        const ids = [...next];
        next.clear();
        for (const id of ids) await this.rewrite(ws, this.docs.get(ws) ?? doc, id).catch((e: Error) => this.opts.log.warn('curated rois failed', { ws, job: id, err: e.message }));
      }
    });
    this.chains.set(ws, run);
  }

  private async rewrite(ws: string, doc: Y.Doc, jobId: string): Promise<void> {
    const job = readJob(doc, jobId);
    const r = job && calciumResult(job);
    if (!job || !r || !r.tables.rois) return;
    if (tablesReplaced(job, listJobs(doc))) return; // a newer analysis owns the table now
    const edits = Object.fromEntries(Object.entries(job.roiEdits).sort(([a], [b]) => Number(a) - Number(b)));
    const dir = path.join(this.opts.stateDir(ws), 'curated');
    const marker = path.join(dir, `${jobId}.json`);
    const want = JSON.stringify({ table: r.tables.rois, dataset: r.dataset, edits });
    if ((await fs.readFile(marker, 'utf8').catch(() => null)) === want) return;
    const original = await fs.readFile(path.join(this.opts.volumes.root, r.dataset, 'tables', 'rois.csv'), 'utf8');
    await fs.mkdir(dir, { recursive: true });
    const csv = path.join(dir, `${jobId}.csv`);
    await fs.writeFile(csv, curateRoisCsv(original, edits));
    // A newer analysis may have taken the table name meanwhile: checked again under the table's lock.
    await this.opts.registerTable(ws, r.tables.rois, csv, job.requestedBy, (d) => {
      const j = readJob(d, jobId);
      return !!j && !tablesReplaced(j, listJobs(d));
    });
    await fs.writeFile(marker, want);
    await fs.rm(csv, { force: true });
  }
}
