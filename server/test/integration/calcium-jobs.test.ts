/**
 * Calcium analysis jobs on a real server with its kernel, over a small generated recording: a job
 * started through the API runs in its own process; a second client sees it queued, running with
 * progress, then done; its result dataset is served, its tables are registered (SQL cells read
 * them) and its ROI layer is in the viewer. A re-run reuses the registration. A person stops a
 * job held mid-registration (a test hook holds it, so the stop always comes first) and nothing is
 * published. Bad requests are refused with clear errors; viewers cannot start jobs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTable, listJobs, listTables, readJob, readViewerState, requestJobStop, userOrigin, type Job } from '@plexus/shared';
import type { PlexusServer } from '../../src/app.ts';
import { writeDemoDataset } from '../../src/volumes/demo/demo-dataset.ts';
import { api, hocuspocusClient, tmpDir, waitFor, type HpClient } from '@plexus/testkit';
import { addCell, alice as aliceUser, aliceOrigin, finished, kernelIdle, newWorkspace, shown, startKernelServer, waitRun } from '@plexus/testkit/kernel';
import { cellSource, listCells, readCellRun, requestRun, requestRunAll, readKernelStatus, setRoiEdit } from '@plexus/shared';
import { fillDemo } from '../../src/demo.ts';
import { demoAtlasSeeder } from '../../src/demo-atlas.ts';
import { SMALL_RECORDING } from '../fixtures/small-recording.ts';

let s: PlexusServer;
const clients: HpClient[] = [];
let holdNext = false;

beforeAll(async () => {
  const dataDir = tmpDir();
  await writeDemoDataset(path.join(dataDir, 'volumes', 'calcium-demo'), SMALL_RECORDING);
  // jobNice 0: on a machine busy with other suites a nice'd job would crawl (its priority is what it is for).
  s = await startKernelServer({ dataDir, jobNice: 0 }, {
    wrapJobSpec: (spec) => {
      if (!holdNext) return spec;
      holdNext = false;
      return { ...spec, holdAtFrame: 5 };
    },
  });
});
afterAll(async () => {
  clients.forEach((c) => c.destroy());
  await s.close();
});

async function open(ws: string): Promise<HpClient> {
  const c = hocuspocusClient(s.url, ws, s.ownerToken);
  clients.push(c);
  await c.synced;
  return c;
}

const waitJob = (c: HpClient, id: string, pred: (j: Job) => boolean, message: string) =>
  waitFor(() => {
    const j = readJob(c.doc, id);
    return j && pred(j) ? j : null;
  }, { timeout: 60_000, message });

describe('calcium jobs', { timeout: 240_000 }, () => {
  it('runs a job that everyone sees progress and finish, and publishes dataset, tables and the ROI layer', async () => {
    const ws = await newWorkspace(s);
    const bob = await open(ws);
    const stages = new Set<string>();
    const t0 = Date.now();
    bob.doc.on('update', () => {
      for (const j of listJobs(bob.doc)) if (j.progress && !stages.has(j.progress.stage)) { stages.add(j.progress.stage); if (process.env.CAL_DEBUG) console.log('STAGE', j.progress.stage, Date.now() - t0); }
    });
    const r = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/jobs`, { kind: 'calcium', dataset: 'calcium-demo', layer: 'movie', params: { tauDecay: 'GCaMP6f' } });
    expect(r.status).toBe(201);
    const id = r.json.job as string;
    const done = (await waitJob(bob, id, (j) => j.status === 'done' || j.status === 'error', 'job finished'))!;
    expect(done.error).toBeNull();
    expect(done.status).toBe('done');
    expect(done.requestedBy).toMatchObject({ via: 'person' });
    expect(stages.has('registration')).toBe(true);
    const result = done.result as { dataset: string; tables: Record<string, string>; summary: { rois: number; cells: number } };
    expect(result.summary.rois).toBeGreaterThan(5);
    // The dataset is served.
    const ds = await api(s.url, s.ownerToken, 'GET', `/volumes/${result.dataset}/`);
    expect(ds.status).toBe(200);
    expect(ds.json.layers.map((l: { name: string }) => l.name).sort()).toEqual(['correlation', 'max', 'mean', 'rois']);
    // Tables registered, readable by SQL.
    await waitFor(() => listTables(bob.doc).some((t) => t.name === 'calcium_demo_rois'), { message: 'tables registered' });
    expect(result.tables).toEqual({ rois: 'calcium_demo_rois', traces: 'calcium_demo_traces', events: 'calcium_demo_events', shifts: 'calcium_demo_shifts' });
    const q = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/data/query`, { sql: 'SELECT count(*) AS n FROM calcium_demo_rois' });
    expect(q.status).toBe(200);
    expect(Number(q.json.rows[0].n)).toBe(result.summary.rois);
    const frames = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/data/query`, { sql: 'SELECT count(DISTINCT frame) AS n FROM calcium_demo_traces' });
    expect(Number(frames.json.rows[0].n)).toBe(300);
    // The ROI layer is in everyone's viewer.
    const layer = (readViewerState(bob.doc).layers as Array<{ name: string; type?: string; source?: unknown }> | undefined)?.find((l) => l.name === 'ROIs (calcium-demo)');
    expect(layer?.type).toBe('segmentation');
    expect((layer?.source as { url: string }).url).toBe(`precomputed://plexus://volumes/${result.dataset}/rois`);

    // Evaluated against the recording's ground truth from a cell; a person's ROI deletion counts.
    await waitFor(() => readKernelStatus(bob.doc).state !== 'offline', { message: 'kernel online', timeout: 30_000 });
    const evaluate = async () => {
      const cell = addCell(bob.doc, 'code', `const ev${stages.size} = await calcium.evaluate(${JSON.stringify(id)}, { truth: 'calcium-demo' });\nJSON.stringify(ev${stages.size})`);
      requestRun(bob.doc, cell, aliceUser, aliceOrigin);
      const out = shown(await waitRun(bob.doc, cell, (v) => v.state === 'done' || v.state === 'error', 'evaluate', 60_000));
      return JSON.parse(out) as { rois: { detected: number; f1: number; matched: number; highSnr: { f1: number } }; traces: { medianR: number }; spikes: { medianR: number } };
    };
    const ev = await evaluate();
    expect(ev.rois.f1).toBeGreaterThan(0.5); // a small recording (96², 300 frames): the benchmark measures accuracy
    expect(ev.traces.medianR).toBeGreaterThan(0.8);
    expect(ev.spikes.medianR).toBeGreaterThan(0.3);
    const cellsTable = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/data/query`, { sql: 'SELECT id FROM calcium_demo_rois WHERE is_cell = 1 ORDER BY id LIMIT 1' });
    const first = Number(cellsTable.json.rows[0].id);
    // An SQL cell over the table, run once: it runs again by itself when the edits reach the table.
    const counting = addCell(bob.doc, 'sql', 'SELECT count(*) AS n FROM calcium_demo_rois WHERE is_cell = 1', 'cell_count');
    requestRun(bob.doc, counting, aliceUser, aliceOrigin);
    const countIs = (n: number) => waitRun(bob.doc, counting, (v) => v.state === 'done' && JSON.stringify(v.outputs).includes(`{"n":${n}}`), `the SQL cell to count ${n}`, 60_000);
    await countIs(ev.rois.detected);
    setRoiEdit(bob.doc, id, first, { action: 'delete', by: 'alice', at: Date.now() }, aliceOrigin);
    await countIs(ev.rois.detected - 1);
    stages.add('after-delete'); // a new cell name for the second evaluation
    const after = await evaluate();
    expect(after.rois.detected).toBe(ev.rois.detected - 1);
    // SQL sees the edit too: the server rewrote the table (and SQL cells over it re-run).
    const roiRow = async (roi: number) => (await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/data/query`, { sql: `SELECT is_cell, pipeline_is_cell, edit FROM calcium_demo_rois WHERE id = ${roi}` })).json.rows?.[0] ?? null;
    const sqlRow = (roi: number, want: Record<string, unknown>, message: string) =>
      waitFor(async () => {
        const row = await roiRow(roi);
        return row && Object.entries(want).every(([k, v]) => String(row[k]) === String(v)) ? row : null;
      }, { message, timeout: 60_000 });
    await sqlRow(first, { is_cell: 0, pipeline_is_cell: 1, edit: 'deleted by alice' }, 'the deletion in SQL');
    // A person overrules the soma rule, either way: a cell called not a cell, then a cell again.
    const other = Number((await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/data/query`, { sql: `SELECT id FROM calcium_demo_rois WHERE is_cell = 1 AND id > ${first} ORDER BY id LIMIT 1` })).json.rows[0].id);
    setRoiEdit(bob.doc, id, other, { action: 'classify', cell: false, by: 'alice', at: Date.now() }, aliceOrigin);
    stages.add('not-a-cell');
    expect((await evaluate()).rois.detected).toBe(ev.rois.detected - 2);
    await sqlRow(other, { is_cell: 0, pipeline_is_cell: 1, edit: 'marked not a cell by alice' }, 'the reclassification in SQL');
    expect(Number((await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/data/query`, { sql: 'SELECT count(*) AS n FROM calcium_demo_rois WHERE is_cell = 1' })).json.rows[0].n)).toBe(ev.rois.detected - 2);
    setRoiEdit(bob.doc, id, other, { action: 'classify', cell: true, by: 'alice', at: Date.now() }, aliceOrigin);
    stages.add('a-cell-again');
    expect((await evaluate()).rois.detected).toBe(ev.rois.detected - 1);
    await sqlRow(other, { is_cell: 1, edit: 'marked a cell by alice' }, 'a cell again in SQL');
    setRoiEdit(bob.doc, id, other, null, aliceOrigin);
    await sqlRow(other, { is_cell: 1, edit: null }, 'no edit in SQL'); // an empty CSV field reads as NULL

    // The figure: the mean image with every ROI outlined, after the edits, as a picture in the cell.
    const fig = addCell(bob.doc, 'code', `await calcium.figure(${JSON.stringify(id)})`);
    requestRun(bob.doc, fig, aliceUser, aliceOrigin);
    const figRun = await waitRun(bob.doc, fig, (v) => v.state === 'done' || v.state === 'error', 'figure', 60_000);
    const img = figRun.outputs[0];
    expect(img, shown(figRun)).toMatchObject({ type: 'image', mime: 'image/svg+xml' });
    const svg = (img as { data: string }).data;
    if (process.env.FIG_OUT) fs.writeFileSync(process.env.FIG_OUT, svg);
    expect(svg).toMatch(/^<svg [^>]*width="480"/); // 96 px enlarged 5 times
    expect(svg).toContain('<image href="data:image/png;base64,');
    expect(svg).toContain(`${ev.rois.detected - 1} cells (green)`);
    expect(svg).not.toContain(`<title>ROI ${first}</title>`); // deleted
    expect(svg.match(/<title>ROI \d+<\/title>/g)!.length).toBe(result.summary.rois - 1);
    // A bad image name is a clear error in the cell.
    const bad = addCell(bob.doc, 'code', `await calcium.figure(${JSON.stringify(id)}, { image: 'median' })`);
    requestRun(bob.doc, bad, aliceUser, aliceOrigin);
    expect(shown(await waitRun(bob.doc, bad, (v) => v.state === 'error', 'bad figure', 60_000))).toMatch(/image is one of mean, max, correlation/);

    // A re-run with another neuropil coefficient reuses the registration.
    const again = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/jobs`, { kind: 'calcium', dataset: 'calcium-demo', layer: 'movie', params: { neuropilCoefficient: 0.5 } });
    const second = (await waitJob(bob, again.json.job, (j) => j.status === 'done' || j.status === 'error', 'second job'))!;
    expect(second.status).toBe('done');
    expect((second.result as { reusedRegistration: boolean }).reusedRegistration).toBe(true);

    // Piecewise-rigid registration on request: cached apart from the rigid one, and reused for itself.
    const startDone = async (params: Record<string, unknown>) => {
      const r = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/jobs`, { kind: 'calcium', dataset: 'calcium-demo', layer: 'movie', params });
      expect(r.status, JSON.stringify(r.json)).toBe(201);
      const j = (await waitJob(bob, r.json.job, (x) => x.status === 'done' || x.status === 'error', 'piecewise job'))!;
      expect([j.status, j.error]).toEqual(['done', null]);
      return j;
    };
    const pw = await startDone({ blockSize: 48 });
    expect(pw.params).toMatchObject({ blockSize: 48 });
    expect((pw.result as { reusedRegistration: boolean }).reusedRegistration).toBe(false);
    const pwAgain = await startDone({ blockSize: 48, neuropilCoefficient: 0.5 });
    expect((pwAgain.result as { reusedRegistration: boolean }).reusedRegistration).toBe(true);
    expect((pwAgain.result as { summary: { rois: number } }).summary.rois).toBe((pw.result as { summary: { rois: number } }).summary.rois);
  });

  it('a person stops a running job: it ends stopped and publishes nothing', async () => {
    const ws = await newWorkspace(s);
    const alice = await open(ws);
    const before = fs.readdirSync(path.join(s.config.dataDir, 'volumes')).length;
    holdNext = true;
    const r = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/jobs`, { kind: 'calcium', dataset: 'calcium-demo', layer: 'movie' });
    const id = r.json.job as string;
    await waitJob(alice, id, (j) => j.status === 'running', 'job running');
    expect(requestJobStop(alice.doc, id, { id: 'alice', name: 'Alice' }, userOrigin('alice', 'Alice'))).toBe(true);
    const end = (await waitJob(alice, id, (j) => j.status !== 'running' && j.status !== 'queued', 'job ended'))!;
    expect(end.status).toBe('stopped');
    expect(end.error).toBe('stopped by Alice');
    expect(end.result).toBeNull();
    expect(fs.readdirSync(path.join(s.config.dataDir, 'volumes')).length).toBe(before);
    expect(listTables(alice.doc)).toEqual([]);
    expect(s.jobs!.active()).toEqual([]);
  });

  it('a cell starts a job (for the person who ran it) and reads its status; bad arguments are the cell\'s error', async () => {
    const ws = await newWorkspace(s);
    const c = await open(ws);
    await waitFor(() => readKernelStatus(c.doc).state !== 'offline', { message: 'kernel online', timeout: 30_000 });
    holdNext = true; // held, then stopped below: this test is about the cell API, not the analysis
    const start = addCell(c.doc, 'code', "const job = await calcium.start('calcium-demo', 'movie', { tauDecay: 0.7, detection: { seedThreshold: 5 } });\njob");
    requestRun(c.doc, start, aliceUser, aliceOrigin);
    const ran = await waitRun(c.doc, start, (r) => r.state === 'done' || r.state === 'error');
    const id = shown(ran).replace(/^"|"$/g, '');
    expect(id).toMatch(/^j_/);
    const job = readJob(c.doc, id)!;
    expect(job.requestedBy).toEqual({ id: 'alice', name: 'Alice', via: 'cell' });
    expect(job.params).toMatchObject({ tauDecay: 0.7, detection: { seedThreshold: 5 } });
    const status = addCell(c.doc, 'code', 'const st = await calcium.status(job);\nst.kind + " " + st.input.dataset');
    requestRun(c.doc, status, aliceUser, aliceOrigin);
    expect(shown(await waitRun(c.doc, status, (r) => r.state === 'done' || r.state === 'error'))).toMatch(/^"?calcium calcium-demo"?$/);
    expect(s.jobs!.stop(ws, id, 'stopped by the test')).toBe(true);
    await waitJob(c, id, (j) => j.status === 'stopped', 'stopped');
    const bad = addCell(c.doc, 'code', "await calcium.start('calcium-demo', 'movie', { diameter: 'big' })");
    requestRun(c.doc, bad, aliceUser, aliceOrigin);
    expect(shown(await waitRun(c.doc, bad, (r) => r.state === 'error'))).toMatch(/invalid parameters: diameter/);
  });

  it('the demo notebook runs the whole analysis: job, tables, charts and the evaluation', async () => {
    const ws = (await s.workspaces.create({ name: 'Demo copy', fill: fillDemo })).id;
    const c = await open(ws);
    // As on the seeded demo: the ground-truth neurons and their map, whose selection table a cell reads.
    await demoAtlasSeeder({ config: s.config, hocuspocus: s.hocuspocus, kernels: s.kernels! })(ws);
    await waitFor(() => getTable(c.doc, 'demo_neurons_map_selection'), { timeout: 120_000, message: 'the demo map\'s selection table' });
    await waitFor(() => readKernelStatus(c.doc).state !== 'offline', { message: 'kernel online', timeout: 30_000 });
    const cells = listCells(c.doc);
    const jobCell = cells.find((x) => x.kind === 'code' && cellSource(x).includes('calcium.start'))!;
    requestRun(c.doc, jobCell.id, aliceUser, aliceOrigin);
    const id = shown(await waitRun(c.doc, jobCell.id, (r) => r.state === 'done' || r.state === 'error')).replace(/^"|"$/g, '');
    await waitJob(c, id, (j) => j.status === 'done' || j.status === 'error', 'demo job');
    expect(readJob(c.doc, id)!.status).toBe('done');
    // The cells that depend on `job` ran at once (the job was still running): Run all again now.
    const evalCell = cells.find((x) => x.kind === 'code' && cellSource(x).includes('calcium.evaluate'))!;
    await kernelIdle(s, ws);
    const before = readCellRun(c.doc, evalCell.id)?.exec?.count ?? 0;
    requestRunAll(c.doc, aliceUser, aliceOrigin);
    const ev = await waitRun(c.doc, evalCell.id, (r) => (r.state === 'done' || r.state === 'error') && (r.exec?.count ?? 0) > before, 'evaluation', 120_000);
    if (ev.state !== 'done') console.log('JOBS', JSON.stringify(listJobs(c.doc).map((j) => [j.id, j.status, j.input, j.requestedBy])));
    expect([ev.state, shown(ev)]).toEqual(['done', expect.any(String)]);
    for (const cell of listCells(c.doc).filter((x) => x.kind !== 'markdown')) {
      // Cells after the evaluation (the atlas's) may still be on their way.
      const v = await waitRun(c.doc, cell.id, finished, `${cell.name ?? 'a cell'} after Run all`, 120_000);
      if (v.state !== 'done') console.log('CELL', cellSource(cell).slice(0, 60), shown(v));
      expect([cell.name ?? cellSource(cell).slice(0, 40), v.state]).toEqual([cell.name ?? cellSource(cell).slice(0, 40), 'done']);
    }
    const charts = listCells(c.doc).flatMap((x) => readCellRun(c.doc, x.id)?.outputs ?? []).filter((o) => o.type === 'chart');
    expect(charts.length).toBeGreaterThanOrEqual(3); // the ROI trace, the traces of the top cells, the raster
    const images = listCells(c.doc).flatMap((x) => readCellRun(c.doc, x.id)?.outputs ?? []).filter((o) => o.type === 'image');
    expect(images).toEqual([expect.objectContaining({ mime: 'image/svg+xml' })]); // the ROIs on the mean image
  });

  it('refuses bad requests with clear errors, and viewers', async () => {
    const ws = await newWorkspace(s);
    const post = (body: unknown, token = s.ownerToken) => api(s.url, token, 'POST', `/api/workspaces/${ws}/jobs`, body);
    expect((await post({ kind: 'calcium', dataset: 'nope', layer: 'movie' })).json.message).toMatch(/no dataset "nope"/);
    expect((await post({ kind: 'calcium', dataset: 'calcium-demo', layer: 'mean' })).json.message).toMatch(/not a movie/);
    expect((await post({ kind: 'calcium', dataset: 'calcium-demo', layer: 'movie', params: { diameter: -3 } })).json.message).toMatch(/diameter/);
    expect((await post({ kind: 'calcium', dataset: 'calcium-demo', layer: 'movie', params: { shell: 'rm -rf' } })).json.message).toMatch(/shell/);
    expect((await post({ kind: 'calcium', dataset: '../etc', layer: 'movie' })).status).toBe(400);
    const share = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/share`, { role: 'viewer' });
    expect(share.status).toBe(200);
    const viewer = await post({ kind: 'calcium', dataset: 'calcium-demo', layer: 'movie' }, share.json.token);
    expect(viewer.status).toBe(403);
    const c = await open(ws);
    expect(listJobs(c.doc)).toEqual([]);
  });
});
