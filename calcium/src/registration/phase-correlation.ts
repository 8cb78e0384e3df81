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

const NEIGHBOURS = [[-1, -1], [0, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [0, 1], [1, 1]] as const;

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
  const N = nextPowerOfTwo(Math.max(rw, rh));
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
  const outer = taperMask(rw, rh, 0, edge); // coarse step: both images
  const inner = taperMask(rw, rh, margin, edge); // fine step: the template only
  const tmpl = fft.createComplex();
  const work = fft.createComplex();
  let templateImg: Float32Array | null = null;

  /** Region of `img`, minus its mean under `mask`, times `mask`, zero-padded, transformed. */
  const load = (img: Float32Array, out: Float64Array) => {
    out.fill(0);
    let mean = 0;
    let weight = 0;
    for (let y = 0; y < rh; y++)
      for (let x = 0; x < rw; x++) {
        const w = outer[x + y * rw]!;
        mean += w * img[rx + x + (ry + y) * width]!;
        weight += w;
      }
    mean /= weight || 1;
    for (let y = 0; y < rh; y++)
      for (let x = 0; x < rw; x++) out[2 * (x + y * N)] = (img[rx + x + (ry + y) * width]! - mean) * outer[x + y * rw]!;
    fft.transform(out);
  };

  /** Weighted normalised cross-correlation of the template with the frame displaced by (dx, dy). */
  const ncc = (frame: Float32Array, dx: number, dy: number): number => {
    const t = templateImg!;
    let sw = 0;
    let st = 0;
    let sf = 0;
    for (let y = margin; y < rh - margin; y++)
      for (let x = margin; x < rw - margin; x++) {
        const w = inner[x + y * rw]!;
        if (w === 0) continue;
        const g = rx + x + (ry + y) * width;
        sw += w;
        st += w * t[g]!;
        sf += w * frame[g + dx + dy * width]!;
      }
    const mt = st / sw;
    const mf = sf / sw;
    let stf = 0;
    let stt = 0;
    let sff = 0;
    for (let y = margin; y < rh - margin; y++)
      for (let x = margin; x < rw - margin; x++) {
        const w = inner[x + y * rw]!;
        if (w === 0) continue;
        const g = rx + x + (ry + y) * width;
        const a = t[g]! - mt;
        const b = frame[g + dx + dy * width]! - mf;
        stf += w * a * b;
        stt += w * a * a;
        sff += w * b * b;
      }
    return stt > 0 && sff > 0 ? stf / Math.sqrt(stt * sff) : 0;
  };

  return {
    region: [rx, ry, rw, rh],
    maxShift,
    setTemplate(template) {
      load(template, tmpl);
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
        const g = gauss[i]! / (Math.hypot(re, im) + 1e-12);
        work[2 * i] = re * g;
        work[2 * i + 1] = im * g;
      }
      fft.transform(work, true);
      const at = (dx: number, dy: number) => work[2 * (((dx + N) % N) + ((dy + N) % N) * N)]!;
      let best = -Infinity;
      let bx = 0;
      let by = 0;
      for (let dy = -maxShift; dy <= maxShift; dy++)
        for (let dx = -maxShift; dx <= maxShift; dx++) {
          const v = at(dx, dy);
          if (v > best) {
            best = v;
            bx = dx;
            by = dy;
          }
        }
      // Fine step: hill-climb the normalised cross-correlation (a few steps at most).
      const cache = new Map<number, number>();
      const limit = maxShift + 1;
      const score = (x: number, y: number) => {
        const k = (x + 1024) * 4096 + (y + 1024);
        let v = cache.get(k);
        if (v === undefined) cache.set(k, (v = Math.abs(x) > limit || Math.abs(y) > limit ? -Infinity : ncc(frame, x, y)));
        return v;
      };
      for (let step = 0; step < 4; step++) {
        let nx = bx;
        let ny = by;
        let nb = score(bx, by);
        for (const [ox, oy] of NEIGHBOURS) {
          const v = score(bx + ox, by + oy);
          if (v > nb) {
            nb = v;
            nx = bx + ox;
            ny = by + oy;
          }
        }
        if (nx === bx && ny === by) break;
        bx = nx;
        by = ny;
      }
      const c = score(bx, by);
      return { dx: bx + subPixel(score(bx - 1, by), c, score(bx + 1, by)), dy: by + subPixel(score(bx, by - 1), c, score(bx, by + 1)), peak: c };
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
