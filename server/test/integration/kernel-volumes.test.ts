/**
 * Notebook cells sample the served volumes (`volumes.histogram`, `volumes.trace`) through the
 * kernel's supervisor — the same code and the same chunk files as the HTTP API — and bad requests
 * come back as clear cell errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestRun, type CellRunView } from '@plexus/shared';
import type { PlexusServer } from '../../src/app.ts';
import { demoDatasetDir, writeDemoDatasetAtomically } from '../../src/volumes/demo/ensure-demo.ts';
import { api, tmpDir, type HpClient } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, client, finished, newWorkspace, shown, startKernelServer, waitRun } from '@plexus/testkit/kernel';

let server: PlexusServer;
const clients: HpClient[] = [];
beforeAll(async () => {
  const dataDir = tmpDir();
  await writeDemoDatasetAtomically(demoDatasetDir(dataDir), { params: { width: 64, height: 64, frames: 40, neurons: 6 } });
  server = await startKernelServer({ dataDir });
}, 60_000);
afterAll(async () => {
  clients.forEach((c) => c.destroy());
  await server.close();
});

/** Runs code cells in a fresh workspace; resolves with their finished run views, in order. */
async function runCells(...sources: string[]) {
  const ws = await newWorkspace(server);
  const a = await client(server, ws, clients);
  const ids = sources.map((src) => addCell(a.doc, 'code', src));
  for (const id of ids) requestRun(a.doc, id, alice, aliceOrigin);
  return Promise.all(ids.map((id) => waitRun(a.doc, id, finished)));
}

describe('volume sampling from notebook cells', () => {
  it('a histogram and an ROI trace computed in a cell equal the HTTP API results', async () => {
    const [hv, tv] = await runCells(
      "const h = await volumes.histogram('calcium-demo', 'movie', { bbox: '0,0,0,64,64,40', bins: 16 });\nJSON.stringify(h)",
      "const t = await volumes.trace('calcium-demo', 'movie', { labels: 'labels', roi: 2 });\nJSON.stringify(t)",
    ) as [CellRunView, CellRunView];
    expect(hv.state).toBe('done');
    expect(tv.state).toBe('done');
    const viaApi = (await api(server.url, server.ownerToken, 'GET', '/api/volumes/calcium-demo/movie/histogram?bbox=0,0,0,64,64,40&bins=16')).json;
    expect(JSON.parse(shown(hv))).toEqual(viaApi);
    expect(viaApi.count).toBe(64 * 64 * 40);
    const traceApi = (await api(server.url, server.ownerToken, 'GET', '/api/volumes/calcium-demo/movie/trace?labels=labels&roi=2')).json;
    const t = JSON.parse(shown(tv));
    expect(t).toEqual(traceApi);
    expect(t.values).toHaveLength(40);
    expect(t.pixels).toBeGreaterThan(0);
  });

  it('a bad request is a clear error in the cell; files stay out of reach', async () => {
    const [b, e] = (await runCells("await volumes.trace('calcium-demo', 'movie', {})", "await volumes.histogram('..', 'etc', {})")) as [CellRunView, CellRunView];
    expect(b.state).toBe('error');
    expect(shown(b)).toMatch(/a trace needs labels=<layer>&roi=<id>, or x=&y=&r=/);
    expect(e.state).toBe('error');
    expect(shown(e)).toMatch(/dataset/);
  });
});
