/**
 * Charts as static SVG for what leaves the live page — the HTML report (which runs no script) and
 * `.ipynb` export (where Jupyter shows `image/svg+xml` but not Plexus' chart MIME types). The same
 * specs and the same libraries as the browser: Vega-Lite through `vega` with no renderer
 * (`toSVG`), Observable Plot through `shared`'s `buildPlot` on a `linkedom` document — linkedom
 * (ISC) because Plot only needs element creation and serialisation, which it does with a fraction
 * of jsdom's size and start-up cost. No chart may load a URL. The output is checked to hold no
 * script, event handler, foreign content or external reference; a spec that cannot be drawn, is
 * too large or takes too long gives a message instead, never a failed export.
 * Effects: none beyond CPU (pure apart from the libraries' module state).
 */
import * as vega from 'vega';
import * as vl from 'vega-lite';
import * as Plot from '@observablehq/plot';
import { parseHTML } from 'linkedom';
import { buildPlot, vegaLiteWithReadableText, type ChartImages, type Json } from '@plexus/shared';

export type ChartSvg = { svg: string } | { error: string };

export interface ChartLimits {
  /** Largest spec (JSON characters) drawn. */
  maxSpecChars: number;
  /** Longest a chart may take. */
  timeoutMs: number;
}

export const CHART_LIMITS: ChartLimits = { maxSpecChars: 5_000_000, timeoutMs: 5000 };

const UNSAFE = /<script|<foreignObject|\son[a-z]+\s*=|(?:xlink:)?href\s*=\s*["'](?!#)|url\(\s*["']?(?!#)/i;

/** The SVG if it holds nothing active or external, else null. */
export function safeSvg(svg: string): string | null {
  if (!/^\s*<svg[\s>]/i.test(svg) || UNSAFE.test(svg)) return null;
  return /^\s*<svg[^>]*\sxmlns=/i.test(svg) ? svg : svg.replace(/^\s*<svg/i, '<svg xmlns="http://www.w3.org/2000/svg"');
}

async function vegaLiteSvg(spec: Json): Promise<string> {
  const compiled = vl.compile(vegaLiteWithReadableText(spec) as never).spec;
  const loader = vega.loader();
  loader.load = (() => Promise.reject(new Error('charts cannot load URLs: put the data in the spec (data.values)'))) as typeof loader.load;
  // Vega logs a failed data load and draws an empty chart: collect its errors and fail instead.
  const errors: string[] = [];
  const logger = vega.logger(vega.Warn);
  const text = (args: unknown[]) => args.map((a) => (a instanceof Error ? a.message : String(a))).join(' ');
  logger.error = (...args: unknown[]) => {
    errors.push(text(args));
    return logger;
  };
  // A data load that failed is only a warning to Vega; for a report it is the reason there is no chart.
  logger.warn = (...args: unknown[]) => {
    const m = text(args);
    if (/^Loading failed/.test(m)) errors.push(m.replace(/^Loading failed \S+ (Error: )?/, ''));
    return logger;
  };
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', loader, logger });
  try {
    await view.runAsync();
    const svg = await view.toSVG();
    if (errors.length) throw new Error(errors[0]);
    return svg;
  } finally {
    view.finalize();
  }
}

function plotSvg(spec: Json): string {
  const { document } = parseHTML('<!doctype html><html><body></body></html>');
  const node = buildPlot(Plot as never, spec, document) as unknown as { outerHTML: string; tagName: string; querySelector(s: string): { outerHTML: string } | null };
  // A plot with a legend or caption is a <figure>: the chart is its <svg>.
  return node.tagName.toLowerCase() === 'svg' ? node.outerHTML : (node.querySelector('svg')?.outerHTML ?? '');
}

/** Draws one chart output as SVG, or says why it could not. */
export async function chartToSvg(format: 'vega-lite' | 'plot', spec: Json, limits: ChartLimits = CHART_LIMITS): Promise<ChartSvg> {
  if (spec === null || spec === undefined) return { error: 'the chart has no spec' };
  if (JSON.stringify(spec).length > limits.maxSpecChars) return { error: `the spec is over ${limits.maxSpecChars.toLocaleString('en')} characters` };
  let timer: NodeJS.Timeout | undefined;
  try {
    const svg = await Promise.race([
      format === 'plot' ? Promise.resolve().then(() => plotSvg(spec)) : vegaLiteSvg(spec),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`took over ${limits.timeoutMs / 1000} s`)), limits.timeoutMs))),
    ]);
    const safe = safeSvg(svg);
    return safe ? { svg: safe } : { error: 'the drawn chart held content a report cannot show' };
  } catch (e) {
    return { error: String((e as Error)?.message ?? e).split('\n')[0]!.slice(0, 300) };
  } finally {
    clearTimeout(timer);
  }
}

/** Draws every chart of an export, one after the other; specs stored apart (`ref`) are read with `load`. */
export async function drawCharts(
  charts: Array<{ key: string; format: 'vega-lite' | 'plot'; spec: Json | null; ref?: string }>,
  load: (ref: string) => Json | null,
  limits: ChartLimits = CHART_LIMITS,
): Promise<ChartImages> {
  const out = new Map<string, ChartSvg>();
  for (const c of charts) {
    const spec = c.spec ?? (c.ref ? load(c.ref) : null);
    out.set(c.key, await chartToSvg(c.format, spec, limits));
  }
  return out;
}
