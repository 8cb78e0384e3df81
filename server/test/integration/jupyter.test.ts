/**
 * The Jupyter round trip through the HTTP endpoints of a real server with its kernel: a realistic
 * IPython notebook imports with its outputs, ids and metadata, its Python cells are never run,
 * `%%sql` cells run as SQL, the export is the notebook itself (valid nbformat 4.5) and the report
 * shows the imported outputs sanitised; a malformed notebook changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { nbformatErrors, readFixture } from '../../../shared/test/nbformat-schema.ts';
import { cellLanguage, listCells, readCellRun, readJupyterRecord, readKernelStatus, requestRunAll } from '@plexus/shared';
import { api, waitFor } from '@plexus/testkit';
import { alice, aliceOrigin, client, kernelSuite, newWorkspace, waitRun } from '@plexus/testkit/kernel';

const ctx = kernelSuite();
const read = readFixture;
const lines = (s: unknown): string[] => {
  const t = Array.isArray(s) ? s.join('') : String(s);
  return t === '' ? [] : t.split(/(?<=\n)/);
};

describe('Jupyter import and export over HTTP', () => {
  it('imports a Python notebook with outputs; exports it back identical and valid; the report shows its outputs', async () => {
    const nb = read('plexus-analysis-python.ipynb');
    const ws = await newWorkspace(ctx.server, 'Spikes');
    const imp = await api(ctx.server.url, ctx.server.ownerToken, 'POST', `/api/workspaces/${ws}/import`, nb);
    expect(imp.status).toBe(201);
    expect(imp.json.imported).toBe(nb.cells.length);
    expect(imp.json.languages.sort()).toEqual(['python', 'sql']);

    const a = await client(ctx.server, ws, ctx.clients);
    await waitFor(() => listCells(a.doc).length === nb.cells.length);
    const cells = listCells(a.doc);
    expect(cells.map((c) => c.kind)).toEqual(['markdown', 'code', 'code', 'code', 'code', 'sql', 'sql', 'sql', 'markdown', 'markdown']);
    expect(cellLanguage(cells[1]!)).toBe('python');
    expect(readJupyterRecord(cells[3]!)!.outputs.map((o: any) => o.output_type)).toEqual(['display_data', 'display_data']);

    // Run all: the SQL cells run; the Python cells are left alone with their imported outputs.
    requestRunAll(a.doc, alice, aliceOrigin);
    const one = await waitRun(a.doc, cells[5]!.id, (r) => r.state === 'done');
    expect(one.outputs[0]).toMatchObject({ type: 'table', rows: [{ one: 1 }] });
    await waitFor(() => readKernelStatus(a.doc).state === 'idle' && readKernelStatus(a.doc).queue.length === 0);
    for (const py of cells.filter((c) => cellLanguage(c) === 'python')) expect(readCellRun(a.doc, py)!.exec).toBeNull();

    const res = await fetch(`${ctx.server.url}/api/workspaces/${ws}/export?format=ipynb`, { headers: { authorization: `Bearer ${ctx.server.ownerToken}` } });
    expect(res.status).toBe(200);
    const out = await res.json();
    expect(nbformatErrors(out)).toEqual([]);
    expect(out.metadata).toEqual(nb.metadata);
    // Every cell Plexus did not run is exactly the original; the first SQL cell now has Plexus' output.
    out.cells.forEach((c: any, i: number) => {
      const want = { ...nb.cells[i], source: lines(nb.cells[i].source) };
      if (i >= 5 && i <= 7) expect({ ...c, outputs: [], execution_count: null }).toEqual({ ...want, outputs: [], execution_count: null });
      else expect(c, `cell ${i + 1}`).toEqual(want);
    });
    expect(out.cells[5].outputs[0].data['text/html'].join('')).toContain('<td>1</td>');

    const report = await fetch(`${ctx.server.url}/api/workspaces/${ws}/export?format=html`, { headers: { authorization: `Bearer ${ctx.server.ownerToken}` } });
    expect(report.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'; img-src data:");
    const html = await report.text();
    expect(html).toContain('<b>bold output</b>');
    expect(html).toContain('data:image/png;base64,');
    expect(html).toContain('Python — not runnable in Plexus');
    expect(html).not.toMatch(/<script|onerror=/i);

    // Importing the export into a fresh workspace gives the same notebook again.
    const ws2 = await newWorkspace(ctx.server, 'Again');
    expect((await api(ctx.server.url, ctx.server.ownerToken, 'POST', `/api/workspaces/${ws2}/import`, out)).status).toBe(201);
    const again = await (await fetch(`${ctx.server.url}/api/workspaces/${ws2}/export?format=ipynb`, { headers: { authorization: `Bearer ${ctx.server.ownerToken}` } })).json();
    expect(again).toEqual(out);
  });

  it('a malformed notebook is refused with a clear error and imports nothing', async () => {
    const ws = await newWorkspace(ctx.server, 'Bad');
    const good = read('plexus-analysis-python.ipynb');
    const bad = { ...good, cells: [...good.cells, { cell_type: 'code', source: ['x'], outputs: [{ text: 'no type' }] }] };
    const r = await api(ctx.server.url, ctx.server.ownerToken, 'POST', `/api/workspaces/${ws}/import`, bad);
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json)).toContain(`cell ${good.cells.length + 1} output 1 has no \\"output_type\\"`);
    const a = await client(ctx.server, ws, ctx.clients);
    expect(listCells(a.doc)).toHaveLength(0);
  });
});
