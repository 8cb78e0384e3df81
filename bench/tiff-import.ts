/**
 * Imports a multi-page TIFF larger than a cell's memory limit (PLEXUS_CELL_MEMORY_MB, 512 MiB) into a
 * served precomputed dataset, the way `POST …/recordings` does (`importTiff`, in a process of its
 * own), and reports the import process's wall time, CPU time and peak RSS against the file size.
 * Effects: temp files (removed), a child process.
 * Run: node --import tsx bench/tiff-import.ts [--frames=1200] [--size=512]
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { writeTiff } from '../calcium/test/tiff-writer.ts';
import { importTiff } from '../server/src/analysis/tiff-import.ts';

const arg = (name: string, dflt: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);

if (process.argv.includes('--child')) {
  const [file, volumesDir] = process.argv.slice(process.argv.indexOf('--child') + 1);
  const t0 = performance.now();
  if (process.env.MEM_TRACE) setInterval(() => { const m = process.memoryUsage(); console.error(`rss ${(m.rss / 2 ** 20).toFixed(0)} heap ${(m.heapUsed / 2 ** 20).toFixed(0)} ext ${(m.external / 2 ** 20).toFixed(0)} ab ${(m.arrayBuffers / 2 ** 20).toFixed(0)}`); }, 1000).unref();
  const r = await importTiff({ file: file!, volumesDir: volumesDir!, dataset: 'big', frameRate: 30, inflate: (b) => zlib.inflateSync(b) });
  const u = process.resourceUsage();
  // VmHWM, not ru_maxrss: Linux carries the parent's peak into a forked child's ru_maxrss (the
  // parent held the whole generated file), while the high-water mark belongs to this process's memory.
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN);
  console.log(JSON.stringify({ ms: performance.now() - t0, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssKb: hwm, frames: r.frames, bytesWritten: r.bytesWritten }));
  process.exit(0);
}

const FRAMES = arg('frames', 1200);
const SIZE = arg('size', 512);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-tiff-bench-'));
try {
  // A handful of distinct frames, repeated: the file is as large as a real one, the writer's input is not.
  const distinct = Array.from({ length: 8 }, (_, k) => Uint16Array.from({ length: SIZE * SIZE }, (_, i) => (i * 31 + k * 977) % 4096));
  const file = path.join(dir, 'big.tif');
  fs.writeFileSync(file, writeTiff({ width: SIZE, height: SIZE, pages: Array.from({ length: FRAMES }, (_, f) => distinct[f % 8]!), sampleType: 'uint16', bigTiff: true }));
  const bytes = fs.statSync(file).size;
  fs.mkdirSync(path.join(dir, 'volumes'));
  const heap = process.argv.find((a) => a.startsWith('--heap='))?.split('=')[1];
  const out = spawnSync(process.execPath, [...(heap ? [`--max-old-space-size=${heap}`] : []), '--import', 'tsx', new URL(import.meta.url).pathname, '--child', file, path.join(dir, 'volumes')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (out.status !== 0) throw new Error(out.stderr);
  const r = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { ms: number; cpuMs: number; maxRssKb: number; frames: number; bytesWritten: number };
  console.log(`load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} · ${os.cpus().length} cores · node ${process.version}`);
  console.log(`| TIFF | frames | wall | CPU | peak RSS of the import process | written |`);
  console.log(`|---|---|---|---|---|---|`);
  console.log(`| ${SIZE}² uint16 BigTIFF, ${(bytes / 2 ** 20).toFixed(0)} MiB | ${r.frames} | ${(r.ms / 1000).toFixed(1)} s | ${(r.cpuMs / 1000).toFixed(1)} s | ${(r.maxRssKb / 1024).toFixed(0)} MiB | ${(r.bytesWritten / 2 ** 20).toFixed(0)} MiB |`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
