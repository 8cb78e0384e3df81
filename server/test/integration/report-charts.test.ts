/**
 * Charts leave the live page drawn: the HTML report shows each chart a cell made (Vega-Lite and
 * Observable Plot, run by the real kernel) as a static SVG image under the report's strict CSP, and
 * `.ipynb` export puts `image/svg+xml` beside Plexus' chart MIME types so Jupyter shows them too.
 */
import { describe, expect, it } from 'vitest';
import { nbformatErrors } from '../../../shared/test/nbformat-schema.ts';
import { listCells, readKernelStatus, requestRunAll } from '@plexus/shared';
import { waitFor } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, client, kernelSuite, newWorkspace, waitRun } from '@plexus/testkit/kernel';

const ctx = kernelSuite();

const exportAs = (ws: string, format: string) => fetch(`${ctx.server.url}/api/workspaces/${ws}/export?format=${format}`, { headers: { authorization: `Bearer ${ctx.server.ownerToken}` } });

describe('charts in exports', () => {
  it('the report shows Vega-Lite and Plot charts as SVG images; the .ipynb carries image/svg+xml beside the spec', async () => {
    const ws = await newWorkspace(ctx.server, 'Charts');
    const a = await client(ctx.server, ws, ctx.clients);
    const vl = addCell(a.doc, 'code', `vegalite({ data: { values: [{ cond: 'control', rate: 1.5 }, { cond: 'drug', rate: 3.25 }] }, mark: 'bar', encoding: { x: { field: 'cond', type: 'nominal' }, y: { field: 'rate', type: 'quantitative' } } })`);
    const pl = addCell(a.doc, 'code', `plot({ marks: [{ mark: 'lineY', data: [0.1, 0.4, 0.2, 0.9], options: { stroke: 'steelblue' } }], y: { label: 'dF/F' } })`);
    requestRunAll(a.doc, alice, aliceOrigin);
    for (const id of [vl, pl]) await waitRun(a.doc, id, (r) => r.state === 'done' && r.outputs.some((o) => o.type === 'chart'));
    await waitFor(() => readKernelStatus(a.doc).state === 'idle');

    const report = await exportAs(ws, 'html');
    expect(report.status).toBe(200);
    expect(report.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'; img-src data:");
    const html = await report.text();
    const images = [...html.matchAll(/<img alt="(Vega-Lite|Plot) chart" src="data:image\/svg\+xml;charset=utf-8,([^"]+)">/g)];
    expect(images.map((m) => m[1])).toEqual(['Vega-Lite', 'Plot']);
    const [vlSvg, plotSvg] = images.map((m) => decodeURIComponent(m[2]!));
    expect(vlSvg).toContain('>control<');
    expect(vlSvg).toContain('>drug<');
    expect(plotSvg).toContain('dF/F');
    expect(html).not.toMatch(/<script/i);

    const nb = await (await exportAs(ws, 'ipynb')).json();
    expect(nbformatErrors(nb)).toEqual([]);
    const ids: string[] = listCells(a.doc).map((c) => c.id);
    const data = (id: string) => nb.cells[ids.indexOf(id)].outputs.find((o: any) => o.output_type === 'display_data').data;
    expect(Object.keys(data(vl)).sort()).toEqual(['application/vnd.vegalite.v5+json', 'image/svg+xml', 'text/plain']);
    expect(Object.keys(data(pl)).sort()).toEqual(['application/vnd.plexus.plot+json', 'image/svg+xml', 'text/plain']);
    expect(data(vl)['image/svg+xml'].join('')).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(data(pl)['image/svg+xml'].join('')).toContain('dF/F');
  });
});
