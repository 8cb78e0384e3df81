import { describe, expect, it } from 'vitest';
import { chartToSvg, safeSvg } from '../../src/notebook/chart-svg.ts';

const bars = { data: { values: [{ a: 'alpha', b: 3 }, { a: 'beta', b: 5 }] }, mark: 'bar', encoding: { x: { field: 'a', type: 'nominal' }, y: { field: 'b', type: 'quantitative' } } };
const svgOf = async (format: 'vega-lite' | 'plot', spec: unknown) => {
  const r = await chartToSvg(format, spec as never);
  if (!('svg' in r)) throw new Error(r.error);
  return r.svg;
};

describe('charts as static SVG', () => {
  it('draws a Vega-Lite bar chart with its axis labels, readable (12 px)', async () => {
    const svg = await svgOf('vega-lite', bars);
    expect(svg).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain('>alpha<');
    expect(svg).toContain('>beta<');
    expect(svg).toMatch(/font-size="12px"|font-size: 12px/);
  });

  it('draws an Observable Plot line from the kernel’s declarative spec, at 12 px', async () => {
    const svg = await svgOf('plot', { marks: [{ mark: 'lineY', data: [1, 3, 2, 5] }, { mark: 'dot', data: [{ x: 1, y: 2 }], options: { x: 'x', y: 'y' } }], y: { label: 'ΔF/F' } });
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain('<path');
    expect(svg).toContain('ΔF/F');
    expect(svg).toMatch(/font-size: ?12px/);
  });

  it('says why a chart cannot be drawn instead of failing', async () => {
    expect(await chartToSvg('plot', { marks: [{ mark: 'eval', data: [] }] })).toEqual({ error: 'unknown Plot mark "eval"' });
    expect(await chartToSvg('vega-lite', { data: { url: 'https://example.com/x.csv' }, mark: 'point', encoding: { x: { field: 'a', type: 'quantitative' } } })).toEqual({
      error: expect.stringContaining('charts cannot load URLs'),
    });
    expect(await chartToSvg('vega-lite', null)).toEqual({ error: 'the chart has no spec' });
    expect(await chartToSvg('vega-lite', bars, { maxSpecChars: 50, timeoutMs: 5000 })).toEqual({ error: 'the spec is over 50 characters' });
  });

  it('lets nothing active or external through', () => {
    for (const bad of [
      '<svg><script>alert(1)</script></svg>',
      '<svg onload="alert(1)"></svg>',
      '<svg><a href="https://evil.example"><text>x</text></a></svg>',
      '<svg><image xlink:href="http://evil.example/x.png"/></svg>',
      '<svg><foreignObject><div>x</div></foreignObject></svg>',
      '<svg><rect style="fill:url(https://evil.example/p)"/></svg>',
      '<div>not svg</div>',
    ])
      expect(safeSvg(bad), bad).toBeNull();
    expect(safeSvg('<svg><rect clip-path="url(#c1)"/><use href="#m"/></svg>')).toBe('<svg xmlns="http://www.w3.org/2000/svg"><rect clip-path="url(#c1)"/><use href="#m"/></svg>');
  });
});
