/**
 * Piecewise-rigid registration: the block layout, a warp by equal block shifts is the rigid shift,
 * and a recording whose top and bottom move in opposite directions (which no single shift can
 * correct) is corrected block by block.
 */
import { describe, expect, it } from 'vitest';
import { blockCount, blockGrid, blockWarper } from '../src/registration/piecewise.ts';
import { registerMovie, registeredSource } from '../src/registration/register.ts';
import { shiftFrame } from '../src/registration/shift.ts';
import { movieSource } from '../src/types.ts';
import { gaussian, rng } from './synthetic.ts';

/** A textured scene as a function, so it can be drawn at any (warped) coordinates. */
function sceneAt(W: number, H: number, seed: number): (x: number, y: number) => number {
  const r = rng(seed);
  const blobs = Array.from({ length: 80 }, () => ({ x: r() * W, y: r() * H, s: 2 + r() * 4, a: 20 + r() * 60 }));
  return (x, y) => {
    let v = 100 + (30 * x) / W;
    for (const b of blobs) v += b.a * Math.exp(-((x - b.x) ** 2 + (y - b.y) ** 2) / (2 * b.s * b.s));
    return v;
  };
}

describe('blockGrid', () => {
  it('lays about 1.5 overlapping blocks per block length, edge to edge', () => {
    const g = blockGrid(512, 256, 128);
    expect([g.blockWidth, g.blockHeight]).toEqual([128, 128]);
    expect(g.xs).toEqual([0, 77, 154, 230, 307, 384]);
    expect(g.ys).toEqual([0, 64, 128]);
    expect(blockCount(g)).toBe(18);
    expect(blockGrid(100, 60, 128)).toMatchObject({ blockWidth: 100, blockHeight: 60, xs: [0], ys: [0] });
    expect(() => blockGrid(64, 64, 4)).toThrow(/at least 16/);
  });

  it('a warp by equal block shifts is the rigid shift', () => {
    const W = 96;
    const H = 80;
    const draw = sceneAt(W, H, 3);
    const img = Float32Array.from({ length: W * H }, (_, i) => draw(i % W, Math.floor(i / W)));
    const g = blockGrid(W, H, 32);
    const s = new Float32Array(2 * blockCount(g));
    for (let k = 0; k < blockCount(g); k++) s.set([1.25, -0.5], 2 * k);
    const a = new Float32Array(W * H);
    const b = new Float32Array(W * H);
    blockWarper(g)(img, s, a);
    shiftFrame(img, W, H, 1.25, -0.5, b);
    for (let i = 0; i < W * H; i++) expect(a[i]).toBeCloseTo(b[i]!, 3);
  });
});

describe('piecewise-rigid registration', () => {
  it('corrects motion that differs across the field, where one rigid shift cannot', async () => {
    const W = 128;
    const H = 128;
    const F = 24;
    const draw = sceneAt(W, H, 7);
    const r = rng(8);
    // Frame f: the top of the field moved by +a_f in x, the bottom by −a_f, smoothly in between.
    const amp = Array.from({ length: F }, (_, f) => 3 * Math.sin((2 * Math.PI * f) / F));
    const fieldX = (y: number, f: number) => amp[f]! * Math.cos((Math.PI * y) / (H - 1));
    const data = new Float32Array(W * H * F);
    for (let f = 0; f < F; f++)
      for (let y = 0; y < H; y++)
        for (let x = 0; x < W; x++) data[f * W * H + x + y * W] = draw(x - fieldX(y, f), y) + 2 * gaussian(r);
    const truth = Float32Array.from({ length: W * H }, (_, i) => draw(i % W, Math.floor(i / W)));
    const src = movieSource({ width: W, height: H, frames: F, data });
    // Error of the corrected frames against the scene, away from the edges.
    const error = async (reg: Awaited<ReturnType<typeof registerMovie>>) => {
      const s = registeredSource(src, reg.shifts, reg.piecewise);
      const out = new Float32Array(W * H);
      const m = 16;
      let e = 0;
      let n = 0;
      for (let f = 0; f < F; f++) {
        await s.read(f, out);
        // Up to the template's own offset from the scene: compare after removing the median offset.
        for (let y = m; y < H - m; y++)
          for (let x = m; x < W - m; x++) {
            e += Math.abs(out[x + y * W]! - truth[x + y * W]!);
            n++;
          }
      }
      return e / n;
    };
    const rigid = await registerMovie(src, { template: truth });
    const piecewise = await registerMovie(src, { template: truth, blockSize: 32 });
    expect(piecewise.piecewise!.grid.ys.length).toBe(6);
    // Block shifts follow the field: the top row of blocks moves with +a, the bottom with −a.
    const g = piecewise.piecewise!.grid;
    const n = blockCount(g);
    const f = F / 4; // the largest motion
    const top = piecewise.shifts[2 * f]! + piecewise.piecewise!.shifts[2 * n * f]!;
    const bottom = piecewise.shifts[2 * f]! + piecewise.piecewise!.shifts[2 * n * f + 2 * (n - 1)]!;
    const centre = (j: number) => g.ys[j]! + (g.blockHeight - 1) / 2;
    expect(Math.abs(top - fieldX(centre(0), f))).toBeLessThan(0.35);
    expect(Math.abs(bottom - fieldX(centre(g.ys.length - 1), f))).toBeLessThan(0.35);
    const [eRigid, ePiecewise] = [await error(rigid), await error(piecewise)];
    expect(ePiecewise).toBeLessThan(eRigid / 2);
  });
});
