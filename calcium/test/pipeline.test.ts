import { describe, expect, it } from 'vitest';
import { resolveParams, runPipeline } from '../src/pipeline.ts';
import { movieSource, type FrameSource } from '../src/types.ts';
import { synthMovie, type SynthCell } from './synthetic.ts';

/** A 96² recording of 9 cells (one silent) with integer motion. */
function recording() {
  const cells: SynthCell[] = [];
  for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) cells.push({ cx: 22 + 26 * i, cy: 22 + 26 * j, a: 5, brightness: 30, rate: i === 1 && j === 1 ? 0 : 0.6 });
  const m = synthMovie({ width: 96, height: 96, frames: 300, frameRate: 30, tau: 0.7, cells, noise: 3, background: 40, seed: 11, amplitude: 0.6 });
  // Motion: frame t shows the scene moved by (dx, dy).
  const n = 96 * 96;
  const shifts: Array<[number, number]> = [];
  const moved = new Float32Array(m.data.length);
  for (let t = 0; t < m.frames; t++) {
    const dx = Math.round(2 * Math.sin(t / 20));
    const dy = Math.round(2 * Math.cos(t / 33));
    shifts.push([dx, dy]);
    for (let y = 0; y < 96; y++)
      for (let x = 0; x < 96; x++) moved[t * n + x + y * 96] = m.data[t * n + Math.min(95, Math.max(0, x - dx)) + Math.min(95, Math.max(0, y - dy)) * 96]!;
  }
  return { m, shifts, src: movieSource({ ...m, data: moved }, 30) };
}

// One recording and one full run, shared by the tests (the pipeline takes seconds on a busy machine).
const rec = recording();
const stages = new Set<string>();
const firstRun = runPipeline(rec.src, { tauDecay: 'GCaMP6f' }, { onProgress: (p) => stages.add(p.stage) });

describe('runPipeline', () => {
  it('registers, finds every cell (the silent one from the mean image), and extracts traces that follow the calcium', async () => {
    const { m, shifts } = rec;
    const res = await firstRun;
    expect([...stages]).toEqual(['template', 'registration', 'detection', 'extraction', 'traces']);
    expect(res.params).toMatchObject({ frameRate: 30, tauDecay: 0.7, neuropilCoefficient: 0.7, onsetLagFrames: 1 });
    // Shifts: right up to a constant offset.
    const med = (v: number[]) => v.sort((a, b) => a - b)[v.length >> 1]!;
    const off = [0, 1].map((a) => med(shifts.map((s, t) => res.registration.shifts[2 * t + a]! - s[a]!)));
    for (let t = 0; t < m.frames; t += 7) {
      expect(Math.abs(res.registration.shifts[2 * t]! - shifts[t]![0] - off[0]!)).toBeLessThan(0.3);
      expect(Math.abs(res.registration.shifts[2 * t + 1]! - shifts[t]![1] - off[1]!)).toBeLessThan(0.3);
    }
    // Every cell found once, the middle one as an anatomical (silent) ROI.
    const cells = res.rois.filter((r) => r.isCell);
    expect(cells.length).toBe(9);
    for (const c of m.cells) {
      const hits = cells.filter((r) => Math.hypot(r.centroid[0] - c.cx - off[0]!, r.centroid[1] - c.cy - off[1]!) < 3);
      expect(hits.length).toBe(1);
      expect(hits[0]!.source).toBe(c.rate === 0 ? 'anatomy' : 'activity');
    }
    // ΔF/F of an active cell follows its calcium.
    const k = res.rois.findIndex((r) => Math.hypot(r.centroid[0] - 22 - off[0]!, r.centroid[1] - 22 - off[1]!) < 3);
    const r = pearson(res.traces.dff[k]!, m.calcium[0]!);
    expect(r).toBeGreaterThan(0.9);
    expect(res.events[k]!.length).toBeGreaterThan(3);
    expect(res.images.mean.data.length).toBe(96 * 96);
  });

  it('reuses a registration when only later parameters change, and gives the same ROIs', async () => {
    const { src } = rec;
    const first = await firstRun;
    let reads = 0;
    const counting: FrameSource = { ...src, read: (f, out) => { reads++; return src.read(f, out); } };
    const stages = new Set<string>();
    const again = await runPipeline(counting, { neuropilCoefficient: 0.5 }, { reuseRegistration: first.registration, onProgress: (p) => stages.add(p.stage) });
    expect(stages.has('template')).toBe(false);
    expect(reads).toBe(2 * src.frames); // one pass to accumulate, one to extract: no template sampling
    // (The first run shifted frames by the exact estimate, the reuse by its float32 copy.)
    expect(again.rois.length).toBe(first.rois.length);
    again.rois.forEach((r, i) => {
      expect(r.centroid[0]).toBeCloseTo(first.rois[i]!.centroid[0], 3);
      expect(r.centroid[1]).toBeCloseTo(first.rois[i]!.centroid[1], 3);
    });
    expect(again.params.neuropilCoefficient).toBe(0.5);
  });

  it('registers piecewise-rigid on request: the same cells, the block shifts recorded and reused only for the same blockSize', async () => {
    const { src } = rec;
    const first = await firstRun;
    const pw = await runPipeline(src, { tauDecay: 'GCaMP6f', blockSize: 48 });
    expect(pw.params.blockSize).toBe(48);
    expect(pw.registration.piecewise!.grid.xs.length).toBe(3); // 96 px in blocks of 48: ceil(1.5 · 96 / 48)
    expect(pw.rois.filter((r) => r.isCell).length).toBe(first.rois.filter((r) => r.isCell).length);
    const again = await runPipeline(src, { tauDecay: 'GCaMP6f', blockSize: 48, neuropilCoefficient: 0.5 }, { reuseRegistration: pw.registration });
    expect(again.rois.length).toBe(pw.rois.length);
    await expect(runPipeline(src, { tauDecay: 'GCaMP6f' }, { reuseRegistration: pw.registration })).rejects.toThrow(/another blockSize/);
    await expect(runPipeline(src, { blockSize: 48 }, { reuseRegistration: first.registration })).rejects.toThrow(/another blockSize/);
    expect(() => resolveParams(src, { blockSize: 8 })).toThrow(/blockSize must be between 16 px/);
  });

  it('is interrupted between frames and says why parameters are wrong', async () => {
    const { src } = rec;
    const ac = new AbortController();
    const run = runPipeline(src, {}, { signal: ac.signal, onProgress: () => ac.abort() });
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    const noRate: FrameSource = { ...src, frameRate: undefined };
    expect(() => resolveParams(noRate, {})).toThrow(/frame rate is unknown/);
    expect(() => resolveParams(src, { tauDecay: 'GFP' })).toThrow(/unknown indicator "GFP"/);
    expect(() => resolveParams(src, { diameter: 1 })).toThrow(/diameter/);
    expect(resolveParams(src, { tauDecay: 'GCaMP6s' }).tauDecay).toBe(1.8);
  });
});

function pearson(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let ma = 0, mb = 0;
  for (let i = 0; i < a.length; i++) { ma += a[i]!; mb += b[i]!; }
  ma /= a.length; mb /= b.length;
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) { ab += (a[i]! - ma) * (b[i]! - mb); aa += (a[i]! - ma) ** 2; bb += (b[i]! - mb) ** 2; }
  return ab / Math.sqrt(aa * bb);
}
