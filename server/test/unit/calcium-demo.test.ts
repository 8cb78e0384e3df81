/**
 * The synthetic calcium-imaging generator: deterministic to the byte for a seed, a GCaMP6f-like
 * kernel (peak time, 0.7 s decay), plausible spiking (silent neurons silent, bursty otherwise),
 * footprints and labels consistent with each other, a sensible SNR column, tables that agree with
 * the ground truth, and ensureDemoDataset's atomic, idempotent behaviour.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { calciumKernel, dffFromSpikes, kernelPeakTime, simulateCalcium, type CalciumParams } from '../../src/volumes/demo/calcium-sim.ts';
import { frameRenderer } from '../../src/volumes/demo/calcium-render.ts';
import { writeDemoDataset, DEMO_GENERATOR_VERSION, type DemoLayout } from '../../src/volumes/demo/demo-dataset.ts';
import { demoDatasetDir, ensureDemoDataset, isDemoDatasetCurrent } from '../../src/volumes/demo/ensure-demo.ts';
import { tempDirs } from '@plexus/testkit/dirs';
import { waitFor } from '@plexus/testkit/wait';

const SMALL: Partial<CalciumParams> = { width: 48, height: 40, frames: 50, neurons: 8, seed: 7 };
const LAYOUT: Partial<DemoLayout> = { movieChunk: [32, 32, 16], planeChunk: [32, 32] };
const log = createLogger('silent');

const dirs = tempDirs('plexus-demo-');
const tmp = dirs.make;
afterAll(dirs.cleanup);

/** sha256 over every file's relative path and bytes, in sorted order. */
function treeHash(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string): string[] => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
  for (const f of walk(dir).sort()) h.update(path.relative(dir, f)).update('\0').update(fs.readFileSync(f));
  return h.digest('hex');
}

describe('calcium demo generator', () => {
  it('is deterministic: the same seed gives byte-identical files, another seed different ones', async () => {
    const [a, b, c] = [tmp(), tmp(), tmp()];
    await writeDemoDataset(path.join(a, 'ds'), { params: SMALL, layout: LAYOUT });
    await writeDemoDataset(path.join(b, 'ds'), { params: SMALL, layout: LAYOUT });
    await writeDemoDataset(path.join(c, 'ds'), { params: { ...SMALL, seed: 8 }, layout: LAYOUT });
    expect(treeHash(path.join(a, 'ds'))).toBe(treeHash(path.join(b, 'ds')));
    expect(treeHash(path.join(a, 'ds'))).not.toBe(treeHash(path.join(c, 'ds')));
    // movie: 2 × 2 × 4 chunks at scale 0 (last z chunk 48-50), 1 × 1 × 4 at the 2×2 scale.
    expect(fs.readdirSync(path.join(a, 'ds/movie/1000_1000_33333333')).sort()).toContain('32-48_32-40_48-50.gz');
    expect(fs.readdirSync(path.join(a, 'ds/movie/1000_1000_33333333'))).toHaveLength(16);
    expect(fs.readdirSync(path.join(a, 'ds/movie/2000_2000_33333333'))).toEqual(expect.arrayContaining(['0-24_0-20_0-16.gz']));
  });

  it('any frame renders identically on its own (per-frame noise streams)', () => {
    const truth = simulateCalcium(SMALL);
    const all = new Uint16Array(48 * 40 * 50);
    const r = frameRenderer(truth);
    for (let f = 0; f < 50; f++) r(f, all, f * 48 * 40);
    const one = new Uint16Array(48 * 40);
    frameRenderer(simulateCalcium(SMALL))(37, one);
    expect(Array.from(one)).toEqual(Array.from(all.subarray(37 * 48 * 40, 38 * 48 * 40)));
  });

  it('has a GCaMP6f-like kernel: peak ~0.14 s after the spike, decay time constant 0.7 s', () => {
    const tp = kernelPeakTime(0.05, 0.7);
    expect(tp).toBeGreaterThan(0.1);
    expect(tp).toBeLessThan(0.2);
    expect(calciumKernel(tp, 0.05, 0.7)).toBeCloseTo(1, 12);
    expect(calciumKernel(-0.01, 0.05, 0.7)).toBe(0);

    // One spike at t = 1 s, sampled at 30 Hz: peak amplitude and the log-slope of the tail.
    const fps = 30;
    const dff = dffFromSpikes([1], 300, fps, 0.4, 0.05, 0.7);
    const peak = dff.indexOf(Math.max(...dff));
    expect(Math.abs((peak + 0.5) / fps - 1 - tp)).toBeLessThanOrEqual(1 / fps);
    expect(Math.max(...dff)).toBeGreaterThan(0.38);
    expect(dff[29]).toBe(0); // frame centre 0.983 s: before the spike
    const xs: number[] = [];
    const ys: number[] = [];
    for (let f = 0; f < 300; f++) {
      const t = (f + 0.5) / fps - 1;
      if (t > 0.6 && t < 4) {
        xs.push(t);
        ys.push(Math.log(dff[f]!));
      }
    }
    const mx = xs.reduce((a, b) => a + b) / xs.length;
    const my = ys.reduce((a, b) => a + b) / ys.length;
    const slope = xs.reduce((a, x, i) => a + (x - mx) * (ys[i]! - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0);
    expect(-1 / slope).toBeCloseTo(0.7, 2);
  });

  it('spikes plausibly: silent neurons never spike, the others fire in bursts at 0.01-5 Hz', () => {
    const truth = simulateCalcium(); // the full demo: 60 neurons, 30 s
    const silent = truth.neurons.filter((n) => n.silent);
    expect(silent.length).toBe(9);
    for (const n of silent) {
      expect(n.spikeTimes).toEqual([]);
      expect(Math.max(...n.dff)).toBe(0);
    }
    const active = truth.neurons.filter((n) => !n.silent);
    const rates = active.map((n) => n.spikeTimes.length / 30);
    const mean = rates.reduce((a, b) => a + b) / rates.length;
    expect(mean).toBeGreaterThan(0.1);
    expect(mean).toBeLessThan(5);
    expect(Math.max(...rates)).toBeLessThan(10);
    // Bursty: intervals far more variable than a Poisson process (CV 1), many within 50 ms.
    const isis = active.flatMap((n) => n.spikeTimes.slice(1).map((t, i) => t - n.spikeTimes[i]!));
    expect(isis.every((d) => d > 0)).toBe(true);
    const m = isis.reduce((a, b) => a + b) / isis.length;
    const cv = Math.sqrt(isis.reduce((a, d) => a + (d - m) ** 2, 0) / isis.length) / m;
    expect(cv).toBeGreaterThan(1.2);
    expect(isis.filter((d) => d < 0.05).length / isis.length).toBeGreaterThan(0.3);
    const all = truth.neurons.flatMap((n) => n.spikeTimes);
    expect(Math.min(...all)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...all)).toBeLessThan(30);
  });

  it('has soma-sized footprints, labels consistent with them, some overlaps, and a sensible SNR', () => {
    const truth = simulateCalcium();
    const { width: W } = truth.params;
    let overlapping = 0;
    for (const n of truth.neurons) {
      // Area of the weight ≥ 0.5 region is close to the ellipse's (the soft edge is at ρ = 1).
      expect(n.area / (Math.PI * n.a * n.b)).toBeGreaterThan(0.7);
      expect(n.area / (Math.PI * n.a * n.b)).toBeLessThan(1.3);
      expect(Math.hypot(n.centroid[0] - n.cx, n.centroid[1] - n.cy)).toBeLessThan(1);
      let labelled = 0;
      let lost = 0;
      const fp = n.footprint;
      for (let y = 0; y < fp.height; y++)
        for (let x = 0; x < fp.width; x++) {
          const w = fp.weights[x + y * fp.width]!;
          const id = truth.labels[fp.x0 + x + (fp.y0 + y) * W]!;
          if (id === n.id) {
            labelled++;
            expect(w).toBeGreaterThanOrEqual(0.5);
          } else if (w >= 0.5) {
            lost++;
            expect(id).not.toBe(0); // only another, brighter soma takes a body pixel
          }
        }
      expect(labelled + lost).toBe(n.area);
      if (lost > 0) overlapping++;
      expect(n.snr).toBeGreaterThan(2);
      expect(n.snr).toBeLessThan(40);
    }
    expect(overlapping).toBeGreaterThan(0);
    expect(new Set(truth.labels).size).toBe(61); // every neuron keeps pixels, plus background
    for (let f = 0; f < truth.params.frames; f++) {
      expect(Math.abs(truth.shifts[2 * f]!)).toBeLessThanOrEqual(3);
      expect(Math.abs(truth.shifts[2 * f + 1]!)).toBeLessThanOrEqual(3);
    }
    expect(new Set(truth.shifts).size).toBeGreaterThan(2); // it does move
  });

  it('writes tables that agree with the ground truth', async () => {
    const dir = path.join(tmp(), 'ds');
    const { truth } = await writeDemoDataset(dir, { params: SMALL, layout: LAYOUT });
    const rows = (f: string) => fs.readFileSync(path.join(dir, 'tables', f), 'utf8').trim().split('\n').map((l) => l.split(','));
    const rois = rows('rois.csv');
    expect(rois[0]).toEqual(['id', 'centroid_x', 'centroid_y', 'area_px', 'snr', 'silent', 'spikes', 'rate_hz', 'label_px', 'peak_snr']);
    expect(rois).toHaveLength(1 + 8);
    for (const [i, n] of truth.neurons.entries()) {
      const r = rois[i + 1]!.map(Number);
      expect(r[0]).toBe(n.id);
      expect(r[3]).toBe(n.area);
      expect(r[5]).toBe(n.silent ? 1 : 0);
      expect(r[6]).toBe(n.spikeTimes.length);
      expect(r[8]).toBe(truth.labels.filter((id) => id === n.id).length);
    }
    const spikes = rows('spikes.csv').slice(1);
    expect(spikes.length).toBe(truth.neurons.reduce((a, n) => a + n.spikeTimes.length, 0));
    for (const [, frame, t] of spikes) expect(Number(frame)).toBe(Math.floor(Number(t) * 30));
    const traces = rows('traces.csv');
    expect(traces[0]).toEqual(['id', 'frame', 'time_s', 'dff']);
    expect(traces).toHaveLength(1 + 8 * 50);
    expect(Number(traces[1 + 3 * 50 + 20]![3])).toBeCloseTo(truth.neurons[3]!.dff[20]!, 4);
    const meta = JSON.parse(fs.readFileSync(path.join(dir, 'movie/plexus.json'), 'utf8'));
    expect(meta).toMatchObject({ axes: { x: 'µm', y: 'µm', z: 's' }, frameRate: 30 });
  });
});

describe('ensureDemoDataset', () => {
  const options = { params: SMALL, layout: LAYOUT };

  it('generates once, is then a no-op, regenerates another version, and clears crash leftovers', async () => {
    const dataDir = tmp();
    const root = path.join(dataDir, 'volumes');
    fs.mkdirSync(root);
    const dead = path.join(root, '.calcium-demo.tmp-999999999-dead');
    fs.mkdirSync(dead);
    // A half-written dataset without plexus.json is not taken for a complete one.
    fs.mkdirSync(path.join(root, 'calcium-demo', 'movie'), { recursive: true });

    const first = await ensureDemoDataset(dataDir, log, options);
    expect(first.status).toBe('generated');
    expect(fs.existsSync(dead)).toBe(false);
    expect(isDemoDatasetCurrent(dataDir, options)).toBe(true);
    expect(isDemoDatasetCurrent(dataDir, { ...options, params: { ...SMALL, seed: 9 } })).toBe(false);
    const hash = treeHash(demoDatasetDir(dataDir));

    expect((await ensureDemoDataset(dataDir, log, options)).status).toBe('present');
    expect(fs.readdirSync(root)).toEqual(['calcium-demo']);

    const metaFile = path.join(demoDatasetDir(dataDir), 'plexus.json');
    const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8'));
    meta.generator.version = DEMO_GENERATOR_VERSION - 1;
    fs.writeFileSync(metaFile, JSON.stringify(meta));
    expect((await ensureDemoDataset(dataDir, log, options)).status).toBe('generated');
    expect(treeHash(demoDatasetDir(dataDir))).toBe(hash);
    expect(fs.readdirSync(root)).toEqual(['calcium-demo']);
  });

  it('generates on a worker thread and leaves nothing behind when aborted', async () => {
    const dataDir = tmp();
    const done = await ensureDemoDataset(dataDir, log, { ...options, worker: true });
    expect(done.status).toBe('generated');
    expect(isDemoDatasetCurrent(dataDir, options)).toBe(true);

    const other = tmp();
    const ac = new AbortController();
    const run = ensureDemoDataset(other, log, { params: { ...SMALL, frames: 2000 }, layout: LAYOUT, worker: true, signal: ac.signal });
    // Abort while the worker is writing (its temporary directory exists), not after a guessed 50 ms:
    // the main thread has not handled the worker's end yet, so the abort always lands mid-run.
    const volumesDir = path.join(other, 'volumes');
    await waitFor(() => fs.existsSync(volumesDir) && fs.readdirSync(volumesDir).some((f) => f.includes('.tmp-')), { interval: 1, message: 'generation under way' });
    ac.abort();
    await expect(run).rejects.toThrow(/aborted/);
    expect(fs.readdirSync(path.join(other, 'volumes'))).toEqual([]);
  });
});
