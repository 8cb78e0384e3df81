/**
 * What a single streamed pass over the registered frames collects for the later stages: the mean
 * and max projections and a temporally binned movie (bins of about one indicator decay, as Suite2p
 * bins for detection: activity adds up, noise averages down, and the movie shrinks by the bin
 * size so that 3,000 frames of 512² fit in a few hundred MB). Pure (CPU only).
 */
import type { Image, Movie } from '../types.ts';

/** Streaming mean / max projections and binned movie. */
export class FrameAccumulator {
  readonly width: number;
  readonly height: number;
  readonly binSize: number;
  private readonly sum: Float64Array;
  private readonly maxImg: Float32Array;
  private readonly bins: Float32Array;
  private count = 0;
  private readonly binCount: number;

  constructor(width: number, height: number, frames: number, binSize: number) {
    this.width = width;
    this.height = height;
    this.binSize = Math.max(1, Math.floor(binSize));
    const n = width * height;
    this.sum = new Float64Array(n);
    this.maxImg = new Float32Array(n).fill(-Infinity);
    this.binCount = Math.max(1, Math.floor(frames / this.binSize));
    this.bins = new Float32Array(this.binCount * n);
  }

  /** Adds frame number `f` (frames must come in order 0, 1, 2, …). */
  add(f: number, frame: Float32Array): void {
    const n = this.width * this.height;
    const { sum, maxImg } = this;
    for (let i = 0; i < n; i++) {
      const v = frame[i]!;
      sum[i]! += v;
      if (v > maxImg[i]!) maxImg[i] = v;
    }
    const b = Math.floor(f / this.binSize);
    if (b < this.binCount) {
      const o = b * n;
      const k = 1 / this.binSize;
      for (let i = 0; i < n; i++) this.bins[o + i]! += frame[i]! * k;
    }
    this.count++;
  }

  /** Mean projection. */
  mean(): Image {
    const data = new Float32Array(this.sum.length);
    for (let i = 0; i < data.length; i++) data[i] = this.sum[i]! / Math.max(1, this.count);
    return { width: this.width, height: this.height, data };
  }

  /** Max projection. */
  max(): Image {
    return { width: this.width, height: this.height, data: Float32Array.from(this.maxImg, (v) => (v === -Infinity ? 0 : v)) };
  }

  /** The binned movie (frames = whole bins only). */
  binned(): Movie {
    return { width: this.width, height: this.height, frames: this.binCount, data: this.bins };
  }
}
