/**
 * 2-D FFT over power-of-two sizes, built on `fft.js` (MIT; the fastest pure-JS radix-4 FFT we
 * measured, see calcium/README.md). Data are interleaved complex Float64Arrays, row-major.
 * Pure (CPU only); an instance owns scratch buffers, so use one per thread.
 */
import FFT from 'fft.js';

/** True when n is a power of two ≥ 2. */
export function isPowerOfTwo(n: number): boolean {
  return n >= 2 && (n & (n - 1)) === 0;
}

/** The largest power of two ≤ n (n ≥ 2). */
export function floorPowerOfTwo(n: number): number {
  return 2 ** Math.floor(Math.log2(n));
}

/** Forward and inverse 2-D transforms of one size. */
export class Fft2d {
  readonly width: number;
  readonly height: number;
  private readonly rowFft: FFT;
  private readonly colFft: FFT;
  private readonly rowIn: Float64Array;
  private readonly rowOut: Float64Array;
  private readonly colIn: Float64Array;
  private readonly colOut: Float64Array;

  constructor(width: number, height: number) {
    if (!isPowerOfTwo(width) || !isPowerOfTwo(height)) throw new Error(`FFT sizes must be powers of two (got ${width}×${height})`);
    this.width = width;
    this.height = height;
    this.rowFft = new FFT(width);
    this.colFft = width === height ? this.rowFft : new FFT(height);
    this.rowIn = new Float64Array(2 * width);
    this.rowOut = new Float64Array(2 * width);
    this.colIn = new Float64Array(2 * height);
    this.colOut = new Float64Array(2 * height);
  }

  /** A zeroed complex buffer of this size. */
  createComplex(): Float64Array {
    return new Float64Array(2 * this.width * this.height);
  }

  /** In place: forward (`inverse` false) or inverse (normalised by 1/N) transform of `data`. */
  transform(data: Float64Array, inverse = false): void {
    const { width: W, height: H, rowIn, rowOut, colIn, colOut } = this;
    for (let y = 0; y < H; y++) {
      const o = 2 * y * W;
      rowIn.set(data.subarray(o, o + 2 * W));
      if (inverse) this.rowFft.inverseTransform(rowOut, rowIn);
      else this.rowFft.transform(rowOut, rowIn);
      data.set(rowOut, o);
    }
    for (let x = 0; x < W; x++) {
      for (let y = 0; y < H; y++) {
        const i = 2 * (x + y * W);
        colIn[2 * y] = data[i]!;
        colIn[2 * y + 1] = data[i + 1]!;
      }
      if (inverse) this.colFft.inverseTransform(colOut, colIn);
      else this.colFft.transform(colOut, colIn);
      for (let y = 0; y < H; y++) {
        const i = 2 * (x + y * W);
        data[i] = colOut[2 * y]!;
        data[i + 1] = colOut[2 * y + 1]!;
      }
    }
  }
}
