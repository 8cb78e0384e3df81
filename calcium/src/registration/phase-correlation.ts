/**
 * Rigid shift between a frame and a template, in two steps.
 * 1. Coarse: phase correlation as Suite2p's rigid registration does it — both images
 *    mean-subtracted and tapered, the cross-power spectrum whitened (phase only) and smoothed by a
 *    Gaussian (Suite2p's `smooth_sigma`); the inverse transform peaks at the displacement.
 * 2. Fine: the weighted normalised cross-correlation of the template (tapered to zero within a
 *    margin wider than the largest shift) with the untapered frame at the integer shifts around
 *    the coarse peak (hill-climbing), then a Gaussian (log-parabola) fit on each axis. A taper on
 *    both images, which the phase correlation needs, pulls its peak towards zero shift (1.3 px read
 *    as 0.8 px in a test); in step 2 the template always lies wholly inside the frame, so nothing
 *    common to both images depends on the shift, and the sub-pixel error stays under 0.05 px.
 * Estimation runs on a centred region of at most `estimateSize` per side (a rigid shift is the
 * same everywhere), zero-padded to a power of two for the FFT. Pure (CPU only).
 */
import { Fft2d } from '../fft2d.ts';

/** A displacement in pixels: the frame shows the template moved by (+dx, +dy). */
export interface Shift {
  dx: number;
  dy: number;
  /** Normalised cross-correlation at the peak (−1…1): how well the frame matches the template. */
  peak: number;
}

/** Estimates shifts of frames against one template. */
export interface PhaseCorrelator {
  /** The region used: left, top, width, height. */
  readonly region: readonly [number, number, number, number];
  readonly maxShift: number;
  /** Sets the template (a whole frame, x fastest). */
  setTemplate(template: Float32Array): void;
  /** The displacement of `frame` against the template, |dx|, |dy| ≤ maxShift. */
  estimate(frame: Float32Array): Shift;
}

export interface PhaseCorrelationOptions {
  /** Largest shift searched, pixels (default: a tenth of the region's smaller side, at least 3). */
  maxShift?: number;
  /** Largest side of the estimation region (default 256). */
  estimateSize?: number;
  /** Gaussian smoothing of the correlation, pixels (Suite2p's default 1.15). */
  smoothSigma?: number;
}

const nextPowerOfTwo = (n: number) => 2 ** Math.ceil(Math.log2(Math.max(2, n)));

/** Makes a phase correlator for frames of `width` × `height`. */
export function phaseCorrelator(width: number, height: number, opts: PhaseCorrelationOptions = {}): PhaseCorrelator {
  if (width < 8 || height < 8) throw new Error(`frames of ${width}×${height} px are too small to register (at least 8×8)`);
  const cap = Math.max(16, Math.round(opts.estimateSize ?? 256));
  const rw = Math.min(width, cap);
  const rh = Math.min(height, cap);
  const rx = Math.floor((width - rw) / 2);
  const ry = Math.floor((height - rh) / 2);
  const maxShift = Math.max(1, Math.min(Math.floor(Math.min(rw, rh) / 3) - 2, Math.round(opts.maxShift ?? Math.max(3, Math.min(rw, rh) / 10))));
  const margin = maxShift + 2;
  if (Math.min(rw, rh) - 2 * margin < 4) throw new Error(`frames of ${width}×${height} px are too small for shifts up to ${maxShift} px`);
  // The coarse step runs on the region binned 2×2 when it is large (4× fewer FFT operations); the
  // fine step corrects the coarse peak by hill-climbing at full resolution.
  const down = Math.min(rw, rh) >= 128 ? 2 : 1;
  const cw = Math.floor(rw / down);
  const ch = Math.floor(rh / down);
  const coarseShift = Math.max(1, Math.ceil(maxShift / down));
  const N = nextPowerOfTwo(Math.max(cw, ch));
  const sigma = opts.smoothSigma ?? 1.15;
  const fft = new Fft2d(N, N);
  const gauss = new Float64Array(N * N);
  for (let y = 0; y < N; y++)
    for (let x = 0; x < N; x++) {
      const fx = (x <= N / 2 ? x : x - N) / N;
      const fy = (y <= N / 2 ? y : y - N) / N;
      gauss[x + y * N] = Math.exp(-2 * Math.PI * Math.PI * sigma * sigma * (fx * fx + fy * fy));
    }
  const edge = Math.max(3, Math.round(Math.min(rw, rh) / 16));
  const outer = taperMask(cw, ch, 0, Math.max(2, Math.round(edge / down))); // coarse step: both images
  const inner = taperMask(rw, rh, margin, edge); // fine step: the template only
  const tmpl = fft.createComplex();
  const work = fft.createComplex();
  let templateImg: Float32Array | null = null;

  /** Region of `img` (binned `down`×`down`), minus its mean under the taper, tapered, zero-padded, transformed. */
  const load = (img: Float32Array, out: Float64Array) => {
    out.fill(0);
    let mean = 0;
    let weight = 0;
    const k = 1 / (down * down);
    for (let y = 0; y < ch; y++)
      for (let x = 0; x < cw; x++) {
        let v = 0;
        for (let j = 0; j < down; j++) {
          const row = rx + x * down + (ry + y * down + j) * width;
          for (let i = 0; i < down; i++) v += img[row + i]!;
        }
        v *= k;
        const w = outer[x + y * cw]!;
        mean += w * v;
        weight += w;
        out[2 * (x + y * N)] = v;
      }
    mean /= weight || 1;
    for (let y = 0; y < ch; y++)
      for (let x = 0; x < cw; x++) {
        const i = 2 * (x + y * N);
        out[i] = (out[i]! - mean) * outer[x + y * cw]!;
      }
    fft.transform(out);
  };

  // Fine step, prepared once per template: the pixels inside the margin, their taper weight w and
  // w·(t − mean) (which sums to zero, so Σ w·a·F needs no frame mean).
  let idx = new Int32Array(0);
  let wts = new Float64Array(0);
  let tA = new Float64Array(0);
  let sw = 0;
  let stt = 0;
  const prepareFine = (t: Float32Array) => {
    const gi: number[] = [];
    const gw: number[] = [];
    for (let y = margin; y < rh - margin; y++)
      for (let x = margin; x < rw - margin; x++) {
        const w = inner[x + y * rw]!;
        if (w === 0) continue;
        gi.push(rx + x + (ry + y) * width);
        gw.push(w);
      }
    idx = Int32Array.from(gi);
    wts = Float64Array.from(gw);
    sw = 0;
    let st = 0;
    for (let k = 0; k < idx.length; k++) {
      sw += wts[k]!;
      st += wts[k]! * t[idx[k]!]!;
    }
    const mt = st / sw;
    tA = new Float64Array(idx.length);
    stt = 0;
    for (let k = 0; k < idx.length; k++) {
      const a = t[idx[k]!]! - mt;
      tA[k] = wts[k]! * a;
      stt += wts[k]! * a * a;
    }
  };
  const sa = new Float64Array(9);
  const s1 = new Float64Array(9);
  const s2 = new Float64Array(9);
  const offs = new Int32Array(9);
  /** Normalised cross-correlation at the 9 integer shifts around (cx, cy), row by row (dy, then dx). */
  const ncc3x3 = (frame: Float32Array, cx: number, cy: number, out: Float64Array) => {
    for (let j = 0; j < 3; j++) for (let i = 0; i < 3; i++) offs[i + 3 * j] = cx + i - 1 + (cy + j - 1) * width;
    sa.fill(0);
    s1.fill(0);
    s2.fill(0);
    // One row of three offsets at a time, in locals (the JIT keeps them in registers).
    for (let row = 0; row < 3; row++) {
      const o0 = offs[3 * row]!;
      let a0 = 0, a1 = 0, a2 = 0, b0 = 0, b1 = 0, b2 = 0, c0 = 0, c1 = 0, c2 = 0;
      for (let k = 0; k < idx.length; k++) {
        const g = idx[k]! + o0;
        const a = tA[k]!;
        const w = wts[k]!;
        const f0 = frame[g]!;
        const f1 = frame[g + 1]!;
        const f2 = frame[g + 2]!;
        a0 += a * f0;
        a1 += a * f1;
        a2 += a * f2;
        const wf0 = w * f0;
        const wf1 = w * f1;
        const wf2 = w * f2;
        b0 += wf0;
        b1 += wf1;
        b2 += wf2;
        c0 += wf0 * f0;
        c1 += wf1 * f1;
        c2 += wf2 * f2;
      }
      sa[3 * row] = a0;
      sa[3 * row + 1] = a1;
      sa[3 * row + 2] = a2;
      s1[3 * row] = b0;
      s1[3 * row + 1] = b1;
      s1[3 * row + 2] = b2;
      s2[3 * row] = c0;
      s2[3 * row + 1] = c1;
      s2[3 * row + 2] = c2;
    }
    for (let o = 0; o < 9; o++) {
      const sff = s2[o]! - (s1[o]! * s1[o]!) / sw;
      out[o] = stt > 0 && sff > 0 ? sa[o]! / Math.sqrt(stt * sff) : 0;
    }
  };
  const grid = new Float64Array(9);

  return {
    region: [rx, ry, rw, rh],
    maxShift,
    setTemplate(template) {
      load(template, tmpl);
      prepareFine(template);
      templateImg = template;
    },
    estimate(frame) {
      if (!templateImg) throw new Error('phase correlation needs a template first');
      load(frame, work);
      const n = N * N;
      for (let i = 0; i < n; i++) {
        const ar = work[2 * i]!;
        const ai = work[2 * i + 1]!;
        const br = tmpl[2 * i]!;
        const bi = -tmpl[2 * i + 1]!;
        const re = ar * br - ai * bi;
        const im = ar * bi + ai * br;
        const g = gauss[i]! / (Math.sqrt(re * re + im * im) + 1e-12);
        work[2 * i] = re * g;
        work[2 * i + 1] = im * g;
      }
      fft.transform(work, true);
      const at = (dx: number, dy: number) => work[2 * (((dx + N) % N) + ((dy + N) % N) * N)]!;
      let best = -Infinity;
      let bx = 0;
      let by = 0;
      for (let dy = -coarseShift; dy <= coarseShift; dy++)
        for (let dx = -coarseShift; dx <= coarseShift; dx++) {
          const v = at(dx, dy);
          if (v > best) {
            best = v;
            bx = dx;
            by = dy;
          }
        }
      bx = Math.max(-maxShift, Math.min(maxShift, bx * down));
      by = Math.max(-maxShift, Math.min(maxShift, by * down));
      // Fine step: hill-climb the normalised cross-correlation on 3×3 neighbourhoods (a few steps
      // at most), then fit the peak on each axis.
      for (let step = 0; step < 6; step++) {
        ncc3x3(frame, bx, by, grid);
        let o = 4;
        for (let q = 0; q < 9; q++) if (grid[q]! > grid[o]!) o = q;
        const nx = Math.max(-maxShift, Math.min(maxShift, bx + (o % 3) - 1));
        const ny = Math.max(-maxShift, Math.min(maxShift, by + Math.floor(o / 3) - 1));
        if (nx === bx && ny === by) break;
        bx = nx;
        by = ny;
      }
      const c = grid[4]!;
      return { dx: bx + subPixel(grid[3]!, c, grid[5]!), dy: by + subPixel(grid[1]!, c, grid[7]!), peak: c };
    },
  };
}

/** Offset in (−0.5, 0.5) of a peak from three samples: Gaussian fit when all are positive, else parabola. */
function subPixel(m: number, c: number, p: number): number {
  if (!Number.isFinite(m) || !Number.isFinite(p)) return 0;
  if (m > 0 && c > 0 && p > 0) {
    const lm = Math.log(m);
    const lc = Math.log(c);
    const lp = Math.log(p);
    const den = lm - 2 * lc + lp;
    if (den < 0) return Math.max(-0.5, Math.min(0.5, (0.5 * (lm - lp)) / den));
  }
  const den = m - 2 * c + p;
  return den < 0 ? Math.max(-0.5, Math.min(0.5, (0.5 * (m - p)) / den)) : 0;
}

/** w × h: 0 within `margin` of each border, then a raised-cosine rise to 1 over `edge` pixels. */
function taperMask(w: number, h: number, margin: number, edge: number): Float64Array {
  const ramp = (i: number) => (i < margin ? 0 : i >= margin + edge ? 1 : 0.5 - 0.5 * Math.cos((Math.PI * (i - margin + 0.5)) / edge));
  const m = new Float64Array(w * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) m[x + y * w] = ramp(Math.min(x, w - 1 - x)) * ramp(Math.min(y, h - 1 - y));
  return m;
}
