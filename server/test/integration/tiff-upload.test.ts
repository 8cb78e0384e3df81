/**
 * TIFF recordings uploaded to a real server: the upload is answered 202 as soon as it is stored,
 * and a second client sees the import job go running (reading frames) and done; the dataset is then
 * served with its movie, mean and max, the movie's chunks holding the written pixels. A truncated
 * file and a file without a frame rate end the job in an error with the importer's message, leave
 * no dataset directory (not even a hidden one) and no upload behind. A person stops an import held
 * mid-file by a test hook (so the stop always comes first), by the API or the document's signal.
 * Viewers and bad requests are refused before anything is stored.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCell, listJobs, listTables, readJob, readViewerState, requestJobStop, requestRun, userOrigin, type Job } from '@plexus/shared';
import { synthMovie, type SynthCell } from '../../../calcium/test/synthetic.ts';
import type { PlexusServer } from '../../src/app.ts';
import { writeTiff } from '../../../calcium/test/tiff-writer.ts';
import { api, hocuspocusClient, tmpDir, waitFor, type HpClient } from '@plexus/testkit';
import { newWorkspace, startKernelServer } from '@plexus/testkit/kernel';

const W = 48;
const H = 40;
const F = 70; // two slabs of the importer (64 frames each), the second partial
const MAX_BYTES = 1_000_000;

const value = (x: number, y: number, f: number) => (x * 7 + y * 131 + f * 1009 + ((x * y) % 17) * 97) % 65536;
const pages = Array.from({ length: F }, (_, f) => Array.from({ length: W * H }, (_, i) => value(i % W, Math.floor(i / W), f)));
const IMAGEJ = `ImageJ=1.54f\nimages=${F}\nframes=${F}\nfinterval=0.05\n`;
const stack = (description?: string) => writeTiff({ width: W, height: H, sampleType: 'uint16', pages, ...(description ? { description } : {}) });

let s: PlexusServer;
let dataDir: string;
const clients: HpClient[] = [];
let holdNext = false;

beforeAll(async () => {
  dataDir = tmpDir();
  // jobNice 0: on a machine busy with other suites a nice'd import would crawl.
  s = await startKernelServer({ dataDir, jobNice: 0, recordingMaxBytes: MAX_BYTES }, {
    wrapImportSpec: (spec) => {
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

async function upload(ws: string, query: string, body: Uint8Array | ReadableStream<Uint8Array>, token = s.ownerToken): Promise<{ status: number; json: any }> {
  const res = await fetch(`${s.url}/api/workspaces/${ws}/recordings?${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'image/tiff' },
    body,
    duplex: 'half',
  } as RequestInit);
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

const waitJob = async (c: HpClient, id: string, pred: (j: Job) => boolean, message: string): Promise<Job> =>
  (await waitFor(() => {
    const j = readJob(c.doc, id);
    return j && pred(j) ? j : null;
  }, { timeout: 60_000, message }))!;
const ended = (j: Job) => j.status === 'done' || j.status === 'error' || j.status === 'stopped';

const volumesDir = () => path.join(dataDir, 'volumes');
/** Entries of the volumes directory, hidden ones included. */
const volumeEntries = () => (fs.existsSync(volumesDir()) ? fs.readdirSync(volumesDir()).sort() : []);
/** Uploads still stored (they are deleted whatever the outcome). */
const uploadsLeft = () => {
  const dir = path.join(dataDir, 'jobs', 'uploads-tmp');
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
};

describe('TIFF recording uploads', { timeout: 180_000 }, () => {
  it('an upload is imported as a job everyone sees, and its dataset is served with the written pixels', async () => {
    const ws = await newWorkspace(s);
    const bob = await open(ws);
    const statuses = new Map<string, string[]>();
    const stages = new Set<string>();
    bob.doc.on('update', () => {
      for (const j of listJobs(bob.doc)) {
        const seen = statuses.get(j.id) ?? [];
        if (seen.at(-1) !== j.status) seen.push(j.status);
        statuses.set(j.id, seen);
        if (j.progress) stages.add(j.progress.stage);
      }
    });
    const r = await upload(ws, `name=${encodeURIComponent('mouse 3.tif')}`, stack(IMAGEJ));
    expect(r.status).toBe(202);
    expect(r.json.dataset).toBe('mouse-3');
    const id = r.json.job as string;
    const done = await waitJob(bob, id, ended, 'import ended');
    expect(done.error).toBeNull();
    expect(done).toMatchObject({ kind: 'tiff-import', status: 'done', title: 'Import of mouse 3.tif', input: { fileName: 'mouse 3.tif' }, requestedBy: { via: 'person' } });
    expect(done.result).toEqual({ dataset: 'mouse-3', layers: ['movie', 'mean', 'max'], width: W, height: H, frames: F, frameRate: 20, sampleType: 'uint16', channels: 1, planes: 1, droppedPages: 0 });
    expect(statuses.get(id)!.slice(-2)).toEqual(['running', 'done']);
    expect(stages.has('reading')).toBe(true);
    expect(uploadsLeft()).toEqual([]);

    const list = await api(s.url, s.ownerToken, 'GET', '/volumes/');
    expect(list.json.datasets.find((d: { name: string }) => d.name === 'mouse-3')).toMatchObject({ status: 'ready', title: 'mouse 3.tif' });
    const ds = await api(s.url, s.ownerToken, 'GET', '/volumes/mouse-3/');
    expect(ds.status).toBe(200);
    expect(ds.json.layers.map((l: { name: string }) => l.name).sort()).toEqual(['max', 'mean', 'movie']);
    // Frame 65 from the chunk of frames 64–69 (x fastest, then y, then frame).
    const info = (await api(s.url, s.ownerToken, 'GET', '/volumes/mouse-3/movie/info')).json as { scales: { key: string; chunk_sizes: number[][] }[] };
    expect(info.scales[0]!.chunk_sizes).toEqual([[64, 64, 64]]);
    const chunk = await fetch(`${s.url}/volumes/mouse-3/movie/${info.scales[0]!.key}/0-${W}_0-${H}_64-${F}`, { headers: { authorization: `Bearer ${s.ownerToken}` } });
    expect(chunk.status).toBe(200);
    const bytes = new Uint8Array(await chunk.arrayBuffer());
    expect(bytes.length).toBe(W * H * (F - 64) * 2);
    const voxels = new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
    expect(Array.from(voxels.subarray(W * H, 2 * W * H))).toEqual(pages[65]);
  });

  it('an uploaded recording of cells is analysed from a cell: tables and the ROI layer reach another person', async () => {
    const ws = await newWorkspace(s);
    const alice = await open(ws);
    const bob = await open(ws);
    // 48 × 48 px × 200 frames at 30 Hz of four firing cells, as a microscope would write it (uint16 pages).
    const cells: SynthCell[] = [
      { cx: 13, cy: 13, a: 4, brightness: 400, rate: 0.8 },
      { cx: 35, cy: 14, a: 4, brightness: 400, rate: 0.8 },
      { cx: 14, cy: 35, a: 4, brightness: 400, rate: 0.8 },
      { cx: 34, cy: 34, a: 4, brightness: 400, rate: 0.8 },
    ];
    const m = synthMovie({ width: 48, height: 48, frames: 200, frameRate: 30, tau: 0.7, cells, noise: 40, background: 600, seed: 9, amplitude: 0.8 });
    const n = 48 * 48;
    const moviePages = Array.from({ length: m.frames }, (_, f) => Array.from(m.data.subarray(f * n, (f + 1) * n), (v) => Math.max(0, Math.min(65535, Math.round(v)))));
    const tiff = writeTiff({ width: 48, height: 48, sampleType: 'uint16', pages: moviePages, description: `ImageJ=1.54f\nimages=${m.frames}\nframes=${m.frames}\nfinterval=${1 / 30}\n` });
    const up = await upload(ws, 'name=cells.tif', tiff);
    expect(up.status).toBe(202);
    expect((await waitJob(bob, up.json.job, ended, 'import')).status).toBe('done');
    // Alice runs the analysis from a cell; Bob's replica gets the job, its tables and its ROI layer.
    const cell = createCell(alice.doc, { kind: 'code', author: 'alice', source: `const job = await calcium.start(${JSON.stringify(up.json.dataset)}, 'movie', { tauDecay: 'GCaMP6f' });\njob` }, userOrigin('alice', 'Alice'));
    requestRun(alice.doc, cell, { id: 'alice', name: 'Alice' }, userOrigin('alice', 'Alice'));
    const jobId = await waitFor(() => listJobs(bob.doc).find((j) => j.kind === 'calcium')?.id ?? null, { timeout: 60_000, message: 'the job on Bob' });
    const done = await waitJob(bob, jobId!, ended, 'analysis');
    expect([done.status, done.error]).toEqual(['done', null]);
    expect(done.requestedBy).toMatchObject({ id: 'alice', via: 'cell' });
    const result = done.result as { dataset: string; tables: { rois: string; traces: string }; summary: { cells: number } };
    expect(result.summary.cells).toBe(4);
    await waitFor(() => ['rois', 'traces'].every((t) => listTables(bob.doc).some((x) => x.name === result.tables[t as 'rois'])), { message: 'tables on Bob' });
    const layer = (readViewerState(bob.doc).layers as Array<{ type?: string; source?: { url?: string } }> | undefined)?.find((l) => l.source?.url === `precomputed://plexus://volumes/${result.dataset}/rois`);
    expect(layer?.type).toBe('segmentation');
    const q = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/data/query`, { sql: `SELECT count(*) AS n FROM ${result.tables.rois} WHERE is_cell = 1` });
    expect(Number(q.json.rows[0].n)).toBe(4);
  });

  it('a truncated file or one without a frame rate: the job ends in the importer\'s error, nothing is left', async () => {
    const ws = await newWorkspace(s);
    const alice = await open(ws);
    const whole = stack(IMAGEJ);
    const cut = await upload(ws, 'name=cut.tif&frameRate=10', whole.subarray(0, whole.length - 100));
    expect(cut.status).toBe(202);
    expect(cut.json.dataset).toBe('cut');
    const failed = await waitJob(alice, cut.json.job, ended, 'truncated import ended');
    expect(failed.status).toBe('error');
    expect(failed.error).toMatch(/page 70.*truncated/);
    expect(failed.error).not.toContain(dataDir);
    expect(failed.result).toBeNull();
    expect(volumeEntries().filter((e) => e.includes('cut'))).toEqual([]);
    expect(uploadsLeft()).toEqual([]);
    expect((await api(s.url, s.ownerToken, 'GET', '/volumes/cut/')).status).toBe(404);

    // The name of the first test's dataset is taken: this one gets the next.
    const noRate = await upload(ws, `name=${encodeURIComponent('mouse 3.tif')}`, stack());
    expect(noRate.status).toBe(202);
    expect(noRate.json.dataset).toBe('mouse-3-2');
    const noRateEnd = await waitJob(alice, noRate.json.job, ended, 'import without frame rate ended');
    expect(noRateEnd.status).toBe('error');
    expect(noRateEnd.error).toBe('the file does not say its frame rate: give frameRate');
    expect(volumeEntries().filter((e) => e.includes('mouse-3-2'))).toEqual([]);
    expect(uploadsLeft()).toEqual([]);
    expect(s.recordings.active()).toEqual([]);
  });

  it('a person stops an import held mid-file, by the API or the document: stopped, nothing left', async () => {
    const ws = await newWorkspace(s);
    const alice = await open(ws);
    const tmpOf = (dataset: string) => volumeEntries().some((e) => e.startsWith(`.${dataset}.tmp-`));

    holdNext = true;
    const first = await upload(ws, 'name=held.tif', stack(IMAGEJ));
    expect(first.status).toBe(202);
    // Held at frame 5: the importer has made its hidden directory and waits for the stop.
    await waitFor(() => tmpOf('held'), { timeout: 60_000, message: 'import writing' });
    const stop = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/jobs/${first.json.job}/stop`);
    expect(stop.json).toEqual({ stopped: true });
    const end = await waitJob(alice, first.json.job, ended, 'stopped by the API');
    expect(end.status).toBe('stopped');
    expect(end.error).toMatch(/^stopped by /);
    expect(volumeEntries().filter((e) => e.includes('held'))).toEqual([]);

    holdNext = true;
    const second = await upload(ws, 'name=held.tif', stack(IMAGEJ));
    expect(second.json.dataset).toBe('held');
    await waitFor(() => tmpOf('held'), { timeout: 60_000, message: 'second import writing' });
    expect(requestJobStop(alice.doc, second.json.job, { id: 'alice', name: 'Alice' }, userOrigin('alice', 'Alice'))).toBe(true);
    const end2 = await waitJob(alice, second.json.job, ended, 'stopped by the document');
    expect(end2.error).toBe('stopped by Alice');
    expect(end2.status).toBe('stopped');
    expect(end2.error).toBe('stopped by Alice');
    expect(end2.result).toBeNull();
    expect(volumeEntries().filter((e) => e.includes('held'))).toEqual([]);
    expect(uploadsLeft()).toEqual([]);
    expect(s.recordings.active()).toEqual([]);
  });

  it('refuses viewers and bad requests with clear errors, storing nothing', async () => {
    const ws = await newWorkspace(s);
    const body = stack(IMAGEJ);
    const share = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/share`, { role: 'viewer' });
    const viewer = await upload(ws, 'name=v.tif', body, share.json.token);
    expect(viewer.status).toBe(403);
    expect(viewer.json.message).toMatch(/viewers cannot upload/);

    const refused = async (query: string, status: number, message: RegExp, b: Uint8Array = body) => {
      const r = await upload(ws, query, b);
      expect(r.status, query).toBe(status);
      expect(r.json.message, query).toMatch(message);
    };
    await refused('frameRate=20', 400, /name \(the file name\)/);
    await refused('name=..%2Fx.tif', 400, /not a plain file name/);
    await refused('name=data.csv', 415, /TIFF/);
    await refused('name=a.tif&channel=-1', 400, /channel/);
    await refused('name=a.tif&frameRate=fast', 400, /frameRate/);
    await refused('name=a.tif&dataset=..', 400, /dataset/);
    await refused('name=a.tif&dataset=mouse-3', 409, /"mouse-3" already exists/);
    await refused('name=a.tif', 400, /empty/, new Uint8Array(0));
    await refused('name=big.tif', 413, /larger than the 1 MiB limit \(PLEXUS_RECORDING_MAX_BYTES\)/, new Uint8Array(MAX_BYTES + 1));
    // Without a length (chunked): the cap stops the stream. A raw request, so that the reset of
    // the socket the server closes after its 413 (the client is still sending) is handled here.
    const streamed = await new Promise<{ status: number }>((resolve, reject) => {
      const req = http.request(`${s.url}/api/workspaces/${ws}/recordings?name=big.tif`, { method: 'POST', headers: { authorization: `Bearer ${s.ownerToken}`, 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
        // The reset can also cut the response short (a loaded machine reads it late): its status is in.
        res.on('error', () => resolve({ status: res.statusCode ?? 0 }));
      });
      req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' || e.code === 'EPIPE' ? undefined : reject(e)));
      for (let i = 0; i < 3; i++) req.write(new Uint8Array(MAX_BYTES / 2));
      req.end();
    });
    expect(streamed.status).toBe(413);

    expect(uploadsLeft()).toEqual([]);
    const c = await open(ws);
    expect(listJobs(c.doc)).toEqual([]);
    expect(volumeEntries().filter((e) => /^(a|big|v)\b/.test(e))).toEqual([]);
  });
});
