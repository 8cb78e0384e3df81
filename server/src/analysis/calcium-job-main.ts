/**
 * The process that runs one calcium analysis job (started by `CalciumJobs`, under `nice` and a
 * heap limit, so a long analysis neither blocks the sync server's event loop nor competes with
 * people's typing). Reads its spec (a JSON file named on the command line), streams the movie
 * from the served volume, runs the pipeline and writes the result dataset into the spec's output
 * directory. Talks to its parent in JSON lines on stdout: `progress`, then `done` or `error`.
 * SIGTERM stops it between frames. It runs no user code: its inputs are validated parameters.
 * Effects: file reads and writes, stdout.
 */
import fs from 'node:fs';
import { runPipeline, type PipelineParams } from '@plexus/calcium/pipeline';
import type { Registration } from '@plexus/calcium/registration/register';
import { blockCount, type BlockGrid } from '@plexus/calcium/registration/piecewise';
import { writeCalciumResult } from './calcium-results.ts';
import { movieSource } from './movie-source.ts';

export interface CalciumJobSpec {
  layerDir: string;
  /** `<dataset>/<layer>`, for messages and descriptions. */
  source: string;
  title: string;
  frameRate?: number;
  params: PipelineParams;
  outDir: string;
  /** Where this movie's registration is cached (reused when the movie, maxShift and blockSize are the same). */
  registrationCache?: string;
  /** Tests only: the job waits (until stopped) when it first reads this frame. */
  holdAtFrame?: number;
}

const say = (m: Record<string, unknown>) => process.stdout.write(JSON.stringify(m) + '\n');

function readCache(file: string | undefined, frames: number, width: number, height: number): Registration | undefined {
  if (!file || !fs.existsSync(file)) return undefined;
  try {
    const buf = fs.readFileSync(file);
    const head = JSON.parse(buf.subarray(0, buf.indexOf(10)).toString('utf8')) as { frames: number; width: number; height: number; maxAbsShift: number; grid?: BlockGrid };
    if (head.frames !== frames || head.width !== width || head.height !== height) return undefined;
    const body = buf.subarray(buf.indexOf(10) + 1);
    const f32 = new Float32Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
    const rest = 3 * frames + width * height;
    return {
      shifts: f32.slice(0, 2 * frames),
      peaks: f32.slice(2 * frames, 3 * frames),
      template: f32.slice(3 * frames, rest),
      maxAbsShift: head.maxAbsShift,
      ...(head.grid ? { piecewise: { grid: head.grid, shifts: f32.slice(rest, rest + 2 * blockCount(head.grid) * frames) } } : {}),
    };
  } catch {
    return undefined;
  }
}

function writeCache(file: string, reg: Registration, frames: number, width: number, height: number): void {
  const head = Buffer.from(JSON.stringify({ frames, width, height, maxAbsShift: reg.maxAbsShift, ...(reg.piecewise ? { grid: reg.piecewise.grid } : {}) }) + '\n');
  const rest = 3 * frames + width * height;
  const body = new Float32Array(rest + (reg.piecewise?.shifts.length ?? 0));
  body.set(reg.shifts, 0);
  body.set(reg.peaks, 2 * frames);
  body.set(reg.template, 3 * frames);
  if (reg.piecewise) body.set(reg.piecewise.shifts, rest);
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, Buffer.concat([head, Buffer.from(body.buffer)]));
  fs.renameSync(tmp, file);
}

async function main(): Promise<void> {
  const spec = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as CalciumJobSpec;
  const ac = new AbortController();
  process.on('SIGTERM', () => ac.abort(new DOMException('stopped', 'AbortError')));
  const movie = await movieSource(spec.layerDir, spec.source, spec.frameRate);
  const hold = spec.holdAtFrame;
  const src: typeof movie = hold === undefined ? movie : {
    ...movie,
    async read(f, out) {
      if (f === hold) {
        say({ type: 'held', frame: f });
        // A promise alone does not keep Node running: a timer does, until the stop.
        const keepAlive = setInterval(() => {}, 1000);
        await new Promise((_, reject) => ac.signal.addEventListener('abort', () => (clearInterval(keepAlive), reject(ac.signal.reason)), { once: true }));
      }
      return movie.read(f, out);
    },
  };
  const reuse = readCache(spec.registrationCache, src.frames, src.width, src.height);
  let last = 0;
  const res = await runPipeline(src, spec.params, {
    signal: ac.signal,
    reuseRegistration: reuse,
    onProgress: (p) => {
      const now = Date.now();
      if (now - last < 250 && p.done !== p.total && p.done !== 0) return;
      last = now;
      say({ type: 'progress', ...p });
    },
  });
  if (!reuse && spec.registrationCache) writeCache(spec.registrationCache, res.registration, src.frames, src.width, src.height);
  say({ type: 'progress', stage: 'writing', done: 0, total: 1 });
  const summary = await writeCalciumResult(spec.outDir, res, { width: src.width, height: src.height, frames: src.frames, title: spec.title, source: spec.source });
  say({ type: 'done', summary, params: res.params, reusedRegistration: !!reuse, timings: res.timings });
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    const err = e as Error;
    say({ type: 'error', name: err?.name ?? 'Error', message: err?.name === 'AbortError' ? 'stopped' : String(err?.message ?? e) });
    process.exit(err?.name === 'AbortError' ? 3 : 1);
  },
);
