/**
 * /volumes and the volume API on a real server over a small generated demo dataset (64×64×60):
 * info and chunk bytes equal the generator's frames, gzip negotiation, byte ranges, ETag/304,
 * HEAD, listings, path traversal in every form, token/cookie access, CORS, histogram and ROI
 * traces against values computed from the rendered movie, and the 503 while generating.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlexusServer } from '../../src/app.ts';
import { frameRenderer } from '../../src/volumes/demo/calcium-render.ts';
import type { CalciumParams, CalciumTruth } from '../../src/volumes/demo/calcium-sim.ts';
import { writeDemoDataset, type DemoLayout } from '../../src/volumes/demo/demo-dataset.ts';
import { roisCsv } from '../../src/volumes/demo/demo-tables.ts';
import { isDemoDatasetCurrent } from '../../src/volumes/demo/ensure-demo.ts';
import { binOf } from '../../src/volumes/sampling.ts';
import { api, rawRequest, startTestServer, tmpDir, type RawResponse } from '@plexus/testkit';

const PARAMS: Partial<CalciumParams> = { width: 64, height: 64, frames: 60, neurons: 10, seed: 3 };
const LAYOUT: Partial<DemoLayout> = { movieChunk: [32, 32, 16], planeChunk: [32, 32] };
const [W, H, F] = [64, 64, 60];
const S0 = '/volumes/calcium-demo/movie/1000_1000_33333333';

let s: PlexusServer;
let dataDir: string;
let truth: CalciumTruth;
let movie: Uint16Array;
const auth = () => ({ authorization: `Bearer ${s.ownerToken}` });
const get = (p: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> => rawRequest(s.url, p, { method, headers: { ...auth(), ...headers } });

/** The movie's voxels in [x0,x1)×[y0,y1)×[z0,z1) as little-endian bytes (what a raw chunk holds). */
function region(x0: number, x1: number, y0: number, y1: number, z0: number, z1: number): Buffer {
  const out = Buffer.alloc((x1 - x0) * (y1 - y0) * (z1 - z0) * 2);
  let o = 0;
  for (let z = z0; z < z1; z++) for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++, o += 2) out.writeUInt16LE(movie[x + W * (y + H * z)]!, o);
  return out;
}

beforeAll(async () => {
  dataDir = tmpDir();
  ({ truth } = await writeDemoDataset(path.join(dataDir, 'volumes', 'calcium-demo'), { params: PARAMS, layout: LAYOUT }));
  movie = new Uint16Array(W * H * F);
  const render = frameRenderer(truth);
  for (let f = 0; f < F; f++) render(f, movie, f * W * H);
  fs.writeFileSync(path.join(dataDir, 'outside.txt'), 'secret outside the volumes directory');
  s = await startTestServer({ dataDir });
});
afterAll(() => s.close());

describe('precomputed files', () => {
  it('serves info as JSON, identical to the file', async () => {
    const r = await get('/volumes/calcium-demo/movie/info');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.json()).toEqual(JSON.parse(fs.readFileSync(path.join(dataDir, 'volumes/calcium-demo/movie/info'), 'utf8')));
    expect(r.json().scales.map((x: { size: number[] }) => x.size)).toEqual([[64, 64, 60], [32, 32, 60]]);
  });

  it('serves chunks whose bytes are the generated frames (identity without Accept-Encoding)', async () => {
    for (const [x0, x1, y0, y1, z0, z1] of [[0, 32, 0, 32, 0, 16], [32, 64, 32, 64, 48, 60], [32, 64, 0, 32, 16, 32]] as const) {
      const r = await get(`${S0}/${x0}-${x1}_${y0}-${y1}_${z0}-${z1}`);
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(r.headers['content-type']).toBe('application/octet-stream');
      expect(Number(r.headers['content-length'])).toBe((x1 - x0) * (y1 - y0) * (z1 - z0) * 2);
      expect(r.body.equals(region(x0, x1, y0, y1, z0, z1))).toBe(true);
    }
    // The downsampled scale is the 2×2 mean.
    const d = await get('/volumes/calcium-demo/movie/2000_2000_33333333/0-32_0-32_0-16');
    const v = d.body.readUInt16LE(2 * (5 + 32 * 7));
    const px = (x: number, y: number) => movie[x + W * y]!;
    expect(v).toBe((px(10, 14) + px(11, 14) + px(10, 15) + px(11, 15) + 2) >> 2);
  });

  it('sends the stored gzip bytes with Content-Encoding: gzip to clients that accept it', async () => {
    const p = `${S0}/0-32_32-64_16-32`;
    const gz = await get(p, { 'accept-encoding': 'gzip, deflate, br' });
    expect(gz.status).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toBe('Accept-Encoding');
    expect(Number(gz.headers['content-length'])).toBe(gz.body.length);
    expect(gz.body.equals(fs.readFileSync(path.join(dataDir, 'volumes/calcium-demo/movie/1000_1000_33333333/0-32_32-64_16-32.gz')))).toBe(true);
    expect(gunzipSync(gz.body).equals(region(0, 32, 32, 64, 16, 32))).toBe(true);
    const plain = await get(p, { 'accept-encoding': 'gzip;q=0, identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.equals(region(0, 32, 32, 64, 16, 32))).toBe(true);
    expect(plain.headers.etag).not.toBe(gz.headers.etag);
    // fetch (as Neuroglancer uses) decodes it transparently.
    const f = await fetch(s.url + p, { headers: auth() });
    expect(Buffer.from(await f.arrayBuffer()).equals(region(0, 32, 32, 64, 16, 32))).toBe(true);
  });

  it('answers byte ranges with 206 and the exact identity bytes, suffix and open ranges, 416 beyond the end', async () => {
    const p = `${S0}/32-64_0-32_0-16`;
    const whole = region(32, 64, 0, 32, 0, 16);
    const L = whole.length;
    const cases: Array<[string, number, number]> = [['bytes=100-199', 100, 199], ['bytes=-10', L - 10, L - 1], [`bytes=${L - 5}-`, L - 5, L - 1], [`bytes=0-${L + 100}`, 0, L - 1], ['bytes=7-7', 7, 7]];
    for (const [range, a, b] of cases) {
      // Even when the client accepts gzip, a range is served from the identity bytes.
      const r = await get(p, { range, 'accept-encoding': 'gzip' });
      expect(r.status, range).toBe(206);
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(r.headers['content-range']).toBe(`bytes ${a}-${b}/${L}`);
      expect(Number(r.headers['content-length'])).toBe(b - a + 1);
      expect(r.body.equals(whole.subarray(a, b + 1)), range).toBe(true);
    }
    for (const range of [`bytes=${L}-`, `bytes=${L + 10}-${L + 20}`, 'bytes=-0']) {
      const r = await get(p, { range });
      expect(r.status, range).toBe(416);
      expect(r.headers['content-range']).toBe(`bytes */${L}`);
    }
    // Several ranges or other units: the whole resource.
    expect((await get(p, { range: 'bytes=0-1,5-6' })).status).toBe(200);
    expect((await get(p, { range: 'items=0-1' })).status).toBe(200);
    expect((await get(p, { range: 'bytes=9-3' })).status).toBe(200);
    // If-Range with a stale validator: the whole resource.
    expect((await get(p, { range: 'bytes=0-1', 'if-range': '"stale"' })).status).toBe(200);
    const etag = (await get(p, {}, 'HEAD')).headers.etag as string;
    expect((await get(p, { range: 'bytes=0-1', 'if-range': etag })).status).toBe(206);
    // info is stored raw: ranges come straight from the file.
    const info = fs.readFileSync(path.join(dataDir, 'volumes/calcium-demo/movie/info'));
    const ri = await get('/volumes/calcium-demo/movie/info', { range: 'bytes=2-9' });
    expect(ri.status).toBe(206);
    expect(ri.body.equals(info.subarray(2, 10))).toBe(true);
  });

  it('revalidates with ETag and Last-Modified (304), answers HEAD without a body', async () => {
    const p = `${S0}/0-32_0-32_32-48`;
    for (const enc of ['gzip', 'identity']) {
      const first = await get(p, { 'accept-encoding': enc });
      const etag = first.headers.etag as string;
      expect(etag).toMatch(/^"[^"]+"$/);
      const again = await get(p, { 'accept-encoding': enc, 'if-none-match': etag });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
      expect(again.headers.etag).toBe(etag);
      expect((await get(p, { 'accept-encoding': enc, 'if-none-match': '"other"' })).status).toBe(200);
      expect((await get(p, { 'accept-encoding': enc, 'if-modified-since': first.headers['last-modified'] as string })).status).toBe(304);
      expect((await get(p, { 'accept-encoding': enc, 'if-modified-since': new Date(0).toUTCString() })).status).toBe(200);
    }
    const head = await get(p, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(Number(head.headers['content-length'])).toBe(32 * 32 * 16 * 2);
    expect(head.headers['accept-ranges']).toBe('bytes');
    expect((await get(p, {}, 'DELETE')).status).toBe(405);
  });

  it('lists datasets and layers (with info, plexus.json, Neuroglancer source URLs) and serves the tables', async () => {
    const list = (await get('/volumes/')).json();
    expect(list.datasets).toEqual([{ name: 'calcium-demo', status: 'ready', title: expect.any(String), layers: ['labels', 'max', 'mean', 'movie'], url: '/volumes/calcium-demo/' }]);
    expect((await get('/volumes')).json()).toEqual(list);
    const ds = (await get('/volumes/calcium-demo/')).json();
    expect(ds.meta.frameRate).toBe(30);
    const byName = Object.fromEntries(ds.layers.map((l: { name: string }) => [l.name, l]));
    expect(byName.movie).toMatchObject({ format: 'precomputed', url: '/volumes/calcium-demo/movie', source: `precomputed://${s.url}/volumes/calcium-demo/movie`, meta: { axes: { z: 's' }, frameRate: 30 } });
    expect(byName.labels.info).toMatchObject({ type: 'segmentation', data_type: 'uint32', scales: [{ size: [64, 64, 1], resolution: [1000, 1000, 60 * 33333333] }] });
    expect(byName.mean.info.data_type).toBe('float32');
    expect(ds.tables.map((t: { name: string }) => t.name)).toEqual(['rois', 'spikes', 'traces']);
    const rois = await get('/volumes/calcium-demo/tables/rois.csv');
    expect(rois.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(rois.body.toString()).toBe(roisCsv(truth));
    expect((await get('/volumes/calcium-demo/movie')).status).toBe(404);
    expect((await get('/volumes/nope/')).status).toBe(404);
    expect((await get(`${S0}/0-1_0-1_0-1`)).status).toBe(404);
  });
});

describe('zarr v2', () => {
  it('serves a zarr array as files (.zarray, chunks), lists it with a zarr:// source, refuses to sample it', async () => {
    const dir = path.join(dataDir, 'volumes/calcium-demo/stack');
    fs.mkdirSync(dir);
    const zarray = { zarr_format: 2, shape: [4, 6], chunks: [2, 6], dtype: '<u2', compressor: null, fill_value: 0, order: 'C', filters: null };
    fs.writeFileSync(path.join(dir, '.zarray'), JSON.stringify(zarray));
    fs.writeFileSync(path.join(dir, '.zattrs'), '{}');
    const chunk = Buffer.from(Uint16Array.from({ length: 12 }, (_, i) => i * 3).buffer);
    fs.writeFileSync(path.join(dir, '0.0'), chunk);
    try {
      const meta = await get('/volumes/calcium-demo/stack/.zarray');
      expect(meta.status).toBe(200);
      expect(meta.headers['content-type']).toBe('application/json');
      expect(meta.json()).toEqual(zarray);
      expect((await get('/volumes/calcium-demo/stack/0.0')).body.equals(chunk)).toBe(true);
      expect((await get('/volumes/calcium-demo/stack/.zgroup')).status).toBe(404);
      expect((await get('/volumes/calcium-demo/stack/.git')).status).toBe(400);
      const layer = (await get('/volumes/calcium-demo/')).json().layers.find((l: { name: string }) => l.name === 'stack');
      expect(layer).toMatchObject({ format: 'zarr', zarr: zarray, source: expect.stringMatching(/^zarr:\/\/http:.*\/volumes\/calcium-demo\/stack$/) });
      const h = await api(s.url, s.ownerToken, 'GET', '/api/volumes/calcium-demo/stack/histogram');
      expect(h.status).toBe(422);
      expect(h.json.error).toBe('unsupported-volume');
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  });
});

describe('path traversal', () => {
  it('refuses .., encoded .., encoded slashes, backslashes, absolute paths, NUL and hidden names with 400', async () => {
    const paths = [
      '/volumes/../secret.key',
      '/volumes/calcium-demo/../../secret.key',
      '/volumes/%2e%2e/secret.key',
      '/volumes/%2E%2E/%2E%2E/etc/passwd',
      '/volumes/.%2e/outside.txt',
      '/volumes/calcium-demo%2f..%2f..%2foutside.txt',
      '/volumes/calcium-demo/movie%2Finfo',
      '/volumes/..%5c..%5coutside.txt',
      '/volumes/..\\outside.txt',
      '/volumes//etc/passwd',
      '/volumes/calcium-demo//movie/info',
      '/volumes/calcium-demo/movie/info%00',
      '/volumes/calcium-demo/%00/info',
      '/volumes/.calcium-demo.tmp-1-x/plexus.json',
      '/volumes/calcium-demo/%E0%A4%A',
      'http://localhost/volumes/../secret.key',
    ];
    for (const p of paths) {
      const r = await get(p);
      expect(r.status, p).toBe(400);
      expect(r.json(), p).toMatchObject({ error: 'bad-path', message: expect.stringContaining('refused') });
    }
  });

  it('refuses symlinks that lead out of the volumes directory (404), follows ones that stay inside', async () => {
    fs.symlinkSync(dataDir, path.join(dataDir, 'volumes/calcium-demo/escape'));
    fs.symlinkSync('/etc', path.join(dataDir, 'volumes/etc'));
    fs.symlinkSync(path.join(dataDir, 'outside.txt'), path.join(dataDir, 'volumes/calcium-demo/tables/link.csv'));
    fs.symlinkSync(path.join(dataDir, 'volumes/calcium-demo'), path.join(dataDir, 'volumes/alias'));
    try {
      for (const p of ['/volumes/calcium-demo/escape/secret.key', '/volumes/calcium-demo/escape/outside.txt', '/volumes/etc/passwd', '/volumes/etc/', '/volumes/calcium-demo/tables/link.csv']) {
        const r = await get(p);
        expect(r.status, p).toBe(404);
        expect(r.body.toString()).not.toContain('secret outside');
      }
      expect((await get('/volumes/')).json().datasets.map((d: { name: string }) => d.name)).toEqual(['alias', 'calcium-demo']);
      expect((await get('/volumes/alias/movie/info')).status).toBe(200);
    } finally {
      for (const l of ['calcium-demo/escape', 'etc', 'calcium-demo/tables/link.csv', 'alias']) fs.rmSync(path.join(dataDir, 'volumes', l));
    }
  });
});

describe('access', () => {
  const info = '/volumes/calcium-demo/movie/info';

  it('refuses requests without a valid token or cookie', async () => {
    const none = await rawRequest(s.url, info);
    expect(none.status).toBe(401);
    expect(none.json().error).toBe('unauthorized');
    expect((await rawRequest(s.url, info, { headers: { authorization: 'Bearer nonsense' } })).status).toBe(401);
    expect((await rawRequest(s.url, info, { headers: { cookie: 'plexus_volumes=forged.token' } })).status).toBe(401);
    const expired = s.signer.sign({ ws: '*', role: 'owner', sub: 'x', ttlSeconds: 1, now: Date.now() - 5000 });
    expect((await rawRequest(s.url, info, { headers: { cookie: `plexus_volumes=${expired}` } })).json().error).toBe('token-expired');
    // A token in the query string is not accepted: it would end up in shared viewer state.
    expect((await rawRequest(s.url, `${info}?token=${s.ownerToken}`)).status).toBe(401);
    expect((await rawRequest(s.url, '/volumes/')).status).toBe(401);
  });

  it('POST /api/volume-session sets an HttpOnly, SameSite=Strict cookie for /volumes that grants access', async () => {
    expect((await api(s.url, null, 'POST', '/api/volume-session')).status).toBe(401);
    // Any workspace's token will do, any role.
    const viewer = s.signer.sign({ ws: 'some-workspace', role: 'viewer', sub: 'link:viewer', ttlSeconds: 3600 });
    const res = await fetch(s.url + '/api/volume-session', { method: 'POST', headers: { authorization: `Bearer ${viewer}` } });
    expect(res.status).toBe(204);
    const setCookie = res.headers.get('set-cookie')!;
    const [pair, ...attrs] = setCookie.split(';').map((x) => x.trim());
    expect(pair).toBe(`plexus_volumes=${viewer}`);
    expect(attrs).toEqual(expect.arrayContaining(['Path=/volumes', 'HttpOnly', 'SameSite=Strict']));
    const maxAge = Number(attrs.find((a) => a.startsWith('Max-Age='))!.slice(8));
    expect(maxAge).toBeGreaterThan(3590);
    expect(maxAge).toBeLessThanOrEqual(3600);
    const r = await rawRequest(s.url, info, { headers: { cookie: `other=1; ${pair}` } });
    expect(r.status).toBe(200);
    expect(r.json().type).toBe('image');
    const cleared = await fetch(s.url + '/api/volume-session', { method: 'DELETE', headers: { authorization: `Bearer ${viewer}` } });
    expect(cleared.headers.get('set-cookie')).toMatch(/^plexus_volumes=; Path=\/volumes;.*Max-Age=0/);
  });

  it('PLEXUS_PUBLIC_VOLUMES serves without a token; CORS headers only for allowed origins', async () => {
    const open = await startTestServer({ dataDir, publicVolumes: true, volumesCorsOrigins: ['https://ng.example'] });
    try {
      const r = await rawRequest(open.url, info, { headers: { origin: 'https://ng.example' } });
      expect(r.status).toBe(200);
      expect(r.headers['access-control-allow-origin']).toBe('https://ng.example');
      expect(r.headers['access-control-expose-headers']).toContain('Content-Range');
      const chunk = await rawRequest(open.url, `${S0}/0-32_0-32_0-16`, { headers: { origin: 'https://ng.example', 'accept-encoding': 'gzip' } });
      expect(chunk.headers['access-control-allow-origin']).toBe('https://ng.example');
      expect(chunk.headers.vary).toBe('Origin, Accept-Encoding');
      expect((await rawRequest(open.url, info, { headers: { origin: 'https://evil.example' } })).headers['access-control-allow-origin']).toBeUndefined();
      const pre = await rawRequest(open.url, info, { method: 'OPTIONS', headers: { origin: 'https://ng.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'range' } });
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-headers']).toContain('Range');
      expect((await rawRequest(open.url, info, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } })).status).toBe(403);
      // The sampling API stays bearer-authenticated.
      expect((await api(open.url, null, 'GET', '/api/volumes/calcium-demo/movie/histogram')).status).toBe(401);
    } finally {
      await open.close();
    }
    // Default: same origin only.
    expect((await get(info, { origin: 'https://ng.example' })).headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('sampling API', () => {
  const values = (x0: number, y0: number, z0: number, x1: number, y1: number, z1: number) => {
    const out: number[] = [];
    for (let z = z0; z < z1; z++) for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) out.push(movie[x + W * (y + H * z)]!);
    return out;
  };

  it('histogram over a bbox across chunk boundaries matches the rendered movie', async () => {
    const v = values(10, 5, 3, 50, 40, 37);
    const min = Math.min(...v);
    const max = Math.max(...v);
    const counts = new Array(16).fill(0);
    for (const x of v) counts[binOf(x, min, max, 16)]++;
    const r = await api(s.url, s.ownerToken, 'GET', '/api/volumes/calcium-demo/movie/histogram?scale=0&bbox=10,5,3,50,40,37&bins=16');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ dataset: 'calcium-demo', layer: 'movie', scale: 0, bbox: [10, 5, 3, 50, 40, 37], bins: 16, min, max, count: v.length, counts });
    expect(r.json.mean).toBeCloseTo(v.reduce((a, b) => a + b, 0) / v.length, 6);
    const ranged = await api(s.url, s.ownerToken, 'GET', `/api/volumes/calcium-demo/movie/histogram?bbox=10,5,3,50,40,37&bins=4&min=${min + 10}&max=${max - 10}`);
    expect(ranged.json.underflow).toBe(v.filter((x) => x < min + 10).length);
    expect(ranged.json.overflow).toBe(v.filter((x) => x > max - 10).length);
    // Whole-volume default, the labels (uint32) and the mean projection (float32).
    expect((await api(s.url, s.ownerToken, 'GET', '/api/volumes/calcium-demo/movie/histogram')).json.count).toBe(W * H * F);
    const labels = await api(s.url, s.ownerToken, 'GET', '/api/volumes/calcium-demo/labels/histogram?bins=11');
    expect(labels.json).toMatchObject({ min: 0, max: 10, count: W * H });
    expect(labels.json.counts[0]).toBe(truth.labels.filter((l) => l === 0).length);
    const mean = await api(s.url, s.ownerToken, 'GET', '/api/volumes/calcium-demo/mean/histogram?bins=8');
    let sum = 0;
    for (let i = 0; i < W * H; i++) for (let f = 0; f < F; f++) sum += movie[i + W * H * f]!;
    expect(mean.json.mean).toBeCloseTo(sum / (W * H * F), 3);
  });

  it('ROI trace: the mean over the labels pixels of a neuron, per frame; circle traces too', async () => {
    const n = truth.neurons.find((x) => truth.labels.includes(x.id) && !x.silent)!;
    const pixels: number[] = [];
    truth.labels.forEach((id, i) => id === n.id && pixels.push(i));
    const r = await api(s.url, s.ownerToken, 'GET', `/api/volumes/calcium-demo/movie/trace?labels=labels&roi=${n.id}`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ labels: 'labels', roi: n.id, pixels: pixels.length, z: [0, F] });
    expect(r.json.values).toHaveLength(F);
    for (let f = 0; f < F; f++) expect(r.json.values[f]).toBeCloseTo(pixels.reduce((a, i) => a + movie[i + W * H * f]!, 0) / pixels.length, 9);

    const c = await api(s.url, s.ownerToken, 'GET', '/api/volumes/calcium-demo/movie/trace?x=31.5&y=31.5&r=2&z0=10&z1=20');
    expect(c.json).toMatchObject({ circle: { x: 31.5, y: 31.5, r: 2 }, pixels: 12, z: [10, 20] });
    const ring = [];
    for (let y = 30; y <= 33; y++) for (let x = 30; x <= 33; x++) if ((x - 31.5) ** 2 + (y - 31.5) ** 2 <= 4) ring.push(x + W * y);
    expect(ring).toHaveLength(12);
    expect(c.json.values[0]).toBeCloseTo(ring.reduce((a, i) => a + movie[i + W * H * 10]!, 0) / 12, 9);
  });

  it('answers bad requests with clear 400/404 errors and enforces the voxel limit', async () => {
    const q = (p: string) => api(s.url, s.ownerToken, 'GET', `/api/volumes/calcium-demo/${p}`);
    for (const [p, status, code] of [
      ['movie/histogram?bbox=1,2,3', 400, 'bad-request'],
      ['movie/histogram?bbox=0,0,0,65,10,10', 400, 'bad-request'],
      ['movie/histogram?bbox=5,0,0,5,10,10', 400, 'bad-request'],
      ['movie/histogram?bins=0', 400, 'bad-request'],
      ['movie/histogram?scale=7', 400, 'bad-request'],
      ['movie/histogram?min=3', 400, 'bad-request'],
      ['movie/trace', 400, 'bad-request'],
      ['movie/trace?labels=labels&roi=999', 404, 'not-found'],
      ['movie/trace?labels=..&roi=1', 400, 'bad-path'],
      ['movie/trace?x=1&y=1&r=-1', 400, 'bad-request'],
      ['nope/histogram', 404, 'not-found'],
      ['movie/median', 404, 'not-found'],
    ] as const) {
      const r = await q(p);
      expect(r.status, p).toBe(status);
      expect(r.json.error, p).toBe(code);
      expect(r.json.message, p).toEqual(expect.any(String));
    }
    expect((await api(s.url, null, 'GET', '/api/volumes/calcium-demo/movie/histogram')).status).toBe(401);
    const small = await startTestServer({ dataDir, maxSampleVoxels: 100_000 });
    try {
      const r = await api(small.url, small.ownerToken, 'GET', '/api/volumes/calcium-demo/movie/histogram');
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({ error: 'region-too-large', message: expect.stringContaining('limit is 100000') });
      expect((await api(small.url, small.ownerToken, 'GET', '/api/volumes/calcium-demo/movie/histogram?bbox=0,0,0,32,32,16')).status).toBe(200);
    } finally {
      await small.close();
    }
  });
});

describe('demo dataset at startup', () => {
  it('listens at once, answers 503 "generating" until the worker is done, then serves; a restart reuses it', async () => {
    const dir = tmpDir();
    const demoData = { params: { ...PARAMS, frames: 120 }, layout: LAYOUT };
    const srv = await startTestServer({ dataDir: dir, seedDemo: true, demoData });
    try {
      const early = await rawRequest(srv.url, '/volumes/calcium-demo/movie/info', { headers: { authorization: `Bearer ${srv.ownerToken}` } });
      expect(early.status).toBe(503);
      expect(early.json().error).toBe('generating');
      expect(early.headers['retry-after']).toBe('2');
      expect((await api(srv.url, srv.ownerToken, 'GET', '/api/volumes/calcium-demo/movie/histogram')).status).toBe(503);
      expect((await rawRequest(srv.url, '/volumes/', { headers: { authorization: `Bearer ${srv.ownerToken}` } })).json().datasets).toEqual([{ name: 'calcium-demo', status: 'generating', title: null, layers: [], url: '/volumes/calcium-demo/' }]);
      await srv.volumes.whenReady('calcium-demo');
      const info = await rawRequest(srv.url, '/volumes/calcium-demo/movie/info', { headers: { authorization: `Bearer ${srv.ownerToken}` } });
      expect(info.status).toBe(200);
      expect(info.json().scales[0].size).toEqual([64, 64, 120]);
      expect(isDemoDatasetCurrent(dir, demoData)).toBe(true);
    } finally {
      await srv.close();
    }
    const again = await startTestServer({ dataDir: dir, seedDemo: true, demoData });
    try {
      expect(again.volumes.isGenerating('calcium-demo')).toBe(false);
    } finally {
      await again.close();
    }
  });
});
