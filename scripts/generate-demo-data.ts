// `npm run demo-data -- [--out DIR] [--seed N] [--frames N] [--size N | WxH] [--neurons N] [--no-downsample]`
// Generates the synthetic calcium-imaging demo dataset (the one the server seeds into
// <dataDir>/volumes/calcium-demo) into DIR, atomically (temporary sibling, then rename), and
// prints what it wrote and how long it took. Run directly: node --import tsx scripts/generate-demo-data.ts
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_CALCIUM_PARAMS } from '../server/src/volumes/demo/calcium-sim.ts';
import { DEMO_DATASET } from '../server/src/volumes/demo/demo-dataset.ts';
import { writeDemoDatasetAtomically } from '../server/src/volumes/demo/ensure-demo.ts';

const { values } = parseArgs({
  options: {
    out: { type: 'string' },
    seed: { type: 'string' },
    frames: { type: 'string' },
    size: { type: 'string' },
    neurons: { type: 'string' },
    'no-downsample': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  console.log(`Usage: npm run demo-data -- [options]
  --out DIR        dataset directory (default: $PLEXUS_DATA_DIR/volumes/${DEMO_DATASET}, PLEXUS_DATA_DIR defaults to ./data)
  --seed N         PRNG seed (default ${DEFAULT_CALCIUM_PARAMS.seed}); the same seed gives byte-identical files
  --frames N       frames at 30 Hz (default ${DEFAULT_CALCIUM_PARAMS.frames})
  --size N | WxH   pixels (default ${DEFAULT_CALCIUM_PARAMS.width}x${DEFAULT_CALCIUM_PARAMS.height})
  --neurons N      neurons (default: 60 per 256×256, scaled with the area)
  --no-downsample  skip the 2×2-downsampled movie scale`);
  process.exit(0);
}

function positive(name: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name} must be a non-negative integer, got "${v}"`);
    process.exit(2);
  }
  return n;
}

const size = (values.size ?? `${DEFAULT_CALCIUM_PARAMS.width}x${DEFAULT_CALCIUM_PARAMS.height}`).split('x');
const width = positive('size', size[0], DEFAULT_CALCIUM_PARAMS.width);
const height = positive('size', size[1] ?? size[0], width);
const params = {
  seed: positive('seed', values.seed, DEFAULT_CALCIUM_PARAMS.seed),
  frames: positive('frames', values.frames, DEFAULT_CALCIUM_PARAMS.frames),
  width,
  height,
  neurons: positive('neurons', values.neurons, Math.max(1, Math.round((DEFAULT_CALCIUM_PARAMS.neurons * width * height) / (256 * 256)))),
};
const out = path.resolve(values.out ?? path.join(process.env.PLEXUS_DATA_DIR ?? './data', 'volumes', DEMO_DATASET));

console.log(`Generating ${width}×${height} × ${params.frames} frames, ${params.neurons} neurons, seed ${params.seed} → ${out}`);
try {
  const cpu0 = process.cpuUsage();
  const ms = await writeDemoDatasetAtomically(out, { params, layout: { downsample: !values['no-downsample'] } });
  const cpu = process.cpuUsage(cpu0);
  const bytes = (d: string): number => fs.readdirSync(d, { withFileTypes: true }).reduce((a, e) => a + (e.isDirectory() ? bytes(path.join(d, e.name)) : fs.statSync(path.join(d, e.name)).size), 0);
  // CPU of all this process's threads (zlib's pool included).
  console.log(`Done in ${(ms / 1000).toFixed(2)} s (CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s): ${(bytes(out) / 1024 / 1024).toFixed(1)} MiB in ${out}`);
  console.log('Layers: movie, mean, max, labels (precomputed); tables: tables/rois.csv, tables/traces.csv, tables/spikes.csv');
} catch (e) {
  console.error(`Generation failed: ${(e as Error).message}`);
  process.exit(1);
}
