/**
 * Renders the movie slab by slab (frames [z0, z1)) together with its mean/max projections, on
 * this thread or on worker threads (rendering is ~60 % of the generator's CPU and frames are
 * independent, so two threads nearly halve it on two cores). The result is byte-identical either
 * way: each frame has its own noise stream, and projections are sums of integers (exact in
 * float64) and maxima, which do not depend on order.
 * Effects: worker threads (when `threads` > 1).
 */
import { Worker, parentPort } from 'node:worker_threads';
import { simulateCalcium, type CalciumParams, type CalciumTruth } from './calcium-sim.ts';
import { frameRenderer, type Projections } from './calcium-render.ts';

export interface SlabRenderer {
  /** Frames [z0, z1), x fastest, frame after frame. */
  render(z0: number, z1: number): Promise<Uint16Array>;
  /** Projections over every frame rendered so far; ends the renderer. */
  finish(): Promise<Projections>;
  /** Stops the workers (after a failure; idempotent). */
  close(): Promise<void>;
}

const newProjections = (n: number): Projections => ({ sum: new Float64Array(n), max: new Uint16Array(n) });

function renderInto(render: ReturnType<typeof frameRenderer>, plane: number, z0: number, z1: number, projections: Projections): Uint16Array {
  const out = new Uint16Array(plane * (z1 - z0));
  for (let f = z0; f < z1; f++) render(f, out, (f - z0) * plane, projections);
  return out;
}

/** Renders on this thread. */
export function localSlabRenderer(truth: CalciumTruth): SlabRenderer {
  const plane = truth.params.width * truth.params.height;
  const render = frameRenderer(truth);
  const projections = newProjections(plane);
  return {
    render: async (z0, z1) => renderInto(render, plane, z0, z1, projections),
    finish: async () => projections,
    close: async () => undefined,
  };
}

type Request = { type: 'render'; z0: number; z1: number } | { type: 'finish' };
type Reply = { type: 'slab'; data: Uint16Array } | { type: 'projections'; projections: Projections } | { type: 'error'; message: string };

/** Worker side (started through ts-worker.mjs): answers render requests in order. */
export function serveSlabs(params: CalciumParams): void {
  const port = parentPort!;
  const truth = simulateCalcium(params);
  const plane = params.width * params.height;
  const render = frameRenderer(truth);
  const projections = newProjections(plane);
  port.on('message', (req: Request) => {
    try {
      if (req.type === 'render') {
        const data = renderInto(render, plane, req.z0, req.z1, projections);
        port.postMessage({ type: 'slab', data } satisfies Reply, [data.buffer as ArrayBuffer]);
      } else {
        port.postMessage({ type: 'projections', projections } satisfies Reply, [projections.sum.buffer as ArrayBuffer, projections.max.buffer as ArrayBuffer]);
        port.close();
      }
    } catch (e) {
      port.postMessage({ type: 'error', message: (e as Error).message } satisfies Reply);
    }
  });
}

/**
 * Renders on `threads` worker threads: slab requests go round-robin, and each worker answers its
 * own requests in order, so replies are matched by order per worker.
 */
export function workerSlabRenderer(params: CalciumParams, threads: number): SlabRenderer {
  const workers = Array.from({ length: threads }, () => {
    const worker = new Worker(new URL('./ts-worker.mjs', import.meta.url), {
      workerData: { module: new URL('./render-slabs.ts', import.meta.url).href, entry: 'serveSlabs', args: [params] },
    });
    const waiting: Array<{ resolve: (r: Reply) => void; reject: (e: Error) => void }> = [];
    const failAll = (e: Error) => waiting.splice(0).forEach((w) => w.reject(e));
    worker.on('message', (r: Reply) => waiting.shift()?.resolve(r));
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`render worker exited with code ${code}`)));
    const ask = (req: Request): Promise<Reply> =>
      new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        worker.postMessage(req);
      });
    return { worker, ask };
  });
  let next = 0;
  const expect = <T extends Reply['type']>(r: Reply, type: T): Extract<Reply, { type: T }> => {
    if (r.type === 'error') throw new Error(`render worker: ${r.message}`);
    if (r.type !== type) throw new Error(`render worker answered ${r.type}, expected ${type}`);
    return r as Extract<Reply, { type: T }>;
  };
  const close = async () => void (await Promise.all(workers.map((w) => w.worker.terminate())));
  return {
    render: async (z0, z1) => expect(await workers[next++ % threads]!.ask({ type: 'render', z0, z1 }), 'slab').data,
    close,
    async finish() {
      const parts = await Promise.all(workers.map(async (w) => expect(await w.ask({ type: 'finish' }), 'projections').projections));
      const total = parts[0]!;
      for (const p of parts.slice(1))
        for (let i = 0; i < total.sum.length; i++) {
          total.sum[i]! += p.sum[i]!;
          if (p.max[i]! > total.max[i]!) total.max[i] = p.max[i]!;
        }
      await close();
      return total;
    },
  };
}
