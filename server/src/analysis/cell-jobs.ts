/**
 * What cells may do with analysis jobs (`calcium.start(dataset, layer, params)`, `calcium.status(id)`
 * in a JavaScript cell): start a calcium job for the person who ran the cell, read a job of the
 * same workspace, score it against ground truth and draw its ROIs on a summary image. Effects: starts jobs, reads documents.
 */
import type { Hocuspocus } from '@hocuspocus/server';
import { readJob, type Requester } from '@plexus/shared';
import { withDoc } from '../http/doc-access.ts';
import type { CalciumJobs } from './calcium-jobs.ts';
import type { Volumes } from '../volumes/volume-store.ts';
import { evaluateResult } from './evaluate.ts';
import { FIGURE_IMAGES, roiFigure, type FigureImage } from './roi-figure.ts';

/** The kernel's job caller for a server's jobs (an Error with the reason when refused). */
export function cellJobCaller(jobs: () => CalciumJobs | null, hocuspocus: Hocuspocus, volumes: Volumes) {
  return async (ws: string, op: string, args: Record<string, unknown>, by: Requester | null): Promise<unknown> => {
    const j = jobs();
    if (!j) throw new Error('analysis jobs are not available on this server');
    if (op === 'calcium-start') {
      const dataset = args.dataset;
      const layer = args.layer;
      if (typeof dataset !== 'string' || typeof layer !== 'string') throw new Error('calcium.start(dataset, layer, params): dataset and layer name a served movie');
      try {
        // A cell re-run (Run all, an upstream change) returns the same analysis unless asked to redo it.
        return await j.start(ws, { dataset, layer, params: args.params, reuse: args.rerun !== true }, { id: by?.id ?? 'kernel', ...(by?.name ? { name: by.name } : {}), via: 'cell' });
      } catch (e) {
        throw new Error((e as Error).message);
      }
    }
    if (op === 'calcium-status') {
      const id = String(args.job ?? '');
      const job = await withDoc(hocuspocus, ws, (doc) => readJob(doc, id));
      if (!job) throw new Error(`there is no job "${id}" in this workspace`);
      return job;
    }
    if (op === 'calcium-evaluate') {
      const id = String(args.job ?? '');
      const job = await withDoc(hocuspocus, ws, (doc) => readJob(doc, id));
      if (!job) throw new Error(`there is no job "${id}" in this workspace`);
      const dataset = job.result && typeof job.result.dataset === 'string' ? job.result.dataset : null;
      if (job.status !== 'done' || !dataset) throw new Error(`job ${id} has no result yet (${job.status}); evaluate it when it is done`);
      const truth = typeof args.truth === 'string' ? args.truth : job.input.dataset;
      if (!truth) throw new Error('give the dataset with ground truth: calcium.evaluate(job, { truth: "calcium-demo" })');
      return evaluateResult(volumes, dataset, truth, job.roiEdits);
    }
    if (op === 'calcium-figure') {
      const id = String(args.job ?? '');
      const job = await withDoc(hocuspocus, ws, (doc) => readJob(doc, id));
      if (!job) throw new Error(`there is no job "${id}" in this workspace`);
      if (job.status !== 'done') throw new Error(`job ${id} has no result yet (${job.status}); draw it when it is done`);
      const image = args.image === undefined ? 'mean' : String(args.image);
      if (!(FIGURE_IMAGES as readonly string[]).includes(image)) throw new Error(`calcium.figure(job, { image }): image is one of ${FIGURE_IMAGES.join(', ')}, not ${JSON.stringify(image)}`);
      const f = await roiFigure(volumes, job, { image: image as FigureImage, ids: args.ids !== false });
      return { svg: f.svg, width: f.width, height: f.height, cells: f.cells, notCells: f.notCells, deleted: f.deleted };
    }
    throw new Error(`unknown job operation ${op}`);
  };
}
