/**
 * Calcium pipeline benchmark: accuracy and speed from the same run, against the simulator's
 * ground truth, next to a naive baseline (threshold the mean image, raw ROI means).
 *
 *   node --import tsx bench/calcium.ts [--config=demo|large|other|all] [--seeds=1,2] [--piecewise=128]
 *
 * Configurations: `demo` (256² × 900 frames, 30 Hz, GCaMP6f 0.7 s, 60 cells — the demo recording's
 * generator), `large` (512² × 3,000 frames, 200 cells), `other` (other physics: 15 Hz, 1.2 s decay,
 * larger cells, a 320 × 200 field, 50 cells). The movie is rendered to a raw file first (not
 * timed); the pipeline then streams it from disk as it would a TIFF. Figures: per-stage time,
 * frames/s end to end, peak RSS above the start, ROI precision / recall / F1 (IoU ≥ 0.5; all
 * cells, and cells with peak SNR ≥ 5), median trace r (ΔF/F and denoised, against the noise-free
 * ΔF/F), median spike r in bins of max(40 ms, one frame). Effects: temp files, CPU.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simulateCalcium, type CalciumParams, type CalciumTruth } from '@plexus/server/volumes/demo/calcium-sim';
import { frameRenderer } from '@plexus/server/volumes/demo/calcium-render';
import { peakSnr } from '@plexus/server/volumes/demo/demo-tables';
import { runPipeline, type PipelineResult } from '@plexus/calcium/pipeline';
import { matchRois, pearson, spikeCorrelation, finiteMedian } from '@plexus/calcium/evaluation/index';
import { baseline } from '@plexus/calcium/traces/baseline';
import { componentFrom, gaussianBlur, median, robustSd } from '@plexus/calcium/image-ops';
import type { FrameSource, Roi } from '@plexus/calcium/types';

const CONFIGS: Record<string, Partial<CalciumParams>> = {
  demo: { width: 256, height: 256, frames: 900, frameRate: 30, neurons: 60, tauDecay: 0.7 },
  large: { width: 512, height: 512, frames: 3000, frameRate: 30, neurons: 200, tauDecay: 0.7 },
  other: { width: 320, height: 200, frames: 900, frameRate: 15, neurons: 50, tauDecay: 1.2, cellRadius: [6, 9] },
};

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const configs = (args.config ?? 'demo') === 'all' ? Object.keys(CONFIGS) : (args.config ?? 'demo').split(',');
const seeds = (args.seeds ?? '1').split(',').map(Number);
/** Rigid registration, and piecewise-rigid in blocks of `--piecewise=<px>` beside it when asked. */
const variants: Array<number | undefined> = [undefined, ...(args.piecewise ? [Number(args.piecewise)] : [])];

/** Renders the movie to a raw uint16 file and gives a FrameSource that streams it back. */
function renderToDisk(truth: CalciumTruth, file: string): FrameSource {
  const { width: W, height: H, frames: F, frameRate } = truth.params;
  const n = W * H;
  const render = frameRenderer(truth);
  const buf = new Uint16Array(n);
  const fd = fs.openSync(file, 'w');
  for (let f = 0; f < F; f++) {
    render(f, buf, 0);
    fs.writeSync(fd, new Uint8Array(buf.buffer), 0, 2 * n, 2 * n * f);
  }
  fs.closeSync(fd);
  const rfd = fs.openSync(file, 'r');
  const raw = new Uint16Array(n);
  const bytes = new Uint8Array(raw.buffer);
  return {
    width: W,
    height: H,
    frames: F,
    frameRate,
    read(f, out) {
      fs.readSync(rfd, bytes, 0, 2 * n, 2 * n * f);
      for (let i = 0; i < n; i++) out[i] = raw[i]!;
    },
  };
}

/** Truth ROIs (footprint weight ≥ 0.5), moved by the registration's offset from the true frame. */
function truthRois(truth: CalciumTruth, ox: number, oy: number): Roi[] {
  const { width: W, height: H } = truth.params;
  return truth.neurons.map((nr) => {
    const fp = nr.footprint;
    const px: number[] = [];
    for (let y = 0; y < fp.height; y++)
      for (let x = 0; x < fp.width; x++) {
        if (fp.weights[x + y * fp.width]! < 0.5) continue;
        const gx = fp.x0 + x + ox;
        const gy = fp.y0 + y + oy;
        if (gx >= 0 && gx < W && gy >= 0 && gy < H) px.push(gx + gy * W);
      }
    px.sort((a, b) => a - b);
    return { id: nr.id, pixels: Int32Array.from(px), weights: new Float32Array(px.length).fill(1) };
  });
}

/** Naive baseline: bright blobs of the mean image (mean − blurred mean > 2 robust SD), raw means. */
async function naive(src: FrameSource, meanImg: { width: number; height: number; data: Float32Array }, diameter: number) {
  const { width: W, height: H } = meanImg;
  const bg = gaussianBlur(meanImg, diameter);
  const diff = meanImg.data.map((v, i) => v - bg.data[i]!);
  const thr = median(diff) + 2 * robustSd(diff);
  const seen = new Uint8Array(W * H);
  const rois: Roi[] = [];
  for (let i = 0; i < W * H; i++) {
    if (seen[i] || !(diff[i]! > thr)) continue;
    const comp = componentFrom(W, H, i, (j) => !seen[j] && diff[j]! > thr);
    for (const j of comp) seen[j] = 1;
    const disc = Math.PI * (diameter / 2) ** 2;
    if (comp.length < 0.2 * disc || comp.length > 4 * disc) continue;
    rois.push({ id: rois.length + 1, pixels: Int32Array.from(comp), weights: new Float32Array(comp.length).fill(1) });
  }
  const F = src.frames;
  const traces = rois.map(() => new Float32Array(F));
  const frame = new Float32Array(W * H);
  for (let f = 0; f < F; f++) {
    await src.read(f, frame);
    rois.forEach((r, k) => {
      let s = 0;
      for (const p of r.pixels) s += frame[p]!;
      traces[k]![f] = s / r.pixels.length;
    });
  }
  return { rois, traces };
}

function peakSnrs(truth: CalciumTruth): Map<number, number> {
  return new Map(truth.neurons.map((n) => [n.id, peakSnr(n)]));
}

interface Row {
  config: string;
  seed: number;
  method: string;
  f1: number;
  p: number;
  r: number;
  hiF1: number;
  hiP: number;
  hiR: number;
  traceR: number;
  denoisedR: number;
  spikeR: number;
  fps: number;
  peakMb: number;
  stages: string;
}

const rows: Row[] = [];
for (const config of configs) {
  for (const seed of seeds) {
    const params = { ...CONFIGS[config]!, seed };
    const truth = simulateCalcium(params);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-calcium-bench-'));
    try {
      const src = renderToDisk(truth, path.join(dir, 'movie.u16'));
      const P = truth.params;
      let res!: PipelineResult;
      let truthR!: ReturnType<typeof truthRois>;
      let snr!: ReturnType<typeof peakSnrs>;
      let byId!: Map<number, CalciumTruth['neurons'][number]>;
      for (const blockSize of variants) {
        global.gc?.();
        const rss0 = process.memoryUsage().rss;
        let peak = rss0;
        const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
        const t0 = performance.now();
        res = await runPipeline(src, { frameRate: P.frameRate, tauDecay: P.tauDecay, ...(blockSize ? { blockSize } : {}) }, { onProgress: () => (peak = Math.max(peak, process.memoryUsage().rss)) });
        const total = performance.now() - t0;
        clearInterval(sample);
        peak = Math.max(peak, process.memoryUsage().rss);
        // The template sits where the frames' median shift puts it: move the truth there (evaluation only).
        const dx: number[] = [];
        const dy: number[] = [];
        for (let f = 0; f < P.frames; f++) {
          dx.push(res.registration.shifts[2 * f]! - truth.shifts[2 * f]!);
          dy.push(res.registration.shifts[2 * f + 1]! - truth.shifts[2 * f + 1]!);
        }
        const ox = Math.round(median(dx));
        const oy = Math.round(median(dy));
        const shiftErr = dx.reduce((m, v, f) => Math.max(m, Math.abs(v - median(dx)), Math.abs(dy[f]! - median(dy))), 0);
        truthR = truthRois(truth, ox, oy);
        snr = peakSnrs(truth);
        const cells = res.rois.filter((r) => r.isCell);
        const m = matchRois(cells, truthR, { width: P.width, height: P.height, binarize: 0.5, truthSnr: snr });
        byId = new Map(truth.neurons.map((n) => [n.id, n]));
        const idx = new Map(res.rois.map((r, k) => [r.id, k]));
        const tr = m.matches.map((x) => pearson(res.traces.dff[idx.get(x.detected)!]!, byId.get(x.truth)!.dff));
        const cr = m.matches.map((x) => pearson(res.traces.denoised[idx.get(x.detected)!]!, byId.get(x.truth)!.dff));
        const sr = m.matches.filter((x) => !byId.get(x.truth)!.silent).map((x) => spikeCorrelation(res.traces.spikes[idx.get(x.detected)!]!, byId.get(x.truth)!.spikeTimes, { frameRate: P.frameRate }));
        const t = res.timings;
        rows.push({
          config, seed, method: blockSize ? `plexus, piecewise ${blockSize} px` : 'plexus', f1: m.f1, p: m.precision, r: m.recall, hiF1: m.highSnr!.f1, hiP: m.highSnr!.precision, hiR: m.highSnr!.recall,
          traceR: finiteMedian(tr), denoisedR: finiteMedian(cr), spikeR: finiteMedian(sr), fps: P.frames / (total / 1000), peakMb: (peak - rss0) / 2 ** 20,
          stages: `reg ${(t.registration / 1000).toFixed(1)} s · det ${(t.detection / 1000).toFixed(1)} s · extr ${(t.extraction / 1000).toFixed(1)} s · traces ${(t.traces / 1000).toFixed(1)} s · shift err ≤ ${shiftErr.toFixed(2)} px · ${res.rois.length} ROIs (${cells.length} cells) · d ${res.params.diameter.toFixed(1)} px`,
        });
      }
      // Naive baseline on the same recording (no registration: it has none).
      const nv = await naive(src, res.images.mean, res.params.diameter);
      const nm = matchRois(nv.rois, truthR, { width: P.width, height: P.height, truthSnr: snr });
      const nIdx = new Map(nv.rois.map((r, k) => [r.id, k]));
      const ndff = nv.traces.map((f) => {
        const f0 = baseline(f, { frameRate: P.frameRate, windowSeconds: Math.min(60, P.frames / P.frameRate) });
        return f.map((v, i) => (v - f0[i]!) / f0[i]!);
      });
      const ntr = nm.matches.map((x) => pearson(ndff[nIdx.get(x.detected)!]!, byId.get(x.truth)!.dff));
      const nsr = nm.matches.filter((x) => !byId.get(x.truth)!.silent).map((x) => {
        const d = ndff[nIdx.get(x.detected)!]!;
        return spikeCorrelation(d.map((v, i) => (i ? Math.max(0, v - d[i - 1]!) : 0)), byId.get(x.truth)!.spikeTimes, { frameRate: P.frameRate });
      });
      rows.push({ config, seed, method: 'naive (mean image)', f1: nm.f1, p: nm.precision, r: nm.recall, hiF1: nm.highSnr!.f1, hiP: nm.highSnr!.precision, hiR: nm.highSnr!.recall, traceR: finiteMedian(ntr), denoisedR: NaN, spikeR: finiteMedian(nsr), fps: NaN, peakMb: NaN, stages: `${nv.rois.length} ROIs` });
      const last = rows.find((x) => x.config === config && x.seed === seed && x.method === 'plexus')!;
      console.log(`${config} seed ${seed}: F1 ${last.f1.toFixed(3)} (SNR≥5 ${last.hiF1.toFixed(3)}), trace r ${last.traceR.toFixed(3)}, spike r ${last.spikeR.toFixed(3)}, ${last.fps.toFixed(1)} frames/s — ${last.stages}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

const f = (v: number, d = 3) => (Number.isFinite(v) ? v.toFixed(d) : '—');
console.log(`\nload average ${os.loadavg().map((v) => v.toFixed(2)).join(' ')} · ${os.cpus().length} cores · node ${process.version}`);
console.log('| config | seed | method | F1 | P | R | F1 (SNR≥5) | P (≥5) | R (≥5) | trace r (ΔF/F) | trace r (denoised) | spike r | frames/s | peak MB |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.config} | ${r.seed} | ${r.method} | ${f(r.f1)} | ${f(r.p)} | ${f(r.r)} | ${f(r.hiF1)} | ${f(r.hiP)} | ${f(r.hiR)} | ${f(r.traceR)} | ${f(r.denoisedR)} | ${f(r.spikeR)} | ${f(r.fps, 1)} | ${f(r.peakMb, 0)} |`);
for (const r of rows.filter((x) => x.method === 'plexus')) console.log(`${r.config}/${r.seed}: ${r.stages}`);
