/**
 * Observable Plot charts in the kernel's declarative form — `{ marks: [{ mark, data, options }],
 * ...plotOptions }`, where `mark` names one of Plot's mark functions — turned into a `Plot.plot`
 * call. One copy for the browser (live outputs) and the server (reports, `.ipynb` export), so both
 * draw the same chart. Pure: the Plot module (and a DOM document on the server) are passed in.
 */
import type { Json } from '../json.ts';

/** Plot marks a declarative spec may use (each `Plot[mark](data, options)`). */
export const PLOT_MARKS = new Set([
  'dot', 'dotX', 'dotY', 'line', 'lineX', 'lineY', 'barX', 'barY', 'rect', 'rectX', 'rectY', 'areaX', 'areaY', 'area', 'text', 'textX', 'textY',
  'ruleX', 'ruleY', 'cell', 'cellX', 'cellY', 'tickX', 'tickY', 'frame', 'gridX', 'gridY', 'axisX', 'axisY', 'link', 'arrow', 'tip', 'hexagon', 'image', 'vector',
]);

/** Readable by default (Plot's own default is 10 px): a spec's `style` wins. */
export const PLOT_DEFAULT_STYLE = { fontSize: '12px' };

type PlotModule = Record<string, unknown> & { plot(options: object): Element };

/** Builds the chart's element with `Plot`; throws on an unknown mark. */
export function buildPlot(Plot: PlotModule, spec: Json, document?: unknown): Element {
  const { marks = [], ...options } = (spec ?? {}) as { marks?: Array<{ mark: string; data?: unknown; options?: object }> } & Record<string, unknown>;
  const built = (Array.isArray(marks) ? marks : []).map((m) => {
    if (!m || typeof m.mark !== 'string' || !PLOT_MARKS.has(m.mark)) throw new Error(`unknown Plot mark "${String(m?.mark)}"`);
    const f = Plot[m.mark] as (d?: unknown, o?: object) => unknown;
    return m.data === undefined ? f(m.options) : f(m.data, m.options);
  });
  return Plot.plot({ style: PLOT_DEFAULT_STYLE, ...options, marks: built, ...(document ? { document } : {}) });
}

/** Vega-Lite's axis and legend text at a readable size unless the spec configures its own. */
export function vegaLiteWithReadableText(spec: Json): Json {
  if (!spec || typeof spec !== 'object' || Array.isArray(spec)) return spec;
  const s = spec as Record<string, Json>;
  const config = (s.config && typeof s.config === 'object' && !Array.isArray(s.config) ? s.config : {}) as Record<string, Json>;
  const merge = (key: string, defaults: Record<string, Json>): Json => ({ ...defaults, ...((config[key] && typeof config[key] === 'object' ? config[key] : {}) as Record<string, Json>) });
  return {
    ...s,
    config: {
      ...config,
      axis: merge('axis', { labelFontSize: 12, titleFontSize: 12 }),
      legend: merge('legend', { labelFontSize: 12, titleFontSize: 12 }),
      title: merge('title', { fontSize: 14 }),
    },
  };
}
