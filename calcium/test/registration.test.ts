import { describe, expect, it } from 'vitest';
import { Fft2d } from '../src/fft2d.ts';
import { phaseCorrelator } from '../src/registration/phase-correlation.ts';
import { registerMovie } from '../src/registration/register.ts';
import { shiftFrame } from '../src/registration/shift.ts';
import { movieSource } from '../src/types.ts';
import { gaussian, rng } from './synthetic.ts';

/** A textured scene: blobs of several sizes on a gradient (what a mean two-photon image looks like). */
function scene(W: number, H: number, seed: number): Float32Array {
  const r = rng(seed);
  const blobs = Array.from({ length: 40 }, () => ({ x: r() * W, y: r() * H, s: 2 + r() * 5, a: 20 + r() * 60 }));
  const img = new Float32Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      let v = 100 + (30 * x) / W;
      for (const b of blobs) v += b.a * Math.exp(-((x - b.x) ** 2 + (y - b.y) ** 2) / (2 * b.s * b.s));
      img[x + y * W] = v;
    }
  return img;
}

/** Exact sub-pixel translation of a periodic power-of-two image: out(x) = img(x − d). */
function fourierShift(img: Float32Array, N: number, dx: number, dy: number): Float32Array {
  const fft = new Fft2d(N, N);
  const c = fft.createComplex();
  for (let i = 0; i < N * N; i++) c[2 * i] = img[i]!;
  fft.transform(c);
  for (let y = 0; y < N; y++)
    for (let x = 0; x < N; x++) {
      const kx = (x <= N / 2 ? x : x - N) / N;
      const ky = (y <= N / 2 ? y : y - N) / N;
      const ph = -2 * Math.PI * (kx * dx + ky * dy);
      const i = 2 * (x + y * N);
      const re = c[i]!;
      const im = c[i + 1]!;
      c[i] = re * Math.cos(ph) - im * Math.sin(ph);
      c[i + 1] = re * Math.sin(ph) + im * Math.cos(ph);
    }
  fft.transform(c, true);
  const out = new Float32Array(N * N);
  for (let i = 0; i < N * N; i++) out[i] = c[2 * i]!;
  return out;
}

describe('phase correlation', () => {
  it('recovers known sub-pixel shifts to 0.1 px, with noise', () => {
    const N = 128;
    const base = scene(N, N, 3);
    const pc = phaseCorrelator(N, N, { maxShift: 10 });
    pc.setTemplate(base);
    const r = rng(9);
    for (const [dx, dy] of [[0, 0], [1.3, -2.6], [-4.45, 0.2], [7.9, 6.1], [-0.5, 0.5]] as const) {
      const moved = fourierShift(base, N, dx, dy);
      for (let i = 0; i < moved.length; i++) moved[i]! += 3 * gaussian(r);
      const s = pc.estimate(moved);
      expect(Math.abs(s.dx - dx)).toBeLessThan(0.1);
      expect(Math.abs(s.dy - dy)).toBeLessThan(0.1);
      expect(s.peak).toBeGreaterThan(0.2);
    }
  });

  it('works on non-square, non-power-of-two frames through a centred crop', () => {
    const W = 150;
    const H = 97;
    const base = scene(W, H, 5);
    const moved = new Float32Array(W * H);
    // Integer shift by copying (frame(x) = base(x − d)), edges repeated.
    const dx = 3;
    const dy = -2;
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) moved[x + y * W] = base[Math.min(W - 1, Math.max(0, x - dx)) + Math.min(H - 1, Math.max(0, y - dy)) * W]!;
    const pc = phaseCorrelator(W, H);
    expect(pc.region).toEqual([0, 0, 150, 97]);
    pc.setTemplate(base);
    const s = pc.estimate(moved);
    expect(Math.abs(s.dx - dx)).toBeLessThan(0.1);
    expect(Math.abs(s.dy - dy)).toBeLessThan(0.1);
  });

  it('refuses frames too small to register', () => {
    expect(() => phaseCorrelator(6, 40)).toThrow(/too small/);
  });
});

describe('shiftFrame', () => {
  it('moves a frame back onto its template (integer and half-pixel)', () => {
    const W = 16;
    const H = 12;
    const img = new Float32Array(W * H).map((_, i) => (i % W) * 10 + Math.floor(i / W));
    const out = new Float32Array(W * H);
    shiftFrame(img, W, H, 2, 1, out);
    expect(out[5 + 4 * W]).toBe(img[7 + 5 * W]);
    shiftFrame(img, W, H, 0.5, 0, out);
    expect(out[5 + 4 * W]).toBeCloseTo((img[5 + 4 * W]! + img[6 + 4 * W]!) / 2, 5);
  });
});

describe('registerMovie', () => {
  it('recovers the shifts of a jittered noisy movie and the corrected frames match the scene', async () => {
    const N = 128;
    const F = 30;
    const base = scene(N, N, 11);
    const r = rng(4);
    const truth: Array<[number, number]> = [];
    const data = new Float32Array(N * N * F);
    for (let f = 0; f < F; f++) {
      const d: [number, number] = [Math.round((r() * 6 - 3) * 10) / 10, Math.round((r() * 6 - 3) * 10) / 10];
      truth.push(d);
      const m = fourierShift(base, N, d[0], d[1]);
      for (let i = 0; i < N * N; i++) data[f * N * N + i] = m[i]! + 2 * gaussian(r);
    }
    const progress: number[] = [];
    let corrected = 0;
    const reg = await registerMovie(movieSource({ width: N, height: N, frames: F, data }), {
      maxShift: 8,
      onProgress: (p) => p.stage === 'registration' && progress.push(p.done),
      onFrame: () => corrected++,
    });
    // Shifts are relative to the template, which may sit a constant offset from the scene.
    const med = (v: number[]) => v.sort((a, b) => a - b)[v.length >> 1]!;
    const ox = med(truth.map((t, f) => reg.shifts[2 * f]! - t[0]));
    const oy = med(truth.map((t, f) => reg.shifts[2 * f + 1]! - t[1]));
    expect(Math.abs(ox)).toBeLessThan(3);
    for (let f = 0; f < F; f++) {
      expect(Math.abs(reg.shifts[2 * f]! - truth[f]![0] - ox)).toBeLessThan(0.15);
      expect(Math.abs(reg.shifts[2 * f + 1]! - truth[f]![1] - oy)).toBeLessThan(0.15);
    }
    expect(corrected).toBe(F);
    expect(progress.at(-1)).toBe(F);
  });

  it('follows slow drift and sudden jumps (a bump of the stage) with the default shift limit', async () => {
    const N = 128;
    const F = 90;
    const base = scene(N, N, 12);
    const r = rng(5);
    const truth: Array<[number, number]> = [];
    const data = new Float32Array(N * N * F);
    for (let f = 0; f < F; f++) {
      // Drift of 4 px in x over the recording; the field jumps 9 px in y for frames 40–59, then 5 px back the other way.
      const d: [number, number] = [Math.round(((4 * f) / F) * 10) / 10, f >= 40 && f < 60 ? 9 : f >= 60 ? -5 : 0];
      truth.push(d);
      const m = fourierShift(base, N, d[0], d[1]);
      for (let i = 0; i < N * N; i++) data[f * N * N + i] = m[i]! + 2 * gaussian(r);
    }
    const reg = await registerMovie(movieSource({ width: N, height: N, frames: F, data }));
    const med = (v: number[]) => v.sort((a, b) => a - b)[v.length >> 1]!;
    const ox = med(truth.map((t, f) => reg.shifts[2 * f]! - t[0]));
    const oy = med(truth.map((t, f) => reg.shifts[2 * f + 1]! - t[1]));
    for (let f = 0; f < F; f++) {
      expect(Math.abs(reg.shifts[2 * f]! - truth[f]![0] - ox)).toBeLessThan(0.2);
      expect(Math.abs(reg.shifts[2 * f + 1]! - truth[f]![1] - oy)).toBeLessThan(0.2);
    }
  });

  it('stops between frames when aborted', async () => {
    const N = 32;
    const data = new Float32Array(N * N * 10).map((_, i) => (i * 7919) % 101);
    const ac = new AbortController();
    ac.abort();
    await expect(registerMovie(movieSource({ width: N, height: N, frames: 10, data }), { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });
});
