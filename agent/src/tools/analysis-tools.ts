/**
 * Analysis tools: start a calcium-imaging analysis of a served movie without waiting (it runs as
 * a server job everyone watches, minutes for a long recording), check a job's status (optionally
 * waiting a bounded time for it to end), and stop one. Results are workspace tables the data tools
 * read (`<dataset>_rois`, `_traces`, `_events`, `_shifts`) and an ROI layer in the viewer.
 * Effects: server HTTP (start), document reads and a stop signal write (agent origin).
 */
import { describeRoiChange, isJobFinished, jobRoiIds, readJob, requestJobStop, type Job, type RoiChange } from '@plexus/shared';
import { actResult, defineTool, ok, ToolRefusal, type Tool } from './tool.ts';

const NAME = { type: 'string', minLength: 1, maxLength: 200 } as const;

/** What the model needs of a job (no raw ROI edit maps). */
function jobView(j: Job) {
  return {
    id: j.id,
    kind: j.kind,
    title: j.title,
    status: j.status,
    progress: j.progress ? { stage: j.progress.stage, done: j.progress.done, total: j.progress.total, secondsLeft: j.progress.eta } : null,
    error: j.error,
    result: j.result,
    params: j.params,
    roisEditedByPeople: Object.keys(j.roiEdits).length,
  };
}

const startCalcium = defineTool({
  name: 'start_calcium_analysis',
  description:
    'Starts the calcium-imaging pipeline (motion correction, cell detection, traces with neuropil correction, ΔF/F, deconvolution, events) on a served movie layer (list_volumes shows them) and returns the job id at once: it runs on the server for seconds to minutes while everyone sees its progress. Do not wait in a loop: call calcium_job_status later (it can wait up to 60 s). Parameters default from the recording; give tauDecay (seconds, or an indicator name such as "GCaMP6s") when known, diameter in pixels only if you know the cell size.',
  parameters: {
    type: 'object',
    properties: {
      dataset: NAME,
      layer: NAME,
      params: {
        type: 'object',
        properties: {
          frameRate: { type: 'number', exclusiveMinimum: 0, maximum: 10000 },
          tauDecay: { anyOf: [{ type: 'number', exclusiveMinimum: 0, maximum: 60 }, { type: 'string', maxLength: 40 }] },
          diameter: { type: 'number', minimum: 3, maximum: 500 },
          maxShift: { type: 'integer', minimum: 1, maximum: 200 },
          blockSize: { type: 'integer', minimum: 16, maximum: 4096, description: 'piecewise-rigid registration in blocks of this many pixels (e.g. 128) when motion differs across the field; omit for rigid' },
          neuropilCoefficient: { type: 'number', minimum: 0, maximum: 2 },
          baselineSeconds: { type: 'number', exclusiveMinimum: 0, maximum: 3600 },
        },
        additionalProperties: false,
      },
    },
    required: ['dataset', 'layer'],
    additionalProperties: false,
  },
  async run(ctx, a) {
    const r = await ctx.api.startJob({ kind: 'calcium', dataset: a.dataset, layer: a.layer, ...(a.params ? { params: a.params as Record<string, unknown> } : {}) }, ctx.signal);
    return ok(`started ${r.job}`, { job: r.job, status: 'queued', next: 'call calcium_job_status with this job id later; results become tables and an ROI layer' });
  },
});

const jobStatus = defineTool({
  name: 'calcium_job_status',
  description: 'Status, progress and (when done) the result of an analysis job: the tables it registered, ROI and cell counts, the parameters it used. wait_seconds (≤ 60) waits that long at most for the job to end.',
  parameters: { type: 'object', properties: { job: NAME, wait_seconds: { type: 'integer', minimum: 0, maximum: 60 } }, required: ['job'], additionalProperties: false },
  async run(ctx, a) {
    const read = () => readJob(ctx.doc, a.job);
    if (!read()) throw new ToolRefusal(`there is no job "${a.job}" in this workspace`);
    const waitMs = (a.wait_seconds ?? 0) * 1000;
    if (waitMs > 0 && !isJobFinished(read()!.status)) {
      ctx.progress(`waiting for ${a.job} (up to ${a.wait_seconds} s)`);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          ctx.doc.off('update', check);
          ctx.signal.removeEventListener('abort', done);
          resolve();
        };
        const check = () => {
          const j = read();
          if (!j || isJobFinished(j.status)) done();
        };
        const timer = setTimeout(done, waitMs);
        ctx.doc.on('update', check);
        ctx.signal.addEventListener('abort', done);
      });
    }
    const j = read()!;
    return ok(`${j.id}: ${j.status}${j.progress ? ` (${j.progress.stage} ${j.progress.done}/${j.progress.total})` : ''}`, jobView(j));
  },
});

const stopJob = defineTool({
  name: 'stop_job',
  description: 'Stops a running or queued analysis job (everyone sees it stopped by the agent).',
  parameters: { type: 'object', properties: { job: NAME }, required: ['job'], additionalProperties: false },
  async run(ctx, a) {
    if (!requestJobStop(ctx.doc, a.job, { id: ctx.author.id, name: ctx.author.name }, ctx.origin)) throw new ToolRefusal(`job "${a.job}" is not running (or does not exist)`);
    return ok(`asked ${a.job} to stop`, { job: a.job, stop: 'requested' });
  },
});

const editRoi = defineTool({
  name: 'edit_roi',
  description:
    'Edits an ROI of a finished calcium analysis for everyone: delete it, merge it into another ROI, mark it as a cell or as not a cell (overruling the soma rule), or restore it (undo a delete, merge or mark). The ROI list, the viewer layer, calcium.figure and the evaluation honour it. In propose mode it is a card a person accepts.',
  parameters: {
    type: 'object',
    properties: { job: NAME, roi: { type: 'integer', minimum: 1 }, action: { enum: ['delete', 'merge', 'mark_cell', 'mark_not_cell', 'restore'] }, into: { type: 'integer', minimum: 1 } },
    required: ['job', 'roi', 'action'],
    additionalProperties: false,
  },
  async run(ctx, a) {
    const job = readJob(ctx.doc, a.job);
    if (!job || job.kind !== 'calcium' || job.status !== 'done') throw new ToolRefusal(`job "${a.job}" is not a finished calcium analysis`);
    const ids = jobRoiIds(job);
    if (!ids.includes(a.roi)) throw new ToolRefusal(`job ${a.job} has ROIs 1–${ids.length}; there is no ROI ${a.roi}`);
    if (a.action === 'merge' && (a.into === undefined || a.into === a.roi || !ids.includes(a.into))) throw new ToolRefusal('merge needs `into`: another ROI of this job');
    const edit: RoiChange | null =
      a.action === 'restore' ? null : a.action === 'delete' ? { action: 'delete' } : a.action === 'merge' ? { action: 'merge', into: a.into! } : { action: 'classify', cell: a.action === 'mark_cell' };
    return actResult(await ctx.act('edit_roi', { type: 'edit_roi', job: a.job, roi: a.roi, edit }), describeRoiChange(a.roi, edit), { job: a.job, roi: a.roi, action: a.action });
  },
});

export const analysisTools: Tool[] = [startCalcium, jobStatus, stopJob, editRoi];
