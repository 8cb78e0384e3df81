/**
 * The process that imports one uploaded TIFF recording (started by `TiffImports`, under `nice` and
 * a heap limit, so decoding and compressing a large stack neither blocks the sync server's event
 * loop nor competes with people's typing). Reads its spec (a JSON file named on the command line),
 * runs `importTiff` and talks to its parent in JSON lines on stdout: `progress` (stage `reading`,
 * frames done of total), then `done` with the result or `error` with a message for the person.
 * SIGTERM stops it between frames (the importer then removes what it had written). Exit codes:
 * 0 done, 1 error, 3 stopped. Effects: reads the upload, writes the dataset, stdout.
 */
import fs from 'node:fs/promises';
import zlib from 'node:zlib';
import { fileByteSource, importTiff, importTiffFromSource, type TiffImportOptions, type TiffImportResult } from './tiff-import.ts';

export interface TiffImportSpec {
  /** The uploaded file (a temporary file of the server). */
  file: string;
  volumesDir: string;
  dataset: string;
  /** The upload's original file name, for descriptions. */
  sourceName: string;
  channel?: number;
  plane?: number;
  frameRate?: number;
  micronsPerPixel?: number;
  /** Tests only: the import waits (until stopped) before it reads frame `holdAtFrame`. */
  holdAtFrame?: number;
}

const say = (m: Record<string, unknown>) => process.stdout.write(JSON.stringify(m) + '\n');

/** `importTiff`, except that reads wait for the abort once frame `hold` is next (the test hook). */
async function importHeld(opts: TiffImportOptions & { sourceName: string }, hold: number, signal: AbortSignal): Promise<TiffImportResult> {
  const handle = await fs.open(opts.file, 'r');
  try {
    const source = fileByteSource(handle, (await handle.stat()).size);
    let held = false;
    return await importTiffFromSource(
      {
        size: source.size,
        async read(offset, length) {
          if (held) {
            say({ type: 'held', frame: hold });
            // A pending promise alone does not keep Node running: the timer does, until the stop.
            const alive = setInterval(() => {}, 60_000);
            await new Promise((_, reject) => signal.addEventListener('abort', () => (clearInterval(alive), reject(signal.reason)), { once: true }));
          }
          return source.read(offset, length);
        },
      },
      { ...opts, onProgress: (p) => ((held ||= p.done >= hold), opts.onProgress?.(p)) },
    );
  } finally {
    await handle.close();
  }
}

async function main(): Promise<void> {
  const spec = JSON.parse(await fs.readFile(process.argv[2]!, 'utf8')) as TiffImportSpec;
  const ac = new AbortController();
  process.on('SIGTERM', () => ac.abort(new DOMException('stopped', 'AbortError')));
  let last = 0;
  const opts: TiffImportOptions & { sourceName: string } = {
    file: spec.file,
    volumesDir: spec.volumesDir,
    dataset: spec.dataset,
    sourceName: spec.sourceName,
    channel: spec.channel,
    plane: spec.plane,
    frameRate: spec.frameRate,
    micronsPerPixel: spec.micronsPerPixel,
    signal: ac.signal,
    inflate: zlib.inflateSync,
    onProgress: (p) => {
      const now = Date.now();
      if (now - last < 250 && p.done !== p.total && p.done !== 0) return;
      last = now;
      say({ type: 'progress', ...p });
    },
  };
  const result = spec.holdAtFrame === undefined ? await importTiff(opts) : await importHeld(opts, spec.holdAtFrame, ac.signal);
  say({ type: 'done', result });
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    const err = e as Error & { kind?: string };
    const stopped = err?.name === 'AbortError';
    say({ type: 'error', name: err?.name ?? 'Error', ...(err?.kind ? { kind: err.kind } : {}), message: stopped ? 'stopped' : String(err?.message ?? e) });
    process.exit(stopped ? 3 : 1);
  },
);
