/**
 * Small image operations the detection stages share: separable Gaussian blur, robust statistics
 * (median, MAD), local maxima, and connected components from a seed. Pure (CPU only).
 */
import type { Image } from './types.ts';

/** Gaussian blur with standard deviation `sigma` pixels (edges repeated). */
export function gaussianBlur(img: Image, sigma: number): Image {
  const { width: W, height: H } = img;
  if (!(sigma > 0)) return { width: W, height: H, data: Float32Array.from(img.data) };
  const r = Math.max(1, Math.ceil(3 * sigma));
  const k = new Float32Array(2 * r + 1);
  let s = 0;
  for (let i = -r; i <= r; i++) s += k[i + r] = Math.exp(-(i * i) / (2 * sigma * sigma));
  for (let i = 0; i < k.length; i++) k[i]! /= s;
  const tmp = new Float32Array(W * H);
  const out = new Float32Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      let v = 0;
      for (let i = -r; i <= r; i++) v += k[i + r]! * img.data[Math.min(W - 1, Math.max(0, x + i)) + y * W]!;
      tmp[x + y * W] = v;
    }
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      let v = 0;
      for (let i = -r; i <= r; i++) v += k[i + r]! * tmp[x + Math.min(H - 1, Math.max(0, y + i)) * W]!;
      out[x + y * W] = v;
    }
  return { width: W, height: H, data: out };
}

/** Median of the values (a sorted copy; NaN for none). */
export function median(values: ArrayLike<number>): number {
  if (values.length === 0) return NaN;
  const s = Float64Array.from(values).sort();
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The `q` quantile (0–1) of the finite values of `values`, from an even sample of at most `maxSamples` (fast on any image). */
export function sampledQuantile(values: ArrayLike<number>, q: number, maxSamples = 65536): number {
  const step = Math.max(1, Math.floor(values.length / maxSamples));
  const v: number[] = [];
  for (let i = 0; i < values.length; i += step) if (Number.isFinite(values[i]!)) v.push(values[i]!);
  v.sort((a, b) => a - b);
  return v.length ? v[Math.min(v.length - 1, Math.max(0, Math.floor(q * v.length)))]! : 0;
}

/** Robust spread: 1.4826 × the median absolute deviation (the SD for normal data). */
export function robustSd(values: ArrayLike<number>, centre = median(values)): number {
  const d = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) d[i] = Math.abs(values[i]! - centre);
  return 1.4826 * median(d);
}

/** Pixels that are the maximum of their (2·radius+1)² neighbourhood and above `threshold`, strongest first. */
export function localMaxima(img: Image, radius: number, threshold: number, border = 0): number[] {
  const { width: W, height: H, data } = img;
  const out: number[] = [];
  for (let y = border; y < H - border; y++)
    for (let x = border; x < W - border; x++) {
      const v = data[x + y * W]!;
      if (!(v > threshold)) continue;
      let isMax = true;
      for (let dy = -radius; dy <= radius && isMax; dy++) {
        const yy = y + dy;
        if (yy < 0 || yy >= H) continue;
        for (let dx = -radius; dx <= radius; dx++) {
          const xx = x + dx;
          if (xx < 0 || xx >= W || (dx === 0 && dy === 0)) continue;
          const u = data[xx + yy * W]!;
          // Ties go to the first pixel in raster order.
          if (u > v || (u === v && (dy < 0 || (dy === 0 && dx < 0)))) {
            isMax = false;
            break;
          }
        }
      }
      if (isMax) out.push(x + y * W);
    }
  return out.sort((a, b) => data[b]! - data[a]!);
}

/** The 4-connected component containing `seed` among pixels where `inside(i)` holds. */
export function componentFrom(width: number, height: number, seed: number, inside: (i: number) => boolean): number[] {
  if (!inside(seed)) return [];
  const seen = new Set<number>([seed]);
  const stack = [seed];
  const out: number[] = [];
  while (stack.length) {
    const i = stack.pop()!;
    out.push(i);
    const x = i % width;
    const y = (i - x) / width;
    const next = [x > 0 ? i - 1 : -1, x < width - 1 ? i + 1 : -1, y > 0 ? i - width : -1, y < height - 1 ? i + width : -1];
    for (const j of next) {
      if (j < 0 || seen.has(j) || !inside(j)) continue;
      seen.add(j);
      stack.push(j);
    }
  }
  return out.sort((a, b) => a - b);
}
