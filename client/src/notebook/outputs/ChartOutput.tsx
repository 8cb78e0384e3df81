/**
 * A chart output, loaded on demand (its own chunk, with the renderers): Vega-Lite specs through
 * vega-embed (SVG renderer, no URL loading: data must be in the spec), and Observable Plot in the
 * kernel's declarative form `{ marks: [{ mark, data, options }], ...plotOptions }`, where `mark`
 * must name one of Plot's mark functions. Specs too large for the document are fetched by id.
 * Effects: network (large specs), DOM (the rendered chart).
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import { buildPlot, vegaLiteWithReadableText, type CellOutput, type Json } from '@plexus/shared';
import { fetchResult } from '../../api/notebook.ts';
import { useApiToken } from '../../api/tokenContext.ts';
import { useSession } from '../../collab/context.tsx';

type ChartOut = Extract<CellOutput, { type: 'chart' }>;

async function renderVegaLite(el: HTMLElement, spec: Json): Promise<() => void> {
  const [{ default: embed }, vega] = await Promise.all([import('vega-embed'), import('vega')]);
  const loader = vega.loader();
  const sanitize = loader.sanitize.bind(loader);
  // A shared notebook must not make everyone's browser fetch URLs a cell chose.
  loader.sanitize = ((uri: string, opt: Parameters<typeof sanitize>[1]) =>
    /^data:/.test(uri) ? sanitize(uri, opt) : Promise.reject(new Error('charts cannot load URLs: put the data in the spec (data.values)'))) as typeof loader.sanitize;
  const res = await embed(el, vegaLiteWithReadableText(spec) as never, { actions: false, renderer: 'svg', loader });
  return () => res.finalize();
}

async function renderPlot(el: HTMLElement, spec: Json): Promise<() => void> {
  const Plot = await import('@observablehq/plot');
  const node = buildPlot(Plot as never, spec);
  el.replaceChildren(node);
  return () => node.remove();
}

export default function ChartOutput({ out }: { out: ChartOut }) {
  const token = useApiToken();
  const session = useSession();
  const host = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<{ rendered: boolean; error: string | null }>({ rendered: false, error: null });
  // The output object is re-read on every change of the cell's run: redraw only when the chart changed.
  const key = useMemo(() => `${out.format}|${out.ref ?? ''}|${JSON.stringify(out.spec)}`, [out]);
  useEffect(() => {
    let dispose: (() => void) | null = null;
    let cancelled = false;
    setState({ rendered: false, error: null });
    (async () => {
      let spec = out.spec;
      if (spec === null && out.ref) spec = ((await fetchResult(token, session.workspace.id, out.ref)).spec ?? null) as Json;
      if (cancelled) return;
      const d = await (out.format === 'plot' ? renderPlot : renderVegaLite)(host.current!, spec);
      if (cancelled) d();
      else {
        dispose = d;
        setState({ rendered: true, error: null });
      }
    })().catch((e: Error) => !cancelled && setState({ rendered: false, error: e.message }));
    return () => {
      cancelled = true;
      dispose?.();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, token, session]);
  return (
    <div className="out-chart" data-testid="output-chart" data-format={out.format} data-rendered={state.rendered ? 'true' : 'false'}>
      {state.error && (
        <div className="out-error" data-testid="chart-error">
          Chart could not be drawn: {state.error}
        </div>
      )}
      <div ref={host} />
    </div>
  );
}
