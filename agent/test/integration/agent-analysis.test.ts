/**
 * The agent runs a calcium analysis the way a person would, without blocking on it: it starts the
 * job (everyone sees it), checks its status with a bounded wait, and answers from the result; it
 * can stop a job and edit ROIs (as a card a person accepts in propose mode); bad arguments come
 * back to the model as errors. Real server, kernel, agent peer
 * and `openai` client; scripted model; a small generated recording.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { acceptProposal, getRun, listJobs, listMessages, listTables, readJob, readProposal } from '@plexus/shared';
import { aliceOrigin } from '@plexus/testkit/kernel';
import { tmpDir, waitFor } from '@plexus/testkit';
import { agentSuite, ask, waitRunEnd } from '@plexus/testkit/agent';
import { writeDemoDataset } from '../../../server/src/volumes/demo/demo-dataset.ts';

const dataDir = tmpDir();
await writeDemoDataset(path.join(dataDir, 'volumes', 'calcium-demo'), { params: { width: 96, height: 96, frames: 300, neurons: 12, seed: 5 }, layout: { movieChunk: [64, 64, 32], planeChunk: [64, 64] } });
const suite = agentSuite({ dataDir, jobNice: 0 });

const ANALYSE = {
  turns: [
    { match: { afterTools: 0 }, repeat: true, text: 'Starting the analysis.', toolCalls: [{ name: 'start_calcium_analysis', arguments: { dataset: 'calcium-demo', layer: 'movie', params: { tauDecay: 'GCaMP6f' } } }] },
    { match: { afterTools: 1 }, repeat: true, toolCalls: [{ name: 'calcium_job_status', arguments: { job: '$tool.job', wait_seconds: 60 } }] },
    { match: { afterTools: 2 }, repeat: true, toolCalls: [{ name: 'edit_roi', arguments: { job: '$tool.id', roi: 1, action: 'delete' } }] },
    { match: { afterTools: 3 }, repeat: true, text: 'The analysis is done: the ROIs are in the viewer and in the table calcium_demo_rois.' },
  ],
};

describe('the agent and analysis jobs', () => {
  it('starts a job, waits for it with calcium_job_status, and answers from its result', async () => {
    const { ws, a } = await suite.workspace('direct');
    await suite.start(ws, ANALYSE);
    const runId = ask(a.doc, 'analyse the demo movie');
    const run = await waitRunEnd(a.doc, runId, 120_000);
    expect(run.activity.map((x) => [x.tool, x.status])).toEqual([['start_calcium_analysis', 'done'], ['calcium_job_status', 'done'], ['edit_roi', 'done']]);
    const [job] = listJobs(a.doc);
    expect(job!.roiEdits['1']).toMatchObject({ action: 'delete', name: 'Plexus agent' });
    expect(job!.requestedBy.via).toBe('agent');
    expect(job!.status).toBe('done');
    expect(run.activity[1]!.summary).toMatch(new RegExp(`^${job!.id}: done`));
    expect(listTables(a.doc).map((t) => t.name)).toContain('calcium_demo_rois');
    // The model saw the result (tables and counts) in the status tool's answer.
    const toolMessages = (suite.agent!.llm.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === "tool");
    expect(toolMessages.at(-2)!.content).toContain('"tables"');
    expect(listMessages(a.doc).find((m) => m.id === run.replyId)!.text).toContain('calcium_demo_rois');
  }, 180_000);

  it('in propose mode an ROI edit is a card: a person accepts it, and it is recorded as theirs', async () => {
    const { ws, a } = await suite.workspace('propose');
    await suite.start(ws, {
      turns: [
        { match: { afterTools: 0 }, repeat: true, toolCalls: [{ name: 'start_calcium_analysis', arguments: { dataset: 'calcium-demo', layer: 'movie', params: { tauDecay: 'GCaMP6f' } } }] },
        { match: { afterTools: 1 }, repeat: true, toolCalls: [{ name: 'calcium_job_status', arguments: { job: '$tool.job', wait_seconds: 60 } }] },
        { match: { afterTools: 2 }, repeat: true, toolCalls: [{ name: 'edit_roi', arguments: { job: '$tool.id', roi: 2, action: 'mark_not_cell' } }] },
        { match: { afterTools: 3 }, repeat: true, text: 'I proposed marking ROI 2 as not a cell.' },
      ],
    });
    const run = await waitRunEnd(a.doc, ask(a.doc, 'analyse the demo movie and drop ROI 2 from the cells'), 120_000);
    expect(run.activity.map((x) => [x.tool, x.status])).toEqual([['start_calcium_analysis', 'done'], ['calcium_job_status', 'done'], ['edit_roi', 'proposed']]);
    const [job] = listJobs(a.doc);
    expect(job!.roiEdits).toEqual({}); // nothing changed until a person says so
    const card = listMessages(a.doc).find((m) => readProposal(a.doc, m.id)?.proposal.action.type === 'edit_roi')!;
    expect(readProposal(a.doc, card.id)!.proposal.title).toBe(`mark ROI 2 as not a cell of analysis ${job!.id}`);
    expect(acceptProposal(a.doc, card.id, { id: 'alice', name: 'Alice' }, aliceOrigin)).toMatchObject({ status: 'accepted', message: 'mark ROI 2 as not a cell' });
    expect(readJob(a.doc, job!.id)!.roiEdits['2']).toMatchObject({ action: 'classify', cell: false, by: 'alice', name: 'Alice' });
  }, 180_000);

  it('bad arguments are errors the model reads, not crashes', async () => {
    const { ws, a } = await suite.workspace('direct');
    await suite.start(ws, {
      turns: [
        { match: { afterTools: 0 }, repeat: true, toolCalls: [{ name: 'start_calcium_analysis', arguments: { dataset: 'calcium-demo', layer: 'mean' } }] },
        { match: { afterTools: 1 }, repeat: true, toolCalls: [{ name: 'calcium_job_status', arguments: { job: 'j_nope' } }] },
        { match: { afterTools: 2 }, repeat: true, text: 'That layer is not a movie.' },
      ],
    });
    const run = await waitRunEnd(a.doc, ask(a.doc, 'analyse the mean image'), 60_000);
    expect(run.activity.map((x) => x.status)).toEqual(['error', 'refused']);
    expect(run.activity[0]!.summary).toMatch(/not a movie/);
    expect(run.activity[1]!.summary).toMatch(/no job "j_nope"/);
    expect(listJobs(a.doc)).toEqual([]);
    await waitFor(() => getRun(a.doc, run.id)?.status === 'done');
  }, 120_000);
});

describe('the seed example as a verified plan', () => {
  it('"segment cells, measure their mean intensity over time, detect calcium transients and plot everything" runs end to end on the demo data, every step verified', async () => {
    const { requestTask } = await import('../../src/scripted-llm/server.ts');
    const { listPlanSteps } = await import('@plexus/shared');
    const { ws, a } = await suite.workspace('direct');
    const key = (id: string) => `(${id}) of`;
    await suite.start(ws, {
      turns: [
        { match: { task: 'route' }, text: JSON.stringify({ kind: 'analysis', scopes: ['calcium', 'data', 'notebook'], reason: 'a multi-step analysis' }) },
        {
          match: { task: 'plan' },
          text: JSON.stringify({
            clarified: 'Segment the cells of calcium-demo/movie, measure their mean fluorescence over time, detect calcium transients, and plot traces and events',
            assumptions: ['the movie is calcium-demo/movie', 'GCaMP6f decay'],
            alternatives: [],
            parameters: { dataset: 'calcium-demo', layer: 'movie' },
            steps: [
              { id: 's1', goal: 'Segment the cells of calcium-demo/movie with the calcium analysis', dependsOn: [], scope: ['calcium'], expect: { n_cells: { min: 1, integer: true, why: 'the demo recording has neurons' } } },
              { id: 's2', goal: 'Measure the mean fluorescence of the cells over time', dependsOn: ['s1'], scope: ['data'], expect: { mean_intensity: { min: 0, max: 65535, why: 'the movie is uint16 data' } } },
              { id: 's3', goal: 'Count the detected calcium transients', dependsOn: ['s1'], scope: ['data'], expect: { n_events: { min: 0, integer: true, why: 'a count' } } },
              { id: 's4', goal: 'Plot the mean ΔF/F over time with the events', dependsOn: ['s2', 's3'], scope: ['notebook'] },
            ],
          }),
        },
        { match: { task: 'step', lastUserContains: key('s1'), afterTools: 0 }, toolCalls: [{ name: 'start_calcium_analysis', arguments: { dataset: 'calcium-demo', layer: 'movie', params: { tauDecay: 'GCaMP6f' } } }] },
        { match: { task: 'step', lastUserContains: key('s1'), afterTools: 1 }, toolCalls: [{ name: 'calcium_job_status', arguments: { job: '$tool.job', wait_seconds: 60 } }] },
        { match: { task: 'step', lastUserContains: key('s1'), afterTools: 2 }, toolCalls: [{ name: 'report_result', arguments: { summary: 'segmented the movie', values: { n_cells: '$tool.result.summary.cells', n_rois: '$tool.result.summary.rois' }, jobs: ['$tool.id'], tables: ['calcium_demo_rois'] } }] },
        { match: { task: 'step', lastUserContains: key('s2'), afterTools: 0 }, toolCalls: [{ name: 'sql', arguments: { query: 'select avg(f) as mean_intensity from calcium_demo_traces t join calcium_demo_rois r using (id) where r.is_cell' } }] },
        { match: { task: 'step', lastUserContains: key('s2'), afterTools: 1 }, toolCalls: [{ name: 'report_result', arguments: { summary: 'mean fluorescence of the cells', values: { mean_intensity: '$tool.rows.0.mean_intensity' }, tables: ['calcium_demo_traces'] } }] },
        { match: { task: 'step', lastUserContains: key('s3'), afterTools: 0 }, toolCalls: [{ name: 'sql', arguments: { query: 'select cast(count(*) as integer) as n_events from calcium_demo_events' } }] },
        { match: { task: 'step', lastUserContains: key('s3'), afterTools: 1 }, toolCalls: [{ name: 'report_result', arguments: { summary: 'counted the transients', values: { n_events: '$tool.rows.0.n_events' }, tables: ['calcium_demo_events'] } }] },
        { match: { task: 'step', lastUserContains: key('s4'), afterTools: 0 }, toolCalls: [{ name: 'create_cell', arguments: { kind: 'sql', name: 'mean_trace', source: 'select time_s, avg(dff) as mean_dff from calcium_demo_traces group by time_s order by time_s' } }] },
        { match: { task: 'step', lastUserContains: key('s4'), afterTools: 1 }, toolCalls: [{ name: 'run_cell', arguments: { cell_id: '$tool.cell_id' } }] },
        { match: { task: 'step', lastUserContains: key('s4'), afterTools: 2 }, toolCalls: [{ name: 'create_cell', arguments: { kind: 'code', source: "vegalite({ data: { values: mean_trace }, mark: 'line', encoding: { x: { field: 'time_s', type: 'quantitative' }, y: { field: 'mean_dff', type: 'quantitative' } } })" } }] },
        { match: { task: 'step', lastUserContains: key('s4'), afterTools: 3 }, toolCalls: [{ name: 'run_cell', arguments: { cell_id: '$tool.cell_id' } }] },
        { match: { task: 'step', lastUserContains: key('s4'), afterTools: 4 }, toolCalls: [{ name: 'report_result', arguments: { summary: 'plotted the mean ΔF/F over time' } }] },
      ],
    });
    const runId = ask(a.doc, 'segment cells, measure their mean intensity over time, detect calcium transients and plot everything');
    const run = await waitRunEnd(a.doc, runId, 170_000);
    expect(run.status).toBe('done');
    const steps = listPlanSteps(a.doc, runId);
    expect(steps.map((s) => [s.id, s.status, s.attempts])).toEqual([['s1', 'done', 1], ['s2', 'done', 1], ['s3', 'done', 1], ['s4', 'done', 1]]);
    const [job] = listJobs(a.doc);
    expect(steps[0]!.values.n_cells).toBe((job!.result as { summary: { cells: number } }).summary.cells);
    expect(steps[0]!.provenance.map((p) => p.kind)).toEqual(expect.arrayContaining(['job', 'table']));
    expect(steps[1]!.values.mean_intensity).toBeGreaterThan(0);
    expect(Number.isInteger(steps[2]!.values.n_events)).toBe(true);
    // Every step passed the checks its metadata allows and the model's judgement.
    for (const s of steps) expect(s.verdict!.passed).toBe(true);
    expect(steps[1]!.verdict!.checks.find((c) => c.name === 'expected mean_intensity')!.passed).toBe(true);
    // The plot step's cells ran without error (the verifier checked them).
    expect(steps[3]!.verdict!.checks.filter((c) => c.name.startsWith('cell ')).map((c) => c.passed)).toEqual([true, true]);
    expect(suite.agent!.llm.requests.filter((r) => requestTask(r.body) === 'verify')).toHaveLength(4);
  }, 180_000);
});
