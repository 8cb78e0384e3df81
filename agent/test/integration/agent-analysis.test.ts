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
