/**
 * Cell size from the data when no metadata gives it: the scale at which a scale-normalised
 * Laplacian of Gaussian responds most strongly to the blobs of an image (Lindeberg's scale
 * selection; a disc of radius r peaks at σ = r/√2). Run on the local-correlation image the blobs
 * are the active cells, so their typical diameter comes out, whatever the microscope's zoom.
 * Pure (CPU only).
 */
import { gaussianBlur, localMaxima } from '../image-ops.ts';
import type { Image } from '../types.ts';

/** Estimated typical cell diameter in pixels (between `min` and `max`, default 4–60). */
export function estimateDiameter(img: Image, opts: { min?: number; max?: number; blobs?: number } = {}): number {
  const min = opts.min ?? 4;
  const max = Math.min(opts.max ?? 60, Math.min(img.width, img.height) / 2);
  const top = opts.blobs ?? 30;
  let best = { sigma: min / (2 * Math.SQRT2), score: -Infinity };
  for (let sigma = min / (2 * Math.SQRT2); sigma * 2 * Math.SQRT2 <= max; sigma *= 1.15) {
    const b = gaussianBlur(img, sigma);
    const { width: W, height: H } = b;
    const log = new Float32Array(W * H);
    for (let y = 1; y < H - 1; y++)
      for (let x = 1; x < W - 1; x++) {
        const i = x + y * W;
        // −σ²∇²: bright blobs give positive responses.
        log[i] = -sigma * sigma * (b.data[i - 1]! + b.data[i + 1]! + b.data[i - W]! + b.data[i + W]! - 4 * b.data[i]!);
      }
    const resp: Image = { width: W, height: H, data: log };
    const peaks = localMaxima(resp, Math.max(1, Math.round(sigma)), 0, Math.ceil(2 * sigma)).slice(0, top);
    const score = peaks.reduce((s, i) => s + log[i]!, 0) / Math.max(1, peaks.length);
    if (score > best.score) best = { sigma, score };
  }
  return 2 * Math.SQRT2 * best.sigma;
}
