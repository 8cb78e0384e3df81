/** Types for `fft.js` (MIT, radix-4 FFT over interleaved complex arrays; ships no types). */
declare module 'fft.js' {
  type NumArray = number[] | Float64Array | Float32Array;
  export default class FFT {
    constructor(size: number);
    readonly size: number;
    createComplexArray(): number[];
    toComplexArray(input: NumArray, storage?: NumArray): number[];
    fromComplexArray(complex: NumArray, storage?: NumArray): number[];
    completeSpectrum(spectrum: NumArray): void;
    transform(out: NumArray, data: NumArray): void;
    realTransform(out: NumArray, data: NumArray): void;
    inverseTransform(out: NumArray, data: NumArray): void;
  }
}
